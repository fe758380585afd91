/*
 * Tag-tree encoder, ISO/IEC 15444-1 B.10.2 (see tgt.h).
 */
#include "hd/tgt.h"

uint64_t j2ki_tgt_nb_nodes(uint32_t w, uint32_t h)
{
    uint64_t n = 0;
    uint64_t lw = w, lh = h;

    if (!w || !h)
        return 0;
    for (;;) {
        n += lw * lh;
        if (lw == 1 && lh == 1)
            break;
        lw = (lw + 1) >> 1;
        lh = (lh + 1) >> 1;
    }
    return n;
}

static uint64_t tgt_head_size(void)
{
    return (sizeof(J2kiTagTree) + 7) & ~(uint64_t)7;
}

uint64_t j2ki_tgt_mem_size(uint32_t w, uint32_t h)
{
    return tgt_head_size() + j2ki_tgt_nb_nodes(w, h) * sizeof(J2kiTgtNode);
}

J2kiTagTree *j2ki_tgt_init(void *mem, uint32_t w, uint32_t h)
{
    J2kiTagTree *t = mem;
    uint32_t lw = w, lh = h, base = 0;

    t->w = w;
    t->h = h;
    t->nb_nodes = (uint32_t)j2ki_tgt_nb_nodes(w, h);
    t->nodes = (J2kiTgtNode *)((uint8_t *)mem + tgt_head_size());
    if (!t->nb_nodes)
        return t;
    /* level k has lw x lh nodes starting at base; node (x, y) has parent (x/2, y/2) one level up */
    while (lw > 1 || lh > 1) {
        uint32_t pw = (lw + 1) >> 1, ph = (lh + 1) >> 1;
        uint32_t pbase = base + lw * lh;
        for (uint32_t y = 0; y < lh; y++)
            for (uint32_t x = 0; x < lw; x++)
                t->nodes[base + y * lw + x].parent = pbase + (y >> 1) * pw + (x >> 1);
        base = pbase;
        lw = pw;
        lh = ph;
    }
    t->nodes[base].parent = base;
    j2ki_tgt_reset(t);
    return t;
}

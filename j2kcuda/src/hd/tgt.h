/*
 * Tag trees (ISO/IEC 15444-1 B.10.2): a quad-tree over a 2-D array of non-negative integers
 * (one leaf per code-block of a precinct's band) in which every node holds the minimum of its
 * children. A leaf's value is sent as the bits that raise a lower bound ("low") on each node on
 * the path from the root, only as far as a threshold: tier-2 uses it for the inclusion layer
 * (threshold = layer + 1) and the number of zero bit-planes (threshold = value + 1, i.e. sent in
 * full). The bits sent so far are part of the tree's state, so a tree is reset at the start of
 * every pass over a tile.
 *
 * Storage is carved by the caller (the plan's arena): j2ki_tgt_mem_size() tells how much.
 * reset, set_value and encode are J2KI_HD: the device tier-2 (t2_cuda.cu) runs them on copies
 * of the plan's trees.
 */
#ifndef J2KI_TGT_H
#define J2KI_TGT_H

#include "core/j2ki.h"
#include "hd/bitio.h"

/** Bits a leaf's path may need: levels of a tree over at most 2^31 x 2^31 leaves. */
#define J2KI_TGT_MAX_DEPTH 33

typedef struct J2kiTgtNode {
    int32_t  value;     /**< minimum of the leaves below */
    int32_t  low;       /**< the value is known to be >= low (what the decoder knows) */
    uint32_t parent;    /**< index of the parent node; the root points to itself */
    uint8_t  known;     /**< 1 once the terminating 1 bit was sent (value == low) */
} J2kiTgtNode;

typedef struct J2kiTagTree {
    uint32_t w, h;           /**< leaves */
    uint32_t nb_nodes;       /**< all levels; leaves first, row-major, then each coarser level */
    J2kiTgtNode *nodes;
} J2kiTagTree;

/** Number of nodes of a tree over w x h leaves (0 when w or h is 0). */
uint64_t j2ki_tgt_nb_nodes(uint32_t w, uint32_t h);

/** Bytes j2ki_tgt_init needs for a tree over w x h leaves (struct and nodes, aligned). */
uint64_t j2ki_tgt_mem_size(uint32_t w, uint32_t h);

/** Builds a tree in mem (j2ki_tgt_mem_size bytes, 8-byte aligned) and resets it. */
J2kiTagTree *j2ki_tgt_init(void *mem, uint32_t w, uint32_t h);

/** Sets every node's value to INT32_MAX and forgets what was sent (low = 0, not known). */
J2KI_HD void j2ki_tgt_reset(J2kiTagTree *t)
{
    for (uint32_t i = 0; i < t->nb_nodes; i++) {
        t->nodes[i].value = INT32_MAX;
        t->nodes[i].low = 0;
        t->nodes[i].known = 0;
    }
}

/** Sets a leaf's value (must only lower it after a reset) and updates the minima above it. */
J2KI_HD void j2ki_tgt_set_value(J2kiTagTree *t, uint32_t leaf, int32_t value)
{
    uint32_t i = leaf;

    for (;;) {
        J2kiTgtNode *n = &t->nodes[i];
        if (n->value <= value && i != leaf)
            break;
        n->value = value;
        if (n->parent == i)
            break;
        i = n->parent;
    }
}

/**
 * Sends what the decoder needs to tell whether leaf's value is < threshold (B.10.2), and its
 * exact value when it is: for each node from the root down, 0 bits while value > low (low
 * counts up) and a 1 bit when value == low, stopping at the threshold. Updates the state.
 */
J2KI_HD void j2ki_tgt_encode(J2kiTagTree *t, J2kiBits *bw, uint32_t leaf, int32_t threshold)
{
    uint32_t path[J2KI_TGT_MAX_DEPTH];
    int depth = 0;
    int32_t low = 0;
    uint32_t i = leaf;

    for (;;) {
        path[depth++] = i;
        if (t->nodes[i].parent == i)
            break;
        i = t->nodes[i].parent;
    }
    /* root first: a node's lower bound is at least its parent's */
    while (depth > 0) {
        J2kiTgtNode *n = &t->nodes[path[--depth]];
        if (low > n->low)
            n->low = low;
        else
            low = n->low;
        while (low < threshold) {
            if (low >= n->value) {
                if (!n->known) {
                    j2ki_bits_put(bw, 1);
                    n->known = 1;
                }
                break;
            }
            j2ki_bits_put(bw, 0);
            low++;
        }
        n->low = low;
    }
}

#endif /* J2KI_TGT_H */

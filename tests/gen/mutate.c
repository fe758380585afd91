/*
 * Codestream header mutator for the checker's negative tests: takes a valid codestream and
 * breaks one rule while keeping the rest of the syntax consistent (Psot, TLM), so that the
 * checker's finding can be attributed to the rule under test.
 *
 *   mutate IN OUT OP [ARGS]
 *   set8 MARKER OFF VAL    byte OFF (0 = the 0xFF of the marker) of the first main-header
 *                          segment MARKER (hex code, e.g. FF52) becomes VAL
 *   set16 MARKER OFF VAL   same, 16-bit big-endian
 *   set32 MARKER OFF VAL   same, 32-bit big-endian
 *   delete MARKER          removes the first main-header segment MARKER
 *   insert-poc             adds a one-entry POC (r0..6, c0..3, 1 layer, CPRL) after COD
 *   pad-tp N BYTES         appends BYTES zero bytes to tile-part N (Psot and TLM updated)
 *   pad-tp-to N LEN        pads tile-part N to LEN bytes (same updates)
 *   pad-total LEN          pads the last tile-part so that the whole file is LEN bytes
 *   merge-tp N             merges tile-part N+1 into N (TNsot, TPsot, TLM updated)
 *   psot-add N DELTA       adds DELTA to Psot of tile-part N (nothing else)
 *   tlm-add N DELTA        adds DELTA to TLM entry N (nothing else)
 *   truncate BYTES         drops the last BYTES bytes
 *   xor MARKER N OFF MASK  XORs MASK into byte OFF of the N-th (0-based) occurrence of the
 *                          marker code anywhere in the file (e.g. a PLT length, an Nsop)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *buf;
static size_t size;

static uint32_t rd16(size_t p) { return (uint32_t)buf[p] << 8 | buf[p + 1]; }
static uint32_t rd32(size_t p) { return rd16(p) << 16 | rd16(p + 2); }
static void wr16(size_t p, uint32_t v) { buf[p] = (uint8_t)(v >> 8); buf[p + 1] = (uint8_t)v; }
static void wr32(size_t p, uint32_t v) { wr16(p, v >> 16); wr16(p + 2, v & 0xFFFF); }

static void die(const char *m) { fprintf(stderr, "mutate: %s\n", m); exit(2); }

/* Offset of the first main-header segment with this code, or 0. */
static size_t find_main(uint32_t code, size_t *first_sot)
{
    size_t p = 2, found = 0;
    while (p + 4 <= size) {
        uint32_t m = rd16(p);
        if (m == 0xFF90)
            break;
        if (m == code && !found)
            found = p;
        p += 2 + rd16(p + 2);
    }
    if (first_sot)
        *first_sot = p;
    return found;
}

static int tile_parts(size_t *offs, int max)
{
    size_t p;
    int n = 0;
    find_main(0, &p);
    while (p + 12 <= size && rd16(p) == 0xFF90 && n < max) {
        offs[n++] = p;
        uint32_t psot = rd32(p + 6);
        if (!psot)
            break;
        p += psot;
    }
    return n;
}

static void insert(size_t at, const uint8_t *data, size_t n)
{
    uint8_t *nb = realloc(buf, size + n);
    if (!nb)
        die("out of memory");
    buf = nb;
    memmove(buf + at + n, buf + at, size - at);
    if (data)
        memcpy(buf + at, data, n);
    else
        memset(buf + at, 0, n);
    size += n;
}

static void erase(size_t at, size_t n)
{
    memmove(buf + at, buf + at + n, size - at - n);
    size -= n;
}

/* TLM entry i: offset of its Ptlm and its width (2 or 4), first TLM segment only. */
static int tlm_entry(int i, size_t *ptlm, int *w, size_t *seg)
{
    size_t t = find_main(0xFF55, NULL);
    if (!t)
        return 0;
    int stlm = buf[t + 5], st = (stlm >> 4) & 3, sp = (stlm >> 6) & 1;
    int esz = st + (sp ? 4 : 2);
    int n = (int)(rd16(t + 2) - 4) / esz;
    if (i >= n)
        return 0;
    *ptlm = t + 6 + (size_t)i * (size_t)esz + (size_t)st;
    *w = sp ? 4 : 2;
    if (seg)
        *seg = t;
    return 1;
}

static void tlm_add(int i, long delta)
{
    size_t p;
    int w;
    if (!tlm_entry(i, &p, &w, NULL))
        return;
    if (w == 4)
        wr32(p, (uint32_t)((long)rd32(p) + delta));
    else
        wr16(p, (uint32_t)((long)rd16(p) + delta));
}

int main(int argc, char **argv)
{
    if (argc < 4)
        die("usage: mutate IN OUT OP [ARGS]");
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        die("cannot open input");
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(size + 1);
    if (!buf || fread(buf, 1, size, f) != size)
        die("read error");
    fclose(f);
    if (size < 4 || rd16(0) != 0xFF4F)
        die("not a codestream");
    const char *op = argv[3];
    size_t tp[1024];
    int ntp = tile_parts(tp, 1024);

    if (!strcmp(op, "set8") || !strcmp(op, "set16") || !strcmp(op, "set32")) {
        if (argc < 7) die("set8 MARKER OFF VAL");
        size_t m = find_main((uint32_t)strtoul(argv[4], NULL, 16), NULL);
        size_t off = strtoul(argv[5], NULL, 0);
        uint32_t v = (uint32_t)strtoul(argv[6], NULL, 0);
        if (!m) die("marker not in the main header");
        if (op[3] == '8') buf[m + off] = (uint8_t)v;
        else if (op[3] == '1') wr16(m + off, v);
        else wr32(m + off, v);
    } else if (!strcmp(op, "delete")) {
        if (argc < 5) die("delete MARKER");
        size_t m = find_main((uint32_t)strtoul(argv[4], NULL, 16), NULL);
        if (!m) die("marker not in the main header");
        erase(m, 2 + rd16(m + 2));
    } else if (!strcmp(op, "insert-poc")) {
        size_t m = find_main(0xFF52, NULL);
        if (!m) die("no COD");
        static const uint8_t poc[] = { 0xFF, 0x5F, 0x00, 0x09, 0, 0, 0x00, 0x01, 6, 3, 4 };
        insert(m + 2 + rd16(m + 2), poc, sizeof(poc));
    } else if (!strcmp(op, "pad-tp") || !strcmp(op, "pad-tp-to") || !strcmp(op, "pad-total")) {
        int total = !strcmp(op, "pad-total");
        if (argc < (total ? 5 : 6)) die("pad-tp N BYTES | pad-tp-to N LEN | pad-total LEN");
        int n = total ? ntp - 1 : atoi(argv[4]);
        size_t add = strtoul(argv[total ? 4 : 5], NULL, 0);
        if (n < 0 || n >= ntp) die("no such tile-part");
        uint32_t psot = rd32(tp[n] + 6);
        if (!strcmp(op, "pad-tp-to")) {
            if (add < psot) die("tile-part already longer");
            add -= psot;
        } else if (total) {
            if (add < size) die("file already longer");
            add -= size;
        }
        if (!psot) die("Psot = 0");
        insert(tp[n] + psot, NULL, add);
        wr32(tp[n] + 6, psot + (uint32_t)add);
        tlm_add(n, (long)add);
    } else if (!strcmp(op, "merge-tp")) {
        if (argc < 5) die("merge-tp N");
        int n = atoi(argv[4]);
        if (n + 1 >= ntp) die("no such tile-part pair");
        size_t a = tp[n], b = tp[n + 1];
        /* header of b: SOT..SOD */
        size_t h = b + 12;
        while (h + 2 <= size && rd16(h) != 0xFF93)
            h += 2 + rd16(h + 2);
        size_t hlen = h + 2 - b;
        uint32_t pa = rd32(a + 6), pb = rd32(b + 6);
        int tile = (int)rd16(a + 4);
        erase(b, hlen);
        wr32(a + 6, pa + pb - (uint32_t)hlen);
        ntp = tile_parts(tp, 1024);
        int k = 0;
        for (int i = 0; i < ntp; i++)
            if ((int)rd16(tp[i] + 4) == tile) {
                buf[tp[i] + 10] = (uint8_t)k++;
            }
        for (int i = 0; i < ntp; i++)
            if ((int)rd16(tp[i] + 4) == tile && buf[tp[i] + 11])
                buf[tp[i] + 11] = (uint8_t)k;
        size_t pt, seg;
        int w;
        if (tlm_entry(n + 1, &pt, &w, &seg)) {
            size_t pa_t;
            int w2;
            tlm_entry(n, &pa_t, &w2, NULL);
            uint32_t va = w == 4 ? rd32(pa_t) : rd16(pa_t);
            uint32_t vb = w == 4 ? rd32(pt) : rd16(pt);
            if (w == 4) wr32(pa_t, va + vb - (uint32_t)hlen); else wr16(pa_t, va + vb - (uint32_t)hlen);
            int st = (buf[seg + 5] >> 4) & 3;
            size_t esz = (size_t)st + (size_t)w;
            erase(pt - (size_t)st, esz);
            wr16(seg + 2, rd16(seg + 2) - (uint32_t)esz);
        }
    } else if (!strcmp(op, "psot-add")) {
        if (argc < 6) die("psot-add N DELTA");
        int n = atoi(argv[4]);
        if (n >= ntp) die("no such tile-part");
        wr32(tp[n] + 6, (uint32_t)((long)rd32(tp[n] + 6) + atol(argv[5])));
    } else if (!strcmp(op, "tlm-add")) {
        if (argc < 6) die("tlm-add N DELTA");
        tlm_add(atoi(argv[4]), atol(argv[5]));
    } else if (!strcmp(op, "truncate")) {
        if (argc < 5) die("truncate BYTES");
        size_t n = strtoul(argv[4], NULL, 0);
        if (n >= size) die("too much");
        size -= n;
    } else if (!strcmp(op, "xor")) {
        if (argc < 8) die("xor MARKER N OFF MASK");
        uint32_t code = (uint32_t)strtoul(argv[4], NULL, 16);
        long nth = atol(argv[5]);
        size_t off = strtoul(argv[6], NULL, 0);
        uint8_t mask = (uint8_t)strtoul(argv[7], NULL, 0);
        size_t p = 0;
        for (; p + 1 < size; p++)
            if (rd16(p) == code && nth-- == 0)
                break;
        if (p + 1 >= size || p + off >= size) die("marker occurrence not found");
        buf[p + off] ^= mask;
    } else {
        die("unknown operation");
    }
    f = fopen(argv[2], "wb");
    if (!f || fwrite(buf, 1, size, f) != size || fclose(f))
        die("write error");
    free(buf);
    return 0;
}

/*
 * Byte and bit writers for the codestream. Both can run in counting mode (buf == NULL): they
 * then track exactly the bytes they would have written, which is how tier-2 sizes a codestream
 * without copying data (j2ki_t2_size). A writer never writes past cap; it records the overflow
 * instead, and the caller turns it into J2KC_ERR_BUFSIZE once at the end. The writers are
 * J2KI_HD: tier-2 on the device (t2_cuda.cu) codes packet headers with the same code.
 */
#ifndef J2KI_BITIO_H
#define J2KI_BITIO_H

#include <string.h>

#include "core/j2ki.h"

/** Big-endian byte writer (every multi-byte field of the codestream is big-endian, A.1.4). */
typedef struct J2kiBytes {
    uint8_t *buf;        /**< NULL: count only */
    size_t   pos;        /**< bytes written (or counted) so far */
    size_t   cap;
    int      overflow;   /**< set once a write did not fit */
} J2kiBytes;

J2KI_HD void j2ki_bytes_init(J2kiBytes *b, uint8_t *buf, size_t cap)
{
    b->buf = buf;
    b->pos = 0;
    b->cap = buf ? cap : SIZE_MAX;
    b->overflow = 0;
}

J2KI_HD void j2ki_put8(J2kiBytes *b, uint32_t v)
{
    if (b->pos >= b->cap) {
        b->overflow = 1;
        return;
    }
    if (b->buf)
        b->buf[b->pos] = (uint8_t)v;
    b->pos++;
}

J2KI_HD void j2ki_put16(J2kiBytes *b, uint32_t v)
{
    j2ki_put8(b, v >> 8);
    j2ki_put8(b, v);
}

J2KI_HD void j2ki_put32(J2kiBytes *b, uint32_t v)
{
    j2ki_put16(b, v >> 16);
    j2ki_put16(b, v);
}

J2KI_HD void j2ki_put_bytes(J2kiBytes *b, const uint8_t *src, size_t n)
{
    if (n > b->cap - b->pos) {
        b->overflow = 1;
        return;
    }
    if (b->buf && n)
        memcpy(b->buf + b->pos, src, n);
    b->pos += n;
}

/** Writes v big-endian into an already written (reserved) place: for back-patched lengths. */
J2KI_HD void j2ki_patch16(J2kiBytes *b, size_t at, uint32_t v)
{
    if (b->buf && at + 2 <= b->cap) {
        b->buf[at] = (uint8_t)(v >> 8);
        b->buf[at + 1] = (uint8_t)v;
    }
}

J2KI_HD void j2ki_patch32(J2kiBytes *b, size_t at, uint32_t v)
{
    j2ki_patch16(b, at, v >> 16);
    j2ki_patch16(b, at + 2, v);
}

/**
 * Packet-header bit writer (B.10.1): bits go most significant first; a byte that follows a
 * 0xFF byte carries only 7 bits (its most significant bit is a stuffed 0), so no two bytes of a
 * header read as a marker code (0xFF90..0xFFFF). The header is padded with 0 bits to a byte
 * boundary, and a header that would end with 0xFF gets one more byte 0x00 (the decoder skips
 * the stuffed bit after a trailing 0xFF when it aligns, B.10.1).
 */
typedef struct J2kiBits {
    J2kiBytes *out;
    uint32_t   cur;      /**< byte being filled */
    int        ct;       /**< bit positions left in cur */
} J2kiBits;

J2KI_HD void j2ki_bits_init(J2kiBits *w, J2kiBytes *out)
{
    w->out = out;
    w->cur = 0;
    w->ct = 8;
}

J2KI_HD void j2ki_bits_put(J2kiBits *w, int bit)
{
    if (w->ct == 0) {
        j2ki_put8(w->out, w->cur);
        w->ct = w->cur == 0xFF ? 7 : 8;
        w->cur = 0;
    }
    w->ct--;
    w->cur |= (uint32_t)(bit & 1) << w->ct;
}

/** Puts the n (<= 32) low bits of v, most significant first (as many at a time as fit). */
J2KI_HD void j2ki_bits_putn(J2kiBits *w, uint32_t v, int n)
{
    while (n > 0) {
        int k;
        if (w->ct == 0) {
            j2ki_put8(w->out, w->cur);
            w->ct = w->cur == 0xFF ? 7 : 8;
            w->cur = 0;
        }
        k = n < w->ct ? n : w->ct;
        n -= k;
        w->ct -= k;
        w->cur |= (uint32_t)((v >> n) & ((1u << k) - 1)) << w->ct;
    }
}

/** Ends the header: pads the last byte, and adds 0x00 after a final 0xFF. */
J2KI_HD void j2ki_bits_flush(J2kiBits *w)
{
    j2ki_put8(w->out, w->cur);
    if (w->cur == 0xFF)
        j2ki_put8(w->out, 0);
    w->cur = 0;
    w->ct = 8;
}

#endif /* J2KI_BITIO_H */

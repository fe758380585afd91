/* The layout of a device frame copied from another context (peer_layout.h). */
#include "cuda/peer_layout.h"

int j2ki_peer_layout(const J2kiPeerComp *comp, int nb_comps, J2kiPeerPlane *pl, int *plane_of,
                     size_t *size)
{
    int n = 0;
    size_t off = 0;
    if (nb_comps < 1 || nb_comps > J2KC_MAX_COMPS)
        return J2KC_ERR_INVAL;
    for (int c = 0; c < nb_comps; c++) {
        const J2kiPeerComp *k = &comp[c];
        const uintptr_t p = (uintptr_t)k->data;
        const int step = k->step > 1 ? k->step : 1;
        const uintptr_t pix = (uintptr_t)step * (uintptr_t)k->bytes;
        size_t row;
        int r;
        if (!k->w || !k->h || (k->bytes != 1 && k->bytes != 2))
            return J2KC_ERR_INVAL;
        row = ((size_t)(k->w - 1) * (size_t)step + 1) * (size_t)k->bytes;
        if (k->stride < 0 || (size_t)k->stride < row)
            return J2KC_ERR_UNSUPPORTED;
        for (r = 0; r < n; r++)     /* interleaved with an earlier component? */
            if (step > 1 && pl[r].src_pitch == k->stride && pl[r].rows == k->h &&
                p + pix > pl[r].src && p < pl[r].src + pix)
                break;
        if (r < n) {
            uintptr_t lo = p < pl[r].src ? p : pl[r].src;
            uintptr_t hi = pl[r].src + pl[r].row_bytes > p + row ? pl[r].src + pl[r].row_bytes : p + row;
            if (hi - lo > (size_t)k->stride)
                return J2KC_ERR_UNSUPPORTED;
            pl[r].src = lo;
            pl[r].row_bytes = (size_t)(hi - lo);
        } else {
            pl[n].src = p;
            pl[n].src_pitch = k->stride;
            pl[n].row_bytes = row;
            pl[n].rows = k->h;
            r = n++;
        }
        plane_of[c] = r;
    }
    for (int r = 0; r < n; r++) {
        pl[r].dst_pitch = (pl[r].row_bytes + J2KI_PEER_PITCH_ALIGN - 1) & ~(size_t)(J2KI_PEER_PITCH_ALIGN - 1);
        pl[r].dst_off = off;
        off += pl[r].dst_pitch * pl[r].rows;
    }
    *size = off;
    return n;
}

/*
 * CUDA tier-2's kernels (device code only), see t2_cuda.cu for their order in a frame and
 * t2_cuda.h for the cell table.
 */
extern "C" {
#include "core/markers.h"
}
#include "cuda/t2_kern.h"

__device__ __forceinline__ void import_cblks(const J2kiT2DevView &v, const J2kiCblkRes *res)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        v.result->len = 0;
        v.result->err = 0;
        v.result->rc_why = 0;
        v.result->rc_why_arg = 0;
        v.result->nb_probes = 0;
        v.result->nb_rounds = 0;
        v.result->rc_total = 0;
        v.result->hull_mask = 0;
    }
    if (i >= v.nb_cblks)
        return;
    v.cblks[i].nb_passes = res[i].nb_passes;
    v.cblks[i].numbps = res[i].numbps;
}

static __device__ void set_err(J2kiT2CudaResult *r, int err)
{
    atomicCAS(&r->err, 0, err);
}

/* The precincts' headers (t2_par.h through j2ki_t2_dev_prec): the first v.nb_team blocks code a
 * precinct of many code-blocks each as a team, every other block one precinct per warp (in
 * v.prec_order). out NULL counts, else writes. */
__device__ __forceinline__ void prec_kernel(const J2kiT2DevView &v, uint8_t *out)
{
    __shared__ uint32_t smem[PREC_WARPS][J2KI_T2_WARP_WORDS];
    __shared__ int skip;
    const uint32_t wi = threadIdx.x >> 5;
    int ret;
    if (threadIdx.x == 0)                        /* read once: another block may set err */
        skip = v.result->err || (out && !v.result->len);
    __syncthreads();
    if (skip)
        return;                                  /* block-uniform */
    if (blockIdx.x < v.nb_team) {
        if ((ret = j2ki_t2_dev_prec<PREC_WARPS>(&v, v.prec_order[blockIdx.x], &smem[0][0], out)) < 0 &&
            threadIdx.x == 0)
            set_err(v.result, ret);
        return;
    }
    const uint32_t q = v.nb_team + (blockIdx.x - v.nb_team) * PREC_WARPS + wi;
    if (q >= v.nb_precs)
        return;                                  /* warp-uniform */
    if ((ret = j2ki_t2_dev_prec<1>(&v, v.prec_order[q], smem[wi], out)) < 0 && (threadIdx.x & 31) == 0)
        set_err(v.result, ret);
}

__device__ __forceinline__ void tp_size(const J2kiT2DevView &v)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= v.nb_tps)
        return;
    j2ki_t2_dev_tp_size(&v, k, v.cell_len, NULL, NULL);
}

__device__ __forceinline__ void final_len(const J2kiT2DevView &v, uint8_t *out, size_t cap)
{
    uint64_t at = v.cell_off[v.nb_cells - 1];
    if (v.result->err)
        return;
    /* A.4.2: Psot is 32 bits */
    for (uint32_t k = 0; k < v.nb_tps; k++)
        if (v.cell_len[v.tps[k].first_pkt + k + 1] > UINT32_MAX) {
            set_err(v.result, J2KC_ERR_UNSUPPORTED);
            return;
        }
    if (at + 2 > cap) {
        set_err(v.result, J2KC_ERR_BUFSIZE);
        return;
    }
    out[at] = 0xFF;                       /* EOC, A.4.4 */
    out[at + 1] = 0xD9;
    v.result->len = at + 2;
}

static __device__ void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static __device__ void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v);
}

/* SOT (A.4.2): FF90, Lsot = 10, Isot(16), Psot(32), TPsot(8), TNsot(8); the PLT segments
 * (A.7.3): FF58, Lplt(16) = 3 + Iplt bytes, Zplt(8) counting from 0 in each tile-part, Iplt
 * entries of 7 bits per byte, bit 7 set on all but the last; SOD (A.4.3): FF93; and the
 * tile-part's TLM entry (A.7.1, ST = 2, SP = 1): Ttlm(16), Ptlm(32). */
__device__ __forceinline__ void tp_write(const J2kiT2DevView &v, uint8_t *out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= v.nb_tps || v.result->err || !v.result->len)
        return;
    const J2kiT2TpDev tp = v.tps[k];
    uint64_t off = v.cell_off[tp.first_pkt + k + 1];
    uint64_t psot = v.cell_off[tp.first_pkt + tp.nb_pkts + k + 2] - off;
    uint8_t *o = out + off;
    put16(o, 0xFF90);
    put16(o + 2, 10);
    put16(o + 4, tp.isot);
    put32(o + 6, (uint32_t)psot);
    o[10] = tp.tpsot;
    o[11] = tp.tnsot;
    o += 12;
    if (v.plt) {
        uint8_t *seg = NULL;
        uint32_t payload = 0, z = 0;
        for (uint32_t j = tp.first_pkt; j < tp.first_pkt + tp.nb_pkts; j++) {
            uint64_t len = v.cell_len[j + k + 2];
            int n = j2ki_t2_plt_entry_bytes(len), nb = n;
            if (seg && payload + (uint32_t)n > J2KI_T2_PLT_MAX_PAYLOAD) {
                put16(seg + 2, 3 + payload);
                seg = NULL;
            }
            if (!seg) {
                seg = o;
                put16(o, 0xFF58);
                o[4] = (uint8_t)(z++ & 0xFF);
                o += 5;
                payload = 0;
            }
            while (n-- > 0)
                *o++ = (uint8_t)(((len >> (7 * n)) & 0x7F) | (n ? 0x80u : 0u));
            payload += (uint32_t)nb;
        }
        if (seg)
            put16(seg + 2, 3 + payload);
    }
    put16(o, 0xFF93);
    if (v.tlm) {
        uint64_t at = v.tlm_start + (uint64_t)(k / J2KI_TLM_MAX_ENTRIES + 1) * 6 + (uint64_t)k * J2KI_TLM_ENTRY_BYTES;
        put16(out + at, tp.isot);
        put32(out + at + 2, (uint32_t)psot);
    }
}

/* B.9: a code-block's new bytes of each layer, one warp per code-block. */
__device__ __forceinline__ void body_copy(const J2kiT2DevView &v, uint8_t *out)
{
    uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (i >= v.nb_cblks || v.result->err || !v.result->len)
        return;
    const J2kiCblk *cb = &v.cblks[i];
    int L = v.nb_layers, s = 0;
    for (int l = 0; l < L; l++) {
        int e = cb->layer_passes[l];
        if (e > s) {
            uint32_t from = j2ki_t2_pass_end(cb, s), n = cb->passes[e - 1].rate - from;
            const uint8_t *src = cb->data + from;
            uint8_t *d = out + v.dst[(size_t)i * L + l];
            for (uint32_t b = lane; b < n; b += 32)
                d[b] = src[b];
            s = e;
        }
    }
}

/* ---- entries ---------------------------------------------------------------------------- */

extern "C" __global__ void j2ki_k_t2_import(const __grid_constant__ J2kiT2ImportParams p) { import_cblks(p.v, p.res); }

extern "C" __global__ void __launch_bounds__(PREC_WARPS * 32)
j2ki_k_t2_prec_warp(const __grid_constant__ J2kiT2OutParams p)
{
    prec_kernel(p.v, p.out);
}

extern "C" __global__ void j2ki_k_t2_tp_size(const __grid_constant__ J2kiT2OutParams p) { tp_size(p.v); }

extern "C" __global__ void j2ki_k_t2_final(const __grid_constant__ J2kiT2OutParams p) { final_len(p.v, p.out, p.cap); }

extern "C" __global__ void j2ki_k_t2_tp_write(const __grid_constant__ J2kiT2OutParams p) { tp_write(p.v, p.out); }

extern "C" __global__ void j2ki_k_t2_body(const __grid_constant__ J2kiT2OutParams p) { body_copy(p.v, p.out); }

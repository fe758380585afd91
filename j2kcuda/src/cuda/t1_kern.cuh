/*
 * What tier-1's kernels (t1_kern.cu) and their host code (t1_cuda.cu) share: the coder's
 * tables in shared memory and the column-parallel coder's layout (t1_par_cuda.cuh), then the
 * parameter structs, one per launch, the kernel's only argument (cuda_launch.h).
 */
#ifndef J2KI_T1_KERN_CUH
#define J2KI_T1_KERN_CUH

#include <stdint.h>
#include <stddef.h>

/*
 * J2KI_CUDA_HOST: the host files (t1_cuda.cu), compiled by the host compiler (issue 31), see
 * only the layout and the parameter structs; the device code below is nvcc's (t1_kern.cu) and
 * the emulators' (tests/t1p_emu.cc).
 */
/* at most this much static shared memory per kernel (the tables below): what the dynamic
 * shared memory must leave of a thread block's limit */
#define T1_SMEM_STATIC 2304

#ifndef J2KI_CUDA_HOST
/*
 * The coder's tables (MQ states, zero-coding contexts, row gathers) in shared memory: lanes
 * of a warp coding different code-blocks look up different entries at once, which the
 * constant cache serves one address at a time and shared memory in one access (bank
 * conflicts aside). Every kernel that codes calls t1_tables_load() first; t1_core.h and
 * mqc.h read these names when J2KI_T1_SMEM_TABLES is defined.
 */
#define J2KI_T1_SMEM_TABLES 1
static __shared__ uint32_t j2ki_mqc_tab_s[94];
static __shared__ uint8_t j2ki_t1_zc_s[3 * 512];
static __shared__ uint8_t j2ki_t1_rows_s[32];
static __shared__ uint8_t j2ki_t1_sc_s[256];
static_assert(sizeof(j2ki_mqc_tab_s) + sizeof(j2ki_t1_zc_s) + sizeof(j2ki_t1_rows_s) + sizeof(j2ki_t1_sc_s) <=
              T1_SMEM_STATIC, "T1_SMEM_STATIC");

#endif /* !J2KI_CUDA_HOST */

extern "C" {
#include "hd/t1_core.h"
#include "hd/t1_par.h"
#include "hd/t1_stop.h"
#include "core/tuning.h"
}

#ifndef J2KI_CUDA_HOST
static_assert(sizeof(j2ki_mqc_tab_s) == J2KI_MQC_NB_STATES * sizeof(uint32_t), "MQ table size");

/* All threads of the block, before any of them returns. sc: also the sign table, which only
 * the column-parallel coder reads (t1p_chunk_kernel). */
__device__ __forceinline__ void t1_tables_load(bool sc = false)
{
    for (int i = threadIdx.x; i < J2KI_MQC_NB_STATES; i += blockDim.x)
        j2ki_mqc_tab_s[i] = j2ki_mqc_tab_d[i];
    for (int i = threadIdx.x; i < 3 * 512; i += blockDim.x)
        j2ki_t1_zc_s[i] = j2ki_t1_zc_d[i];
    for (int i = threadIdx.x; i < 32; i += blockDim.x)
        j2ki_t1_rows_s[i] = j2ki_t1_rows_d[i];
    for (int i = threadIdx.x; sc && i < 256; i += blockDim.x)
        j2ki_t1_sc_s[i] = j2ki_t1_sc_d[i];
    __syncthreads();
}
#endif
#include "cuda/t1_cuda.h"

#ifndef J2KI_CUDA_HOST
/* OR over the 32 lanes (shuffles: __reduce_or_sync needs sm_80, the build starts at sm_75). */
__device__ __forceinline__ uint32_t warp_or(uint32_t v)
{
    for (int o = 16; o > 0; o >>= 1)
        v |= __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}
#endif

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* J2KI_T1_CUDA_PAR: t1p_chunk_kernel and its layout (see there) */
#include "cuda/t1_par_cuda.cuh"
static_assert(T1P_PLANES == J2KI_T1S_PLANES && J2KI_T1S_FIRST >= 1 && J2KI_T1S_FIRST <= T1P_PLANES,
              "the early stop decides between the coder's chunks, of at most T1P_PLANES planes");
#ifndef J2KI_CUDA_HOST
static_assert(sizeof(j2ki_mqc_tab_s) + sizeof(j2ki_t1_zc_s) + sizeof(j2ki_t1_rows_s) + sizeof(j2ki_t1_sc_s) <=
                  T1P_SMEM_TABLES,
              "t1p_usable counts the tables' shared memory");
#endif

/** J2KI_K_T1_PREP: one warp per code-block; nbps and stat NULL but for J2KI_T1_CUDA_PAR. */
typedef struct J2kiT1PrepParams {
    const int32_t     *samples;
    const J2kiCblkDev *cblks;
    uint32_t           nb_cblks;
    uint32_t          *keys, *idx, *nbps, *stat;
} J2kiT1PrepParams;

/** J2KI_K_T1_CODE: one single-warp thread block per code-block, in sorted order. */
typedef struct J2kiT1CodeParams {
    const int32_t     *samples;
    const J2kiCblkDev *cblks;
    const uint32_t    *order;
    int                cblk_style, bypass_start;
    uint8_t           *data;
    J2kiPass          *passes;
    J2kiCblkRes       *res;
    uint32_t          *flag;
    uint32_t           flags_bytes;
    const uint32_t    *lim;
} J2kiT1CodeParams;

/** J2KI_K_T1_LANES*: LANES lanes of each warp code a block each, slices of work. */
typedef struct J2kiT1LanesParams {
    const int32_t     *samples;
    const J2kiCblkDev *cblks;
    const uint32_t    *order;
    uint32_t           nb_cblks;
    int                cblk_style, bypass_start;
    uint8_t           *data;
    J2kiPass          *passes;
    J2kiCblkRes       *res;
    uint32_t          *flag;
    uint8_t           *work;
    size_t             flags_bytes, work_bytes;
    uint32_t           nb_workers;
    const uint32_t    *lim;
} J2kiT1LanesParams;

/** J2KI_K_T1_SMEM*: as the lanes kernels, stripe-column words in shared memory. */
typedef struct J2kiT1SmemParams {
    const int32_t     *samples;
    const J2kiCblkDev *cblks;
    const uint32_t    *order;
    uint32_t           nb_cblks;
    int                cblk_style, bypass_start;
    uint8_t           *data;
    J2kiPass          *passes;
    J2kiCblkRes       *res;
    uint32_t          *flag;
    uint8_t           *work;
    size_t             mag_at, work_bytes;
    uint32_t           nb_workers, cols_bytes;
    const uint32_t    *lim;
} J2kiT1SmemParams;

/** J2KI_K_T1P_CHUNK*: launch c of the column-parallel coder (t1p_chunk_kernel), its first
 *  qblocks thread blocks MQ-coding. */
typedef struct J2kiT1pChunkParams {
    T1pFrameDev        F;
    const J2kiCblkDev *cblks;
    uint32_t           nb_cblks;
    int                cblk_style, bypass_start;
    T1pLayout          lay;
    int                c;
    uint32_t           qblocks;
} J2kiT1pChunkParams;

/** J2KI_K_T1S_KEYS: step 1 of decision step s, one thread per block, e keys each. */
typedef struct J2kiT1sKeysParams {
    const J2kiCblkDev *cblks;
    uint32_t           nb_cblks;
    const uint32_t    *nbps;
    const J2kiCblkRes *res;
    J2kiPass          *passes;
    const double      *weight;
    const uint32_t    *lim;
    int                s;
    uint32_t           e;
    uint32_t          *key, *bytes;
} J2kiT1sKeysParams;

/** J2KI_K_T1S_DECIDE: steps 2 and 3 of decision step s, one thread per block. */
typedef struct J2kiT1sDecideParams {
    const J2kiCblkDev *cblks;
    uint32_t           nb_cblks;
    const uint32_t    *nbps;
    const J2kiCblkRes *res;
    const uint32_t    *key, *key_s, *cum;
    uint32_t           n, e;
    const J2kiPass    *passes;
    const double      *weight;
    uint64_t           budget;
    int                s;
    uint32_t          *lim;
} J2kiT1sDecideParams;

#endif /* J2KI_T1_KERN_CUH */

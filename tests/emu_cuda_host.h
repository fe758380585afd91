/*
 * What tests/t2_emu.cc and tests/rc_emu.cc need around the CUDA sources they run on the host:
 * before the sources (after warp_emu.h), the runtime calls of t2_cuda.cu and rc_cuda.cu on
 * host memory, for a device of one SM that holds one cooperative block, and scan_cuda.h's
 * exclusive scan done serially; after them (EMU_CUDA_HOST_AFTER defined), encoder.c's logger and a
 * frame slot's tier-1 areas filled from a plan's code-blocks.
 */
#ifndef EMU_CUDA_HOST_AFTER
#ifndef J2KI_EMU_CUDA_HOST_BEFORE
#define J2KI_EMU_CUDA_HOST_BEFORE

#include "cuda/cu_driver.h"

static CUresult emu_malloc(void **p, size_t n)
{
    *p = calloc(1, n ? n : 1);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
#define cudaMalloc(p, n) emu_malloc((void **)(p), (n))
/* the library's allocation wrappers (cuda_fault.cu), without fault injection here */
CUresult j2ki_cuda_malloc(void **p, size_t n)
{
    return emu_malloc(p, n) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
void j2ki_cuda_free(void *p)
{
    free(p);
}
/* the driver's table (cu_driver.h) with the functions the emulated sources call, on host
 * memory (a device pointer is a host address here) */
static CUresult CUDAAPI emu_cuMemcpyHtoD(CUdeviceptr d, const void *src, size_t n)
{
    memcpy((void *)(uintptr_t)d, src, n);
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI emu_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream)
{
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI emu_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream)
{
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI emu_cuCtxGetDevice(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI emu_cuDeviceGetAttribute(int *v, CUdevice_attribute, CUdevice)
{
    *v = 1;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI emu_cuGetErrorText(CUresult, const char **s)
{
    *s = "emulated";
    return CUDA_SUCCESS;
}
static J2kiCuDriver emu_cu_tab(void)
{
    J2kiCuDriver t = {};
    t.cuMemcpyHtoD = emu_cuMemcpyHtoD;
    t.cuMemcpyDtoDAsync = emu_cuMemcpyDtoDAsync;
    t.cuMemsetD8Async = emu_cuMemsetD8Async;
    t.cuCtxGetDevice = emu_cuCtxGetDevice;
    t.cuDeviceGetAttribute = emu_cuDeviceGetAttribute;
    t.cuGetErrorName = emu_cuGetErrorText;
    t.cuGetErrorString = emu_cuGetErrorText;
    return t;
}
J2kiCuDriver j2ki_cu_tab = emu_cu_tab();
#define cudaFree(p) (free(p), CUDA_SUCCESS)
#define cudaMemcpy(d, s, n, k) (memcpy((d), (s), (n)), CUDA_SUCCESS)
#define cudaMemcpyAsync(d, s, n, k, st) (memmove((d), (s), (n)), CUDA_SUCCESS)
#define cudaMemsetAsync(p, v, n, st) (memset((p), (v), (n)), CUDA_SUCCESS)
#define cudaPeekAtLastError() CUDA_SUCCESS
#define cudaGetErrorName(e) "emulated"
#define cudaGetErrorString(e) "emulated"
#define cudaGetDevice(d) (*(d) = 0, CUDA_SUCCESS)
#define cudaDeviceGetAttribute(v, attr, d) (*(v) = 1, CUDA_SUCCESS)
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, k, t, s) (*(n) = 1, CUDA_SUCCESS)
/* scan_cuda.h's scan, done serially (t2_cuda.cu's exclusive sum of uint64_t cell lengths) */
#include "cuda/scan_cuda.h"
extern "C" size_t j2ki_scan_cuda_temp_size(size_t max_n, int elem_bytes)
{
    (void)max_n;
    (void)elem_bytes;
    return 16;
}
extern "C" CUresult j2ki_scan_cuda(const J2kiScanArgs *a, CUstream st)
{
    (void)st;
    if (a->elem_bytes != 8 || !a->exclusive)
        return CUDA_ERROR_INVALID_VALUE;
    const uint64_t *in = (const uint64_t *)a->d_in;
    uint64_t *out = (uint64_t *)a->d_out, run = 0;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t x = in[i];
        out[i] = run;
        run += x;
    }
    return CUDA_SUCCESS;
}

#endif /* J2KI_EMU_CUDA_HOST_BEFORE */
#else
#ifndef J2KI_EMU_CUDA_HOST_AFTER
#define J2KI_EMU_CUDA_HOST_AFTER

/* encoder.c's logger (the tests link only the plan, tier-2, marker and rate-control sources
 * and what they need): the failures of the code under test are its return codes */
extern "C" void j2ki_log(const J2kiLog *log, int level, const char *fmt, ...)
{
    (void)log;
    (void)level;
    (void)fmt;
}

/** A frame slot's tier-1 areas (t1_cuda.h): each code-block's offsets, its bytes and passes
 *  copied there, and its J2kiCblkRes. */
struct EmuSlot {
    std::vector<J2kiCblkDev> hc;
    std::vector<uint8_t> data;
    std::vector<J2kiPass> passes;
    std::vector<J2kiCblkRes> res;
};

static void emu_slot_fill(const J2kiPlan *pl, EmuSlot *s)
{
    uint64_t data_size = 0, pass_size = 0;
    s->hc.assign(pl->nb_cblks ? pl->nb_cblks : 1, J2kiCblkDev());
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        s->hc[i].data_off = data_size;
        s->hc[i].data_cap = pl->cblks[i].data_cap;
        s->hc[i].pass_off = (uint32_t)pass_size;
        s->hc[i].max_passes = (uint16_t)pl->cblks[i].max_passes;
        data_size += pl->cblks[i].data_cap;
        pass_size += (uint64_t)pl->cblks[i].max_passes;
    }
    s->data.assign(data_size + 1, 0xA5);
    s->passes.assign(pass_size + 1, J2kiPass());
    s->res.assign(pl->nb_cblks + 1, J2kiCblkRes());
    for (uint32_t i = 0; i < pl->nb_cblks; i++) {
        const J2kiCblk *cb = &pl->cblks[i];
        memcpy(&s->data[s->hc[i].data_off], cb->data, cb->nb_passes ? cb->passes[cb->nb_passes - 1].rate : 0);
        memcpy(&s->passes[s->hc[i].pass_off], cb->passes, (size_t)cb->nb_passes * sizeof(J2kiPass));
        s->res[i].nb_passes = cb->nb_passes;
        s->res[i].numbps = cb->numbps;
    }
}

#endif /* J2KI_EMU_CUDA_HOST_AFTER */
#endif

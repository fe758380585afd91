/*
 * A stand-in for the NVIDIA driver (libcuda.so.1) that the CUDA backend's loader
 * (j2kcuda/src/cuda/cu_driver.h) opens through the test hook J2KC_CUDA_DRIVER: it reports the
 * CUDA version STUB_VERSION (1000 * major + 10 * minor, set when built), initialises, and has
 * no other function, as an old driver would not have the ones a newer build asks for.
 * tests/cuda-driver.sh builds it once per version. The types are the driver API's by value
 * (CUresult is an int, 0 success); no SDK header is needed.
 */
#include <stddef.h>
#include <string.h>

#ifndef STUB_VERSION
#define STUB_VERSION 12020
#endif

#define STUB_SUCCESS        0
#define STUB_NOT_FOUND      500         /* CUDA_ERROR_NOT_FOUND */
#define STUB_SYMBOL_FOUND   0           /* CU_GET_PROC_ADDRESS_SUCCESS */
#define STUB_SYMBOL_MISSING 1           /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *version);
int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags);
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status);

int cuInit(unsigned int flags)
{
    (void)flags;
    return STUB_SUCCESS;
}

int cuDriverGetVersion(int *version)
{
    *version = STUB_VERSION;
    return STUB_SUCCESS;
}

static void *lookup(const char *symbol)
{
    if (!strcmp(symbol, "cuInit"))
        return (void *)cuInit;
    if (!strcmp(symbol, "cuDriverGetVersion"))
        return (void *)cuDriverGetVersion;
    return NULL;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
    (void)version;
    (void)flags;
    *pfn = lookup(symbol);
    if (status)
        *status = *pfn ? STUB_SYMBOL_FOUND : STUB_SYMBOL_MISSING;
    return *pfn ? STUB_SUCCESS : STUB_NOT_FOUND;
}

int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

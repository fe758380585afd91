/*
 * A device's primary context, retained once per device per process and kept
 * (j2kcuda/src/cuda/cu_primary.h), checked without a GPU: the two driver functions it calls
 * (cuDeviceGet, cuDevicePrimaryCtxRetain) are this test's own, put in the library's driver
 * table (cu_driver.h) in place of the driver's, and count the retains.
 *  - THREADS threads released at once each ask for every one of DEVICES devices, in an order
 *    of their own (seeded), ROUNDS times: each device is retained exactly once, every caller
 *    gets that device's context, and the retains of different devices overlap (one device's
 *    context being made holds up no other's);
 *  - a retain that fails returns its error and no context, and the next call retries;
 *  - a device the driver does not know is refused with the driver's error;
 *  - a device numbered far beyond any host's gets the same context at every call.
 * Built without CUDA, the library has no such function: the test says skip.
 */
#include <pthread.h>
#include <time.h>

#include "test.h"

#ifdef J2KC_HAVE_CUDA
#include "cuda/cu_primary.h"

#define DEVICES     8           /* the devices the threads share */
#define THREADS     16
#define ROUNDS      4
#define DEV_FAILING (DEVICES + 1)   /* its first retain fails */
#define DEV_FAR     1000        /* beyond the devices any host has */
#define FAKE_COUNT  (DEV_FAR + 1)   /* the fake driver's devices: 0 .. DEV_FAR */
#define RETAIN_NS   20000000L   /* how long a fake retain takes: 20 ms, so that threads meet */

static int retains[FAKE_COUNT];     /* atomic: cuDevicePrimaryCtxRetain calls per device */
static int in_flight, in_flight_max;/* atomic: retains running at once, and the most seen */
static int fail_first = 1;          /* atomic: DEV_FAILING's next retain fails */

/* A fake context per device: an address no one dereferences. */
static CUcontext fake_ctx(int dev)
{
    return (CUcontext)(uintptr_t)(0x10000u + 16u * (unsigned)dev);
}

static CUresult CUDAAPI fake_device_get(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= FAKE_COUNT)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = (CUdevice)ordinal;
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_retain(CUcontext *ctx, CUdevice d)
{
    struct timespec ts = { 0, RETAIN_NS };
    int now = __atomic_add_fetch(&in_flight, 1, __ATOMIC_SEQ_CST), seen;
    __atomic_fetch_add(&retains[d], 1, __ATOMIC_SEQ_CST);
    seen = __atomic_load_n(&in_flight_max, __ATOMIC_SEQ_CST);
    while (now > seen && !__atomic_compare_exchange_n(&in_flight_max, &seen, now, 0, __ATOMIC_SEQ_CST,
                                                      __ATOMIC_SEQ_CST))
        ;
    nanosleep(&ts, NULL);
    __atomic_sub_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
    if (d == DEV_FAILING && __atomic_exchange_n(&fail_first, 0, __ATOMIC_SEQ_CST))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ctx = fake_ctx((int)d);
    return CUDA_SUCCESS;
}

typedef struct Asker {
    pthread_t thread;
    pthread_barrier_t *start;
    int order[ROUNDS][DEVICES];     /* the devices in the order this thread asks for them */
    int wrong;                      /* calls that failed or gave another context */
} Asker;

static void *ask(void *arg)
{
    Asker *a = (Asker *)arg;
    pthread_barrier_wait(a->start);
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < DEVICES; i++) {
            int dev = a->order[r][i];
            CUcontext c = NULL;
            if (j2ki_cu_primary(dev, &c) != CUDA_SUCCESS || c != fake_ctx(dev))
                a->wrong++;
        }
    return NULL;
}

int main(void)
{
    static Asker askers[THREADS];
    pthread_barrier_t start;
    CUcontext c;
    CUresult e;
    int started = 0, wrong = 0, once = 1;

    test_seed("cu_primary", 31);
    j2ki_cu_tab.cuDeviceGet = fake_device_get;
    j2ki_cu_tab.cuDevicePrimaryCtxRetain = fake_retain;

    /* many threads, the same devices, at once */
    CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0, "barrier");
    for (int t = 0; t < THREADS; t++) {
        Asker *a = &askers[t];
        a->start = &start;
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < DEVICES; i++)
                a->order[r][i] = i;
            for (int i = DEVICES - 1; i > 0; i--) {     /* Fisher-Yates */
                int j = (int)(test_rand() % (uint32_t)(i + 1)), x = a->order[r][i];
                a->order[r][i] = a->order[r][j];
                a->order[r][j] = x;
            }
        }
        if (pthread_create(&a->thread, NULL, ask, a) == 0)
            started++;
    }
    CHECK(started == THREADS, "%d of %d threads started", started, THREADS);
    if (started != THREADS)
        return test_done("cu_primary");    /* the barrier would wait for ever */
    for (int t = 0; t < THREADS; t++) {
        pthread_join(askers[t].thread, NULL);
        wrong += askers[t].wrong;
    }
    pthread_barrier_destroy(&start);
    for (int d = 0; d < DEVICES; d++)
        once &= retains[d] == 1;
    CHECK(wrong == 0, "%d of %d calls failed or gave another device's context", wrong,
          THREADS * ROUNDS * DEVICES);
    CHECK(once, "each device retained once (device 0: %d, device %d: %d)", retains[0], DEVICES - 1,
          retains[DEVICES - 1]);
    CHECK(in_flight_max >= 2, "the retains of different devices overlap (at most %d at once)", in_flight_max);
    printf("# %d threads x %d rounds x %d devices: %d call(s) wrong, retains per device %d..%d, "
           "at most %d retain(s) at once\n", THREADS, ROUNDS, DEVICES, wrong, retains[0], retains[DEVICES - 1],
           in_flight_max);

    /* a failed retain: its error and no context, then tried again */
    c = fake_ctx(0);
    e = j2ki_cu_primary(DEV_FAILING, &c);
    CHECK(e == CUDA_ERROR_OUT_OF_MEMORY && c == NULL, "a failed retain returns its error (%d) and no context",
          (int)e);
    e = j2ki_cu_primary(DEV_FAILING, &c);
    CHECK(e == CUDA_SUCCESS && c == fake_ctx(DEV_FAILING), "the call after a failed retain retries (%d)", (int)e);
    e = j2ki_cu_primary(DEV_FAILING, &c);
    CHECK(e == CUDA_SUCCESS && c == fake_ctx(DEV_FAILING) && retains[DEV_FAILING] == 2,
          "then kept: %d retains (one failed)", retains[DEV_FAILING]);

    /* devices the driver does not know */
    c = fake_ctx(0);
    e = j2ki_cu_primary(FAKE_COUNT, &c);
    CHECK(e == CUDA_ERROR_INVALID_DEVICE && c == NULL, "an unknown device refused (%d)", (int)e);
    c = fake_ctx(0);
    e = j2ki_cu_primary(-1, &c);
    CHECK(e == CUDA_ERROR_INVALID_DEVICE && c == NULL, "device -1 refused (%d)", (int)e);

    /* far beyond the devices a host has: the same context every time */
    for (int i = 0; i < 3; i++) {
        e = j2ki_cu_primary(DEV_FAR, &c);
        CHECK(e == CUDA_SUCCESS && c == fake_ctx(DEV_FAR), "device %d, call %d (%d)", DEV_FAR, i + 1, (int)e);
    }
    return test_done("cu_primary");
}

#else

int main(void)
{
    printf("skip cu_primary: the library was built without CUDA\n");
    return 0;
}

#endif

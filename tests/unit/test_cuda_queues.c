/*
 * The hardware queues an application asks for (tools/cuda_queues.h): one per frame in flight,
 * at least 8, at most 32, and never over a value the user set. The library itself reads the
 * variable only (cuda_env.cu; tests/layering.sh checks that no library source sets one).
 */
#include "test.h"
#include "../../tools/cuda_queues.h"

static const char *queues_for(int frames_in_flight)
{
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    j2kc_app_cuda_queues(frames_in_flight);
    return getenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

int main(void)
{
    static const int depth[] = { 0, 1, 2, 8, 9, 16, 32, 33, 1000 };
    static const char *want[] = { "8", "8", "8", "8", "9", "16", "32", "32", "32" };
    for (size_t k = 0; k < sizeof(depth) / sizeof(depth[0]); k++) {
        const char *v = queues_for(depth[k]);
        CHECK(v && !strcmp(v, want[k]), "%d frames in flight: %s, expected %s", depth[k], v ? v : "(unset)",
              want[k]);
    }
    /* the user's value stays, lower or higher */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4", 1);
    j2kc_app_cuda_queues(16);
    CHECK(!strcmp(getenv("CUDA_DEVICE_MAX_CONNECTIONS"), "4"), "the user's 4 replaced by %s",
          getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
    return test_done("test_cuda_queues");
}

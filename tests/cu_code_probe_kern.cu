/* The probe kernel of tests/cu_code_probe.c: device code only, compiled to a fatbin and embedded
 * as the library embeds its own (tools/embed-fatbin.sh). */
extern "C" __global__ void j2ki_test_probe(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * 2654435761u + 12345u;
}

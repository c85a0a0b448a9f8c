// Lessons 05, 11 and 12: the seed program's kernel, unchanged apart from extern "C"
// (which keeps the name unmangled so that PyCUDA and the CPU backend can find it).
// Each thread adds one pair of elements; a, b and c may live in device memory or
// in mapped page-locked host memory (zero-copy): the kernel cannot tell.
extern "C" __global__ void vector_add_kernel(float *a, float *b, float *c, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        c[idx] = a[idx] + b[idx];
    }
}

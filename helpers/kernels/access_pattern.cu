// Lessons 09 and 10: how the pattern of addresses a warp asks for sets the bytes that
// actually move. Each thread reads ONE useful float; the kernels differ only in
// where that float lies.

// Thread t reads src[offset + t * stride], for t < count.
// stride 1: a warp asks for 128 contiguous bytes (coalesced, 合并访问);
// stride 8: every thread's float lies in a different 32-byte sector;
// stride 32: every thread's float lies in a different 128-byte line.
extern "C" __global__ void read_strided(const float *__restrict__ src, unsigned long long count,
                                        int stride, int offset, float never, float *sink) {
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; t < count; t += step) {
        acc += src[(unsigned long long)offset + t * (unsigned long long)stride];
    }
    if (acc == never) sink[0] = acc;
}

// The same contiguous read, four floats per thread in one 16-byte load.
// `offset` is in float4 units, so every load stays 16-byte aligned as float4 requires.
extern "C" __global__ void read_strided_float4(const float4 *__restrict__ src, unsigned long long count,
                                               int stride, int offset, float never, float *sink) {
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; t < count; t += step) {
        float4 v = src[(unsigned long long)offset + t * (unsigned long long)stride];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (acc == never) sink[0] = acc;
}

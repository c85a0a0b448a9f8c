// Lessons 06 and 08: streaming kernels that read or write a buffer once, used on device
// memory (the HBM ceiling) and on mapped host memory (zero-copy over PCIe).
//
// Every read kernel folds what it loads into a per-thread sum and writes that sum
// only when it equals `never`, a value the data cannot produce. The compiler must
// therefore keep every load, and the kernel writes (almost) nothing back.
// All loops are grid-stride loops: any grid covers any size.

extern "C" __global__ void read_float(const float *__restrict__ src, unsigned long long n,
                                      float never, float *sink) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i < n; i += step) {
        acc += src[i];
    }
    if (acc == never) sink[0] = acc;
}

extern "C" __global__ void read_float2(const float2 *__restrict__ src, unsigned long long n2,
                                       float never, float *sink) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i < n2; i += step) {
        float2 v = src[i];
        acc += v.x + v.y;
    }
    if (acc == never) sink[0] = acc;
}

extern "C" __global__ void read_float4(const float4 *__restrict__ src, unsigned long long n4,
                                       float never, float *sink) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i < n4; i += step) {
        float4 v = src[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (acc == never) sink[0] = acc;
}

// Four independent 16-byte loads per iteration: four requests in flight per thread
// before the first one has to come back.
extern "C" __global__ void read_float4_x4(const float4 *__restrict__ src, unsigned long long n4,
                                          float never, float *sink) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i + 3 * step < n4; i += 4 * step) {
        float4 v0 = src[i];
        float4 v1 = src[i + step];
        float4 v2 = src[i + 2 * step];
        float4 v3 = src[i + 3 * step];
        acc += ((v0.x + v0.y) + (v0.z + v0.w)) + ((v1.x + v1.y) + (v1.z + v1.w))
             + ((v2.x + v2.y) + (v2.z + v2.w)) + ((v3.x + v3.y) + (v3.z + v3.w));
    }
    for (; i < n4; i += step) {
        float4 v = src[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (acc == never) sink[0] = acc;
}

extern "C" __global__ void write_float4(float4 *__restrict__ dst, unsigned long long n4, float value) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float4 v = make_float4(value, value, value, value);
    for (; i < n4; i += step) {
        dst[i] = v;
    }
}

// Lesson 08, the caching test: which on-GPU cache, if any, keeps mapped host memory?
// Every thread re-reads a small buffer `passes` times through one kind of load:
//   cache 0: __ldg   the SM's read-only data path (L1 / texture), also L2
//   cache 1: __ldca  cache in L1 and L2 (the default for global loads)
//   cache 2: __ldcg  cache in L2 only, bypassing L1
//   cache 3: __ldcv  do not cache: fetch again on every load
// Pass p reads element (i + p * shift) mod n4. With shift 0 every thread re-reads the
// lines its own block read before, so the SM's L1 could serve them (pattern "same SM").
// With shift about half the buffer, every pass hands each line to a block far away in
// the grid, on another SM, so only the L2, shared by all SMs, could serve it (pattern
// "other SM"). `shift` is a kernel argument, so the compiler cannot hoist a load out of
// the pass loop. If no cache kept mapped memory, the bytes delivered per second could
// not exceed what the PCIe link carries.
__device__ inline float4 load_cached(const float4 *p, int cache) {
#if defined(__CUDA_ARCH__)
    switch (cache) {
        case 0: return __ldg(p);
        case 1: return __ldca(p);
        case 2: return __ldcg(p);
        default: return __ldcv(p);
    }
#else
    return *p;
#endif
}

extern "C" __global__ void reread_cached(const float4 *src, unsigned long long n4, int passes,
                                         unsigned long long shift, int cache, float never, float *sink) {
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    unsigned long long offset = 0;  // p * shift mod n4, kept up to date pass by pass
    for (int p = 0; p < passes; ++p) {
        for (unsigned long long i = tid; i < n4; i += step) {
            unsigned long long j = i + offset;
            if (j >= n4) j -= n4;
            float4 v = load_cached(src + j, cache);
            acc += (v.x + v.y) + (v.z + v.w);
        }
        offset += shift;
        if (offset >= n4) offset -= n4;
    }
    if (acc == never) sink[0] = acc;
}

// Lesson 08, the control that decides between the L1 and the L2: a line is re-read either
// only by the SM that read it before, or only by SMs that never read it. The buffer is cut
// into gridDim.x chunks, one per block; launch one block per SM. In pass p block b reads
// chunk (b + p * rotate) mod gridDim.x, each float4 once, through the load `cache` chooses.
//   rotate 0: every pass re-reads the block's own chunk: its SM's L1 could serve pass 1 on.
//   rotate 1, passes <= gridDim.x: every pass reads a chunk this block has never read, which
//     other blocks read in earlier passes: if each block has an SM of its own, only a cache
//     shared by the SMs (the L2) could serve it.
// CUDA does not fix which SM runs a block, so thread 0 writes its SM (%smid) to
// sm_of_block[blockIdx.x], and the host checks that no SM ran two blocks.
__device__ inline unsigned int sm_id() {
#if defined(__CUDA_ARCH__)
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
#else
    return 0;
#endif
}

extern "C" __global__ void reread_rotate(const float4 *src, unsigned long long chunk4, int passes, int rotate,
                                         int cache, float never, float *sink, unsigned int *sm_of_block) {
    if (threadIdx.x == 0) sm_of_block[blockIdx.x] = sm_id();
    unsigned long long chunks = gridDim.x;
    float acc = 0.0f;
    for (int p = 0; p < passes; ++p) {
        unsigned long long chunk = (blockIdx.x + (unsigned long long)p * (unsigned long long)rotate) % chunks;
        auto base = src + chunk * chunk4;  // `auto`: the CPU backend checks this pointer too
        for (unsigned long long i = threadIdx.x; i < chunk4; i += blockDim.x) {
            float4 v = load_cached(base + i, cache);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    if (acc == never) sink[0] = acc;
}

// Four 16-byte loads per thread per iteration, as in read_float4_x4, but the four loads of
// a warp cover 2 KiB of consecutive addresses (16 whole 128-byte lines) instead of four
// places far apart: the memory system sees longer runs of adjacent lines.
extern "C" __global__ void read_float4_x4_runs(const float4 *__restrict__ src, unsigned long long n4,
                                               float never, float *sink) {
    unsigned long long lane = threadIdx.x % 32;
    unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32;
    unsigned long long warps = (unsigned long long)gridDim.x * blockDim.x / 32;
    float acc = 0.0f;
    for (unsigned long long base = warp * 128; base < n4; base += warps * 128) {
        if (base + 128 <= n4) {
            float4 v0 = src[base + lane];
            float4 v1 = src[base + 32 + lane];
            float4 v2 = src[base + 64 + lane];
            float4 v3 = src[base + 96 + lane];
            acc += ((v0.x + v0.y) + (v0.z + v0.w)) + ((v1.x + v1.y) + (v1.z + v1.w))
                 + ((v2.x + v2.y) + (v2.z + v2.w)) + ((v3.x + v3.y) + (v3.z + v3.w));
        } else {
            for (unsigned long long i = base + lane; i < n4; i += 32) {
                float4 v = src[i];
                acc += (v.x + v.y) + (v.z + v.w);
            }
        }
    }
    if (acc == never) sink[0] = acc;
}

// read_float4_x4 with a cache hint: on the GPU each load asks the L2 to fetch the whole
// 256-byte block around it (PTX ld.global.L2::256B, sm_80 and newer), which may let the
// memory system ask the host for bigger pieces at once. Elsewhere (the CPU backend, older
// GPUs) it is a plain load.
__device__ inline float4 load_l2_256(const float4 *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float4 v;
    asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
#else
    return *p;
#endif
}

extern "C" __global__ void read_float4_x4_l2_256(const float4 *__restrict__ src, unsigned long long n4,
                                                 float never, float *sink) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (; i + 3 * step < n4; i += 4 * step) {
        float4 v0 = load_l2_256(src + i);
        float4 v1 = load_l2_256(src + i + step);
        float4 v2 = load_l2_256(src + i + 2 * step);
        float4 v3 = load_l2_256(src + i + 3 * step);
        acc += ((v0.x + v0.y) + (v0.z + v0.w)) + ((v1.x + v1.y) + (v1.z + v1.w))
             + ((v2.x + v2.y) + (v2.z + v2.w)) + ((v3.x + v3.y) + (v3.z + v3.w));
    }
    for (; i < n4; i += step) {
        float4 v = load_l2_256(src + i);
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (acc == never) sink[0] = acc;
}

// Reading with the Hopper bulk-copy engine (TMA, sm_90): thread 0 of each block asks the
// engine to copy whole 8 KiB chunks into shared memory (cp.async.bulk), four chunks in
// flight per block; every thread waits on the chunk's mbarrier and sums its share of it.
// The engine, not the load/store units, generates the memory requests. Elsewhere (the CPU
// backend, older GPUs) the kernel is a plain grid-stride float4 read; with one block of 32
// threads both versions give every thread the same elements in the same order.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define BULK_STAGES 4
#define BULK_CHUNK 8192u

__device__ inline unsigned int shared_address(const void *p) {
    return (unsigned int)__cvta_generic_to_shared(p);
}

// Ask for chunk `c` of the source (its last chunk may be short) into one stage.
__device__ inline void bulk_fetch(const char *src, unsigned long long total, unsigned long long c,
                                  void *stage, unsigned long long *barrier) {
    unsigned long long left = total - c * BULK_CHUNK;
    unsigned int bytes = left < BULK_CHUNK ? (unsigned int)left : BULK_CHUNK;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(shared_address(barrier)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(shared_address(stage)), "l"(src + c * BULK_CHUNK), "r"(bytes),
                    "r"(shared_address(barrier)) : "memory");
}

__device__ inline void bulk_wait(unsigned long long *barrier, unsigned int phase) {
    unsigned int done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(shared_address(barrier)), "r"(phase) : "memory");
    }
}
#endif

extern "C" __global__ void read_bulk(const float4 *__restrict__ src, unsigned long long n4,
                                     float never, float *sink) {
    float acc = 0.0f;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float4 stage[BULK_STAGES][BULK_CHUNK / 16];
    __shared__ alignas(8) unsigned long long barrier[BULK_STAGES];
    const char *bytes = (const char *)src;
    unsigned long long total = n4 * 16ULL, chunks = (total + BULK_CHUNK - 1) / BULK_CHUNK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < BULK_STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(shared_address(&barrier[s])));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        for (int s = 0; s < BULK_STAGES; ++s) {  // fill the pipeline
            unsigned long long c = blockIdx.x + (unsigned long long)s * gridDim.x;
            if (c < chunks) bulk_fetch(bytes, total, c, stage[s], &barrier[s]);
        }
    }
    __syncthreads();
    for (unsigned long long k = 0;; ++k) {
        int s = (int)(k % BULK_STAGES);
        unsigned long long c = blockIdx.x + k * gridDim.x;
        if (c >= chunks) break;
        bulk_wait(&barrier[s], (unsigned int)(k / BULK_STAGES) & 1u);
        unsigned long long first = c * (BULK_CHUNK / 16), here = n4 - first;
        unsigned int count = here < BULK_CHUNK / 16 ? (unsigned int)here : BULK_CHUNK / 16;
        for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) {
            float4 v = stage[s][i];
            acc += (v.x + v.y) + (v.z + v.w);
        }
        __syncthreads();  // everyone is done with this stage before it is refilled
        unsigned long long next = c + (unsigned long long)BULK_STAGES * gridDim.x;
        if (threadIdx.x == 0 && next < chunks) bulk_fetch(bytes, total, next, stage[s], &barrier[s]);
    }
#else
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (; i < n4; i += step) {
        float4 v = src[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
#endif
    if (acc == never) sink[0] = acc;
}

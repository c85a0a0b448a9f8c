// Lessons 07 and 08: one dependent load after another. next[] holds a random path:
// next[j] is the index of the element to visit after j. Each load's address is the
// previous load's value, so no two loads overlap, and kernel time / steps is the
// latency of one load. A single thread runs the chase.
extern "C" __global__ void pointer_chase(const unsigned int *next, unsigned int start,
                                         unsigned long long steps, unsigned int *result) {
    unsigned int j = start;
    for (unsigned long long s = 0; s < steps; ++s) {
        j = next[j];
    }
    result[0] = j;
}

// Writes a path into a large table in device memory without copying the whole table:
// table[where[k]] = value[k] for k < n. Used to build chases over gigabytes (lesson 07).
extern "C" __global__ void scatter_u32(unsigned int *table, const unsigned int *where,
                                       const unsigned int *value, unsigned long long n) {
    unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (; k < n; k += step) {
        unsigned int w = where[k];
        table[w] = value[k];
    }
}

// Lesson 07, the chase with its cache state under control. The caches a load may hit are
// those this very thread filled: `warm_steps` untimed loads first, in the same launch and
// on the same SM (a warm-up in an earlier launch may have run on another SM, whose L1 this
// one does not share), then `steps` timed loads. The GPU's global timer (%globaltimer, ns) brackets
// the timed loads alone. out[0]: where the chase ended; out[1]: ns for the timed loads;
// out[2]: the SM that ran the chase (%smid). The timer read after the loop does not wait
// for the last load, nor the first timed load for the timer: one load's time out of
// thousands, well under the spread of repeats.
__device__ inline unsigned long long global_ns() {
#if defined(__CUDA_ARCH__)
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    return 0;
#endif
}

__device__ inline unsigned int sm_id() {
#if defined(__CUDA_ARCH__)
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
#else
    return 0;
#endif
}

extern "C" __global__ void pointer_chase_timed(const unsigned int *next, unsigned int start,
                                               unsigned long long warm_steps, unsigned long long steps,
                                               unsigned long long *out) {
    unsigned int j = start;
    for (unsigned long long s = 0; s < warm_steps; ++s) {
        j = next[j];
    }
    unsigned long long t0 = global_ns();
    for (unsigned long long s = 0; s < steps; ++s) {
        j = next[j];
    }
    unsigned long long t1 = global_ns();
    out[0] = j;
    out[1] = t1 - t0;
    out[2] = sm_id();
}

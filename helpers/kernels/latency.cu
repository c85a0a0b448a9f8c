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

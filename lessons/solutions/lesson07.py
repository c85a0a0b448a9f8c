# Solutions to lesson 07's exercises (07-measure-latency.ipynb).
# helpers.exercises.solution("07", NAME) returns one section; an instructor may delete this folder.

# exercise: chase
CHASE_SOURCE = r"""
__device__ inline unsigned long long global_ns() {   // the GPU's nanosecond timer (0 on the CPU backend)
#if defined(__CUDA_ARCH__)
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    return 0;
#endif
}

extern "C" __global__ void chase_timed(const unsigned int *next, unsigned int start,
                                       unsigned long long steps, unsigned long long *out) {
    unsigned int j = start;
    unsigned long long t0 = global_ns();
    for (unsigned long long s = 0; s < steps; ++s) {
        j = next[j];        // the next address is the value just loaded: this load waits for the last one
    }
    unsigned long long t1 = global_ns();
    out[0] = j;             // where the chase ended: the check compares it with the same chase on the CPU
    out[1] = t1 - t0;       // nanoseconds for the `steps` loads
}
"""

# exercise: line_cycle
import numpy as np
def line_cycle(lines, seed):
    """A chase table over `lines` 128-byte lines: one random cycle through the first element of every line."""
    order = np.random.default_rng(seed).permutation(lines) * 32   # a random visiting order, as element indices
    table = np.zeros(lines * 32, np.uint32)
    table[order] = np.roll(order, -1)     # each visited element holds the next; the last leads back to the first
    return table

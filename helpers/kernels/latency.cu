// Lesson 06: one dependent load after another. next[] holds a random cycle:
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

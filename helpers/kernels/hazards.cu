// Lesson 09: what goes wrong when the host and the GPU share memory.

// One thread writes dst[0], dst[1], ... in order. While it runs, the host can read
// the buffer through its own mapping and see a partly written result.
extern "C" __global__ void fill_in_order(volatile float *dst, unsigned long long n, float value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            dst[i] = value;
        }
    }
}

// Every thread adds one to counter[0] `per_thread` times with atomicAdd.
extern "C" __global__ void count_atomically(int *counter, int per_thread) {
    for (int k = 0; k < per_thread; ++k) {
        atomicAdd(counter, 1);
    }
}

// The same count with a plain read-modify-write: threads overwrite each other.
extern "C" __global__ void count_plainly(volatile int *counter, int per_thread) {
    for (int k = 0; k < per_thread; ++k) {
        counter[0] = counter[0] + 1;
    }
}

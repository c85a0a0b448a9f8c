# Solutions to lesson 14's exercises (14-avoid-hazards-on-mapped-memory.ipynb).
# helpers.exercises.solution("14", NAME) returns one section; an instructor may delete this folder.

# exercise: final_count
def final_count(schedule):
    """The counter after a schedule of plain read-modify-writes: each thread has its own register."""
    counter, register = 0, {}
    for thread, step in schedule:
        if step == "read":
            register[thread] = counter          # the thread's own copy of what it read
        else:
            counter = register[thread] + 1      # one more than what THIS thread read, whatever came since
    return counter

# exercise: publish
PUBLISH_SOURCE = r"""
extern "C" __global__ void publish(float *payload, unsigned long long n, float value,
                                   volatile unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
        __threadfence_system();   // every payload write is seen, by the host too, before the flag
        *flag = raise;            // volatile: a real store, now
    }
}
"""

# The same kernel with libcu++: a system-scope release store orders every write before it ahead of the flag.
PUBLISH_SOURCE_ATOMIC_REF = r"""
#include <cuda/atomic>
extern "C" __global__ void publish(float *payload, unsigned long long n, float value,
                                   unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> ready(*flag);
        ready.store(raise, cuda::memory_order_release);   // the payload is seen before the flag, by the host too
    }
}
"""

# exercise: wait_for_flag
WAIT_SOURCE = r"""
extern "C" __global__ void wait_for_flag(const volatile unsigned int *flag, unsigned int expected,
                                         unsigned long long max_spins, const float *payload,
                                         float *copy, unsigned long long n, unsigned int *seen) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned int now = *flag;                     // volatile: a real load, every time
        for (unsigned long long spins = 1; now != expected && spins < max_spins; ++spins) {
            now = *flag;
        }
        __threadfence_system();   // the payload loads below come after the flag load above
        *seen = now == expected ? 1u : 0u;
        if (now == expected) {
            for (unsigned long long i = 0; i < n; ++i) {
                copy[i] = payload[i];
            }
        }
    }
}
"""

# The same kernel in the form libcu++ offers (preferred where <cuda/atomic> is available): a system-scope atomic
# reference to the flag, loaded with acquire. The compiler issues it every turn, and acquire keeps the payload loads
# after it, so no separate fence is needed.
WAIT_SOURCE_ATOMIC_REF = r"""
#include <cuda/atomic>
extern "C" __global__ void wait_for_flag(unsigned int *flag, unsigned int expected,
                                         unsigned long long max_spins, const float *payload,
                                         float *copy, unsigned long long n, unsigned int *seen) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> ready(*flag);
        unsigned int now = ready.load(cuda::memory_order_acquire);
        for (unsigned long long spins = 1; now != expected && spins < max_spins; ++spins) {
            now = ready.load(cuda::memory_order_acquire);
        }
        *seen = now == expected ? 1u : 0u;
        if (now == expected) {
            for (unsigned long long i = 0; i < n; ++i) {
                copy[i] = payload[i];
            }
        }
    }
}
"""

// Lesson 14: what goes wrong when the host and the GPU share memory.

#include <cuda/atomic>  // libcu++: cuda::atomic_ref, for spin_atomic_ref

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

// The same count with a system-scope atomic: atomic with respect to the host and other GPUs
// too, where the platform supports it (compute capability 6.0 and newer; on a PCIe link only
// if HOST_NATIVE_ATOMIC_SUPPORTED is 1).
extern "C" __global__ void count_atomically_system(int *counter, int per_thread) {
    for (int k = 0; k < per_thread; ++k) {
        atomicAdd_system(counter, 1);
    }
}

// GPU -> host handshake, done right: one thread writes the payload, then
// __threadfence_system() makes every one of those writes visible to the host before any
// later write, then the flag is raised. volatile makes each store a real store.
extern "C" __global__ void publish_fenced(volatile float *payload, unsigned long long n, float value,
                                          volatile unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
        __threadfence_system();
        *flag = raise;
    }
}

// Wrong: the same stores with no fence. CUDA's memory model does not order two plain
// (volatile) stores to different addresses as another observer sees them, so the host may
// see the flag before the payload, whether or not this link happens to keep them in order.
extern "C" __global__ void publish_unfenced(volatile float *payload, unsigned long long n, float value,
                                            volatile unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
        *flag = raise;
    }
}

// Wrong: the flag first, then the payload. The host sees the flag and reads a payload
// that is still being written.
extern "C" __global__ void publish_flag_first(volatile float *payload, unsigned long long n, float value,
                                              volatile unsigned int *flag, unsigned int raise) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *flag = raise;
        for (unsigned long long i = 0; i < n; ++i) {
            payload[i] = value;
        }
    }
}

// How wait_for_host reads the flag: each is a way a kernel can load a word that the host
// changes while the kernel runs (CUDA C Programming Guide, "Load Functions Using Cache Hints").
#define LOAD_VOLATILE 0  // through a volatile pointer: a real load every time
#define LOAD_LDCV 1      // __ldcv: "cache volatile", fetch again on every load
#define LOAD_LDCG 2      // __ldcg: cache in L2 only, not in the SM's L1
#define LOAD_LDG 3       // __ldg: the SM's read-only (non-coherent) data cache
#define LOAD_PLAIN 4     // a plain load through const __restrict__, which nvcc may also send through that cache

__device__ inline unsigned int load_flag(const unsigned int *__restrict__ flag, unsigned long long i,
                                         unsigned int mask, int how) {
    // i & mask is always 0 (the host passes mask = 0), but the compiler cannot know that, so it
    // cannot hoist the load out of the loop: every iteration issues a load.
#if defined(__CUDA_ARCH__)
    const unsigned int *p = flag + (i & mask);
    switch (how) {
    case LOAD_VOLATILE: return *(const volatile unsigned int *)p;
    case LOAD_LDCV: return __ldcv(p);
    case LOAD_LDCG: return __ldcg(p);
    case LOAD_LDG: return __ldg(p);
    default: return *p;
    }
#else
    return flag[i & mask];  // the CPU backend: one plain load
#endif
}

// Host -> GPU handshake: one thread says it has started (result[3] = 1), then spins until the
// flag equals `expected`, at most `max_spins` loads (a kernel that spins forever would hang the
// GPU), then reads the payload the host wrote before raising the flag. Afterwards
// result[0] = loads made, result[1] = 1 if the flag was seen, result[2] = payload elements
// equal to `value`.
extern "C" __global__ void wait_for_host(const unsigned int *__restrict__ flag, unsigned int mask,
                                         unsigned int expected, unsigned long long max_spins, int how,
                                         const volatile float *payload, unsigned long long n, float value,
                                         volatile unsigned long long *result) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        result[3] = 1;
        __threadfence_system();
        unsigned long long spins = 0;
        unsigned int seen = 0;
        while (spins < max_spins) {
            unsigned int now = load_flag(flag, spins, mask, how);
            ++spins;
            if (now == expected) {
                seen = 1;
                break;
            }
        }
        __threadfence_system();  // the payload loads below happen after the flag load above
        unsigned long long good = 0;
        for (unsigned long long i = 0; i < n; ++i) {
            good += payload[i] == value ? 1ULL : 0ULL;
        }
        result[0] = spins;
        result[1] = seen;
        result[2] = good;
    }
}

// A spin on a flag nobody raises, written as a learner writes it: the same address on every turn, no
// mask trick (compare wait_for_host). The loop turns exactly max_spins times and stores how many turns
// it made; the time per turn says whether each turn loaded the flag from host memory (about a
// microsecond over PCIe, measure-latency) or tested a copy kept in a register (nanoseconds).
extern "C" __global__ void spin_volatile(const volatile unsigned int *flag, unsigned int expected,
                                         unsigned long long max_spins, unsigned long long *turns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long spins = 1;
        unsigned int now = *flag;
        for (; now != expected && spins < max_spins; ++spins) {
            now = *flag;
        }
        *turns = spins;
    }
}

// The same loop with __ldcv ("cache volatile": fetch again, PTX ld.global.cv). The PTX keeps the load inside the
// loop, but a cache operator is a performance hint, not a memory-consistency rule (PTX ISA, Cache Operators): ld.cv is
// an ordinary weak load, which ptxas may hoist out of the loop. The SASS shows where it went.
extern "C" __global__ void spin_ldcv(const unsigned int *flag, unsigned int expected,
                                     unsigned long long max_spins, unsigned long long *turns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long spins = 1;
        unsigned int now = __ldcv(flag);
        for (; now != expected && spins < max_spins; ++spins) {
            now = __ldcv(flag);
        }
        *turns = spins;
    }
}

// The same loop with __ldcg (cache in L2 only, PTX ld.global.cg): another weak load with a cache hint.
extern "C" __global__ void spin_ldcg(const unsigned int *flag, unsigned int expected,
                                     unsigned long long max_spins, unsigned long long *turns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long spins = 1;
        unsigned int now = __ldcg(flag);
        for (; now != expected && spins < max_spins; ++spins) {
            now = __ldcg(flag);
        }
        *turns = spins;
    }
}

// The same loop with a plain load: nothing in the kernel writes *flag, so the compiler may load it once.
extern "C" __global__ void spin_plain(const unsigned int *flag, unsigned int expected,
                                     unsigned long long max_spins, unsigned long long *turns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long spins = 1;
        unsigned int now = *flag;
        for (; now != expected && spins < max_spins; ++spins) {
            now = *flag;
        }
        *turns = spins;
    }
}

// The modern form (libcu++): a system-scope atomic reference to the flag, loaded with acquire. An atomic load is a
// strong load: every turn loads the flag, and acquire keeps the loads after it (the payload) after it.
extern "C" __global__ void spin_atomic_ref(unsigned int *flag, unsigned int expected,
                                           unsigned long long max_spins, unsigned long long *turns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> ready(*flag);
        unsigned long long spins = 1;
        unsigned int now = ready.load(cuda::memory_order_acquire);
        for (; now != expected && spins < max_spins; ++spins) {
            now = ready.load(cuda::memory_order_acquire);
        }
        *turns = spins;
    }
}

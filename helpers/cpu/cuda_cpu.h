// cuda_cpu.h: just enough CUDA to compile the course's kernels with a C++ compiler
// and run every thread of a launch, one after another, on the CPU (write-your-first-zero-copy-kernel).
//
// helpers/cpu/transform.py rewrites each pointer parameter of a __global__ or
// __device__ function, `const float *__restrict__ src`, into `cpu::ptr<const float> src`:
// a checked "fat" pointer that knows the array it came from. Every load and store
// through it is bounds-checked (and, when tracing, recorded); `p[i]`, `*p`, `p + k`,
// `p->x`, `p[i].x`, comparisons and differences all work. The rest of the kernel is
// compiled as written.
//
// Threads run sequentially, so:
//  * atomicAdd and the other atomics are exact (no other thread runs in between);
//  * __threadfence() and __threadfence_system() are no-ops: sequential execution is
//    sequentially consistent;
//  * races (two threads writing one element without atomics) do not show.
#pragma once

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <csignal>
#include <mutex>
#include <pthread.h>

// ---------------------------------------------------------------- qualifiers
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

// ---------------------------------------------------------------- vector types
#define ZC_VEC1(T, N, A) struct alignas(A) N##1 { T x; };
#define ZC_VEC2(T, N, A) struct alignas(A) N##2 { T x, y; };
#define ZC_VEC3(T, N, A) struct N##3 { T x, y, z; };
#define ZC_VEC4(T, N, A) struct alignas(A) N##4 { T x, y, z, w; };
ZC_VEC1(float, float, 4) ZC_VEC2(float, float, 8) ZC_VEC3(float, float, 4) ZC_VEC4(float, float, 16)
ZC_VEC1(int, int, 4) ZC_VEC2(int, int, 8) ZC_VEC3(int, int, 4) ZC_VEC4(int, int, 16)
ZC_VEC1(unsigned int, uint, 4) ZC_VEC2(unsigned int, uint, 8) ZC_VEC3(unsigned int, uint, 4) ZC_VEC4(unsigned int, uint, 16)
ZC_VEC1(double, double, 8) ZC_VEC2(double, double, 16)

inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};

// ---------------------------------------------------------------- built-in variables
static uint3 threadIdx{0, 0, 0};   // static: each module (shared library) has its own launch state (issue 20)
static uint3 blockIdx{0, 0, 0};
static dim3 blockDim{1, 1, 1};
static dim3 gridDim{1, 1, 1};
constexpr int warpSize = 32;

// ---------------------------------------------------------------- a few CUDA math names
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline int __float2int_rz(float x) { return (int)x; }
#define ZC_MINMAX(T) \
    inline T min(T a, T b) { return b < a ? b : a; } \
    inline T max(T a, T b) { return a < b ? b : a; }
ZC_MINMAX(int) ZC_MINMAX(unsigned int) ZC_MINMAX(long long) ZC_MINMAX(unsigned long long)
ZC_MINMAX(float) ZC_MINMAX(double)
#undef ZC_MINMAX

inline void __threadfence() {}         // sequential execution is sequentially consistent
inline void __threadfence_block() {}
inline void __threadfence_system() {}

namespace cpu {

// ---------------------------------------------------------------- shared with runtime.py (ctypes)
struct array_info {          // one per kernel parameter; base == 0 for a null pointer
    uint64_t base;           // address of the array's first byte
    uint64_t nbytes;         // the array's size in bytes
    int32_t param;           // parameter index
    int32_t flags;           // 1: read-only array
};

struct trace_rec {           // one memory access by one thread (24 bytes)
    uint64_t addr;           // (param + 1) << 40 plus the byte offset in the array: each array starts
                             // at an aligned "device" address, as cudaMalloc/cuMemHostAlloc guarantee
    uint32_t warp;           // global warp index: linear block index * warps per block + warp in block
    uint32_t seq;            // this thread's k-th access in this launch
    uint8_t lane;
    uint8_t flags;           // 1: store, 2: atomic (read-modify-write)
    int16_t param;
    uint32_t size;
};

#pragma pack(push, 1)
struct instr_rec {           // one warp-level request, trace.py's INSTRUCTION_DTYPE (36 bytes, packed)
    uint32_t warp;
    uint32_t instr;
    uint8_t is_store;
    uint8_t is_atomic;
    uint32_t threads;
    uint64_t useful_bytes;
    uint32_t sectors;
    uint32_t lines;
    uint32_t span_sectors;
    int16_t param;
};
#pragma pack(pop)

enum fault_kind : int32_t { OK = 0, OUT_OF_BOUNDS = 1, MISALIGNED = 2, READ_ONLY = 3, NULL_POINTER = 4, OTHER = 5,
                            CRASHED = 6, CANCELLED = 7, TRACE_FULL = 8 };
enum trace_cap : int32_t { WARP_CAP = 0, TOTAL_CAP = 1 };   // TRACE_FULL's param: which cap was reached

struct error_info {
    int32_t kind;
    int32_t param;
    int64_t offset;          // byte offset of the access from the array's first byte
    uint64_t size;           // bytes the access asked for
    int32_t is_store;
    uint32_t block[3];
    uint32_t thread[3];
    int32_t signo;           // CRASHED: the signal (SIGFPE, SIGSEGV, ...)
    int32_t sigcode;         // its si_code
    int32_t stack_overflow;  // 1: the fault hit the guard below the kernel thread's stack
    uint64_t fault_addr;
    char message[256];
};

struct launch {
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t max_warps;      // 0: run every warp
    int32_t tracing;
    int32_t raw_warps;       // when tracing: keep every access of the first raw_warps warps
    uint64_t warp_cap;       // when tracing: the most accesses one warp may make (its `cur` vector)
    uint64_t total_cap;      // when tracing: the most bytes the rows and raw accesses may hold together
    instr_rec* rows;         // when tracing: one row per warp-level request; free with zc_free_trace
    uint64_t row_count;
    trace_rec* raw;          // the accesses of the first raw_warps warps
    uint64_t raw_count;
    void* trace_vec;
    uint64_t threads_started;
    uint64_t elapsed_ns;
    error_info err;
};

struct fault {
    int32_t kind;
    int32_t param;
    int64_t offset;
    uint64_t size;
    int32_t is_store;
};

struct trace_state {
    std::vector<trace_rec> cur;    // the accesses of the warp that runs now
    std::vector<trace_rec> raw;    // the accesses of the first raw_warps warps
    std::vector<instr_rec> rows;   // the requests of every finished warp
    std::vector<uint64_t> units;   // scratch
};

struct state {
    bool tracing = false;
    uint32_t warp = 0;
    uint8_t lane = 0;
    uint32_t seq = 0;
    trace_state* trace = nullptr;
};
static state g;

// The launch in flight: see "the kernel thread" below.
struct runner {
    launch* L = nullptr;
    void (*body)(void**, const array_info*) = nullptr;
    void** args = nullptr;
    const array_info* arrays = nullptr;
    pthread_t thread{};
    pthread_t self{};
    bool started = false;
    std::atomic<int> active{0};            // the kernel thread is inside the launch loop
    std::atomic<int> cancel{0};            // Python asked to stop (timeout or interrupt)
    volatile sig_atomic_t critical = 0;    // depth of critical sections (malloc, free, a C++ throw): a stop waits
    volatile sig_atomic_t pending = 0;     // a stop arrived during a critical section
    volatile sig_atomic_t signo = 0, sigcode = 0, overflow = 0;
    volatile uint64_t fault_addr = 0;
    sigjmp_buf jump;
    uintptr_t stack_lo = 0;
    size_t guard = 0;
    struct sigaction saved[6];
    bool installed = false;
    int done = 0;
    std::mutex m;
    std::condition_variable cv;
    alignas(16) char altstack[1 << 16];
};
static runner R;  // one per module: a stuck launch of one module does not block the others

[[noreturn]] inline void stop_now() { siglongjmp(R.jump, 1); }

// Critical sections nest (the trace's push_back calls operator new, which is one too); only the kernel
// thread changes the depth, the signal handler only reads it.
inline void enter_critical() {
    R.critical = R.critical + 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

// The end of a critical section: once the outermost one ends, honour a stop that arrived during it.
inline void leave_critical() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    R.critical = R.critical - 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (R.critical == 0 && R.pending) stop_now();
}

// Room for one more access in the running warp's trace, up to the launch's cap per warp (else TRACE_FULL).
// Grown by hand so that the vector's capacity, not only its size, stays within the cap.
inline void room_in_warp(std::vector<trace_rec>& cur) {
    if (cur.size() < cur.capacity()) return;
    const uint64_t cap = R.L->warp_cap;
    if (cur.size() >= cap) throw fault{TRACE_FULL, WARP_CAP, (int64_t)g.warp, cap, 0};
    cur.reserve((size_t)std::min<uint64_t>(cap, std::max<uint64_t>(256, 2 * (uint64_t)cur.capacity())));
}

// Check (and, when tracing, record) an access of `size` bytes at `q` into array `a`.
inline void access(const volatile void* q, size_t size, size_t align, int flags, const array_info* a) {
    if (!a) return;  // an unchecked pointer to local memory (not global traffic)
    const bool store = flags & 1;
    const uint64_t addr = (uint64_t)(uintptr_t)q;
    const int64_t off = (int64_t)(addr - a->base);
    if (a->base == 0 || off < 0 || (uint64_t)off + size > a->nbytes || addr % align || (store && (a->flags & 1)))
        enter_critical();    // a throw follows: allocation and unwinding must not be cut short
    if (a->base == 0) throw fault{NULL_POINTER, a->param, (int64_t)addr, size, store};
    if (off < 0 || (uint64_t)off + size > a->nbytes) throw fault{OUT_OF_BOUNDS, a->param, off, size, store};
    if (addr % align) throw fault{MISALIGNED, a->param, off, size, store};
    if (store && (a->flags & 1)) throw fault{READ_ONLY, a->param, off, size, store};
    if (g.tracing) {
        enter_critical();
        room_in_warp(g.trace->cur);
        g.trace->cur.push_back(trace_rec{((uint64_t)(a->param + 1) << 40) + (uint64_t)off, g.warp, g.seq, g.lane,
                                         (uint8_t)flags, (int16_t)a->param, (uint32_t)size});
        leave_critical();
    }
    ++g.seq;
}

template <class T> struct ref;
template <class T> struct ptr;

template <class From, class To> struct copy_cv { using type = To; };
template <class From, class To> struct copy_cv<const From, To> { using type = const To; };
template <class From, class To> struct copy_cv<volatile From, To> { using type = volatile To; };
template <class From, class To> struct copy_cv<const volatile From, To> { using type = const volatile To; };

// Members x, y, z, w of a reference to a CUDA vector type are references themselves,
// so that `p[i].x = 1.0f` and `p->y` load or store just that component.
template <class T, class V = std::remove_cv_t<T>> struct ref_members {
    ref_members(T*, const array_info*) {}
};
#define ZC_M1(N, C) \
    template <class T> struct ref_members<T, N> { \
        ref<typename copy_cv<T, C>::type> x; \
        ref_members(T* q, const array_info* a) : x(&q->x, a) {} };
#define ZC_M2(N, C) \
    template <class T> struct ref_members<T, N> { \
        ref<typename copy_cv<T, C>::type> x, y; \
        ref_members(T* q, const array_info* a) : x(&q->x, a), y(&q->y, a) {} };
#define ZC_M3(N, C) \
    template <class T> struct ref_members<T, N> { \
        ref<typename copy_cv<T, C>::type> x, y, z; \
        ref_members(T* q, const array_info* a) : x(&q->x, a), y(&q->y, a), z(&q->z, a) {} };
#define ZC_M4(N, C) \
    template <class T> struct ref_members<T, N> { \
        ref<typename copy_cv<T, C>::type> x, y, z, w; \
        ref_members(T* q, const array_info* a) : x(&q->x, a), y(&q->y, a), z(&q->z, a), w(&q->w, a) {} };

// A reference to one element: converting it to a value is a load, assigning to it a store.
template <class T> struct ref : ref_members<T> {
    using V = std::remove_cv_t<T>;
    T* q;
    const array_info* a;

    ref(T* q_, const array_info* a_) : ref_members<T>(q_, a_), q(q_), a(a_) {}
    ref(const ref&) = default;

    V raw_load() const {
        if constexpr (std::is_volatile_v<T> && !std::is_scalar_v<V>) {
            V v;
            std::memcpy(&v, const_cast<const V*>(q), sizeof(V));
            return v;
        } else {
            return *q;
        }
    }
    void raw_store(const V& v) const {
        if constexpr (std::is_volatile_v<T> && !std::is_scalar_v<V>) {
            std::memcpy(const_cast<V*>(q), &v, sizeof(V));
        } else {
            *const_cast<std::remove_const_t<T>*>(q) = v;
        }
    }
    operator V() const {
        access(q, sizeof(T), alignof(V), 0, a);
        return raw_load();
    }
    const ref& operator=(const V& v) const {
        static_assert(!std::is_const_v<T>, "store through a pointer to const");
        access(q, sizeof(T), alignof(V), 1, a);
        raw_store(v);
        return *this;
    }
    const ref& operator=(const ref& o) const { return *this = V(o); }
    template <class F> V rmw(F f) const {  // one atomic read-modify-write; returns the old value
        access(q, sizeof(T), alignof(V), 3, a);
        V old = raw_load();
        raw_store(f(old));
        return old;
    }
#define ZC_COMPOUND(OP) \
    template <class U> const ref& operator OP##=(const U& u) const { V v = *this; v OP##= u; return *this = v; }
    ZC_COMPOUND(+) ZC_COMPOUND(-) ZC_COMPOUND(*) ZC_COMPOUND(/) ZC_COMPOUND(%)
    ZC_COMPOUND(&) ZC_COMPOUND(|) ZC_COMPOUND(^) ZC_COMPOUND(<<) ZC_COMPOUND(>>)
#undef ZC_COMPOUND
    const ref& operator++() const { V v = *this; ++v; return *this = v; }
    const ref& operator--() const { V v = *this; --v; return *this = v; }
    V operator++(int) const { V v = *this; V w = v; ++w; *this = w; return v; }
    V operator--(int) const { V v = *this; V w = v; --w; *this = w; return v; }
    ptr<T> operator&() const { return ptr<T>(q, a); }
};

template <class T> struct arrow {
    ref<T> r;
    const ref<T>* operator->() const { return std::addressof(r); }
};

// The checked pointer every pointer parameter becomes.
template <class T> struct ptr {
    T* p = nullptr;
    const array_info* a = nullptr;

    ptr() = default;
    ptr(std::nullptr_t) {}
    ptr(T* raw) : p(raw) {}  // unchecked: a pointer to local memory
    ptr(T* raw, const array_info* info) : p(raw), a(info) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    ptr(const ptr<U>& o) : p(o.p), a(o.a) {}

    template <class I, class = std::enable_if_t<std::is_integral_v<I> || std::is_enum_v<I>>>
    ref<T> operator[](I i) const { return ref<T>(p + i, a); }
    ref<T> operator*() const { return ref<T>(p, a); }
    arrow<T> operator->() const { return arrow<T>{ref<T>(p, a)}; }

    template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
    ptr operator+(I i) const { return ptr(p + i, a); }
    template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
    friend ptr operator+(I i, const ptr& q) { return ptr(q.p + i, q.a); }
    template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
    ptr operator-(I i) const { return ptr(p - i, a); }
    std::ptrdiff_t operator-(const ptr& o) const { return p - o.p; }
    template <class I> ptr& operator+=(I i) { p += i; return *this; }
    template <class I> ptr& operator-=(I i) { p -= i; return *this; }
    ptr& operator++() { ++p; return *this; }
    ptr& operator--() { --p; return *this; }
    ptr operator++(int) { ptr o = *this; ++p; return o; }
    ptr operator--(int) { ptr o = *this; --p; return o; }
    bool operator==(const ptr& o) const { return p == o.p; }
    bool operator!=(const ptr& o) const { return p != o.p; }
    bool operator<(const ptr& o) const { return p < o.p; }
    bool operator<=(const ptr& o) const { return p <= o.p; }
    bool operator>(const ptr& o) const { return p > o.p; }
    bool operator>=(const ptr& o) const { return p >= o.p; }
    explicit operator bool() const { return p != nullptr; }
    // (U*)q and static_cast<U*>(q), e.g. to read through a volatile pointer: the raw address, as get() gives
    template <class U> explicit operator U*() const { return (U*)(p); }
    T* get() const { return p; }  // the raw address: loads through it are neither checked nor traced
};

// reinterpret_cast<U*>(p) in kernel source is rewritten to cpu::ptr_cast<U>(p).
template <class U, class T> ptr<U> ptr_cast(const ptr<T>& p) { return ptr<U>(reinterpret_cast<U*>(p.p), p.a); }
template <class U, class T> U* ptr_cast(T* p) { return reinterpret_cast<U*>(p); }

template <class T> ptr<T> make_ptr(void* arg, const array_info* info) {
    return ptr<T>((T*)(uintptr_t)(*(uint64_t*)arg), info);
}

ZC_M1(float1, float) ZC_M2(float2, float) ZC_M3(float3, float) ZC_M4(float4, float)
ZC_M1(int1, int) ZC_M2(int2, int) ZC_M3(int3, int) ZC_M4(int4, int)
ZC_M1(uint1, unsigned int) ZC_M2(uint2, unsigned int) ZC_M3(uint3, unsigned int) ZC_M4(uint4, unsigned int)
ZC_M1(double1, double) ZC_M2(double2, double)

// ---------------------------------------------------------------- the launch loop
// The bytes the trace keeps (rows and raw accesses), counted by capacity: what they hold in memory.
inline uint64_t kept_bytes(const trace_state& t) {
    return (uint64_t)t.rows.capacity() * sizeof(instr_rec) + (uint64_t)t.raw.capacity() * sizeof(trace_rec);
}

// Room for `need` elements in `v`, one of t's kept vectors, within the launch's total cap (else TRACE_FULL).
template <class T> void room_in_trace(std::vector<T>& v, size_t need, const trace_state& t, uint32_t warp) {
    if (need <= v.capacity()) return;
    const uint64_t cap = R.L->total_cap;
    const uint64_t others = kept_bytes(t) - (uint64_t)v.capacity() * sizeof(T);
    const uint64_t most = others < cap ? (cap - others) / sizeof(T) : 0;
    if (need > most) throw fault{TRACE_FULL, TOTAL_CAP, (int64_t)warp, cap, 0};
    v.reserve((size_t)std::min<uint64_t>(most, std::max<uint64_t>(need, 2 * (uint64_t)v.capacity())));
}

// The requests of one warp (its accesses sorted by k and kind), as trace.py's _group makes them.
inline void flush_warp() {
    trace_state& t = *g.trace;
    auto& cur = t.cur;
    if (cur.empty()) return;
    if (cur[0].warp < (uint32_t)R.L->raw_warps) {
        room_in_trace(t.raw, t.raw.size() + cur.size(), t, cur[0].warp);
        t.raw.insert(t.raw.end(), cur.begin(), cur.end());
    }
    std::stable_sort(cur.begin(), cur.end(), [](const trace_rec& x, const trace_rec& y) {
        return x.seq != y.seq ? x.seq < y.seq : x.flags < y.flags; });
    for (size_t i = 0, j; i < cur.size(); i = j) {
        instr_rec row{};
        row.warp = cur[i].warp;
        row.instr = cur[i].seq;
        row.is_store = (cur[i].flags & 1) != 0;
        row.is_atomic = (cur[i].flags & 2) != 0;
        row.param = cur[i].param;
        t.units.clear();
        for (j = i; j < cur.size() && cur[j].seq == cur[i].seq && cur[j].flags == cur[i].flags; ++j) {
            row.threads += 1;
            row.useful_bytes += cur[j].size;
            for (uint64_t u = cur[j].addr / 32; u <= (cur[j].addr + cur[j].size - 1) / 32; ++u) t.units.push_back(u);
        }
        std::sort(t.units.begin(), t.units.end());
        t.units.erase(std::unique(t.units.begin(), t.units.end()), t.units.end());
        row.sectors = (uint32_t)t.units.size();
        for (size_t a = 0, b; a < t.units.size(); a = b) {   // per 128-byte line: first to last sector touched
            for (b = a; b < t.units.size() && t.units[b] / 4 == t.units[a] / 4; ++b) {}
            row.lines += 1;
            row.span_sectors += (uint32_t)(t.units[b - 1] - t.units[a] + 1);
        }
        room_in_trace(t.rows, t.rows.size() + 1, t, row.warp);
        t.rows.push_back(row);
    }
    cur.clear();
}

// Run every thread of the launch, one after another (threads of a block x fastest).
inline void loop(launch* L, void (*body)(void**, const array_info*), void** args, const array_info* arrays) {
    gridDim = dim3(L->grid[0], L->grid[1], L->grid[2]);
    blockDim = dim3(L->block[0], L->block[1], L->block[2]);
    const uint64_t per_block = (uint64_t)L->block[0] * L->block[1] * L->block[2];
    const uint64_t warps_per_block = (per_block + 31) / 32;
    try {
        uint64_t lin_block = 0;
        for (unsigned bz = 0; bz < L->grid[2]; ++bz)
            for (unsigned by = 0; by < L->grid[1]; ++by)
                for (unsigned bx = 0; bx < L->grid[0]; ++bx, ++lin_block) {
                    if (L->max_warps && lin_block * warps_per_block >= L->max_warps) goto done;
                    blockIdx = uint3{bx, by, bz};
                    uint64_t lin_thread = 0;
                    for (unsigned tz = 0; tz < L->block[2]; ++tz)
                        for (unsigned ty = 0; ty < L->block[1]; ++ty)
                            for (unsigned tx = 0; tx < L->block[0]; ++tx, ++lin_thread) {
                                const uint64_t warp = lin_block * warps_per_block + lin_thread / 32;
                                if (L->max_warps && warp >= L->max_warps) goto done;
                                if (R.cancel.load(std::memory_order_relaxed)) stop_now();
                                threadIdx = uint3{tx, ty, tz};
                                if (g.tracing && !g.trace->cur.empty() && g.trace->cur[0].warp != (uint32_t)warp) {
                                    enter_critical();
                                    flush_warp();
                                    leave_critical();
                                }
                                g.warp = (uint32_t)warp;
                                g.lane = (uint8_t)(lin_thread % 32);
                                g.seq = 0;
                                ++L->threads_started;
                                body(args, arrays);
                            }
                }
    done:
        if (g.tracing) {
            enter_critical();
            flush_warp();
            leave_critical();
        }
    } catch (const fault& f) {
        R.critical = 0;
        L->err.kind = f.kind;
        L->err.param = f.param;
        L->err.offset = f.offset;
        L->err.size = f.size;
        L->err.is_store = f.is_store;
    } catch (const std::exception& e) {
        R.critical = 0;
        L->err.kind = OTHER;
        std::strncpy(L->err.message, e.what(), sizeof(L->err.message) - 1);
    } catch (...) {
        R.critical = 0;
        L->err.kind = OTHER;
        std::strncpy(L->err.message, "unknown C++ exception", sizeof(L->err.message) - 1);
    }
    if (R.pending) stop_now();
}

// ---------------------------------------------------------------- the kernel thread
// Why a thread inside this process, and not a child process: a kernel writes the caller's numpy
// arrays in place (zero-copy is the point of the course), and a forked child would write copies.
// So each launch runs on a fresh kernel thread with its own 64 MiB stack, a guard region below it
// and an alternate signal stack; the caller (Python) waits in short slices, so Jupyter's interrupt
// and the timeout are seen within 50 ms.
//  * A fault on the kernel thread (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) jumps back to the
//    launch entry (siglongjmp) and becomes an error; a fault on any other thread goes to the
//    handler that was there before (Python's faulthandler, or the default). The handlers are
//    installed for the launch only.
//  * Stopping (timeout, interrupt): a flag checked before every thread of the launch, and, for a
//    kernel thread stuck inside one CUDA thread (an endless loop), a signal sent to that thread
//    whose handler jumps back too. Kernel code is arithmetic and checked loads and stores, which
//    may be cut anywhere; the places that take malloc's lock (the trace's vectors, a C++ throw, and
//    the kernel's own new/delete, std::vector and std::string: see "the kernel's heap" below) are
//    critical sections during which the stop waits until the section ends. Cutting malloc short
//    would leave its lock held, and the next free of that memory, from Python, would wait forever.
//  * Tracing keeps at most launch::warp_cap accesses of the running warp and launch::total_cap
//    bytes of rows and raw accesses: a traced endless loop ends with TRACE_FULL, not out of memory.
//  * -fstack-clash-protection (compiler.py) makes a large local array touch the guard page by
//    page, so a stack overflow faults in the guard rather than writing over another mapping.
inline int cancel_signal() {
#ifdef SIGRTMIN
    return SIGRTMIN + 4;
#else
    return SIGUSR2;
#endif
}

inline int signal_slot(int sig) {
    if (sig == SIGSEGV) return 0;
    if (sig == SIGBUS) return 1;
    if (sig == SIGFPE) return 2;
    if (sig == SIGILL) return 3;
    if (sig == SIGABRT) return 4;
    return 5;
}

inline void on_signal(int sig, siginfo_t* info, void* ctx) {
    if (R.active.load() && pthread_equal(pthread_self(), R.self)) {
        if (sig == cancel_signal()) {
            if (R.critical) { R.pending = 1; return; }
            stop_now();
        }
        R.signo = sig;
        R.sigcode = info ? info->si_code : 0;
        const uintptr_t addr = info ? (uintptr_t)info->si_addr : 0;
        R.fault_addr = addr;
        R.overflow = (sig == SIGSEGV || sig == SIGBUS) && R.stack_lo && addr + R.guard + (1 << 16) >= R.stack_lo
                     && addr < R.stack_lo + (1 << 16);
        siglongjmp(R.jump, 1);
    }
    if (sig == cancel_signal()) return;  // a late stop for a launch that has ended
    const struct sigaction& old = R.saved[signal_slot(sig)];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) { old.sa_sigaction(sig, info, ctx); return; }
    if (old.sa_handler == SIG_IGN) return;
    if (old.sa_handler != SIG_DFL && !(old.sa_flags & SA_SIGINFO)) { old.sa_handler(sig); return; }
    sigaction(sig, &old, nullptr);       // the default action: a fault recurs on return, a sent signal is raised
    if (!info || info->si_code <= 0) raise(sig);
}

inline void install_handlers() {
    const int sigs[6] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, cancel_signal()};
    struct sigaction act {};
    act.sa_sigaction = on_signal;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    for (int i = 0; i < 6; ++i) sigaction(sigs[i], &act, &R.saved[i]);
    R.installed = true;
}

inline void restore_handlers() {
    if (!R.installed) return;
    const int sigs[6] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, cancel_signal()};
    for (int i = 0; i < 6; ++i) sigaction(sigs[i], &R.saved[i], nullptr);
    R.installed = false;
}

inline void* kernel_thread(void*) {
    R.self = pthread_self();
    stack_t ss{};
    ss.ss_sp = R.altstack;
    ss.ss_size = sizeof R.altstack;
    sigaltstack(&ss, nullptr);
#ifdef __linux__
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void* lo = nullptr;
        size_t size = 0, guard = 0;
        pthread_attr_getstack(&attr, &lo, &size);
        pthread_attr_getguardsize(&attr, &guard);
        R.stack_lo = (uintptr_t)lo;
        R.guard = guard;
        pthread_attr_destroy(&attr);
    }
#endif
    launch* L = R.L;
    auto* trace = new trace_state();
    g = state{};
    g.tracing = L->tracing != 0;
    g.trace = trace;
    const auto t0 = std::chrono::steady_clock::now();
    if (sigsetjmp(R.jump, 1) == 0) {
        R.active.store(1);
        loop(L, R.body, R.args, R.arrays);
        R.active.store(0);
    } else {                                 // back from a fault or a stop
        R.active.store(0);
        R.critical = 0;
        R.pending = 0;
        L->err.kind = R.signo ? CRASHED : CANCELLED;
        L->err.signo = R.signo;
        L->err.sigcode = R.sigcode;
        L->err.stack_overflow = R.overflow;
        L->err.fault_addr = R.fault_addr;
    }
    L->elapsed_ns = (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - t0).count();
    if (L->err.kind) {
        L->err.block[0] = blockIdx.x; L->err.block[1] = blockIdx.y; L->err.block[2] = blockIdx.z;
        L->err.thread[0] = threadIdx.x; L->err.thread[1] = threadIdx.y; L->err.thread[2] = threadIdx.z;
    }
    g.trace = nullptr;
    g.tracing = false;
    L->trace_vec = trace;
    L->rows = trace->rows.data();
    L->row_count = trace->rows.size();
    L->raw = trace->raw.data();
    L->raw_count = trace->raw.size();
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    {
        std::lock_guard<std::mutex> lock(R.m);
        R.done = 1;
    }
    R.cv.notify_all();
    return nullptr;
}

// Start a launch on a new kernel thread; 0, or the error number pthread_create gave.
inline int start(launch* L, void (*body)(void**, const array_info*), void** args, const array_info* arrays) {
    if (R.started) return EBUSY;
    L->err = error_info{};
    L->rows = nullptr; L->row_count = 0; L->raw = nullptr; L->raw_count = 0; L->trace_vec = nullptr;
    L->threads_started = 0; L->elapsed_ns = 0;
    R.L = L; R.body = body; R.args = args; R.arrays = arrays;
    R.cancel.store(0); R.active.store(0);
    R.critical = 0; R.pending = 0; R.signo = 0; R.sigcode = 0; R.overflow = 0; R.fault_addr = 0;
    R.stack_lo = 0; R.guard = 0; R.done = 0;
    install_handlers();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)64 << 20);
    pthread_attr_setguardsize(&attr, (size_t)256 << 10);
    sigset_t blocked, old;                   // the kernel thread takes no asynchronous signal but the stop
    sigfillset(&blocked);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, cancel_signal()}) sigdelset(&blocked, s);
    pthread_sigmask(SIG_SETMASK, &blocked, &old);
    const int rc = pthread_create(&R.thread, &attr, kernel_thread, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    if (rc) {
        restore_handlers();
        return rc;
    }
    R.started = true;
    return 0;
}

// An empty thread body, for measuring what the launch loop alone costs.
inline void empty_body(void**, const array_info*) { asm volatile(""); }

// ---------------------------------------------------------------- the kernel's heap
// malloc and free inside a critical section: a stop that arrives meanwhile waits until they return.
inline void* heap_alloc(std::size_t n, std::size_t align) noexcept {
    void* p = nullptr;
    enter_critical();
    if (align <= alignof(std::max_align_t)) p = std::malloc(n ? n : 1);
    else if (posix_memalign(&p, align, n ? n : 1) != 0) p = nullptr;
    leave_critical();
    return p;
}

inline void heap_free(void* p) noexcept {
    enter_critical();
    std::free(p);
    leave_critical();
}

// operator new's contract: call the new-handler until the allocation succeeds, or throw std::bad_alloc.
inline void* heap_new(std::size_t n, std::size_t align) {
    for (;;) {
        if (void* p = heap_alloc(n, align)) return p;
        std::new_handler handler = std::get_new_handler();
        if (!handler) throw std::bad_alloc();
        handler();
    }
}

inline void* heap_new_nothrow(std::size_t n, std::size_t align) noexcept {
    try {
        return heap_new(n, align);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace cpu

// The kernel library's own operator new and delete: every new/delete in the kernel, and every
// allocation of std::vector, std::string and the other containers it uses, goes through the critical
// section above. compiler.py links the library with a version script that exports only the zc_*
// functions, so these bind inside the library and the process's allocator is not replaced.
#if defined(__linux__)
void* operator new(std::size_t n) { return cpu::heap_new(n, 0); }
void* operator new[](std::size_t n) { return cpu::heap_new(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return cpu::heap_new(n, (std::size_t)a); }
void* operator new[](std::size_t n, std::align_val_t a) { return cpu::heap_new(n, (std::size_t)a); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return cpu::heap_new_nothrow(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return cpu::heap_new_nothrow(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return cpu::heap_new_nothrow(n, (std::size_t)a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return cpu::heap_new_nothrow(n, (std::size_t)a);
}
void operator delete(void* p) noexcept { cpu::heap_free(p); }
void operator delete[](void* p) noexcept { cpu::heap_free(p); }
void operator delete(void* p, std::size_t) noexcept { cpu::heap_free(p); }
void operator delete[](void* p, std::size_t) noexcept { cpu::heap_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { cpu::heap_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { cpu::heap_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { cpu::heap_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { cpu::heap_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { cpu::heap_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { cpu::heap_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { cpu::heap_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { cpu::heap_free(p); }
#endif

// ---------------------------------------------------------------- atomics (exact: threads run one at a time)
template <class T> using zc_val = std::remove_cv_t<T>;
#define ZC_ATOMIC(NAME, EXPR) \
    template <class T> zc_val<T> NAME(cpu::ptr<T> p, std::type_identity_t<zc_val<T>> val) { \
        return (*p).rmw([&](zc_val<T> old) -> zc_val<T> { return EXPR; }); } \
    template <class T> zc_val<T> NAME(T* p, std::type_identity_t<zc_val<T>> val) { \
        return NAME(cpu::ptr<T>(p), val); } \
    template <class T> zc_val<T> NAME##_system(cpu::ptr<T> p, std::type_identity_t<zc_val<T>> val) { return NAME(p, val); } \
    template <class T> zc_val<T> NAME##_block(cpu::ptr<T> p, std::type_identity_t<zc_val<T>> val) { return NAME(p, val); }
ZC_ATOMIC(atomicAdd, old + val)
ZC_ATOMIC(atomicSub, old - val)
ZC_ATOMIC(atomicExch, val)
ZC_ATOMIC(atomicMin, val < old ? val : old)
ZC_ATOMIC(atomicMax, old < val ? val : old)
ZC_ATOMIC(atomicAnd, old & val)
ZC_ATOMIC(atomicOr, old | val)
ZC_ATOMIC(atomicXor, old ^ val)
ZC_ATOMIC(atomicInc, old >= val ? 0 : old + 1)
ZC_ATOMIC(atomicDec, (old == 0 || old > val) ? val : old - 1)
#undef ZC_ATOMIC
template <class T> zc_val<T> atomicCAS(cpu::ptr<T> p, std::type_identity_t<zc_val<T>> compare,
                                       std::type_identity_t<zc_val<T>> val) {
    return (*p).rmw([&](zc_val<T> old) -> zc_val<T> { return old == compare ? val : old; });
}
template <class T> zc_val<T> atomicCAS(T* p, std::type_identity_t<zc_val<T>> compare, std::type_identity_t<zc_val<T>> val) {
    return atomicCAS(cpu::ptr<T>(p), compare, val);
}

// ---------------------------------------------------------------- cache-hint loads
// __ldg, __ldca, __ldcg, __ldcs, __ldlu and __ldcv choose a load's cache path on the GPU (Programming Guide, load
// functions using cache hints). The backend models no cache, so each is a plain load of the value in memory now,
// checked and traced like one (on a GPU the read-only path may return an older value when the memory changes while
// the kernel runs). Each is also a compiler barrier, so a loop that polls memory another thread writes reads it again
// every time. A GPU promises less: a cache hint is not a memory-consistency rule (PTX ISA, Cache Operators), each is a
// weak load that ptxas may hoist out of a loop (CUDA 13.0 did, for __ldcv and __ldcg: avoid-hazards-on-mapped-memory's
// spin_loop and its SASS), so lesson checks refuse a flag polled with them, from the source.
#define ZC_LOAD_HINT(NAME) \
    template <class T> zc_val<T> NAME(cpu::ptr<T> p) { \
        zc_val<T> v = *p; std::atomic_signal_fence(std::memory_order_seq_cst); return v; } \
    template <class T> zc_val<T> NAME(const T* p) { return NAME(cpu::ptr<const T>(p)); }
ZC_LOAD_HINT(__ldg)
ZC_LOAD_HINT(__ldca)
ZC_LOAD_HINT(__ldcg)
ZC_LOAD_HINT(__ldcs)
ZC_LOAD_HINT(__ldlu)
ZC_LOAD_HINT(__ldcv)
#undef ZC_LOAD_HINT

// ---------------------------------------------------------------- libcu++: cuda::atomic_ref (<cuda/atomic>)
// cuda::atomic_ref<T, cuda::thread_scope_system> with load(memory_order_acquire) and store(v, memory_order_release)
// is how a kernel waits for and publishes a flag another agent shares (avoid-hazards-on-mapped-memory). Here each
// operation is the compiler's __atomic builtin with the same order on the element the reference names, checked and
// traced like a load, a store or a read-modify-write: a host thread that raises a flag while the kernel spins is seen.
// The scope has no effect on a CPU (one memory, coherent); the checks of the lessons read it from the source.
namespace cuda {
namespace std {
enum memory_order : int {
    memory_order_relaxed = __ATOMIC_RELAXED, memory_order_consume = __ATOMIC_CONSUME,
    memory_order_acquire = __ATOMIC_ACQUIRE, memory_order_release = __ATOMIC_RELEASE,
    memory_order_acq_rel = __ATOMIC_ACQ_REL, memory_order_seq_cst = __ATOMIC_SEQ_CST
};
inline void atomic_thread_fence(memory_order order) { __atomic_thread_fence((int)order); }
}  // namespace std
using std::memory_order;
using std::memory_order_relaxed;
using std::memory_order_consume;
using std::memory_order_acquire;
using std::memory_order_release;
using std::memory_order_acq_rel;
using std::memory_order_seq_cst;
enum thread_scope : int { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2,
                          thread_scope_thread = 3 };
inline void atomic_thread_fence(memory_order order, thread_scope = thread_scope_system) {
    __atomic_thread_fence((int)order);
}

template <class T, thread_scope Scope = thread_scope_system> struct atomic_ref {
    static_assert(::std::is_trivially_copyable_v<T> && !::std::is_const_v<T> && !::std::is_volatile_v<T>,
                  "cuda::atomic_ref<T> needs a plain, non-const T (a pointer parameter without const)");
    T* q;
    const ::cpu::array_info* a;

    explicit atomic_ref(T& r) : q(&r), a(nullptr) {}
    explicit atomic_ref(const ::cpu::ref<T>& r) : q(r.q), a(r.a) {}
    atomic_ref(const atomic_ref&) = default;

    T load(memory_order order = memory_order_seq_cst) const {
        ::cpu::access(q, sizeof(T), alignof(T), 0, a);
        T v;
        __atomic_load(q, &v, (int)order);
        return v;
    }
    void store(T v, memory_order order = memory_order_seq_cst) const {
        ::cpu::access(q, sizeof(T), alignof(T), 1, a);
        __atomic_store(q, &v, (int)order);
    }
    operator T() const { return load(); }
    T operator=(T v) const { store(v); return v; }
    T exchange(T v, memory_order order = memory_order_seq_cst) const {
        ::cpu::access(q, sizeof(T), alignof(T), 3, a);
        T old;
        __atomic_exchange(q, &v, &old, (int)order);
        return old;
    }
    bool compare_exchange_strong(T& expected, T v, memory_order order = memory_order_seq_cst) const {
        ::cpu::access(q, sizeof(T), alignof(T), 3, a);
        return __atomic_compare_exchange(q, &expected, &v, false, (int)order, __ATOMIC_SEQ_CST);
    }
    bool compare_exchange_weak(T& expected, T v, memory_order order = memory_order_seq_cst) const {
        return compare_exchange_strong(expected, v, order);
    }
#define ZC_FETCH(NAME, BUILTIN) \
    T NAME(T v, memory_order order = memory_order_seq_cst) const { \
        ::cpu::access(q, sizeof(T), alignof(T), 3, a); return BUILTIN(q, v, (int)order); }
    ZC_FETCH(fetch_add, __atomic_fetch_add) ZC_FETCH(fetch_sub, __atomic_fetch_sub)
    ZC_FETCH(fetch_and, __atomic_fetch_and) ZC_FETCH(fetch_or, __atomic_fetch_or)
    ZC_FETCH(fetch_xor, __atomic_fetch_xor)
#undef ZC_FETCH
};
}  // namespace cuda

// ---------------------------------------------------------------- what runtime.py calls
extern "C" int zc_wait(int milliseconds) {   // 1 once the launch has ended
    if (!cpu::R.started) return 1;
    std::unique_lock<std::mutex> lock(cpu::R.m);
    cpu::R.cv.wait_for(lock, std::chrono::milliseconds(milliseconds), [] { return cpu::R.done != 0; });
    return cpu::R.done;
}

extern "C" void zc_cancel() {                 // ask the launch to stop; call again if it has not
    cpu::R.cancel.store(1);
    if (cpu::R.started && cpu::R.active.load()) pthread_kill(cpu::R.thread, cpu::cancel_signal());
}

extern "C" int zc_finish(cpu::launch* L) {    // after zc_wait gave 1: join the kernel thread
    if (cpu::R.started) {
        pthread_join(cpu::R.thread, nullptr);
        cpu::R.started = false;
    }
    cpu::restore_handlers();
    return L->err.kind;
}

extern "C" void zc_free_trace(cpu::launch* L) {
    delete static_cast<cpu::trace_state*>(L->trace_vec);
    L->trace_vec = nullptr;
    L->rows = nullptr;
    L->row_count = 0;
    L->raw = nullptr;
    L->raw_count = 0;
}

extern "C" double zc_loop_ns(unsigned threads) {   // nanoseconds per thread of an empty launch
    cpu::launch L{};
    L.grid[0] = (threads + 255) / 256; L.grid[1] = L.grid[2] = 1;
    L.block[0] = 256; L.block[1] = L.block[2] = 1;
    cpu::g = cpu::state{};
    cpu::R.L = &L;
    cpu::R.cancel.store(0);
    cpu::R.pending = 0;                      // loop() may jump on these: no launch is in flight here
    const auto t0 = std::chrono::steady_clock::now();
    cpu::loop(&L, cpu::empty_body, nullptr, nullptr);
    const double ns = (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - t0).count();
    return ns / ((double)L.grid[0] * 256);
}

extern "C" unsigned long long zc_sizeof(int what) {   // runtime.py checks its ctypes mirrors against these
    switch (what) {
        case 0: return sizeof(cpu::array_info);
        case 1: return sizeof(cpu::error_info);
        case 2: return sizeof(cpu::launch);
        case 3: return sizeof(cpu::trace_rec);
        case 4: return sizeof(cpu::instr_rec);
        default: return 0;
    }
}

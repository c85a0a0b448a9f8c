// cuda_cpu.h: just enough CUDA to compile the course's kernels with a C++ compiler
// and run every thread of a launch, one after another, on the CPU (lesson 04).
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
#include <cstring>
#include <exception>
#include <memory>
#include <type_traits>
#include <vector>

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
inline uint3 threadIdx{0, 0, 0};
inline uint3 blockIdx{0, 0, 0};
inline dim3 blockDim{1, 1, 1};
inline dim3 gridDim{1, 1, 1};
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

enum fault_kind : int32_t { OK = 0, OUT_OF_BOUNDS = 1, MISALIGNED = 2, READ_ONLY = 3, NULL_POINTER = 4, OTHER = 5 };

struct error_info {
    int32_t kind;
    int32_t param;
    int64_t offset;          // byte offset of the access from the array's first byte
    uint64_t size;           // bytes the access asked for
    int32_t is_store;
    uint32_t block[3];
    uint32_t thread[3];
    char message[256];
};

struct launch {
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t max_warps;      // 0: run every warp
    int32_t tracing;
    int32_t pad;
    trace_rec* trace_data;   // filled when tracing; free with zc_free_trace
    uint64_t trace_count;
    void* trace_vec;
    error_info err;
};

struct fault {
    int32_t kind;
    int32_t param;
    int64_t offset;
    uint64_t size;
    int32_t is_store;
};

struct state {
    bool tracing = false;
    uint32_t warp = 0;
    uint8_t lane = 0;
    uint32_t seq = 0;
    std::vector<trace_rec>* recs = nullptr;
};
inline state g;

// Check (and, when tracing, record) an access of `size` bytes at `q` into array `a`.
inline void access(const volatile void* q, size_t size, size_t align, int flags, const array_info* a) {
    if (!a) return;  // an unchecked pointer to local memory (not global traffic)
    const bool store = flags & 1;
    const uint64_t addr = (uint64_t)(uintptr_t)q;
    const int64_t off = (int64_t)(addr - a->base);
    if (a->base == 0) throw fault{NULL_POINTER, a->param, (int64_t)addr, size, store};
    if (off < 0 || (uint64_t)off + size > a->nbytes) throw fault{OUT_OF_BOUNDS, a->param, off, size, store};
    if (addr % align) throw fault{MISALIGNED, a->param, off, size, store};
    if (store && (a->flags & 1)) throw fault{READ_ONLY, a->param, off, size, store};
    if (g.tracing)
        g.recs->push_back(trace_rec{((uint64_t)(a->param + 1) << 40) + (uint64_t)off, g.warp, g.seq, g.lane,
                                    (uint8_t)flags, (int16_t)a->param, (uint32_t)size});
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
template <class F> int run(launch* L, F&& body) {
    L->err = error_info{};
    L->trace_data = nullptr;
    L->trace_count = 0;
    L->trace_vec = nullptr;
    auto* recs = new std::vector<trace_rec>();
    g = state{};
    g.tracing = L->tracing != 0;
    g.recs = recs;
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
                                threadIdx = uint3{tx, ty, tz};
                                g.warp = (uint32_t)warp;
                                g.lane = (uint8_t)(lin_thread % 32);
                                g.seq = 0;
                                body();
                            }
                }
    done:;
    } catch (const fault& f) {
        L->err.kind = f.kind;
        L->err.param = f.param;
        L->err.offset = f.offset;
        L->err.size = f.size;
        L->err.is_store = f.is_store;
    } catch (const std::exception& e) {
        L->err.kind = OTHER;
        std::strncpy(L->err.message, e.what(), sizeof(L->err.message) - 1);
    } catch (...) {
        L->err.kind = OTHER;
        std::strncpy(L->err.message, "unknown C++ exception", sizeof(L->err.message) - 1);
    }
    if (L->err.kind) {
        L->err.block[0] = blockIdx.x; L->err.block[1] = blockIdx.y; L->err.block[2] = blockIdx.z;
        L->err.thread[0] = threadIdx.x; L->err.thread[1] = threadIdx.y; L->err.thread[2] = threadIdx.z;
    }
    g.recs = nullptr;
    g.tracing = false;
    L->trace_data = recs->data();
    L->trace_count = recs->size();
    L->trace_vec = recs;
    return L->err.kind;
}

}  // namespace cpu

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

extern "C" void zc_free_trace(cpu::launch* L) {
    delete static_cast<std::vector<cpu::trace_rec>*>(L->trace_vec);
    L->trace_vec = nullptr;
    L->trace_data = nullptr;
    L->trace_count = 0;
}

extern "C" unsigned long long zc_sizeof_launch() { return sizeof(cpu::launch); }

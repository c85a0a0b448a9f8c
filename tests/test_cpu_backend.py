"""The CPU backend (helpers/cpu): kernels against numpy, rejected features, bounds checks, traces.

The PCIe model, the sector explorer and lesson 09's exercise are tested in test_pcie_model.py and
test_lesson07_tools.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from helpers import cpu, kernels
from helpers.cpu import compiler
f32 = np.float32
RNG = np.random.default_rng(2024)


# ---------------------------------------------------------------------------- references
def _acc_order(n: int, step: int, tid: int) -> list[int]:
    return list(range(tid, n, step))


def _check_never(run: Callable[[np.float32, np.ndarray], None], accs: list[np.float32]) -> None:
    """A read kernel writes sink[0] only when its sum equals ``never``: use one thread's exact sum,
    then a value next to it that no thread can produce."""
    accs = [f32(a) for a in accs]
    target = accs[len(accs) // 3]
    assert sum(a == target for a in accs) == 1, "test data should give every thread a distinct sum"
    sink = np.full(1, f32(-123.0), np.float32)
    run(target, sink)
    assert sink[0] == target
    sink[0] = f32(-123.0)
    run(np.nextafter(target, f32(np.inf)), sink)
    assert sink[0] == f32(-123.0)


BLOCK, GRID = 32, 2
STEP = BLOCK * GRID
LAUNCH = dict(block=(BLOCK, 1, 1), grid=(GRID, 1))


def ref_vector_add(fn: cpu.Function) -> None:
    n = 1000
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    fn(a, b, c, np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
    np.testing.assert_array_equal(c, a + b)
    c2 = np.zeros(n, np.float32)  # the same through device pointers (np.intp), as with zero-copy
    fn(cpu.device_pointer(a), cpu.device_pointer(b), cpu.device_pointer(c2), np.int32(n), block=(128, 1, 1),
       grid=(8, 1, 1))
    np.testing.assert_array_equal(c2, a + b)


def ref_read_float(fn: cpu.Function) -> None:
    n = 200
    src = RNG.random(n, dtype=np.float32)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for i in _acc_order(n, STEP, t):
            acc = f32(acc + src[i])
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(n), never, sink, **LAUNCH), accs)


def ref_read_float2(fn: cpu.Function) -> None:
    n2 = 150
    src = RNG.random(2 * n2, dtype=np.float32)
    v = src.reshape(n2, 2)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for i in _acc_order(n2, STEP, t):
            acc = f32(acc + f32(v[i, 0] + v[i, 1]))
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(n2), never, sink, **LAUNCH), accs)


def _f4(v: np.ndarray) -> np.float32:
    return f32(f32(v[0] + v[1]) + f32(v[2] + v[3]))


def ref_read_float4(fn: cpu.Function) -> None:
    n4 = 150
    src = RNG.random(4 * n4, dtype=np.float32)
    v = src.reshape(n4, 4)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for i in _acc_order(n4, STEP, t):
            acc = f32(acc + _f4(v[i]))
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(n4), never, sink, **LAUNCH), accs)


def ref_read_float4_x4(fn: cpu.Function) -> None:
    n4 = 300  # 4 unrolled iterations for some threads, then the remainder loop
    src = RNG.random(4 * n4, dtype=np.float32)
    v = src.reshape(n4, 4)
    accs = []
    for t in range(STEP):
        acc, i = f32(0), t
        while i + 3 * STEP < n4:
            q = [_f4(v[i + k * STEP]) for k in range(4)]
            acc = f32(acc + f32(f32(f32(q[0] + q[1]) + q[2]) + q[3]))
            i += 4 * STEP
        while i < n4:
            acc = f32(acc + _f4(v[i]))
            i += STEP
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(n4), never, sink, **LAUNCH), accs)


def ref_read_float4_x4_runs(fn: cpu.Function) -> None:
    n4, warps = 128 * 3 + 50, STEP // 32  # a whole run for some warps, then a partial one
    src = RNG.random(4 * n4, dtype=np.float32)
    v = src.reshape(n4, 4)
    accs = []
    for t in range(STEP):
        lane, warp, acc = t % 32, t // 32, f32(0)
        for base in range(warp * 128, n4, warps * 128):
            if base + 128 <= n4:
                q = [_f4(v[base + k * 32 + lane]) for k in range(4)]
                acc = f32(acc + f32(f32(f32(q[0] + q[1]) + q[2]) + q[3]))
            else:
                for i in range(base + lane, n4, 32):
                    acc = f32(acc + _f4(v[i]))
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(n4), never, sink, **LAUNCH), accs)


def ref_write_float4(fn: cpu.Function) -> None:
    n4 = 150
    dst = np.zeros(4 * (n4 + 2), np.float32)
    fn(dst, np.uint64(n4), f32(2.5), **LAUNCH)
    assert np.all(dst[:4 * n4] == 2.5) and np.all(dst[4 * n4:] == 0)


def ref_reread_cached(fn: cpu.Function) -> None:
    n4, passes, shift = 100, 3, 57
    src = RNG.random(4 * n4, dtype=np.float32)
    v = src.reshape(n4, 4)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for p in range(passes):
            for i in _acc_order(n4, STEP, t):
                acc = f32(acc + _f4(v[(i + p * shift) % n4]))
        accs.append(acc)
    for cache in range(4):  # off the GPU every load kind is a plain load
        _check_never(lambda never, sink: fn(src, np.uint64(n4), np.int32(passes), np.uint64(shift), np.int32(cache),
                                            never, sink, **LAUNCH), accs)


def ref_reread_rotate(fn: cpu.Function) -> None:
    chunk4, blocks, threads = 10, 3, 4
    src = RNG.random(4 * chunk4 * blocks, dtype=np.float32)
    v = src.reshape(chunk4 * blocks, 4)
    for rotate, passes in ((0, 2), (1, 2)):  # two of three chunks: every thread's sum differs
        accs = []
        for b in range(blocks):
            for t in range(threads):
                acc = f32(0)
                for p in range(passes):
                    chunk = (b + p * rotate) % blocks  # block b's chunk in pass p
                    for i in range(t, chunk4, threads):
                        acc = f32(acc + _f4(v[chunk * chunk4 + i]))
                accs.append(acc)
        for cache in range(4):  # off the GPU every load kind is a plain load
            sms = np.full(blocks, 99, np.uint32)
            _check_never(lambda never, sink: fn(src, np.uint64(chunk4), np.int32(passes), np.int32(rotate),
                                                np.int32(cache), never, sink, sms, block=(threads, 1, 1),
                                                grid=(blocks, 1)), accs)
            assert np.all(sms == 0)  # thread 0 of every block wrote its SM; the CPU backend has one, SM 0


def ref_scatter_u32(fn: cpu.Function) -> None:
    table = np.zeros(1000, np.uint32)
    where = RNG.choice(1000, size=300, replace=False).astype(np.uint32)
    value = RNG.integers(1, 2**32 - 1, size=300, dtype=np.uint32)
    fn(table, where, value, np.uint64(300), **LAUNCH)
    expected = np.zeros(1000, np.uint32)
    expected[where] = value
    np.testing.assert_array_equal(table, expected)


def ref_read_strided(fn: cpu.Function) -> None:
    count, stride, offset = 150, 3, 5
    src = RNG.random(offset + count * stride, dtype=np.float32)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for i in _acc_order(count, STEP, t):
            acc = f32(acc + src[offset + i * stride])
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(count), np.int32(stride), np.int32(offset), never, sink,
                                        **LAUNCH), accs)


def ref_read_strided_float4(fn: cpu.Function) -> None:
    count, stride, offset = 100, 2, 3
    src = RNG.random(4 * (offset + count * stride), dtype=np.float32)
    v = src.reshape(-1, 4)
    accs = []
    for t in range(STEP):
        acc = f32(0)
        for i in _acc_order(count, STEP, t):
            acc = f32(acc + _f4(v[offset + i * stride]))
        accs.append(acc)
    _check_never(lambda never, sink: fn(src, np.uint64(count), np.int32(stride), np.int32(offset), never, sink,
                                        **LAUNCH), accs)


def ref_fill_in_order(fn: cpu.Function) -> None:
    dst = np.zeros(300, np.float32)
    fn(dst, np.uint64(250), f32(7.0), **LAUNCH)
    assert np.all(dst[:250] == 7.0) and np.all(dst[250:] == 0)


def ref_count_atomically(fn: cpu.Function) -> None:
    counter = np.zeros(1, np.int32)
    fn(counter, np.int32(5), block=(64, 1, 1), grid=(3, 1))
    assert counter[0] == 64 * 3 * 5  # exact: threads run one at a time


def ref_count_plainly(fn: cpu.Function) -> None:
    counter = np.zeros(1, np.int32)
    fn(counter, np.int32(5), block=(64, 1, 1), grid=(3, 1))
    assert counter[0] == 64 * 3 * 5  # sequential threads never race: the GPU's lost updates do not show


def ref_publish(fn: cpu.Function) -> None:
    payload, flag = np.zeros(300, np.float32), np.zeros(1, np.uint32)
    fn(payload, np.uint64(250), f32(7.0), flag, np.uint32(9), **LAUNCH)
    assert np.all(payload[:250] == 7.0) and np.all(payload[250:] == 0) and flag[0] == 9  # one thread, any order


def ref_wait_for_host(fn: cpu.Function) -> None:
    payload = np.array([3.0] * 40 + [1.0] * 10, np.float32)
    for how in range(5):  # every way of loading the flag is a plain load on the CPU
        flag, result = np.array([6], np.uint32), np.zeros(4, np.uint64)
        fn(flag, np.uint32(0), np.uint32(6), np.uint64(1000), np.int32(how), payload, np.uint64(50), f32(3.0), result,
           **LAUNCH)
        assert result.tolist() == [1, 1, 40, 1]  # seen at the first load; 40 payload elements equal 3.0
    flag, result = np.array([5], np.uint32), np.zeros(4, np.uint64)
    fn(flag, np.uint32(0), np.uint32(6), np.uint64(1000), np.int32(3), payload, np.uint64(50), f32(3.0), result, **LAUNCH)
    assert result.tolist() == [1000, 0, 40, 1]  # never raised: it gives up after max_spins loads


def ref_spin(fn: cpu.Function) -> None:
    for flag_value, turns in ((1, 1), (0, 1000)):  # raised before the launch: one turn; never raised: max_spins
        flag, out = np.array([flag_value], np.uint32), np.zeros(1, np.uint64)
        fn(flag, np.uint32(1), np.uint64(1000), out, block=(1, 1, 1), grid=(1, 1))
        assert out.tolist() == [turns]


def ref_pointer_chase_timed(fn: cpu.Function) -> None:
    n = 257
    order = RNG.permutation(n).astype(np.uint32)
    nxt = np.empty(n, np.uint32)
    nxt[order] = np.roll(order, -1)
    for warm, steps in ((0, 1000), (n, 300)):
        expected = 11
        for _ in range(warm + steps):
            expected = int(nxt[expected])
        out = np.full(3, 7, np.uint64)
        fn(nxt, np.uint32(11), np.uint64(warm), np.uint64(steps), out, block=(1, 1, 1), grid=(1, 1))
        assert out.tolist() == [expected, 0, 0]  # no GPU timer and one SM (0) off the GPU


def ref_pointer_chase(fn: cpu.Function) -> None:
    n = 257
    order = RNG.permutation(n).astype(np.uint32)
    nxt = np.empty(n, np.uint32)
    nxt[order] = np.roll(order, -1)  # one random cycle through every element
    j, steps = 11, 1000
    expected = j
    for _ in range(steps):
        expected = int(nxt[expected])
    result = np.zeros(1, np.uint32)
    fn(nxt, np.uint32(j), np.uint64(steps), result, block=(1, 1, 1), grid=(1, 1))
    assert result[0] == expected


REFERENCES: dict[str, Callable[[cpu.Function], None]] = {
    "vector_add_kernel": ref_vector_add,
    "read_float": ref_read_float, "read_float2": ref_read_float2, "read_float4": ref_read_float4,
    "read_float4_x4": ref_read_float4_x4, "read_float4_x4_runs": ref_read_float4_x4_runs,
    "read_float4_x4_l2_256": ref_read_float4_x4,  # the same loads with a GPU-only cache hint
    "read_bulk": ref_read_float4,  # off the GPU the bulk-copy kernel is the plain float4 read
    "write_float4": ref_write_float4, "reread_cached": ref_reread_cached, "reread_rotate": ref_reread_rotate,
    "read_strided": ref_read_strided, "read_strided_float4": ref_read_strided_float4,
    "fill_in_order": ref_fill_in_order, "count_atomically": ref_count_atomically, "count_plainly": ref_count_plainly,
    "count_atomically_system": ref_count_atomically, "publish_fenced": ref_publish, "publish_unfenced": ref_publish,
    "publish_flag_first": ref_publish, "wait_for_host": ref_wait_for_host,
    "spin_volatile": ref_spin, "spin_ldcv": ref_spin, "spin_ldcg": ref_spin, "spin_plain": ref_spin,
    "spin_atomic_ref": ref_spin,
    "pointer_chase": ref_pointer_chase, "pointer_chase_timed": ref_pointer_chase_timed, "scatter_u32": ref_scatter_u32,
}

DISCOVERED = [(stem, name) for stem in kernels.files() for name in kernels.names(stem)]


def test_every_course_kernel_has_a_numpy_reference() -> None:
    assert len(DISCOVERED) >= 13
    missing = [f"{stem}.cu:{name}" for stem, name in DISCOVERED if name not in REFERENCES]
    assert not missing, f"kernels without a numpy reference test in {__file__}: {missing}"


@pytest.mark.parametrize("stem,name", DISCOVERED, ids=[f"{s}:{n}" for s, n in DISCOVERED])
def test_kernel_matches_numpy(stem: str, name: str) -> None:
    assert name in REFERENCES, f"no numpy reference for {stem}.cu:{name}"
    REFERENCES[name](cpu.load_kernel(stem, name))


# ---------------------------------------------------------------------------- features
POINTERS = r"""
extern "C" __global__ void features(float4 *v, volatile int *flag, const float *__restrict__ src, float *out,
                                    unsigned int *counters) {
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const float *p = 0;            // a raw local pointer is fine while it is never a parameter's value
    (void)p;
    auto q = src + 2;              // pointer arithmetic keeps the checked pointer
    out[t] = *q + q[t] + src[t];
    v[t].x = (float)t;             // component store through a reference
    v->w = 9.0f;                   // p->x
    float4 w = v[t];
    out[t] += w.x + reinterpret_cast<const float2 *>(src)[t].y;
    atomicMax(&counters[0], (unsigned int)t);
    atomicCAS(&counters[1], 0u, 42u);
    atomicAdd(&counters[2], 1u);
    __threadfence_system();
    flag[0] = 1;
}
"""


def test_pointer_forms_atomics_and_3d_blocks() -> None:
    fn = cpu.SourceModule(POINTERS, name="features.cu").get_function("features")
    nthreads = 4 * 2 * 2
    v = np.zeros((nthreads, 4), np.float32)
    flag = np.zeros(1, np.int32)
    src = RNG.random(2 * nthreads + 2, dtype=np.float32)
    out = np.zeros(nthreads, np.float32)
    counters = np.zeros(3, np.uint32)
    fn(v, flag, src, out, counters, block=(4, 2, 2), grid=(1, 1, 1))
    t = np.arange(nthreads)
    assert np.array_equal(v[:, 0], t.astype(np.float32)) and v[0, 3] == 9.0 and flag[0] == 1
    expected = f32(src[2] + src[2 + t]) + src[t]
    expected = f32(expected + f32(t.astype(np.float32) + src.reshape(-1, 2)[t, 1]))
    np.testing.assert_array_equal(out, expected)
    assert list(counters) == [nthreads - 1, 42, nthreads]


DEVICE_FUNCTIONS = r"""
#include <cuda_runtime.h>
__device__ __forceinline__ float load_twice(const float *p, int i) { return p[i] + p[i]; }
__host__ __device__ int twice(int x) { return 2 * x; }
extern "C" __global__ void __launch_bounds__(64) use_helpers(const float *src, float *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[twice(i) / 2] = load_twice(src, i);
}
"""


def test_device_functions_receive_checked_pointers() -> None:
    fn = cpu.SourceModule(DEVICE_FUNCTIONS).get_function("use_helpers")
    src = RNG.random(70, dtype=np.float32)
    dst = np.zeros(70, np.float32)
    fn(src, dst, np.int32(70), block=(64, 1, 1), grid=(2, 1))
    np.testing.assert_array_equal(dst, src + src)
    with pytest.raises(cpu.OutOfBoundsError, match="'src'"):
        fn(src[:60], dst, np.int32(70), block=(64, 1, 1), grid=(2, 1))


UNSUPPORTED = {
    "__shared__": "__shared__ float tile[32]; tile[0] = 1.0f;",
    "__syncthreads": "__syncthreads();",
    "__shfl": "float y = __shfl_down_sync(0xffffffff, 1.0f, 1);",
    "__ballot": "unsigned m = __ballot_sync(0xffffffff, 1);",
    "__any_sync": "int m = __any_sync(0xffffffff, 1);",
    "__all_sync": "int m = __all_sync(0xffffffff, 1);",
    "__activemask": "unsigned m = __activemask();",
    "clock64": "long long c = clock64();",
    "clock()": "long long c = clock();",
    "cache-hint stores": "__stcg(&p[0], 1.0f);",
    "textures": "float y = tex1Dfetch<float>(0, 0);",
    "printf": 'printf("%f", p[0]);',
    "dynamic parallelism": "child<<<1, 1>>>(p);",
    "cooperative groups": "auto g = cooperative_groups::this_thread_block();",
    "exceptions": "try { p[0] = 1.0f; } catch (...) { p[0] = 0.0f; }",
    "__constant__": "",  # declared at file scope below
}


@pytest.mark.parametrize("feature", list(UNSUPPORTED))
def test_unsupported_feature_is_named(feature: str) -> None:
    prefix = "__constant__ float table[4];\n" if feature == "__constant__" else "\n"
    source = prefix + 'extern "C" __global__ void k(float *p) {\n    // __shared__ in a comment is fine\n    ' \
        + UNSUPPORTED[feature] + "\n}\n"
    with pytest.raises(cpu.UnsupportedFeatureError) as info:
        cpu.SourceModule(source, name="bad.cu")
    assert feature in str(info.value)
    assert info.value.line == (1 if feature == "__constant__" else 4)
    assert "line" in str(info.value) and "bad.cu" in str(info.value)


def test_feature_names_in_comments_and_strings_are_ignored() -> None:
    source = '// __syncthreads() would be needed on a GPU\nextern "C" __global__ void k(float *p) {\n' \
             '    /* __shared__ */ const char *s = "__shfl_sync"; (void)s; p[0] = 1.0f;\n}\n'
    p = np.zeros(1, np.float32)
    cpu.SourceModule(source).get_function("k")(p, block=(1, 1, 1), grid=(1, 1))
    assert p[0] == 1.0


def test_gpu_only_branches_are_not_scanned() -> None:
    source = 'extern "C" __global__ void k(float *p) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n' \
             '    asm("trap;");\n#else\n    p[0] = 2.0f;\n#endif\n}\n'
    p = np.zeros(1, np.float32)
    cpu.SourceModule(source).get_function("k")(p, block=(1, 1, 1), grid=(1, 1))
    assert p[0] == 2.0
    with pytest.raises(cpu.UnsupportedFeatureError, match=r"asm.*line 3"):
        cpu.SourceModule(source.replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", "#ifndef __CUDA_ARCH__"))


def test_compile_error_names_the_source_line() -> None:
    with pytest.raises(cpu.KernelCompileError, match=r"broken\.cu:3"):
        cpu.SourceModule('extern "C" __global__ void k(float *p) {\n\n    p[0] = undefined_name;\n}\n', name="broken.cu")


# ---------------------------------------------------------------------------- bounds checks
def test_out_of_bounds_read_names_kernel_block_thread_array_and_index() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a, b, c = (np.zeros(100, np.float32) for _ in range(3))
    with pytest.raises(cpu.OutOfBoundsError) as info:
        add(a, b, c, np.int32(200), block=(64, 1, 1), grid=(4, 1))
    msg, err = str(info.value), info.value
    for part in ("vector_add_kernel", "block (1, 0, 0)", "thread (36, 0, 0)", "'a'", "float32", "(100,)",
                 "element 100", "read", "byte offset 400"):
        assert part in msg, (part, msg)
    assert (err.block, err.thread, err.parameter, err.byte_offset, err.is_store) == ((1, 0, 0), (36, 0, 0), "a", 400, False)


def test_out_of_bounds_write_is_caught_before_it_happens() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a, b = np.ones(200, np.float32), np.ones(200, np.float32)
    backing = np.full(130, -1.0, np.float32)
    c = backing[:100]  # the element after c exists in memory: only the check can stop the write
    with pytest.raises(cpu.OutOfBoundsError) as info:
        add(a, b, c, np.int32(150), block=(32, 1, 1), grid=(5, 1))
    msg = str(info.value)
    for part in ("write", "block (3, 0, 0)", "thread (4, 0, 0)", "'c'", "(100,)", "element 100"):
        assert part in msg, (part, msg)
    assert np.all(c == 2.0) and np.all(backing[100:] == -1.0)


def test_out_of_bounds_in_3d_launch_and_below_the_start() -> None:
    fn = cpu.SourceModule('extern "C" __global__ void k(float *p, int shift) {\n'
                          "    p[(int)(threadIdx.z * 100 + blockIdx.y) - shift] = 1.0f;\n}\n").get_function("k")
    with pytest.raises(cpu.OutOfBoundsError, match=r"thread \(0, 0, 1\) in block \(0, 1, 0\).*element 101"):
        fn(np.zeros(101, np.float32), np.int32(0), block=(1, 1, 2), grid=(1, 3, 1))
    with pytest.raises(cpu.OutOfBoundsError, match=r"block \(0, 0, 0\):.*element -1\b"):
        fn(np.zeros(101, np.float32), np.int32(1), block=(1, 1, 1), grid=(1, 1))


def test_misaligned_read_only_and_null_pointers() -> None:
    read4 = cpu.load_kernel("bandwidth", "read_float4")
    src = cpu.mapped_empty(64, np.float32)
    with pytest.raises(cpu.MisalignedAccessError, match="read_float4"):
        read4(np.intp(src.ctypes.data + 4), np.uint64(4), f32(0), np.zeros(1, np.float32), block=(4, 1, 1), grid=(1, 1))
    frozen = np.zeros(8, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(cpu.ReadOnlyWriteError, match="'dst'"):
        cpu.load_kernel("hazards", "fill_in_order")(frozen, np.uint64(8), f32(1), block=(1, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.NullPointerError, match="'result'"):
        cpu.load_kernel("latency", "pointer_chase")(np.zeros(4, np.uint32), np.uint32(0), np.uint64(1), None,
                                                    block=(1, 1, 1), grid=(1, 1))


# ---------------------------------------------------------------------------- arguments and pointers
def test_host_and_device_pointers_are_the_same_address() -> None:
    a = np.arange(64, dtype=np.float32)
    assert cpu.device_pointer(a) == a.ctypes.data
    mapped = cpu.mapped_empty(1000, np.float32)
    assert mapped.ctypes.data % 4096 == 0 and cpu.device_pointer(mapped) == mapped.ctypes.data


def test_address_inside_a_known_array_and_unknown_address() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a = np.arange(100, dtype=np.float32)
    cpu.register(a)
    c = np.zeros(50, np.float32)
    add(np.intp(a.ctypes.data + 4 * 50), a[50:].copy(), c, np.int32(50), block=(64, 1, 1), grid=(1, 1))
    np.testing.assert_array_equal(c, 2 * a[50:])
    with pytest.raises(cpu.OutOfBoundsError, match="pointer starts at byte 200"):
        add(np.intp(a.ctypes.data + 4 * 50), a, c, np.int32(51), block=(64, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.UnknownPointerError, match=r"'a'.*no array the CPU backend knows"):
        add(np.intp(16), a, c, np.int32(1), block=(1, 1, 1), grid=(1, 1))


def test_scalar_arguments_must_be_numpy_scalars_of_the_declared_type() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a = np.zeros(4, np.float32)
    with pytest.raises(cpu.KernelArgumentError, match=r"'n'.*np\.int32\(4\)"):
        add(a, a, a, 4, block=(4, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.KernelArgumentError, match="int64"):
        add(a, a, a, np.int64(4), block=(4, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.KernelArgumentError, match="float32"):
        add(a, a, a, np.float32(4), block=(4, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.KernelArgumentError, match="takes 4 arguments"):
        add(a, a, np.int32(4), block=(4, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.LaunchConfigError, match="1024"):
        add(a, a, a, np.int32(4), block=(2048, 1, 1), grid=(1, 1))
    add(a, a, a, np.uint32(4), block=(4, 1, 1), grid=(1, 1, 1))  # same size, other sign: accepted


def test_vector_add_of_a_million_threads_is_fast() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    n = 1 << 20
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    c = np.empty_like(a)
    start = time.perf_counter()
    add(a, b, c, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))
    assert time.perf_counter() - start < 2.0
    np.testing.assert_array_equal(c, a + b)


def test_build_is_cached_under_ZC_CPU_CACHE(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path))
    monkeypatch.setattr(compiler, "_loaded", {})
    source = 'extern "C" __global__ void cached(float *p) { p[0] = 3.0f; }\n'
    cpu.SourceModule(source)
    built = list(tmp_path.glob("*.so"))
    assert len(built) == 1
    mtime = built[0].stat().st_mtime_ns
    p = np.zeros(1, np.float32)
    monkeypatch.setattr(compiler, "_loaded", {})  # the second build is served from the disk, not from memory
    cpu.SourceModule(source).get_function("cached")(p, block=(1, 1, 1), grid=(1, 1))
    assert p[0] == 3.0 and built[0].stat().st_mtime_ns == mtime and len(list(tmp_path.glob("*.so"))) == 1


# ---------------------------------------------------------------------------- traces
def _strided(stride: int, offset: int, threads: int = 64, max_warps: int | None = None) -> cpu.Trace:
    fn = cpu.load_kernel("access_pattern", "read_strided")
    src = np.ones(offset + threads * stride + 1, np.float32)
    return fn.trace(src, np.uint64(threads), np.int32(stride), np.int32(offset), f32(-1), np.zeros(1, np.float32),
                    block=(threads, 1, 1), grid=(1, 1), max_warps=max_warps)


@pytest.mark.parametrize("stride,offset,sectors,lines,spans", [
    (1, 0, 4, 1, 4), (2, 0, 8, 2, 8), (8, 0, 32, 8, 32), (16, 0, 32, 16, 48), (32, 0, 32, 32, 32),
    (1, 1, 5, 2, 5), (1, 8, 4, 2, 4), (1, 32, 4, 1, 4)])
def test_trace_counts_per_warp(stride: int, offset: int, sectors: int, lines: int, spans: int) -> None:
    trace = _strided(stride, offset)  # two warps, one load each
    assert trace.requests == 2 and not trace.sampled and trace.scale == 1
    assert trace.useful_bytes == 2 * 128 and trace.sectors == 2 * sectors and trace.lines == 2 * lines
    assert trace.span_sectors == 2 * spans
    assert list(trace.instructions["sectors"]) == [sectors, sectors]
    assert list(trace.instructions["threads"]) == [32, 32]


def test_trace_samples_the_first_warps() -> None:
    trace = _strided(1, 0, threads=256, max_warps=2)
    assert trace.sampled and trace.traced_warps == 2 and trace.total_warps == 8 and trace.scale == 4
    assert trace.requests == 2 and sorted(set(trace.instructions["warp"].tolist())) == [0, 1]


def test_trace_of_float4_stores_and_atomics() -> None:
    read4 = cpu.load_kernel("access_pattern", "read_strided_float4")
    t = read4.trace(np.ones(4 * 32, np.float32), np.uint64(32), np.int32(1), np.int32(0), f32(-1),
                    np.zeros(1, np.float32), block=(32, 1, 1), grid=(1, 1))
    assert (t.useful_bytes, t.sectors, t.lines) == (512, 16, 4)
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a = np.ones(32, np.float32)
    t = add.trace(a, a, np.zeros(32, np.float32), np.int32(32), block=(32, 1, 1), grid=(1, 1))
    assert t.totals("load") == {"requests": 2, "useful_bytes": 256, "sectors": 8, "lines": 2, "span_sectors": 8}
    assert t.totals("store") == {"requests": 1, "useful_bytes": 128, "sectors": 4, "lines": 1, "span_sectors": 4}
    count = cpu.load_kernel("hazards", "count_atomically")
    t = count.trace(np.zeros(1, np.int32), np.int32(2), block=(64, 1, 1), grid=(1, 1))
    assert t.totals("atomic") == {"requests": 4, "useful_bytes": 4 * 32 * 4, "sectors": 4, "lines": 4,
                                  "span_sectors": 4}


def test_free_and_synchronize_act_as_on_the_gpu() -> None:
    """Lesson 05's seed program calls free and synchronize on either backend, with no lambdas."""
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a, b, c = (cpu.mapped_empty(64, np.float32) for _ in range(3))
    a[:], b[:] = 1.0, 2.0
    add(cpu.device_pointer(a), cpu.device_pointer(b), cpu.device_pointer(c), np.int32(64),
        block=(64, 1, 1), grid=(1, 1))
    cpu.synchronize()
    assert (c == 3.0).all()
    pointer = cpu.device_pointer(a)
    cpu.free(a, b, c)
    with pytest.raises(cpu.UnknownPointerError):          # freed: later launches do not know it
        add(pointer, pointer, pointer, np.int32(64), block=(64, 1, 1), grid=(1, 1))
    with pytest.raises(TypeError, match="freed already"):
        cpu.free(a)
    with pytest.raises(TypeError, match="mapped_empty"):
        cpu.free(np.zeros(4, np.float32))


def test_a_pointer_parameter_can_be_cast_to_volatile_the_c_way_or_with_static_cast():
    """(const volatile T*)p and static_cast<...>(p) are valid CUDA; the checked pointer converts explicitly to the raw
    one, so a learner's polling kernel (avoid-hazards-on-mapped-memory) builds on the CPU backend as with nvcc."""
    source = r'''
extern "C" __global__ void read_twice(const unsigned int *flag, float *out, int n) {
    const volatile unsigned int *a = (const volatile unsigned int *)flag;
    const volatile unsigned int *b = static_cast<const volatile unsigned int *>(flag);
    int i = threadIdx.x;
    if (i < n) out[i] = (float)(*a + *b);
}'''
    kernel = cpu.SourceModule(source).get_function("read_twice")
    flag, out = np.array([2], np.uint32), np.zeros(4, np.float32)
    kernel(flag, out, np.int32(4), block=(4, 1, 1), grid=(1, 1))
    assert out.tolist() == [4.0] * 4


@pytest.mark.parametrize("hint", ["__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"])
def test_a_cache_hint_load_runs_as_the_plain_load_it_hints(hint):
    """The backend models no cache: a cache-hint load reads the value in memory and is checked like a plain load (a
    learner's chase may well use __ldg)."""
    source = r'''
extern "C" __global__ void chase(const unsigned int *next, unsigned int *out, int steps, int past) {
    unsigned int j = 0;
    for (int s = 0; s < steps; ++s) j = HINT(&next[j + past]);
    out[0] = j;
}'''.replace("HINT", hint)
    kernel = cpu.SourceModule(source).get_function("chase")
    table, out = np.array([1, 2, 0], np.uint32), np.zeros(1, np.uint32)
    kernel(table, out, np.int32(4), np.int32(0), block=(1, 1, 1), grid=(1, 1))
    assert out[0] == 1
    with pytest.raises(cpu.OutOfBoundsError):
        kernel(table, out, np.int32(1), np.int32(3), block=(1, 1, 1), grid=(1, 1))

"""Every kernel in helpers/kernels gives the same result on the CPU backend as on the GPU (issue 4).

Each case builds its inputs once and runs the kernel through a runner: the CPU backend
(``helpers.cpu``) or PyCUDA on the GPU. The read kernels only write their per-thread sum when it
equals ``never``; the cases read arrays of ones in one block of 32 threads, so every thread's sum
is an exact integer that the case knows, and the sink shows whether each backend read exactly the
expected elements. Skipped without a GPU (``make test-gpu`` makes that a failure).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from helpers import cpu, kernels
from helpers.experiments.latency import random_cycle

ONE_WARP = {"block": (32, 1, 1), "grid": (1, 1)}


class CpuRunner:
    """Runs a kernel with helpers.cpu; buffers are numpy arrays."""

    def kernel(self, stem: str, name: str) -> Callable[..., Any]:
        return cpu.load_kernel(stem, name)

    def buffer(self, host: np.ndarray) -> tuple[Any, Callable[[], np.ndarray]]:
        array = host.copy()
        return array, lambda: array.copy()


class GpuRunner:
    """Runs a kernel with PyCUDA; buffers are device allocations copied back after the launch."""

    def __init__(self) -> None:
        import pycuda.driver as drv

        self.drv = drv
        self.allocations: list[Any] = []

    def kernel(self, stem: str, name: str) -> Callable[..., Any]:
        return kernels.load_kernel(stem, name)

    def buffer(self, host: np.ndarray) -> tuple[Any, Callable[[], np.ndarray]]:
        allocation = self.drv.mem_alloc(max(host.nbytes, 1))
        self.allocations.append(allocation)
        self.drv.memcpy_htod(allocation, host)

        def fetch() -> np.ndarray:
            out = np.empty_like(host)
            self.drv.memcpy_dtoh(out, allocation)
            return out

        return allocation, fetch


def _read(stem: str, name: str, n4: int, per_thread: float, extra: tuple = (), vector: int = 4) -> Callable:
    """A read kernel over n4 vectors of ones, run with never = what each thread must sum, then with -1."""
    def case(run: Any) -> list[np.ndarray]:
        kernel = run.kernel(stem, name)
        outputs = []
        for never in (per_thread, -1.0):
            src, _ = run.buffer(np.ones(n4 * vector, np.float32))
            sink, fetch = run.buffer(np.array([7.0], np.float32))
            kernel(src, np.uint64(n4), *extra, np.float32(never), sink, **ONE_WARP)
            outputs.append(fetch())
        assert outputs[0][0] == per_thread and outputs[1][0] == 7.0, outputs
        return outputs
    return case


def _strided(name: str, vector: int) -> Callable:
    count, stride, offset = 2048, 3, 5

    def case(run: Any) -> list[np.ndarray]:
        kernel = run.kernel("access_pattern", name)
        src, _ = run.buffer(np.ones((offset + count * stride) * vector, np.float32))
        sink, fetch = run.buffer(np.array([7.0], np.float32))
        per_thread = count // 32 * vector
        kernel(src, np.uint64(count), np.int32(stride), np.int32(offset), np.float32(per_thread), sink, **ONE_WARP)
        out = fetch()
        assert out[0] == per_thread
        return [out]
    return case


def _vector_add(run: Any) -> list[np.ndarray]:
    n = 1000
    rng = np.random.default_rng(4)
    a, _ = run.buffer(rng.random(n, dtype=np.float32))
    b, _ = run.buffer(rng.random(n, dtype=np.float32))
    c, fetch = run.buffer(np.full(n, np.nan, np.float32))
    run.kernel("vector_add", "vector_add_kernel")(a, b, c, np.int32(n), block=(256, 1, 1), grid=(4, 1))
    return [fetch()]


def _write(run: Any) -> list[np.ndarray]:
    dst, fetch = run.buffer(np.zeros(4 * 1000, np.float32))
    run.kernel("bandwidth", "write_float4")(dst, np.uint64(1000), np.float32(2.5), block=(64, 1, 1), grid=(3, 1))
    return [fetch()]


def _chase(run: Any) -> list[np.ndarray]:
    table, order = random_cycle(128 * 64, seed=3)
    nxt, _ = run.buffer(table)
    result, fetch = run.buffer(np.zeros(1, np.uint32))
    run.kernel("latency", "pointer_chase")(nxt, np.uint32(order[5]), np.uint64(100), result, block=(1, 1, 1), grid=(1, 1))
    out = fetch()
    assert out[0] == order[105 % len(order)]
    return [out]


def _reread(run: Any) -> list[np.ndarray]:
    """Every load kind (__ldg, __ldca, __ldcg, __ldcv), re-reading the same lines and shifted ones."""
    outputs = []
    for cache in range(4):
        for shift in (0, 1000):
            outputs += _read("bandwidth", "reread_cached", 2048, 3 * 2048 // 32 * 4,
                             extra=(np.int32(3), np.uint64(shift), np.int32(cache)))(run)
    return outputs


def _chase_timed(run: Any) -> list[np.ndarray]:
    """Where the timed chase ends, cold and after a warm-up cycle (the timer and the SM differ by device)."""
    table, order = random_cycle(128 * 64, seed=3)
    nxt, _ = run.buffer(table)
    ends = []
    for warm in (0, len(order)):
        out, fetch = run.buffer(np.zeros(3, np.uint64))
        run.kernel("latency", "pointer_chase_timed")(nxt, np.uint32(order[5]), np.uint64(warm), np.uint64(100), out,
                                                     block=(1, 1, 1), grid=(1, 1))
        ends.append(fetch()[:1])
        assert ends[-1][0] == order[(105 + warm) % len(order)]
    return ends


def _reread_rotate(run: Any) -> list[np.ndarray]:
    """Every load kind, each block re-reading its own chunk and rotating through the others."""
    outputs = []
    src = np.arange(4 * 3 * 64, dtype=np.float32)
    for cache in range(4):
        for rotate, passes in ((0, 2), (1, 3)):
            data, _ = run.buffer(src)
            sink, fetch = run.buffer(np.full(1, -5.0, np.float32))
            sms, _ = run.buffer(np.zeros(3, np.uint32))
            run.kernel("bandwidth", "reread_rotate")(data, np.uint64(64), np.int32(passes), np.int32(rotate),
                                                     np.int32(cache), np.float32(-1.0), sink, sms,
                                                     block=(32, 1, 1), grid=(3, 1))
            outputs.append(fetch())  # the sums never equal -1: the sink is untouched on both
    return outputs


def _scatter(run: Any) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    where_host = rng.choice(4096, size=1000, replace=False).astype(np.uint32)
    table, fetch = run.buffer(np.zeros(4096, np.uint32))
    where, _ = run.buffer(where_host)
    value, _ = run.buffer(np.arange(1, 1001, dtype=np.uint32))
    run.kernel("latency", "scatter_u32")(table, where, value, np.uint64(1000), block=(64, 1, 1), grid=(3, 1))
    out = fetch()
    assert np.array_equal(out[where_host], np.arange(1, 1001, dtype=np.uint32))
    return [out]


def _fill(run: Any) -> list[np.ndarray]:
    dst, fetch = run.buffer(np.zeros(1000, np.float32))
    run.kernel("hazards", "fill_in_order")(dst, np.uint64(1000), np.float32(1.5), block=(32, 1, 1), grid=(2, 1))
    return [fetch()]


def _count(name: str, block: int, grid: int) -> Callable:
    def case(run: Any) -> list[np.ndarray]:
        counter, fetch = run.buffer(np.zeros(1, np.int32))
        run.kernel("hazards", name)(counter, np.int32(4), block=(block, 1, 1), grid=(grid, 1))
        out = fetch()
        assert out[0] == block * grid * 4
        return [out]
    return case


def _publish(name: str) -> Callable:
    def case(run: Any) -> list[np.ndarray]:
        payload, fetch_payload = run.buffer(np.zeros(1000, np.float32))
        flag, fetch_flag = run.buffer(np.zeros(1, np.uint32))
        run.kernel("hazards", name)(payload, np.uint64(900), np.float32(2.5), flag, np.uint32(7),
                                     block=(32, 1, 1), grid=(2, 1))
        return [fetch_payload(), fetch_flag()]
    return case


def _spin(run: Any, name: str) -> list[np.ndarray]:
    """Raised before the launch: one turn; never raised: max_spins turns, whether or not each turn loaded the flag."""
    outs = []
    for flag_value, turns in ((1, 1), (0, 500)):
        flag, _ = run.buffer(np.array([flag_value], np.uint32))
        out, fetch = run.buffer(np.zeros(1, np.uint64))
        run.kernel("hazards", name)(flag, np.uint32(1), np.uint64(500), out, block=(1, 1, 1), grid=(1, 1))
        outs.append(fetch())
        assert outs[-1].tolist() == [turns]
    return outs


def _wait_for_host(run: Any) -> list[np.ndarray]:
    payload, _ = run.buffer(np.array([2.0] * 30 + [0.0] * 2, np.float32))
    outs = []
    for raised, how in ((4, 0), (4, 1), (4, 2), (4, 3), (4, 4), (3, 3)):  # (3, 3): never raised, gives up
        flag, _ = run.buffer(np.array([raised], np.uint32))
        result, fetch = run.buffer(np.zeros(4, np.uint64))
        run.kernel("hazards", "wait_for_host")(flag, np.uint32(0), np.uint32(4), np.uint64(500), np.int32(how), payload,
                                               np.uint64(32), np.float32(2.0), result, block=(32, 1, 1), grid=(1, 1))
        outs.append(fetch())
        assert outs[-1].tolist() == ([1, 1, 30, 1] if raised == 4 else [500, 0, 30, 1])
    return outs


CASES: dict[str, Callable[[Any], list[np.ndarray]]] = {
    "vector_add_kernel": _vector_add,
    "read_float": _read("bandwidth", "read_float", 2048, 2048 // 32, vector=1),
    "read_float2": _read("bandwidth", "read_float2", 2048, 2048 // 32 * 2, vector=2),
    "read_float4": _read("bandwidth", "read_float4", 2048, 2048 // 32 * 4),
    "read_float4_x4": _read("bandwidth", "read_float4_x4", 2048, 2048 // 32 * 4),
    "read_float4_x4_runs": _read("bandwidth", "read_float4_x4_runs", 2048, 2048 // 32 * 4),
    "read_float4_x4_l2_256": _read("bandwidth", "read_float4_x4_l2_256", 2048, 2048 // 32 * 4),
    "read_bulk": _read("bandwidth", "read_bulk", 2048, 2048 // 32 * 4),
    "reread_cached": _reread,
    "reread_rotate": _reread_rotate,
    "write_float4": _write,
    "read_strided": _strided("read_strided", 1),
    "read_strided_float4": _strided("read_strided_float4", 4),
    "pointer_chase": _chase,
    "pointer_chase_timed": _chase_timed,
    "scatter_u32": _scatter,
    "fill_in_order": _fill,
    "count_atomically": _count("count_atomically", 64, 2),
    # a plain read-modify-write races on the GPU by design (lesson 14); one thread has no race
    "count_plainly": _count("count_plainly", 1, 1),
    "count_atomically_system": _count("count_atomically_system", 64, 2),
    "publish_fenced": _publish("publish_fenced"),
    "publish_unfenced": _publish("publish_unfenced"),
    "publish_flag_first": _publish("publish_flag_first"),
    "wait_for_host": _wait_for_host,
    "spin_volatile": lambda run: _spin(run, "spin_volatile"),
    "spin_ldcv": lambda run: _spin(run, "spin_ldcv"),
    "spin_ldcg": lambda run: _spin(run, "spin_ldcg"),
    "spin_plain": lambda run: _spin(run, "spin_plain"),
    "spin_atomic_ref": lambda run: _spin(run, "spin_atomic_ref"),
}
KERNELS = [(stem, name) for stem in kernels.files() for name in kernels.names(stem)]


def test_every_kernel_has_a_case():
    assert sorted(name for _, name in KERNELS) == sorted(CASES)


@pytest.mark.gpu
@pytest.mark.parametrize("stem, name", KERNELS, ids=[name for _, name in KERNELS])
def test_cpu_backend_equals_the_gpu(stem, name, live):
    on_cpu = CASES[name](CpuRunner())
    on_gpu = CASES[name](GpuRunner())
    assert len(on_cpu) == len(on_gpu)
    for cpu_out, gpu_out in zip(on_cpu, on_gpu):
        np.testing.assert_array_equal(cpu_out, gpu_out)


def test_the_cases_hold_on_the_cpu_backend():
    """Without a GPU the cases still run (and assert) on the CPU backend."""
    for name, case in CASES.items():
        assert case(CpuRunner()), name

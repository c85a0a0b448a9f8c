"""Hazards of sharing memory with a running kernel: reading too early, atomics, flags, a spin loop the
compiler may empty (avoid-hazards-on-mapped-memory)."""

from __future__ import annotations

import time

import numpy as np

from .. import kernels
from ..memory import gpu
from ..memory.timing import time_gpu
from ..sharing.gpu_queue import measurement_slot
from .buffers import BLOCK, device, full_grid, mapped
from .result import Result, Row, run


def stale_read(n: int = 1 << 22, samples: int = 40) -> Result:
    """Read a mapped buffer while one GPU thread is still filling it, then after synchronising
    (avoid-hazards-on-mapped-memory)."""
    return run("stale_read", {"n": n, "samples": samples}, _stale_read)


def _stale_read(n: int, samples: int) -> list[Row]:
    kernel = kernels.load_kernel("hazards", "fill_in_order")
    rows: list[Row] = []
    with mapped(n * 4, fill=0.0) as host:
        pointer = gpu.device_pointer(host)
        with measurement_slot(what="stale_read"):
            t0 = time.perf_counter()
            kernel(pointer, np.uint64(n), np.float32(1.0), block=(1, 1, 1), grid=(1, 1))
            for _ in range(samples):
                filled = int(np.count_nonzero(host))
                rows.append({"after_launch_ms": (time.perf_counter() - t0) * 1e3, "synchronized": False,
                             "filled": filled, "n": n})
                if filled == n:
                    break
            gpu.synchronize()
            rows.append({"after_launch_ms": (time.perf_counter() - t0) * 1e3, "synchronized": True,
                         "filled": int(np.count_nonzero(host)), "n": n})
    return rows


ATOMIC_METHODS = ("count_atomically", "count_plainly", "count_atomically_system")


def atomics(per_thread: int = 16, repeats: int = 3) -> Result:
    """Counting with atomicAdd, atomicAdd_system and a plain read-modify-write, in device and mapped memory,
    each launch timed with CUDA events (avoid-hazards-on-mapped-memory)."""
    return run("atomics", {"per_thread": per_thread, "repeats": repeats}, _atomics)


def _atomics(per_thread: int, repeats: int) -> list[Row]:
    import pycuda.driver as drv

    grid = full_grid() // 4
    expected = grid * BLOCK * per_thread
    rows: list[Row] = []
    counted = np.zeros(1, np.int32)
    for method in ATOMIC_METHODS:
        kernel = kernels.load_kernel("hazards", method)
        for memory in ("device", "zero_copy"):
            for _ in range(repeats):
                start, end = drv.Event(), drv.Event()
                if memory == "device":
                    with device(4, fill=None) as counter:
                        drv.memset_d32(counter, 0, 1)
                        with measurement_slot(what="atomics"):
                            start.record()
                            kernel(counter, np.int32(per_thread), block=(BLOCK, 1, 1), grid=(grid, 1))
                            end.record()
                            end.synchronize()
                        drv.memcpy_dtoh(counted, counter)
                        value = int(counted[0])
                else:
                    with mapped(4, np.int32, fill=0) as host, measurement_slot(what="atomics"):
                        start.record()
                        kernel(gpu.device_pointer(host), np.int32(per_thread), block=(BLOCK, 1, 1), grid=(grid, 1))
                        end.record()
                        end.synchronize()
                        value = int(host[0])
                rows.append({"method": method, "memory": memory, "expected": expected, "counted": value,
                             "seconds": [end.time_since(start) / 1e3]})
    return rows


PUBLISHERS = ("publish_fenced", "publish_unfenced", "publish_flag_first")
FLAG_LOADS = ("volatile", "__ldcv", "__ldcg", "__ldg", "const __restrict__")  # the order of LOAD_* in hazards.cu


def handshake(n: int = 1 << 18, trials: int = 20, spin_trials: int = 3, max_spins: int = 1 << 22,
              host_delay_s: float = 0.002, timeout_s: float = 2.0) -> Result:
    """Signalling through mapped memory while a kernel runs: GPU to host with and without
    ``__threadfence_system()``, and host to GPU with five ways of loading the flag (avoid-hazards-on-mapped-memory)."""
    return run("handshake", {"n": n, "trials": trials, "spin_trials": spin_trials, "max_spins": max_spins,
                             "host_delay_s": host_delay_s, "timeout_s": timeout_s}, _handshake)


def _handshake(n: int, trials: int, spin_trials: int, max_spins: int, host_delay_s: float,
               timeout_s: float) -> list[Row]:
    with mapped(n * 4, fill=0.0) as payload, mapped(4096, np.uint32, fill=0) as flag:
        for name in (*PUBLISHERS, "wait_for_host"):
            kernels.load_kernel("hazards", name)  # compile before the measurement slots, not inside them
        rows = []
        for name in PUBLISHERS:
            with measurement_slot(what="handshake"):
                rows.append(_publish(name, payload, flag, n, trials, timeout_s))
        for how, load in enumerate(FLAG_LOADS):
            with measurement_slot(what="handshake"):
                rows.append(_wait(how, load, payload, flag, n, spin_trials, max_spins, host_delay_s, timeout_s))
    return rows


def _poll(word: np.ndarray, index: int, value: int, timeout_s: float) -> bool:
    """Spin on the host until ``word[index] == value`` or ``timeout_s`` passes; True if seen."""
    deadline = time.perf_counter() + timeout_s
    while int(word[index]) != value:
        if time.perf_counter() > deadline:
            return False
    return True


def _publish(name: str, payload: np.ndarray, flag: np.ndarray, n: int, trials: int, timeout_s: float) -> Row:
    """GPU to host: the host waits for the flag, then at once counts the payload elements written."""
    kernel = kernels.load_kernel("hazards", name)
    payload_pointer, flag_pointer = gpu.device_pointer(payload), gpu.device_pointer(flag)
    seen, written, complete_after_sync = [], [], []
    for trial in range(trials):
        value, raise_ = np.float32(trial + 1), trial + 1
        payload.fill(0.0)
        flag[0] = 0
        kernel(payload_pointer, np.uint64(n), value, flag_pointer, np.uint32(raise_), block=(1, 1, 1), grid=(1, 1))
        saw = _poll(flag, 0, raise_, timeout_s)
        snapshot = payload.copy()  # what the host reads right after seeing the flag
        gpu.synchronize()
        seen.append(saw)
        written.append(int(np.count_nonzero(snapshot == value)) if saw else -1)
        complete_after_sync.append(bool(np.all(payload == value)))
    return {"direction": "gpu_to_host", "kernel": name, "n": n, "trials": trials, "flag_seen": seen,
            "written_at_flag": written, "complete_after_sync": complete_after_sync}


def _wait(how: int, load: str, payload: np.ndarray, flag: np.ndarray, n: int, trials: int, max_spins: int,
          host_delay_s: float, timeout_s: float) -> Row:
    """Host to GPU: once the kernel says it spins, the host writes the payload, then raises the flag."""
    import pycuda.driver as drv

    kernel = kernels.load_kernel("hazards", "wait_for_host")
    m = min(n, 1024)
    row: Row = {"direction": "host_to_gpu", "load": load, "how": how, "n": m, "trials": trials,
                "max_spins": max_spins, "started": [], "running_at_write": [], "seen": [], "spins": [],
                "payload_ok": [], "seconds": []}
    with mapped(4 * 8, np.uint64, fill=0) as result:
        for trial in range(trials):
            value, expected = np.float32(trial + 1), trial + 1
            payload[:m] = 0.0
            flag[0] = 0
            result.fill(0)
            start, end = drv.Event(), drv.Event()
            start.record()
            kernel(gpu.device_pointer(flag), np.uint32(0), np.uint32(expected), np.uint64(max_spins), np.int32(how),
                   gpu.device_pointer(payload), np.uint64(m), value, gpu.device_pointer(result),
                   block=(1, 1, 1), grid=(1, 1))
            end.record()
            started = _poll(result, 3, 1, timeout_s)
            time.sleep(host_delay_s)  # let the kernel load the flag many times first
            payload[:m] = value       # the payload, then the flag (x86 keeps the host's stores in order)
            running = not end.query()
            flag[0] = expected
            end.synchronize()
            row["started"].append(started)
            row["running_at_write"].append(running)
            row["spins"].append(int(result[0]))
            row["seen"].append(bool(result[1]))
            row["payload_ok"].append(int(result[2]) == m)
            row["seconds"].append(end.time_since(start) / 1e3)
    return row


# The ways spin_loop loads the flag, and hazards.cu's kernel for each: volatile and a system-scope atomic_ref acquire
# load are strong loads; __ldcv, __ldcg and a plain load are weak ones the compiler may hoist out of the loop.
SPIN_KERNELS = {"volatile": "spin_volatile", "__ldcv": "spin_ldcv", "__ldcg": "spin_ldcg", "plain": "spin_plain",
                "atomic_ref acquire": "spin_atomic_ref"}
SPIN_LOADS = tuple(SPIN_KERNELS)


def spin_loop(spins: int = 1 << 17, repeats: int = 9) -> Result:
    """A spin loop on a mapped flag that nobody raises, written without tricks, loading the flag in each way of
    :data:`SPIN_LOADS`: the time per turn shows whether every turn loads the flag over PCIe (about a microsecond,
    measure-latency) or the compiler kept one loaded copy in a register (avoid-hazards-on-mapped-memory). Each row:
    the turns the kernel counted, every repeat's seconds, and the median time per turn."""
    return run("spin_loop", {"spins": spins, "repeats": repeats}, _spin_loop)


def _spin_loop(spins: int, repeats: int) -> list[Row]:
    rows: list[Row] = []
    with mapped(4096, np.uint32, fill=0) as flag, mapped(8, np.uint64, fill=0) as turns:
        for load, name in SPIN_KERNELS.items():
            kernel = kernels.load_kernel("hazards", name)
            timing = time_gpu(lambda: kernel(gpu.device_pointer(flag), np.uint32(1), np.uint64(spins),
                                             gpu.device_pointer(turns), block=(1, 1, 1), grid=(1, 1)),
                              repeats=repeats, warmup=1)
            rows.append({"load": load, "spins": spins, "turns": int(turns[0]), "seconds": list(timing.seconds),
                         "turn_ns": timing.median / spins * 1e9})
    return rows

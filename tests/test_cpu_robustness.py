"""No bad kernel or bad file takes the CPU backend down (issue 8): hangs, interrupts, crashes,
huge launches, traced memory, the build cache, options, pointer lookup and the #if parser.
Each case ends in a clear error or the right result, and the next launch in the process works."""

from __future__ import annotations

import os
import platform
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import cpu
from helpers.cpu import compiler
from helpers.cpu.transform import evaluate_condition

X86 = platform.machine().lower() in ("x86_64", "amd64")

CRASHY = """
extern "C" __global__ void spin(int *out, int forever) {
    unsigned long long k = 0;
    while (forever) { k += 1; }
    out[threadIdx.x] = (int)k;
}
extern "C" __global__ void divide(int *out, int d) {
    out[threadIdx.x] = 100 / (d + (int)threadIdx.x - 5);   // thread 5 divides by zero when d == 0
}
extern "C" __global__ void stray(float *out, long long far) {
    volatile float local[4] = {1, 2, 3, 4};
    local[far] = 1.0f;                        // far outside this thread's local array
    out[0] = (float)local[0];
}
__device__ int deep(int n) {
    volatile int pad[64];                     // a frame no compiler turns into a loop
    for (int k = 0; k < 64; ++k) pad[k] = n;
    return n == 0 ? 0 : deep(n - 1) + pad[n & 63] - n + 1;   // deep(n) == n
}
extern "C" __global__ void recurse(int *out, int n) { out[0] = deep(n); }
extern "C" __global__ void big_local(float *out, int i) {
    volatile float local[1 << 26];            // 256 MiB: more than the kernel thread's stack
    local[i] = 1.0f;
    out[0] = (float)local[i];
}
extern "C" __global__ void quit(int *out) { out[0] = 1; __builtin_trap(); }
extern "C" __global__ void fill(int *out, int value) { out[threadIdx.x] = value; }
"""


@pytest.fixture(scope="module")
def mod() -> cpu.SourceModule:
    return cpu.SourceModule(CRASHY, name="crashy.cu")


def _next_launch_works(mod: cpu.SourceModule) -> None:
    out = np.zeros(8, np.int32)
    mod.get_function("fill")(out, np.int32(7), block=(8, 1, 1), grid=(1, 1))
    assert (out == 7).all()


# ---------------------------------------------------------------------------- hangs and interrupts
def test_a_hanging_kernel_is_stopped_at_its_timeout(mod: cpu.SourceModule) -> None:
    out = np.zeros(4, np.int32)
    t0 = time.monotonic()
    with pytest.raises(cpu.KernelTimeoutError) as info:
        mod.get_function("spin")(out, np.int32(1), block=(4, 1, 1), grid=(2, 1), timeout=0.3)
    assert time.monotonic() - t0 < 3
    err = info.value
    assert err.kernel == "spin" and err.grid == (2, 1, 1) and err.block == (4, 1, 1) and err.timeout == 0.3
    assert "spin" in str(err) and "0.3 s" in str(err) and "timeout=" in str(err)
    assert "thread (0, 0, 0) of block (0, 0, 0)" in str(err)
    _next_launch_works(mod)
    mod.get_function("spin")(out, np.int32(0), block=(4, 1, 1), grid=(1, 1), timeout=5)  # same kernel, now ending


def test_the_timeout_default_comes_from_ZC_CPU_TIMEOUT(mod: cpu.SourceModule, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_TIMEOUT", "0.2")
    with pytest.raises(cpu.KernelTimeoutError, match="0.2 s"):
        mod.get_function("spin")(np.zeros(1, np.int32), np.int32(1), block=(1, 1, 1), grid=(1, 1))
    monkeypatch.setenv("ZC_CPU_TIMEOUT", "soon")
    with pytest.raises(cpu.LaunchConfigError, match="ZC_CPU_TIMEOUT"):
        mod.get_function("fill")(np.zeros(1, np.int32), np.int32(1), block=(1, 1, 1), grid=(1, 1))


def test_sigint_stops_a_running_launch_and_raises_keyboard_interrupt(mod: cpu.SourceModule) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Python delivers SIGINT to the main thread only")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt, match="interrupted"):
            mod.get_function("spin")(np.zeros(4, np.int32), np.int32(1), block=(4, 1, 1), grid=(1, 1), timeout=30)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5
    _next_launch_works(mod)


HEAP = r"""
#include <string>
#include <vector>
extern "C" __global__ void churn_new(int *out, int forever) {
    unsigned k = 0;
    while (forever) {                          // sizes past malloc's per-thread cache: every call takes its lock
        float *p = new float[64 + (k++ % 4096)];
        p[0] = 1.0f;
        float *volatile keep = p;              // the compiler may not drop the new/delete pair
        delete[] keep;
    }
    out[threadIdx.x] = 1;
}
extern "C" __global__ void churn_containers(int *out, int forever) {
    unsigned k = 0;
    while (forever) {
        std::vector<float> v(64 + (k++ % 4096), 1.0f);
        std::string s(100 + k % 3000, 'x');
        float *volatile keep_v = v.data();
        char *volatile keep_s = s.data();
    }
    out[threadIdx.x] = 1;
}
extern "C" __global__ void fill(int *out, int value) { out[threadIdx.x] = value; }
"""


def test_a_kernel_looping_in_new_and_delete_stops_at_its_timeout_and_on_sigint_every_time(tmp_path: Path) -> None:
    """Issue 20: a stop that jumped out of malloc left its lock held, and the next launch (or Python's next free
    of that memory) froze. The kernel's new/delete, std::vector and std::string now end their malloc first."""
    script = textwrap.dedent('''
        import os, signal, sys, threading, time
        import numpy as np
        from helpers import cpu
        mod = cpu.SourceModule(sys.argv[1], name="heap.cu")
        out = np.zeros(4, np.int32)
        for name in ("churn_new", "churn_containers"):
            for _ in range(8):
                t0 = time.monotonic()
                try:
                    mod.get_function(name)(out, np.int32(1), block=(1, 1, 1), grid=(1, 1), timeout=0.05)
                except cpu.KernelTimeoutError:
                    print("timeout", name, f"{time.monotonic() - t0 - 0.05:.4f}", flush=True)
            for _ in range(4):
                timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
                timer.start()
                t0 = time.monotonic()
                try:
                    mod.get_function(name)(out, np.int32(1), block=(1, 1, 1), grid=(1, 1), timeout=30)
                except KeyboardInterrupt:
                    print("interrupt", name, f"{time.monotonic() - t0 - 0.05:.4f}", flush=True)
                timer.join()
        mod.get_function("fill")(out, np.int32(5), block=(4, 1, 1), grid=(1, 1))
        print("next", out.tolist(), flush=True)
    ''')
    try:
        done = subprocess.run([sys.executable, "-c", script, HEAP], capture_output=True, text=True, timeout=120,
                              cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired as exc:
        said = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout
        pytest.fail(f"the process froze; it had printed: {said!r}")
    lines = [line.split() for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(1 for w in lines if w[0] == "timeout") == 16, done.stdout
    assert sum(1 for w in lines if w[0] == "interrupt") == 8, done.stdout
    assert all(float(w[2]) < 1.0 for w in lines if w[0] in ("timeout", "interrupt")), done.stdout  # stop latency
    assert lines[-1] == ["next", "[5,", "5,", "5,", "5]"], done.stdout



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the version script is a Linux linker's")
def test_the_kernel_librarys_operator_new_replaces_nothing_in_the_process(mod: cpu.SourceModule) -> None:
    """The library exports only zc_*: looking up operator new through it finds libstdc++'s (where it links
    libstdc++) or none (where the compiler needed none), never its own."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("stdc++")
    if name is None:
        pytest.skip("libstdc++ is not found by name")

    def operator_new(lib: ctypes.CDLL) -> int | None:
        try:
            return ctypes.cast(lib._Znwm, ctypes.c_void_p).value
        except AttributeError:  # not in the library's scope: it neither defines nor links one
            return None

    through_library = operator_new(mod._lib)
    assert through_library in (None, operator_new(ctypes.CDLL(name))), "the library brings its own operator new"


# ---------------------------------------------------------------------------- crashes
@pytest.mark.skipif(not X86, reason="integer division by zero traps (SIGFPE) on x86 only")
def test_integer_division_by_zero_is_a_crash_error_naming_signal_kernel_and_thread(mod: cpu.SourceModule) -> None:
    out = np.zeros(8, np.int32)
    with pytest.raises(cpu.KernelCrashError) as info:
        mod.get_function("divide")(out, np.int32(0), block=(8, 1, 1), grid=(1, 1))
    err = info.value
    assert err.signal_name == "SIGFPE" and err.kernel == "divide" and err.thread == (5, 0, 0)
    assert "division" in str(err) and "partly written" in str(err)
    assert out[:5].tolist() == [int(100 / (k - 5)) for k in range(5)] and (out[5:] == 0).all()  # threads before the crash ran
    _next_launch_works(mod)


def test_a_stray_write_outside_a_local_array_is_a_crash_error(mod: cpu.SourceModule) -> None:
    with pytest.raises(cpu.KernelCrashError) as info:
        mod.get_function("stray")(np.zeros(1, np.float32), np.int64(1 << 44), block=(1, 1, 1), grid=(1, 1))
    assert info.value.signal_name in ("SIGSEGV", "SIGBUS") and "local array" in str(info.value)
    _next_launch_works(mod)


def test_deep_recursion_is_a_stack_overflow_error(mod: cpu.SourceModule) -> None:
    with pytest.raises(cpu.KernelCrashError, match="stack overflow"):
        mod.get_function("recurse")(np.zeros(1, np.int32), np.int32(10_000_000), block=(1, 1, 1), grid=(1, 1))
    out = np.zeros(1, np.int32)
    mod.get_function("recurse")(out, np.int32(100), block=(1, 1, 1), grid=(1, 1))  # shallow recursion works
    assert out[0] == 100


def test_a_local_array_larger_than_the_stack_is_a_stack_overflow_error(mod: cpu.SourceModule) -> None:
    with pytest.raises(cpu.KernelCrashError, match="stack overflow"):
        mod.get_function("big_local")(np.zeros(1, np.float32), np.int32(0), block=(1, 1, 1), grid=(1, 1))
    _next_launch_works(mod)


def test_a_trap_in_a_kernel_is_a_crash_error(mod: cpu.SourceModule) -> None:
    """(abort() itself is refused at compile time since issue 20; a trap still crashes at run time.)"""
    out = np.zeros(1, np.int32)
    with pytest.raises(cpu.KernelCrashError) as info:
        mod.get_function("quit")(out, block=(1, 1, 1), grid=(1, 1))
    assert info.value.signal_name == "SIGILL" and "__builtin_trap" in str(info.value) and out[0] == 1
    _next_launch_works(mod)


def test_a_crash_in_a_child_process_ends_it_cleanly_with_a_message(tmp_path: Path) -> None:
    """The same crash in a fresh interpreter: the process survives it and exits normally."""
    script = textwrap.dedent("""
        import numpy as np
        from helpers import cpu
        mod = cpu.SourceModule('extern "C" __global__ void k(int *o, long long far) { volatile int l[2]; '
                               'l[far] = 1; o[0] = (int)l[0]; }', name="child.cu")
        try:
            mod.get_function("k")(np.zeros(1, np.int32), np.int64(1 << 44), block=(1, 1, 1), grid=(1, 1))
        except cpu.KernelCrashError as exc:
            print("caught", exc.signal_name)
    """)
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                            cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stderr
    assert "caught SIG" in result.stdout


# ---------------------------------------------------------------------------- huge launches
def test_two_billion_threads_are_refused_with_an_estimate(mod: cpu.SourceModule) -> None:
    t0 = time.monotonic()
    with pytest.raises(cpu.LaunchTooLargeError) as info:
        mod.get_function("fill")(np.zeros(1, np.int32), np.int32(1), block=(1024, 1, 1), grid=(2_000_000, 1))
    assert time.monotonic() - t0 < 3
    message = str(info.value)
    assert "2,048,000,000 threads" in message and "ZC_CPU_MAX_THREADS" in message and " s (" in message
    _next_launch_works(mod)


def test_the_thread_limit_comes_from_ZC_CPU_MAX_THREADS(mod: cpu.SourceModule, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_MAX_THREADS", "64")
    fill = mod.get_function("fill")
    fill(np.zeros(64, np.int32), np.int32(1), block=(64, 1, 1), grid=(1, 1))
    with pytest.raises(cpu.LaunchTooLargeError, match="65 threads|128 threads"):
        fill(np.zeros(128, np.int32), np.int32(1), block=(64, 1, 1), grid=(2, 1))


# ---------------------------------------------------------------------------- traced memory
def test_tracing_four_million_threads_keeps_memory_bounded(tmp_path: Path) -> None:
    """Peak RSS of a fresh interpreter tracing a 4M-thread vector add (1.6 GB before the fix)."""
    script = textwrap.dedent("""
        import resource, numpy as np
        from helpers import cpu
        add = cpu.load_kernel("vector_add", "vector_add_kernel")
        n = 1 << 22
        a = np.ones(n, np.float32); c = np.zeros(n, np.float32)
        add(a, a, c, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))   # build, load, allocate
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = add.trace(a, a, c, np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(after - before, t.sampled, t.requests, t.scale)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stderr
    grew_kib, sampled, requests, scale = result.stdout.split()
    assert sampled == "True" and int(requests) == 3 * cpu.runtime.TRACE_MAX_WARPS
    assert float(scale) == (1 << 22) / 32 / cpu.runtime.TRACE_MAX_WARPS
    assert int(grew_kib) < 100 * 1024, f"tracing grew the peak RSS by {int(grew_kib) / 1024:.0f} MiB"


def test_an_explicit_max_warps_traces_every_warp_in_rows_not_raw_accesses() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    n = 1 << 16
    a = np.ones(n, np.float32)
    t = add.trace(a, a, np.zeros(n, np.float32), np.int32(n), block=(256, 1, 1), grid=(n // 256, 1),
                  max_warps=n // 32)
    assert not t.sampled and t.requests == 3 * (n // 32)
    assert (t.instructions["sectors"] == 4).all() and (t.instructions["threads"] == 32).all()
    assert len(t.accesses) == 3 * 32 * cpu.runtime.RAW_WARPS


def test_rows_counted_in_cpp_equal_the_python_grouping_of_the_same_accesses() -> None:
    src = r"""
    extern "C" __global__ void gather(const float *src, const int *idx, float *dst, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n && (i % 3)) { int j = idx[i]; dst[i] = src[j]; }
        if (i % 5 == 0) atomicAdd(dst, 1.0f);
    }"""
    fn = cpu.SourceModule(src, name="gather.cu").get_function("gather")
    n = 2048
    idx = np.random.default_rng(1).integers(0, 4096, n).astype(np.int32)
    t = fn.trace(np.ones(4096, np.float32), idx, np.zeros(n, np.float32), np.int32(n), block=(128, 1, 1),
                 grid=(n // 128, 1), max_warps=cpu.runtime.RAW_WARPS)
    again = cpu.Trace.from_records(t.accesses, kernel="gather", block=t.block, grid=t.grid,
                                   max_warps=cpu.runtime.RAW_WARPS)
    assert len(t.instructions) > 0
    assert t.instructions.tobytes() == again.instructions.tobytes()


ENDLESS = r"""
extern "C" __global__ void endless(const float *src, float *out, int forever) {
    float acc = 0.0f;
    unsigned k = 0;
    while (forever) { acc += src[k++ % 64]; }
    out[threadIdx.x] = acc;
}
extern "C" __global__ void heavy(const float *src, float *out, int reps) {
    float acc = 0.0f;                                // reps loads per thread, each its own request
    for (int r = 0; r < reps; ++r) acc += src[(threadIdx.x + r) % 64];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def test_an_endless_traced_kernel_stops_at_the_per_warp_cap_with_memory_bounded(tmp_path: Path) -> None:
    """Issue 20: a traced endless loop grew the trace without bound (1.5 GB in 2 s); it now stops at the cap
    per warp, in milliseconds, well before its timeout, and the next launch and trace work."""
    script = textwrap.dedent('''
        import resource, sys, time
        import numpy as np
        from helpers import cpu
        mod = cpu.SourceModule(sys.argv[1], name="endless.cu")
        src, out = np.ones(64, np.float32), np.zeros(64, np.float32)
        mod.get_function("heavy").trace(src, out, np.int32(4), block=(32, 1, 1), grid=(2, 1))   # warm up
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.monotonic()
        try:
            mod.get_function("endless").trace(src, out, np.int32(1), block=(32, 1, 1), grid=(1, 1), timeout=2)
        except cpu.TraceTooLargeError as exc:
            print("error", exc.cap, exc.limit, exc.warp, f"{time.monotonic() - t0:.3f}")
            print("message", exc)
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print("grew", grew)
        t = mod.get_function("heavy").trace(src, out, np.int32(4), block=(32, 1, 1), grid=(2, 1))
        print("next", t.requests, float(out[0]))
    ''')
    done = subprocess.run([sys.executable, "-c", script, ENDLESS], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    found = {line.split()[0]: line.split(maxsplit=1)[1] for line in done.stdout.splitlines()}
    assert "error" in found, done.stdout + done.stderr
    cap, limit, warp, seconds = found["error"].split()
    assert (cap, int(limit), warp) == ("warp", cpu.runtime.TRACE_WARP_CAP, "0") and float(seconds) < 1.5
    message = found["message"]
    assert "1,048,576 loads and stores" in message and "32,768 per thread" in message and "endless loop" in message
    assert int(found["grew"]) < 64 * 1024, f"the endless trace grew the peak RSS by {int(found['grew']) >> 10} MiB"
    assert found["next"] == "10 4.0"   # 4 loads and a store per thread, 2 warps


def test_the_total_trace_cap_comes_from_ZC_CPU_TRACE_MB(monkeypatch: pytest.MonkeyPatch) -> None:
    """256 loads per thread keep 192 KiB of raw accesses per warp: 1 MiB is reached within the first warps."""
    heavy = cpu.SourceModule(ENDLESS, name="endless.cu").get_function("heavy")
    src, out = np.ones(64, np.float32), np.zeros(8 * 256, np.float32)
    monkeypatch.setenv("ZC_CPU_TRACE_MB", "1")
    with pytest.raises(cpu.TraceTooLargeError) as info:
        heavy.trace(src, out, np.int32(256), block=(256, 1, 1), grid=(8, 1))
    err = info.value
    assert err.cap == "total" and err.limit == 1 << 20 and 0 < err.warp < 8 and err.kernel == "heavy"
    assert "1 MiB" in str(err) and "ZC_CPU_TRACE_MB" in str(err) and "max_warps=" in str(err)
    monkeypatch.delenv("ZC_CPU_TRACE_MB")
    t = heavy.trace(src, out, np.int32(256), block=(256, 1, 1), grid=(8, 1))   # the default cap holds it
    assert t.requests == 64 * 257 and len(t.accesses) == 32 * 32 * 257 and (out == 256).all()
    monkeypatch.setenv("ZC_CPU_TRACE_MB", "0")
    with pytest.raises(cpu.LaunchConfigError, match="ZC_CPU_TRACE_MB"):
        heavy.trace(src, out, np.int32(1), block=(32, 1, 1), grid=(1, 1))


# ---------------------------------------------------------------------------- options and arguments
def test_D_and_I_options_act_as_for_pycuda(tmp_path: Path) -> None:
    (tmp_path / "value.h").write_text("#define EXTRA 5\n")
    src = '#include "value.h"\nextern "C" __global__ void k(int *o) { o[0] = VALUE + EXTRA; }'
    out = np.zeros(1, np.int32)
    cpu.SourceModule(src, options=["-DVALUE=30", "-O3"], include_dirs=[str(tmp_path)]).get_function("k")(
        out, block=(1, 1, 1), grid=(1, 1))
    assert out[0] == 35
    (tmp_path / "value.h").write_text("#define EXTRA 50\n")  # an edited header rebuilds
    cpu.SourceModule(src, options=["-D", "VALUE=1", "-I", str(tmp_path)]).get_function("k")(
        out, block=(1, 1, 1), grid=(1, 1))
    assert out[0] == 51
    flags, dirs = cpu.runtime._parse_options(["-D", "A=1", "-DB", "--define-macro=C", "-I", str(tmp_path),
                                              f"-I{tmp_path}"], None, "k.cu")
    assert flags[:3] == ["-DA=1", "-DB", "-DC"] and dirs == [tmp_path.resolve()] * 2
    with pytest.raises(cpu.UnsupportedFeatureError, match="include_dirs"):
        cpu.SourceModule(src, options=["-DVALUE=1"])
    with pytest.raises(cpu.CompileOptionError, match="does not exist"):
        cpu.SourceModule(src, include_dirs=[str(tmp_path / "missing")])


@pytest.mark.parametrize("options", [["--use_fast_math"], ["-lineinfo"], ["-G"], ["-D"], ["-D1X"]])
def test_other_options_are_refused_by_name(options: list[str]) -> None:
    with pytest.raises(cpu.CompileOptionError) as info:
        cpu.SourceModule('extern "C" __global__ void k(int *o) { o[0] = 1; }', options=options)
    assert options[-1] in str(info.value)


def test_unknown_keywords_are_refused_and_pycuda_gpu_keywords_accepted() -> None:
    src = 'extern "C" __global__ void k(int *o) { o[0] = 1; }'
    cpu.SourceModule(src, no_extern_c=True, arch="sm_90", keep=False)
    with pytest.raises(TypeError, match="optoins"):
        cpu.SourceModule(src, optoins=["-DX"])


def test_a_float64_array_for_a_float_pointer_warns() -> None:
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a = np.ones(8)
    c = np.zeros(8, np.float32)
    with pytest.warns(cpu.KernelArgumentWarning, match="float64"):
        add(a, np.ones(8, np.float32), c, np.int32(8), block=(8, 1, 1), grid=(1, 1))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add(np.ones(8, np.float32), np.ones(8, np.float32), c, np.int32(8), block=(8, 1, 1), grid=(1, 1))


@pytest.mark.parametrize("shape", [0, -3, (4, 0), (2, -1), 2.5, ()])
def test_mapped_empty_refuses_zero_negative_and_odd_sizes(shape: object) -> None:
    with pytest.raises(cpu.ArraySizeError):
        cpu.mapped_empty(shape)  # type: ignore[arg-type]


def test_mapped_empty_takes_the_gpu_keywords() -> None:
    a = cpu.mapped_empty((3, 4), np.int32, write_combined=True, portable=True)
    assert a.shape == (3, 4) and a.dtype == np.int32 and a.ctypes.data % 4096 == 0


def test_an_address_at_the_end_of_one_array_and_start_of_another_belongs_to_the_one_it_starts() -> None:
    big = np.arange(200, dtype=np.float32)
    x, y = big[:150], big[150:]
    cpu.register(x)
    cpu.register(y)
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    out = np.zeros(50, np.float32)
    add(cpu.device_pointer(y), cpu.device_pointer(y), out, np.int32(50), block=(64, 1, 1), grid=(1, 1))
    np.testing.assert_array_equal(out, 2 * big[150:])


# ---------------------------------------------------------------------------- the #if parser
@pytest.mark.parametrize("expression, value", [
    ("defined(__CUDA_ARCH__)", False), ("!defined __CUDA_ARCH__", True), ("__CUDA_ARCH__ >= 800", False),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", False), ("!defined(__CUDA_ARCH__) || FOO", True),
    ("defined(__CUDA_ARCH__) && UNKNOWN", False), ("UNKNOWN && 1", None), ("(1 + 2 * 3) == 7 ? 1 : 0", True),
    ("0x10 >> 4 == 1 && ~0 == -1 && 7 % 4 == 3", True), ("1 / 0", None), ("__import__('os')", None),
    ("1 +", None), ("(1", None),
])
def test_if_conditions_are_parsed_not_evaluated_by_python(expression: str, value: bool | None) -> None:
    assert evaluate_condition(expression) is value


# ---------------------------------------------------------------------------- the build cache
UNIQUE = 'extern "C" __global__ void k(int *o) {{ o[0] = {value}; }}'


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = compiler._compile

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compiler, "_compile", counting)
    return calls


def test_the_cache_is_reached_on_disk_and_a_truncated_library_is_rebuilt(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    calls = _compiles(monkeypatch)
    value = time.time_ns() % 1_000_000
    cpu.SourceModule(UNIQUE.format(value=value))
    assert len(calls) == 1
    cache = tmp_path / "cache"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (library,) = cache.glob("*.so")
    assert (cache / library.name.replace(".so", ".sha256")).is_file()
    monkeypatch.setattr(compiler, "_loaded", {})          # a new process: nothing in memory
    cpu.SourceModule(UNIQUE.format(value=value))
    assert len(calls) == 1                                # served from the disk
    # a second source whose library is truncated on disk (as a full disk leaves it), never loaded before
    other = UNIQUE.format(value=value + 1)
    cpu.SourceModule(other)
    assert len(calls) == 2
    (newest,) = [p for p in cache.glob("*.so") if p != library]
    monkeypatch.setattr(compiler, "_loaded", {})
    # write a truncated copy under a fresh inode, so this process's mapping of the good one is untouched
    data = newest.read_bytes()
    newest.unlink()
    newest.write_bytes(data[:len(data) // 3])
    out = np.zeros(1, np.int32)
    cpu.SourceModule(other).get_function("k")(out, block=(1, 1, 1), grid=(1, 1))
    assert len(calls) == 3 and out[0] == value + 1        # rebuilt, not loaded


def test_a_library_with_a_right_checksum_that_does_not_load_is_rebuilt(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    calls = _compiles(monkeypatch)
    value = time.time_ns() % 1_000_000 + 7
    cpu.SourceModule(UNIQUE.format(value=value))
    (library,) = (tmp_path / "cache").glob("*.so")
    monkeypatch.setattr(compiler, "_loaded", {})
    library.unlink()
    library.write_bytes(b"not a shared library")
    library.with_suffix(".sha256").write_text(compiler._sha256(library) + "\n")
    cpu.SourceModule(UNIQUE.format(value=value))
    assert len(calls) == 2


def test_builds_of_one_kernel_at_the_same_time_compile_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Builders sharing the cache (a test session's workers, two notebooks) take a lock per library: one compiles,
    the others wait for it and load its result."""
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(compiler, "_loaded", {})
    calls = _compiles(monkeypatch)
    value = time.time_ns() % 1_000_000 + 11
    start = threading.Barrier(3)
    outs: list[int] = []

    def build() -> None:
        start.wait()
        out = np.zeros(1, np.int32)
        cpu.SourceModule(UNIQUE.format(value=value)).get_function("k")(out, block=(1, 1, 1), grid=(1, 1))
        outs.append(int(out[0]))

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert outs == [value] * 3
    assert len(calls) == 1, "each builder compiled the same library"
    assert len(list((tmp_path / "cache").glob("*.so"))) == 1


def test_the_test_sessions_cache_drops_libraries_a_month_old_and_keeps_the_rest(tmp_path: Path,
                                                                              request: pytest.FixtureRequest) -> None:
    """tests/conftest.py keeps the tests' kernel cache between sessions and, at the end of each, removes the
    libraries built more than TEST_CACHE_MAX_AGE_DAYS ago (an older header's or compiler's), with their files."""
    here = str(Path(__file__).with_name("conftest.py"))  # by file: `import conftest` may find tests/browser's
    conftest = next(p for p in request.config.pluginmanager.get_plugins() if getattr(p, "__file__", None) == here)
    TEST_CACHE_MAX_AGE_DAYS, _prune = conftest.TEST_CACHE_MAX_AGE_DAYS, conftest._prune

    old, new = "0" * 24, "1" * 24
    for key in (old, new):
        for suffix in (".so", ".sha256", ".lock"):
            (tmp_path / f"{key}{suffix}").write_text("")
    (tmp_path / "notes.txt").write_text("kept")
    month = time.time() - (TEST_CACHE_MAX_AGE_DAYS + 1) * 86400
    os.utime(tmp_path / f"{old}.so", (month, month))
    _prune(tmp_path, TEST_CACHE_MAX_AGE_DAYS * 86400)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{new}{s}" for s in (".lock", ".sha256", ".so")] + ["notes.txt"]


def test_a_cache_others_can_write_into_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("ZC_CPU_CACHE", str(shared))
    monkeypatch.setattr(compiler, "_loaded", {})
    with pytest.raises(cpu.BuildCacheError, match="written by other users") as info:
        cpu.SourceModule(UNIQUE.format(value=1))
    assert str(shared) in str(info.value) and "ZC_CPU_CACHE" in str(info.value)


def test_a_new_cache_folder_is_created_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "a" / "cache"))
    old = os.umask(0o022)
    try:
        directory = compiler.prepare_cache()
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_a_read_only_cache_is_refused_naming_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("ZC_CPU_CACHE", str(cache))
    monkeypatch.setattr(compiler, "_loaded", {})
    monkeypatch.setattr(compiler, "_writable", lambda directory: False)  # as for a read-only folder (even as root)
    with pytest.raises(cpu.BuildCacheError, match="read-only") as info:
        cpu.SourceModule(UNIQUE.format(value=2))
    assert str(cache) in str(info.value) and "ZC_CPU_CACHE" in str(info.value)


def test_a_full_cache_is_refused_naming_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(compiler, "_loaded", {})

    def full(*args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compiler.tempfile, "TemporaryDirectory", full)
    with pytest.raises(cpu.BuildCacheError, match="is full") as info:
        cpu.SourceModule(UNIQUE.format(value=4))
    assert str(tmp_path / "cache") in str(info.value) and "ZC_CPU_CACHE" in str(info.value)


def test_a_cache_owned_by_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path))
    monkeypatch.setattr(os, "getuid", lambda: os.stat(tmp_path).st_uid + 1)
    with pytest.raises(cpu.BuildCacheError, match="another user"):
        compiler.prepare_cache()


def test_a_build_has_a_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    slow = tmp_path / "slow-cxx"
    slow.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo slow; exit 0; fi\nsleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setenv("CXX", str(slow))
    monkeypatch.setenv("ZC_CPU_BUILD_TIMEOUT", "0.5")
    with pytest.raises(cpu.KernelCompileError, match="longer than 0.5 s"):
        cpu.SourceModule(UNIQUE.format(value=3))


def test_compiler_messages_keep_what_matters_and_hint_auto_only_for_the_pointer_type() -> None:
    with pytest.raises(cpu.KernelCompileError) as info:
        cpu.SourceModule('extern "C" __global__ void k(const float *p, float *o) { const float *q = p + 1; o[0] = *q; }',
                         name="auto.cu")
    assert "auto" in str(info.value) and "auto.cu:1" in str(info.value)
    with pytest.raises(cpu.KernelCompileError) as info:
        cpu.SourceModule('extern "C" __global__ void k(float *o) { o[0] = undefined_name; }', name="typo.cu")
    assert "undefined_name" in str(info.value) and "Hint" not in str(info.value)
    text = compiler.explain("cc1plus: fatal error: k.cpp: No space left on device\n"
                            "/usr/bin/ld: final link failed\ncollect2: error: ld returned 1 exit status\n"
                            "In file included from somewhere:\n", "k.cu")
    assert "fatal error" in text and "/usr/bin/ld" in text and "No space" in text and "included" not in text
    assert "Hint" not in text


def test_ctypes_structures_match_the_header(mod: cpu.SourceModule) -> None:
    sizeof = mod._lib.zc_sizeof
    for i, (_, size) in cpu.runtime._SIZES.items():
        assert sizeof(i) == size


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "soon"])
def test_a_bad_build_timeout_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """Issue 20: ZC_CPU_BUILD_TIMEOUT=inf would let a build hang forever; it is refused by name."""
    monkeypatch.setenv("ZC_CPU_BUILD_TIMEOUT", value)
    with pytest.raises(cpu.KernelCompileError, match="ZC_CPU_BUILD_TIMEOUT"):
        compiler.build_timeout()


def test_a_stuck_launch_of_one_module_leaves_other_modules_working() -> None:
    """Issue 20: a kernel that blocks the stop signal cannot be stopped; it used to leave every other
    module failing with 'Device or resource busy' (the launch state was one symbol for all libraries)."""
    code = textwrap.dedent('''
        import numpy as np
        from helpers import cpu
        stuck = cpu.SourceModule("""
        #include <signal.h>
        extern "C" __global__ void hold(int *out) {
            sigset_t all; sigfillset(&all); pthread_sigmask(SIG_BLOCK, &all, nullptr);
            volatile unsigned long long k = 0;
            while (true) { k = k + 1; }
        }""", name="stuck.cu")
        try:
            stuck.get_function("hold")(np.zeros(1, np.int32), block=(1, 1, 1), grid=(1, 1), timeout=0.3)
        except cpu.CpuBackendError as exc:
            print("stuck:", "did not stop" in str(exc), flush=True)
        other = cpu.SourceModule('extern "C" __global__ void put(int *out) { out[threadIdx.x] = 5; }', name="other.cu")
        out = np.zeros(4, np.int32)
        other.get_function("put")(out, block=(4, 1, 1), grid=(1, 1))
        print("other:", out.tolist(), flush=True)
        import os; os._exit(0)
    ''')
    # the session's kernel cache (inherited): both modules are built once, not in every session
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "stuck: True" in done.stdout, done.stdout + done.stderr
    assert "other: [5, 5, 5, 5]" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("call", ["exit(1)", "std::exit(0)", "abort()", "_exit(3)", "system(\"ls\")",
                                  "fprintf(stderr, \"x\")", "puts(\"x\")", "quick_exit(0)"])
def test_calls_that_act_on_the_process_are_refused_at_compile_time_by_name(call: str) -> None:
    """Issue 20: exit() in a kernel used to end the notebook's Python silently."""
    source = f'extern "C" __global__ void k(int *out) {{\n    out[0] = 1;\n    {call};\n}}'
    with pytest.raises(cpu.UnsupportedFeatureError) as info:
        cpu.SourceModule(source, name="quits.cu")
    name = call.split("(")[0].replace("std::", "")
    assert f"a call to {name}()" in str(info.value) and "line 3 of quits.cu" in str(info.value)


def test_printf_keeps_its_own_message_and_names_like_exit_inside_others_are_fine() -> None:
    with pytest.raises(cpu.UnsupportedFeatureError, match="printf in a kernel"):
        cpu.SourceModule('extern "C" __global__ void k(int *o) { printf("%d", o[0]); }', name="p.cu")
    mod = cpu.SourceModule('__device__ int my_exit(int v) { return v + 1; }\n'
                           'extern "C" __global__ void k(int *o) { int exit_code = my_exit(1); o[0] = exit_code; }',
                           name="fine.cu")
    out = np.zeros(1, np.int32)
    mod.get_function("k")(out, block=(1, 1, 1), grid=(1, 1))
    assert out[0] == 2

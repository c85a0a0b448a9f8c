"""Platforms the course has not run on, given to the helpers as facts (helpers.platform.doctor, platform_notes, pages,
linux_only, cpu.compiler, kernels, colab; issue 12). No test here needs a GPU."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from helpers.platform import doctor, linux_only, facts as platform_facts
from helpers.memory import pages
from helpers.errors import ProcUnavailableError
from helpers.platform.facts import Facts, GpuFacts, PcieLink
from helpers.platform.notes import platform_note, reference_gpu

ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30


def h200(**attributes: int) -> GpuFacts:
    """The recorded H200, with some attributes changed."""
    ref = reference_gpu()
    assert ref is not None, "data/ holds no reference record"
    return dataclasses.replace(ref, attributes={**ref.attributes, **attributes}, driver_cuda_version=(13, 0),
                               pcie=PcieLink(5, 16, 5, 16, "nvml"))


def live(gpu: GpuFacts | None = None, **changes) -> Facts:
    base = Facts(mode="live", mode_cause="live", mode_reason="GPU 0 is a test GPU", gpu=gpu or h200(),
                 nvcc_version=(13, 0), pycuda_version=(2026, 1), virtualization="none",
                 mem_total_bytes=256 * GIB, mem_available_bytes=200 * GIB, cxx="/usr/bin/g++", cxx_identity="g++")
    return dataclasses.replace(base, **changes)


def report(facts: Facts) -> dict:
    return doctor.diagnose(facts, reference_gpu())


def status(facts: Facts) -> dict[str, str]:
    return {lesson: entry["status"] for lesson, entry in report(facts)["lessons"].items()}


def notes(facts: Facts, lesson: str) -> str:
    return " ".join(report(facts)["lessons"][lesson]["notes"])


# --------------------------------------------------------------------------- the reference itself
def test_the_reference_h200_runs_every_lesson_live_as_written():
    assert set(status(live()).values()) == {"live"}
    assert "runs as written" in platform_note("12", live())


def test_report_has_mode_gpu_and_platform_and_is_json():
    rep = report(live())
    data = json.loads(json.dumps(rep))
    assert data["mode"] == "live" and data["gpu"]["sm_count"] == 132 and data["gpu"]["arch"] == "sm_90"
    assert data["gpu"]["pcie"]["ceiling_GBps"] == pytest.approx(32 * 128 / 130 / 8 * 16)
    assert data["platform"]["system"] == "Linux"
    assert "Lessons:" in doctor.render(rep) and "PCIe Gen5 x16" in doctor.render(rep)


# --------------------------------------------------------------------------- integrated GPUs
def test_integrated_gpu_changes_lesson_08s_verdict():
    orin = dataclasses.replace(h200(INTEGRATED=1), name="Orin", compute_capability=(8, 7), pcie=None)
    facts = live(orin)
    states = status(facts)
    assert states["12"] == "changed" and "always a performance gain" in notes(facts, "12")
    assert states["06"] == "changed" and "DRAM-to-DRAM" in notes(facts, "06")
    assert states["02"] == "live"  # Orin is I/O-coherent: no uncached-pinned caveat
    assert "always a performance gain" in platform_note("12", facts)


def test_integrated_gpu_before_xavier_warns_that_pinned_memory_is_uncached_for_the_cpu():
    nano = dataclasses.replace(h200(INTEGRATED=1), name="Jetson Nano", compute_capability=(5, 3), pcie=None)
    facts = live(nano, nvcc_version=(10, 2), pycuda_version=(2021, 1))
    assert status(facts)["02"] == "changed" and "not cached for the CPU" in notes(facts, "02")


# --------------------------------------------------------------------------- HMM
def test_hmm_makes_the_unpinned_pointer_demonstration_not_fail():
    facts = live(h200(PAGEABLE_MEMORY_ACCESS=1))
    assert status(facts)["05"] == "changed"
    assert "does not fail here" in platform_note("05", facts)
    assert status(live())["05"] == "live"


# --------------------------------------------------------------------------- WSL2
def test_wsl2_limits_pinned_memory_and_registered_host_pointers():
    gpu = h200(PAGEABLE_MEMORY_ACCESS=0, CONCURRENT_MANAGED_ACCESS=0, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM=0)
    facts = live(gpu, proc_version="Linux version 5.15.167.4-microsoft-standard-WSL2 (root@1) #1 SMP",
                 osrelease="5.15.167.4-microsoft-standard-WSL2", virtualization="microsoft")
    rep = report(facts)
    assert rep["platform"]["wsl"] == "wsl2" and "WSL2" in rep["platform"]["names"]
    assert any("pinned system memory as limited" in n for n in rep["pinned_memory"]["notes"])
    assert rep["lessons"]["02"]["status"] == "changed"
    assert rep["lessons"]["13"]["status"] == "changed" and "cuMemHostGetDevicePointer" in notes(facts, "13")
    assert "guest-physical" in notes(facts, "02")


def test_wsl_kind_tells_wsl1_from_wsl2_and_from_linux():
    assert platform_facts.wsl_kind("Linux version 4.4.0-19041-Microsoft", "4.4.0-19041-Microsoft") == "wsl1"
    assert platform_facts.wsl_kind("", "5.15.90.1-microsoft-standard-WSL2") == "wsl2"
    assert platform_facts.wsl_kind("Linux version 6.8.0-45-generic", "6.8.0-45-generic") is None


# --------------------------------------------------------------------------- host atomics
def test_native_host_atomics_change_lesson_09_and_their_absence_is_only_noted():
    with_atomics = live(h200(HOST_NATIVE_ATOMIC_SUPPORTED=1))
    assert status(with_atomics)["14"] == "changed" and "atomicAdd_system" in notes(with_atomics, "14")
    without = live()
    assert status(without)["14"] == "live" and "not with the CPU" in notes(without, "14")


# --------------------------------------------------------------------------- toolkits
def _levels(facts: Facts) -> dict[str, str]:
    return {f.topic: f.level for f in doctor.toolkit_findings(facts)}


def test_old_toolkit_cannot_build_for_sm_120():
    blackwell = dataclasses.replace(h200(), name="RTX 5090", compute_capability=(12, 0), driver_cuda_version=(12, 8))
    facts = live(blackwell, nvcc_version=(12, 6), pycuda_version=(2024, 1))
    assert _levels(facts)["arch"] == "error"
    states = status(facts)
    assert all(states[lesson] == "blocked" for lesson in doctor.KERNEL_LESSONS) and states["01"] == "live"
    assert _levels(live(blackwell, nvcc_version=(12, 8)))["toolkit"] == "ok"


def test_cuda_13_cannot_build_for_pascal_or_volta_and_needs_a_recent_pycuda():
    volta = dataclasses.replace(h200(), name="V100", compute_capability=(7, 0))
    assert _levels(live(volta))["arch"] == "error"
    assert _levels(live(dataclasses.replace(volta, compute_capability=(7, 5))))["toolkit"] == "ok"
    assert _levels(live(pycuda_version=(2024, 1, 2)))["pycuda"] == "error"
    assert "pycuda" not in _levels(live(pycuda_version=(2025, 1, 2)))


def test_toolkit_newer_than_the_driver():
    minor = live(dataclasses.replace(h200(), driver_cuda_version=(13, 0)), nvcc_version=(13, 1))
    assert _levels(minor)["driver"] == "warn" and "cubin for sm_90 loads" in " ".join(
        f.text for f in doctor.toolkit_findings(minor))
    assert status(minor)["05"] == "live"  # the helpers build cubins, so nothing is blocked
    major = live(dataclasses.replace(h200(), driver_cuda_version=(12, 8)), nvcc_version=(13, 0))
    assert _levels(major)["driver"] == "error" and status(major)["05"] == "blocked"


def test_no_nvcc_blocks_the_kernel_lessons_live():
    facts = live(nvcc_version=None)
    assert _levels(facts)["nvcc"] == "error" and status(facts)["04"] == "blocked"


# --------------------------------------------------------------------------- pinned memory
def test_small_pinned_limit_changes_the_lessons_that_pin_a_gibibyte():
    facts = live(mem_total_bytes=2 * GIB, mem_available_bytes=GIB // 2)
    pinned = report(facts)["pinned_memory"]
    assert pinned["expected_bytes"] == GIB // 2 and pinned["small"]
    states = status(facts)
    assert [lesson for lesson in doctor.LESSONS if states[lesson] == "changed"] == list(doctor.PINNED_LESSONS)
    assert "smaller sizes" in notes(facts, "06")
    assert not report(live())["pinned_memory"]["small"]


# --------------------------------------------------------------------------- a GPU that cannot map
def test_a_gpu_that_cannot_map_replays_every_lesson_but_is_still_reported():
    facts = live(h200(CAN_MAP_HOST_MEMORY=0), mode="replay", mode_cause="cannot-map",
                 mode_reason="the GPU cannot map host memory (CAN_MAP_HOST_MEMORY is 0)")
    rep = report(facts)
    assert rep["gpu"]["attributes"]["CAN_MAP_HOST_MEMORY"] == 0
    assert {e["status"] for e in rep["lessons"].values()} == {"replay"}
    assert "cannot map" in doctor.render(rep)


# --------------------------------------------------------------------------- no /proc (macOS)
@pytest.fixture
def no_proc(monkeypatch, tmp_path):
    monkeypatch.setenv("ZC_PROC_ROOT", str(tmp_path / "no-proc"))


def test_pages_say_clearly_that_there_is_no_proc(no_proc):
    array = pages.page_aligned_empty(1024)
    assert not pages.proc_available() and not pages.pfns_visible()
    for call in (lambda: pages.frames_of(array), lambda: pages.mapping_of(array.ctypes.data), pages.locked_kib):
        with pytest.raises(ProcUnavailableError, match="macOS"):
            call()


def test_linux_only_cells_are_skipped_without_proc_and_run_with_it(no_proc, monkeypatch):
    namespace: dict = {}
    skipped = linux_only.run_cell("x = 1", namespace)
    assert skipped and "Skipped" in skipped and namespace["x"] is None   # a later cell may pass it on
    monkeypatch.delenv("ZC_PROC_ROOT")
    assert linux_only.run_cell("x = 1", namespace) is None and namespace["x"] == 1
    with pytest.raises(ZeroDivisionError):  # a failing cell still fails where it runs
        linux_only.run_cell("1 / 0", namespace)


def test_a_linux_only_cell_shows_its_last_expression(no_proc, monkeypatch):
    namespace: dict = {}
    assert linux_only.evaluate("y = 2\ny * 3", namespace)[1] is None and namespace["y"] is None   # skipped
    monkeypatch.delenv("ZC_PROC_ROOT")
    assert linux_only.evaluate("y = 2\ny * 3", namespace) == (None, 6) and namespace["y"] == 2
    assert linux_only.evaluate("z = y + 1", namespace) == (None, None) and namespace["z"] == 3


def test_a_mac_replays_and_shows_the_recorded_linux_view(no_proc):
    facts = dataclasses.replace(platform_facts.gather(), system="darwin")
    assert not facts.proc_available
    rep = report(facts)
    assert rep["platform"]["system"] == "macOS" and not rep["platform"]["proc"]
    assert "%%linux_only" in " ".join(rep["lessons"]["01"]["notes"])
    note = platform_note("02", facts)
    assert "no Linux /proc" in note and "cudaHostAlloc mapped" in note and "/dev/zero" in note


def test_native_windows_points_to_wsl2():
    facts = Facts(system="win32", proc_available=False, cxx=None, make=False)
    rep = report(facts)
    assert rep["platform"]["system"] == "Windows" and "WSL2" in " ".join(rep["lessons"]["00"]["notes"])
    assert rep["lessons"]["05"]["status"] == "blocked"  # no compiler for the CPU backend


# --------------------------------------------------------------------------- clang
def test_the_cpu_backend_falls_back_to_clang_when_there_is_no_gcc(monkeypatch):
    from helpers.cpu import compiler

    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(compiler.shutil, "which", lambda name: "/usr/bin/clang++" if name == "clang++" else None)
    assert compiler.find_compiler() == "/usr/bin/clang++"


def test_macos_builds_a_dylib(monkeypatch):
    from helpers.cpu import compiler

    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        darwin = importlib.reload(compiler)
        assert "-dynamiclib" in darwin.FLAGS and "-shared" not in darwin.FLAGS
        assert darwin.LIBRARY_SUFFIX == ".dylib" and "-fstack-clash-protection" not in darwin.FLAGS
    finally:
        monkeypatch.undo()
        importlib.reload(compiler)
    assert "-shared" in compiler.FLAGS and compiler.LIBRARY_SUFFIX == ".so"


@pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not installed (apt-get install clang)")
def test_a_kernel_builds_and_runs_with_clang(monkeypatch, tmp_path):
    import numpy as np

    from helpers import cpu
    from helpers.cpu import compiler

    monkeypatch.setenv("CXX", "clang++")
    monkeypatch.setenv("ZC_CPU_CACHE", str(tmp_path / "cache"))
    assert "clang" in compiler._identity(compiler.find_compiler())
    add = cpu.load_kernel("vector_add", "vector_add_kernel")
    a, b, c = (np.full(1000, v, np.float32) for v in (1, 2, 0))
    add(a, b, c, np.int32(1000), block=(256, 1, 1), grid=(4, 1))
    assert np.all(c == 3.0)
    spin = cpu.SourceModule('extern "C" __global__ void spin(int *out, int forever) { while (forever) {} out[0] = 1; }')
    with pytest.raises(cpu.KernelTimeoutError):  # clang keeps the endless loop (-fno-finite-loops): the timeout stops it
        spin.get_function("spin")(np.zeros(1, np.int32), np.int32(1), block=(1, 1, 1), grid=(1, 1), timeout=0.3)


# --------------------------------------------------------------------------- cubins for the detected arch
def test_kernels_are_built_for_the_detected_architecture(monkeypatch):
    from helpers.memory import gpu
    from helpers import kernels

    built = {}

    class SourceModule:
        def __init__(self, source, **options):
            built.update(options)

    driver = types.SimpleNamespace(Context=types.SimpleNamespace(
        get_device=lambda: types.SimpleNamespace(compute_capability=lambda: (7, 5))))
    monkeypatch.setitem(sys.modules, "pycuda", types.ModuleType("pycuda"))
    monkeypatch.setitem(sys.modules, "pycuda.driver", driver)
    monkeypatch.setitem(sys.modules, "pycuda.compiler", types.SimpleNamespace(SourceModule=SourceModule))
    monkeypatch.setattr(gpu, "context", lambda: None)
    monkeypatch.setattr(kernels.shutil, "which", lambda name: "/usr/local/cuda/bin/nvcc")
    kernels._module.cache_clear()
    try:
        kernels._module("vector_add")
    finally:
        kernels._module.cache_clear()
    assert built["arch"] == "sm_75" and built["no_extern_c"]


# --------------------------------------------------------------------------- Colab
def test_colab_is_recognised_from_its_environment(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20250101")
    facts = platform_facts.gather()
    assert facts.colab and "Colab" in report(facts)["platform"]["names"]


def test_colab_setup_puts_cuda_on_path_and_accepts_a_local_folder(tmp_path):
    from helpers.tools import colab

    cuda_bin = tmp_path / "cuda" / "bin"
    cuda_bin.mkdir(parents=True)
    (cuda_bin / "nvcc").write_text("#!/bin/sh\n")
    environ = {"PATH": str(tmp_path / "empty")}
    assert colab.cuda_on_path(environ, (str(tmp_path / "missing"), str(cuda_bin))) == str(cuda_bin)
    assert environ["PATH"].startswith(str(cuda_bin) + os.pathsep)
    assert colab.course_folder(str(ROOT), tmp_path / "clone") == ROOT
    with pytest.raises(SystemExit, match="not the course"):
        colab.course_folder(str(tmp_path), tmp_path / "clone")
    mode, why = colab.detect(ROOT)
    expected = subprocess.run(["bash", str(ROOT / ".ci" / "detect-gpu")], capture_output=True, text=True).stdout
    assert mode == expected.strip() and why


@pytest.mark.skipif(not os.environ.get("ZC_TEST_COLAB_SETUP"), reason="set ZC_TEST_COLAB_SETUP=1: installs into a "
                    "fresh virtual environment (minutes)")
def test_colab_setup_installs_the_course_into_a_fresh_environment(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    done = subprocess.run([python, str(ROOT / "helpers" / "tools" / "colab.py"), str(ROOT), "--json"], capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    mode = subprocess.run([python, "-c", "from helpers.mode import detect; print(detect().name)"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert mode.stdout.strip() == result["mode"]


def test_every_lesson_asks_colab_for_a_gpu():
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "colab-metadata"), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- the command and the parsers
def test_doctor_command_prints_json_with_mode_gpu_and_platform():
    done = subprocess.run([sys.executable, "-m", "helpers", "doctor", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mode"] in ("live", "replay") and "gpu" in data and data["platform"]["system"]
    assert (data["gpu"] is None) == (data["mode_cause"] in ("no-pycuda", "driver", "no-device"))
    text = subprocess.run([sys.executable, "-m", "helpers", "doctor"], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and text.stdout.startswith("Mode: ")


def test_parsers():
    assert platform_facts.parse_nvcc_version("Cuda compilation tools, release 12.8, V12.8.93") == (12, 8)
    assert platform_facts.parse_nvcc_version("no version here") is None
    assert platform_facts.parse_version("2025.1.2") == (2025, 1, 2) and platform_facts.parse_version("2026.1rc1") == (2026, 1)
    info = platform_facts.parse_meminfo("MemTotal:       16384 kB\nMemAvailable:    8192 kB\nHugePages_Total: 0\n")
    assert info == {"MemTotal": 16384 * 1024, "MemAvailable": 8192 * 1024, "HugePages_Total": 0}
    assert doctor.link_GBps(3, 16) == pytest.approx(8 * 128 / 130 / 8 * 16) and doctor.link_GBps(None, 16) is None


# --------------------------------------------------------------------------- the platform class (platforms lesson)
def jetson_orin() -> GpuFacts:
    return h200(INTEGRATED=1, PAGEABLE_MEMORY_ACCESS=0, HOST_NATIVE_ATOMIC_SUPPORTED=0)


def grace_hopper() -> GpuFacts:
    return h200(PAGEABLE_MEMORY_ACCESS=1, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES=1,
                HOST_NATIVE_ATOMIC_SUPPORTED=1)


def hmm_workstation() -> GpuFacts:
    """A discrete PCIe GPU with HMM: pageable memory works, through the driver's own page tables."""
    return h200(PAGEABLE_MEMORY_ACCESS=1, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES=0)


@pytest.mark.parametrize("gpu, expected", [
    (None, "none"), ("h200", "discrete_pcie"), ("jetson", "integrated"), ("gh200", "coherent_c2c"),
    ("hmm", "discrete_pcie")])
def test_platform_class_from_attributes(gpu, expected):
    facts = {None: None, "h200": h200(), "jetson": jetson_orin(), "gh200": grace_hopper(),
             "hmm": hmm_workstation()}[gpu]
    assert doctor.platform_class(facts) == expected
    report = doctor.diagnose(live(facts) if facts else Facts(), reference_gpu())
    assert report["platform"]["class"] == expected
    assert set(report["platform"]["sections"]) >= {"integrated_memory", "coherent_link", "managed_as_zero_copy",
                                                  "pageable_memory", "numa", "cpu_traffic"}


def test_platform_sections_follow_the_attributes():
    h200_sections = doctor.platform_sections(live(h200(READ_ONLY_HOST_REGISTER_SUPPORTED=1), numa_nodes=1,
                                                  gpu_count=1))
    assert not h200_sections["integrated_memory"]["applies"] and not h200_sections["coherent_link"]["applies"]
    assert h200_sections["managed_as_zero_copy"]["applies"] and h200_sections["read_only_registration"]["applies"]
    assert not h200_sections["pageable_memory"]["applies"] and "faults" in h200_sections["pageable_memory"]["why"]
    assert not h200_sections["numa"]["applies"] and not h200_sections["peer_access"]["applies"]
    gh = doctor.platform_sections(live(grace_hopper(), numa_nodes=2, gpu_count=4))
    assert gh["coherent_link"]["applies"] and gh["pageable_memory"]["applies"]
    assert gh["numa"]["applies"] and gh["peer_access"]["applies"]
    assert doctor.platform_sections(live(jetson_orin()))["integrated_memory"]["applies"]
    text = doctor.render(doctor.diagnose(live(grace_hopper()), reference_gpu()))
    assert "Platform class: coherent_c2c" in text

"""The course's CUDA kernels, one readable .cu file per topic, and their loader (write-your-first-zero-copy-kernel on).

:data:`KERNEL_DIR` is the one place the kernel files live; :func:`source` returns a file's text (or only
the kernels a lesson runs) for a lesson to show and :func:`names` the kernels it declares. :func:`load_kernel` compiles a file once
per notebook with PyCUDA's ``SourceModule`` and returns one kernel; ``helpers.cpu.load_kernel`` is
the same verb for the CPU backend. The files declare their kernels ``extern "C"``, so the names in
Python are the names in the file. :func:`compile_source` is the one place a CUDA source becomes a PyCUDA module, for
the course's files and a learner's exercise alike: no ``extern "C"`` block around the whole source (so
``#include <cuda/atomic>`` works) and the toolkit's CCCL headers (libcu++) on the include path.
"""

from __future__ import annotations

import os
import re
import shutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import CompilerNotFoundError

KERNEL_DIR = paths.KERNELS
_KERNEL_NAME = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(')


def files() -> list[str]:
    """The stems of every kernel file, e.g. ``['access_pattern', 'bandwidth', ...]``."""
    return sorted(path.stem for path in KERNEL_DIR.glob("*.cu"))


def source(stem: str, *kernels: str) -> str:
    """The CUDA C source of ``helpers/kernels/<stem>.cu``, to show in a lesson; given kernel names, only those kernels,
    each with the comment lines just above it, in the order named (measure-bandwidth shows two of bandwidth.cu)."""
    path = KERNEL_DIR / f"{stem}.cu"
    if not path.is_file():
        raise FileNotFoundError(f"No kernel file {path.name}; the files are: {', '.join(files())}.")
    text = path.read_text()
    return "\n\n".join(_kernel_text(text, stem, name) for name in kernels) + "\n" if kernels else text


def _kernel_text(text: str, stem: str, name: str) -> str:
    """One kernel's definition in ``text``: its comment block, signature and body (to the brace that closes it)."""
    found = [m for m in _KERNEL_NAME.finditer(text) if m.group(1) == name]
    if not found:
        raise KeyError(f"{stem}.cu defines no kernel {name!r}; it defines {', '.join(_KERNEL_NAME.findall(text))}.")
    head = text[:found[0].start()].splitlines(keepends=True)
    while head and head[-1].lstrip().startswith("//"):
        head.pop()
    depth, end = 0, text.index("{", found[0].end())
    for end in range(end, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[len("".join(head)):end + 1]


def names(stem: str) -> list[str]:
    """The kernels a file defines, in order (the course's one kernel-name finder)."""
    return _KERNEL_NAME.findall(source(stem))


def cccl_include_dirs() -> list[str]:
    """The toolkit's CCCL header folders (libcu++'s ``<cuda/atomic>``), where they exist: CUDA 13 keeps them in
    ``include/cccl`` under the toolkit (``$CUDA_HOME``, ``$CUDA_PATH``, or the folder above nvcc's ``bin/``);
    older toolkits have them in ``include``, which nvcc searches anyway (avoid-hazards-on-mapped-memory)."""
    nvcc = shutil.which("nvcc")
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
             str(Path(nvcc).resolve().parent.parent) if nvcc else None]
    found = [str(Path(home) / "include" / "cccl") for home in homes if home]
    return list(dict.fromkeys(d for d in found if Path(d).is_dir()))


def _require_nvcc() -> None:
    if shutil.which("nvcc") is None:
        raise CompilerNotFoundError(
            "PyCUDA compiles kernels with nvcc, which is not on PATH. Install the CUDA toolkit and put its "
            "bin/ folder on PATH (e.g. export PATH=/usr/local/cuda/bin:$PATH), then restart the kernel. "
            "Without a GPU, helpers.cpu runs the same kernels on the CPU."
        )


def arch() -> str:
    """``sm_XY`` of the current GPU: a cubin for its own architecture loads even where nvcc is newer than the driver
    (PTX would not)."""
    import pycuda.driver as drv

    major, minor = drv.Context.get_device().compute_capability()
    return f"sm_{major}{minor}"


def compile_options() -> dict[str, Any]:
    """The keyword arguments of PyCUDA's ``SourceModule`` and ``compiler.compile`` the course uses everywhere."""
    return {"no_extern_c": True, "options": ["-O3"], "arch": arch(), "include_dirs": cccl_include_dirs()}


def compile_source(text: str) -> Any:
    """A PyCUDA module built from CUDA source ``text`` in the course's one context (live only): the course's kernel
    files and a learner's exercise source (write-your-first-zero-copy-kernel on) are built the same way."""
    from ..memory import gpu

    _require_nvcc()
    gpu.context()
    from pycuda.compiler import SourceModule

    return SourceModule(text, **compile_options())


def cubin(stem: str) -> bytes:
    """The cubin PyCUDA builds of ``helpers/kernels/<stem>.cu`` (the same options as :func:`load_kernel`), to
    disassemble (avoid-hazards-on-mapped-memory)."""
    from ..memory import gpu

    _require_nvcc()
    gpu.context()
    from pycuda.compiler import compile as compile_cuda

    return compile_cuda(source(stem), **compile_options())


@lru_cache(maxsize=None)
def _module(stem: str) -> Any:
    return compile_source(source(stem))


@lru_cache(maxsize=None)
def load_kernel(stem: str, name: str) -> Any:
    """Kernel ``name`` from ``helpers/kernels/<stem>.cu``, compiled for the GPU on first use
    (write-your-first-zero-copy-kernel).

    Cached, so that looking a kernel up inside a timed loop costs nothing."""
    if name not in names(stem):
        raise KeyError(f"{stem}.cu defines no kernel {name!r}; it defines {', '.join(names(stem))}.")
    return _module(stem).get_function(name)

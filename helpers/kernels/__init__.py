"""The course's CUDA kernels, one readable .cu file per topic, and their loader (write-your-first-zero-copy-kernel on).

:data:`KERNEL_DIR` is the one place the kernel files live; :func:`source` returns a file's text (or only
the kernels a lesson runs) for a lesson to show and :func:`names` the kernels it declares. :func:`load_kernel` compiles a file once
per notebook with PyCUDA's ``SourceModule`` and returns one kernel; ``helpers.cpu.load_kernel`` is
the same verb for the CPU backend. The files declare their kernels ``extern "C"``, so the names in
Python are the names in the file.
"""

from __future__ import annotations

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


@lru_cache(maxsize=None)
def _module(stem: str) -> Any:
    from ..memory import gpu

    if shutil.which("nvcc") is None:
        raise CompilerNotFoundError(
            "PyCUDA compiles kernels with nvcc, which is not on PATH. Install the CUDA toolkit and put its "
            "bin/ folder on PATH (e.g. export PATH=/usr/local/cuda/bin:$PATH), then restart the kernel. "
            "Without a GPU, helpers.cpu runs the same kernels on the CPU."
        )
    gpu.context()
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule

    # A cubin for this GPU's own architecture: it loads even where nvcc is newer than the driver (PTX would not).
    major, minor = drv.Context.get_device().compute_capability()
    return SourceModule(source(stem), no_extern_c=True, options=["-O3"], arch=f"sm_{major}{minor}")


@lru_cache(maxsize=None)
def load_kernel(stem: str, name: str) -> Any:
    """Kernel ``name`` from ``helpers/kernels/<stem>.cu``, compiled for the GPU on first use
    (write-your-first-zero-copy-kernel).

    Cached, so that looking a kernel up inside a timed loop costs nothing."""
    if name not in names(stem):
        raise KeyError(f"{stem}.cu defines no kernel {name!r}; it defines {', '.join(names(stem))}.")
    return _module(stem).get_function(name)

"""The CPU's view of memory: pages, page frames, locking, page-aligned arrays (pin-host-memory,
measure-what-pinning-buys, map-pages-on-the-cpu).

Everything here runs on any Linux machine, GPU or not: it reads /proc/self/maps and
/proc/self/pagemap and calls mlock(2). Physical frame numbers are only shown to root
(CAP_SYS_ADMIN); others read zeros, and :func:`frames` says so.

macOS and Windows have no /proc: :func:`proc_available` says so, :func:`pfns_visible` is False there,
and the functions that read /proc raise :class:`helpers.errors.ProcUnavailableError`, which says
what to do (those lessons then show the recorded Linux view). ``ZC_PROC_ROOT`` points the
helpers at another folder than /proc (the tests use a missing one to act as a Mac).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import resource
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ProcUnavailableError

PAGE_SIZE: int = mmap.PAGESIZE
_PFN_MASK = (1 << 55) - 1


@dataclass(frozen=True)
class Frame:
    """One virtual page and what the page table says about it."""

    virtual_page: int  # virtual address // PAGE_SIZE
    present: bool  # backed by a physical frame right now
    swapped: bool
    pfn: int | None  # physical frame number; None when the kernel hides it (not root)

    @property
    def physical_address(self) -> int | None:
        return None if self.pfn is None else self.pfn * PAGE_SIZE


@dataclass(frozen=True)
class Mapping:
    """One line of /proc/self/maps: a virtual address range and what backs it."""

    start: int
    end: int
    permissions: str
    path: str
    line: str

    @property
    def nbytes(self) -> int:
        return self.end - self.start


def proc_root() -> Path:
    """The folder the kernel's process files are read from: ``$ZC_PROC_ROOT`` or ``/proc``."""
    return Path(os.environ.get("ZC_PROC_ROOT") or "/proc")


def proc_available() -> bool:
    """Whether this system has Linux's /proc/self/pagemap and maps (False on macOS and Windows; pin-host-memory,
    map-pages-on-the-cpu)."""
    root = proc_root()
    return (root / "self" / "pagemap").exists() and (root / "self" / "maps").exists()


def proc_path(*parts: str) -> Path:
    """A file under /proc, or :class:`ProcUnavailableError` saying what this system cannot show."""
    path = proc_root().joinpath(*parts)
    if not path.exists():
        raise ProcUnavailableError(
            f"{path} does not exist: this system has no Linux /proc (macOS and Windows have none), so the page "
            "tables of this process cannot be read here. Lessons 01 to 03 show the view recorded on the Linux GPU "
            "machine instead (experiments.pagemap_pinned()); to read your own, run the course on Linux or in WSL2 "
            "on Windows (README: 'On macOS and Windows').")
    return path


def page_aligned_empty(shape: int | tuple[int, ...], dtype: "np.typing.DTypeLike" = np.float32) -> np.ndarray:
    """An uninitialised (in fact zero, never touched) array that starts on a page boundary (pin-host-memory).

    Plain anonymous ``mmap`` memory: pageable, no GPU involved, so both backends use it
    (use-write-combined-and-registered-memory registers it with cuMemHostRegister; ``helpers.cpu.mapped_empty`` hands it
    to CPU kernels).
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if count <= 0 or (isinstance(shape, tuple) and any(int(n) < 0 for n in shape)) or dtype.itemsize == 0:
        raise ValueError(f"page_aligned_empty needs at least one element; got shape {shape!r} of {dtype}.")
    buffer = mmap.mmap(-1, -(-count * dtype.itemsize // PAGE_SIZE) * PAGE_SIZE)
    return np.frombuffer(buffer, dtype=dtype, count=count).reshape(shape)


def frames(address: int, nbytes: int) -> list[Frame]:
    """Page-table entries of the pages covering ``[address, address + nbytes)`` (pin-host-memory)."""
    first = address // PAGE_SIZE
    last = (address + max(nbytes, 1) - 1) // PAGE_SIZE
    with open(proc_path("self", "pagemap"), "rb") as pagemap:
        pagemap.seek(first * 8)
        data = pagemap.read((last - first + 1) * 8)
    result = []
    for i, (entry,) in enumerate(struct.iter_unpack("<Q", data)):
        present = bool(entry >> 63 & 1)
        pfn = entry & _PFN_MASK
        result.append(Frame(first + i, present, bool(entry >> 62 & 1), pfn if present and pfn else None))
    return result


def frames_of(array: np.ndarray) -> list[Frame]:
    """Page-table entries of every page an array's data touches (pin-host-memory)."""
    return frames(array.ctypes.data, array.nbytes)


@dataclass(frozen=True)
class FrameRun:
    """A maximal stretch of consecutive virtual pages whose frames are consecutive too (measure-what-pinning-buys,
    map-pages-on-the-cpu)."""

    start: int  # index of the run's first page among the pages given
    length: int  # pages in the run
    first_pfn: int  # frame of the run's first page
    step: int  # +1: frames ascend with the virtual pages; -1: they descend; 0: a run of one page

    @property
    def direction(self) -> str:
        return {1: "ascending", -1: "descending", 0: "single"}[self.step]


def frame_runs(pfns: list[int | None] | tuple[int | None, ...]) -> list[FrameRun]:
    """Split a page-by-page list of frame numbers into runs of physically consecutive frames
    (measure-what-pinning-buys).

    A run continues while each next page's frame is the previous frame + 1 (ascending) or - 1
    (descending), in the same direction. One run covering every page means the buffer sits in one
    contiguous block of physical memory, in either order. Raises ValueError on hidden frames (None).
    """
    if any(pfn is None for pfn in pfns):
        raise ValueError("Some frame numbers are hidden (None): only root reads them; count runs on visible frames.")
    runs: list[FrameRun] = []
    for i, pfn in enumerate(pfns):
        if runs:
            last = runs[-1]
            prev = pfns[i - 1]
            step = pfn - prev  # type: ignore[operator]
            if step in (1, -1) and last.step in (0, step):
                runs[-1] = FrameRun(last.start, last.length + 1, last.first_pfn, step)
                continue
        runs.append(FrameRun(i, 1, pfn, 0))  # type: ignore[arg-type]
    return runs


HUGE_PAGE_SIZE = 2 << 20


def huge_page_possible(address: int, pfns: list[int | None] | tuple[int | None, ...]) -> bool:
    """Whether these pages could sit inside 2 MiB huge pages, as far as their frames can tell (map-pages-on-the-cpu).

    A 2 MiB page-table entry maps a 2 MiB-aligned virtual range onto a 2 MiB-aligned block of frames in the
    same order, so each page's frame must equal (the block's first frame) + (its page's offset in the 2 MiB
    range): frames ascend one by one, and ``pfn % 512 == virtual page % 512``. False if any frame breaks it
    (or is hidden); True means only "not ruled out".
    """
    per_huge = HUGE_PAGE_SIZE // PAGE_SIZE
    first_page = address // PAGE_SIZE
    for i, pfn in enumerate(pfns):
        if pfn is None or pfn % per_huge != (first_page + i) % per_huge:
            return False
        if i and pfn != pfns[i - 1] + 1:  # type: ignore[operator]
            return False
    return bool(pfns)


def pfns_visible() -> bool:
    """Whether this process may read physical frame numbers (root on Linux; never without /proc)."""
    if not proc_available():
        return False
    probe = np.ones(PAGE_SIZE // 8)
    return any(frame.pfn is not None for frame in frames_of(probe))


def mapping_of(address: int) -> Mapping:
    """The /proc/self/maps entry that contains ``address`` (pin-host-memory and map-pages-on-the-cpu)."""
    for line in proc_path("self", "maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if start <= address < end:
            return Mapping(start, end, fields[1], fields[5] if len(fields) > 5 else "", line)
    raise LookupError(f"No mapping contains address {address:#x}.")


def memlock_limit() -> tuple[int | None, int | None]:
    """RLIMIT_MEMLOCK (soft, hard) in bytes; None means unlimited (pin-host-memory)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    unlimited = resource.RLIM_INFINITY
    return (None if soft == unlimited else soft, None if hard == unlimited else hard)


def locked_kib() -> dict[str, int]:
    """VmLck and VmPin of this process from /proc/self/status, in KiB (pin-host-memory)."""
    values = {}
    for line in proc_path("self", "status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmLck", "VmPin"):
            values[key] = int(rest.split()[0])
    return values


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    for name in ("mlock", "munlock"):
        getattr(libc, name).argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        getattr(libc, name).restype = ctypes.c_int
    return libc


def lock(array: np.ndarray) -> None:
    """Page-lock an array's pages with mlock(2): the CPU-only half of pinning (pin-host-memory).

    The kernel faults every page in and promises never to swap it out. CUDA's pinning does this
    and more: it also keeps the physical frames from moving, and tells the GPU's MMU about them.
    """
    if _libc().mlock(array.ctypes.data, array.nbytes) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mlock of {array.nbytes} bytes failed; the locked-memory limit is "
                             f"{memlock_limit()[0]} bytes (ulimit -l). Lock less, or raise the limit.")


def unlock(array: np.ndarray) -> None:
    """Undo :func:`lock` with munlock(2)."""
    if _libc().munlock(array.ctypes.data, array.nbytes) != 0:
        raise OSError(ctypes.get_errno(), "munlock failed")

"""Build transformed kernel source into a shared library, once (write-your-first-zero-copy-kernel).

The library is cached under ``$ZC_CPU_CACHE`` (or ``$XDG_CACHE_HOME/zero-copy-course/cpu``,
or ``~/.cache/zero-copy-course/cpu``), named by a hash of the C++ text, the header
``cuda_cpu.h`` (and ``exports.map``), the compiler's identity (its path and the first line of ``--version``),
the flags and any headers found through ``-I``: the same source compiles once per machine, and
editing the header or changing compiler rebuilds. Processes that share the folder (two
notebooks, a test session's workers) take a lock per library (``<hash>.lock``) while they
look it up and build it, so one of them compiles it and the others load its result.

The cache is a private folder (0700, the user's own): a library there is loaded into the
learner's Python, so a folder others can write into is refused. A library is published into
it (renamed into place, with a SHA-256 checksum beside it) only after it loaded from the
folder it was built in; a cached library whose checksum is missing or wrong, or that fails
to load, is rebuilt, never loaded (a truncated library, as a full disk leaves it, would
otherwise end the process with SIGBUS).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Sequence

try:
    import fcntl
except ImportError:  # Windows: no flock; parallel builds of one library stay harmless (atomic renames)
    fcntl = None  # type: ignore[assignment]

from ..i18n import _
from .errors import BuildCacheError, CxxCompilerNotFoundError, KernelCompileError

__all__ = ["HEADER", "EXPORTS", "FLAGS", "LIBRARY_SUFFIX", "link_flags", "cache_dir", "prepare_cache", "find_compiler",
           "build", "build_timeout"]

HEADER = Path(__file__).with_name("cuda_cpu.h")
# On Linux the library exports only runtime.py's zc_* functions (a version script): cuda_cpu.h's operator new
# and delete, which make the kernel's allocations safe to stop, then bind inside the library and replace nothing
# else in the process.
EXPORTS = HEADER.with_name("exports.map")
# -O2 for speed; -ffp-contract=off so a*b+c is never fused: results then equal numpy's;
# -fstack-clash-protection (Linux compilers) so a large local array faults in the kernel thread's stack guard.
# On macOS, Apple's clang builds a loadable library with -dynamiclib (a .dylib); elsewhere -shared (a .so).
FLAGS = ("-std=c++20", "-O2", "-ffp-contract=off", "-fno-strict-aliasing", "-pthread", "-fPIC", "-w") \
    + (("-dynamiclib",) if sys.platform == "darwin" else ("-shared",)) \
    + (("-fstack-clash-protection",) if sys.platform.startswith("linux") else ())
LIBRARY_SUFFIX = ".dylib" if sys.platform == "darwin" else ".so"
# clang (Apple's too) assumes every side-effect-free loop ends and may delete an endless one, so a hanging kernel
# would return at once instead of meeting the launch timeout; -fno-finite-loops keeps the loop, as g++ does.
CLANG_FLAGS = ("-fno-finite-loops",)


def link_flags() -> tuple[str, ...]:
    """Linker flags beyond FLAGS: the version script on Linux (see EXPORTS); -Xlinker, as a path may hold commas."""
    return ("-Xlinker", f"--version-script={EXPORTS}") if sys.platform.startswith("linux") else ()


_loaded: dict[str, ctypes.CDLL] = {}


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$ZC_CPU_CACHE`` or a ``zero-copy-course/cpu`` user cache."""
    override = os.environ.get("ZC_CPU_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zero-copy-course" / "cpu"


def _cache_problem(directory: Path, what: str) -> BuildCacheError:
    return BuildCacheError(
        f"The CPU backend's build cache {directory} {what}. Set ZC_CPU_CACHE to a folder of your own that you can "
        "write into (e.g. `export ZC_CPU_CACHE=$HOME/.cache/zc-cpu`), or fix this one.")


def prepare_cache(directory: Path | None = None) -> Path:
    """Create the cache folder private (0700), or check an existing one: the user's own, and
    writable by no one else."""
    directory = directory or cache_dir()
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
        info = directory.stat()
    except OSError as exc:
        raise _cache_problem(directory, f"could not be created ({exc.strerror or exc})") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise _cache_problem(directory, "is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise _cache_problem(directory, f"belongs to another user (uid {info.st_uid}): a library placed there would "
                                        "run inside your Python")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _cache_problem(directory, f"can be written by other users (mode {stat.S_IMODE(info.st_mode):o}): a "
                                        "library placed there would run inside your Python; `chmod 700` it")
    if not _writable(directory):
        raise _cache_problem(directory, "is read-only")
    return directory


def _writable(directory: Path) -> bool:
    return os.access(directory, os.W_OK | os.X_OK)


@lru_cache(maxsize=None)
def _identity(compiler: str) -> str:
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else compiler
    except (OSError, subprocess.SubprocessError):
        return compiler


def find_compiler() -> str:
    """The C++ compiler to use: ``$CXX``, else c++, g++ or clang++ on PATH."""
    candidates = [os.environ["CXX"]] if os.environ.get("CXX") else []
    candidates += ["c++", "g++", "clang++"]
    for name in candidates:
        path = shutil.which(name)
        if path:
            return path
    raise CxxCompilerNotFoundError(
        "The CPU backend compiles kernels with a C++ compiler, and none was found (tried "
        + ", ".join(candidates) + "). Install one: `sudo apt-get install g++` (Debian/Ubuntu), "
        "`xcode-select --install` (macOS), or `conda install -c conda-forge cxx-compiler`; "
        "or set CXX to a compiler's path."
    )


def build_timeout() -> float:
    """Seconds a build may take: ``$ZC_CPU_BUILD_TIMEOUT``, else 300."""
    text = os.environ.get("ZC_CPU_BUILD_TIMEOUT", "")
    try:
        value = float(text) if text else 300.0
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise KernelCompileError(f"ZC_CPU_BUILD_TIMEOUT={text!r} is not a positive, finite number of seconds; "
                                 "unset it or give e.g. ZC_CPU_BUILD_TIMEOUT=600.")
    return value


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_cached(library: Path, checksum: Path) -> ctypes.CDLL | None:
    """The cached library if its checksum matches and it loads; else None (and it is removed)."""
    try:
        if not library.is_file():
            return None
        if checksum.is_file() and checksum.read_text().strip() == _sha256(library):
            try:
                return ctypes.CDLL(str(library))
            except OSError:
                pass
        library.unlink(missing_ok=True)
        checksum.unlink(missing_ok=True)
    except OSError:
        pass  # unreadable or not removable: build anew; publishing then reports a read-only folder
    return None


def build(cpp: str, source_name: str = "kernel.cu", options: Sequence[str] = (),
          key_extra: str = "") -> ctypes.CDLL:
    """Compile ``cpp`` (which includes ``cuda_cpu.h``) to a shared library and load it.

    ``options`` are extra compiler flags (``-DNAME``, ``-I dir``), ``key_extra`` anything else
    the result depends on (the text of headers found through ``-I``).
    """
    compiler = find_compiler()
    options = (*(CLANG_FLAGS if "clang" in _identity(compiler).lower() else ()), *options)
    key = hashlib.sha256("\0".join([cpp, HEADER.read_text(), EXPORTS.read_text(), os.path.realpath(compiler),
                                    _identity(compiler), *FLAGS, *options, key_extra]).encode()).hexdigest()[:24]
    if key in _loaded:
        return _loaded[key]
    directory = prepare_cache()
    library, checksum = directory / f"{key}{LIBRARY_SUFFIX}", directory / f"{key}.sha256"
    with _locked(directory, key):
        lib = _load_cached(library, checksum)
        if lib is None:
            lib = _compile(compiler, cpp, key, directory, source_name, options)
    _loaded[key] = lib
    return lib


@contextmanager
def _locked(directory: Path, key: str) -> Iterator[None]:
    """Hold ``<key>.lock`` in the cache: another process building the same library waits, then loads it."""
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(directory / f"{key}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise _cache_problem(directory, _what_failed(exc)) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock; the empty file stays (removing it would race with a waiter)


def _what_failed(exc: OSError) -> str:
    return "is full" if exc.errno == errno.ENOSPC else \
        "is read-only" if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) else f"failed: {exc}"


def _compile(compiler: str, cpp: str, key: str, directory: Path, source_name: str,
             options: Sequence[str]) -> ctypes.CDLL:
    timeout = build_timeout()
    try:
        with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as tmp:
            src, out = Path(tmp) / f"{key}.cpp", Path(tmp) / f"{key}{LIBRARY_SUFFIX}"
            src.write_text(cpp)
            cmd = [compiler, *FLAGS, *options, *link_flags(), "-I", str(HEADER.parent), str(src), "-o", str(out)]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise KernelCompileError(
                    f"Compiling {source_name} took longer than {timeout:g} s and was stopped. Simplify the kernel, "
                    "or set ZC_CPU_BUILD_TIMEOUT to more seconds on a slow machine.") from None
            if "No space left on device" in result.stderr:
                raise _cache_problem(directory, "is full (the compiler said: No space left on device)")
            if result.returncode != 0:
                raise KernelCompileError(explain(result.stderr, source_name))
            try:
                lib = ctypes.CDLL(str(out))      # it loads from where it was built, or it is not published
            except OSError as exc:
                raise KernelCompileError(f"The library built from {source_name} does not load: {exc}") from None
            (Path(tmp) / "sum").write_text(_sha256(out) + "\n")
            os.replace(out, directory / f"{key}{LIBRARY_SUFFIX}")  # atomic: a parallel build of the same key is harmless
            os.replace(Path(tmp) / "sum", directory / f"{key}.sha256")
            return lib
    except OSError as exc:
        raise _cache_problem(directory, _what_failed(exc)) from exc


_KEEP = re.compile(r"error|fatal|No space left on device|\bld\b|collect2|undefined reference", re.I)
_PTR_CONVERSION = re.compile(r"(cannot convert|conversion from|invalid conversion|no viable conversion)[^\n]*cpu::ptr")


def explain(stderr: str, source_name: str) -> str:
    """The lines of a compiler's complaint that matter, and a hint when it is the checked-pointer type's."""
    lines = [ln for ln in stderr.splitlines() if _KEEP.search(ln) or ln.startswith(source_name)]
    shown = "\n".join((lines or stderr.splitlines())[:15])
    hint = ""
    if _PTR_CONVERSION.search(stderr):
        hint = "\n" + _("Hint: the CPU backend turns pointer parameters into checked pointers (cpu::ptr<T>). "
                         "Declare a local pointer made from one with `auto` (auto q = p + k;), not as T*.")
    lead = _("The C++ compiler rejected {name} (line numbers are the kernel source's):").format(name=source_name)
    return f"{lead}\n{shown}{hint}"

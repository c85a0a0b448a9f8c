"""Turn CUDA kernel source into C++ the CPU backend can compile (write-your-first-zero-copy-kernel).

Three small steps, none of which adds or removes a line (so the compiler's line numbers
are the kernel file's):

1. :func:`scan` looks for CUDA features the backend does not emulate (``__shared__``,
   ``__syncthreads``, warp intrinsics, ...) in the source with comments, string literals
   and ``#if __CUDA_ARCH__`` branches (which the CPU compile never sees: __CUDA_ARCH__ is
   undefined, as in nvcc's host pass) blanked out, and raises
   :class:`UnsupportedFeatureError` naming the first one.
2. Every pointer parameter of a ``__global__`` or ``__device__`` function,
   ``const float *__restrict__ src``, becomes ``cpu::ptr<const float> src``, the checked
   pointer of ``cuda_cpu.h``; ``reinterpret_cast<T *>(e)`` becomes ``cpu::ptr_cast<T>(e)``.
3. CUDA headers that only declare what ``cuda_cpu.h`` supplies (``cuda_runtime.h`` ...)
   are dropped; after the source, one ``extern "C" zc_launch_<kernel>`` wrapper per kernel
   unpacks the arguments runtime.py passes and runs the kernel for every thread.

Limits: a pointer *local variable* initialised from a parameter must be declared ``auto``
(``auto q = p + k``), because a checked pointer does not convert to a raw ``T*``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .errors import UnsupportedFeatureError

__all__ = ["Param", "KernelSignature", "Transformed", "blank", "scan", "transform",
           "quoted_includes", "evaluate_condition"]


@dataclass(frozen=True)
class Param:
    """One parameter of a kernel: its name, declared type, and pointee type if a pointer."""

    name: str
    type: str                 # as declared, e.g. "const float *__restrict__" or "unsigned long long"
    pointee: str | None       # e.g. "const float" for a pointer parameter, else None

    @property
    def is_pointer(self) -> bool:
        return self.pointee is not None

    @property
    def value_type(self) -> str:
        """The type without cv-qualifiers: the pointee's for a pointer, the parameter's otherwise."""
        text = self.pointee if self.pointee is not None else self.type
        words = [w for w in text.replace("*", " ").split() if w not in ("const", "volatile")]
        return " ".join(words)


@dataclass(frozen=True)
class KernelSignature:
    """A ``__global__`` function found in the source, and the line it starts on."""

    name: str
    params: tuple[Param, ...]
    line: int


@dataclass
class Transformed:
    """The C++ text to compile and the kernels it exports."""

    cpp: str
    kernels: dict[str, KernelSignature] = field(default_factory=dict)


# (pattern, feature, why) -- scanned in source whose comments and strings are blanked.
_UNSUPPORTED: list[tuple[str, str, str]] = [
    (r"\b__shared__\b", "__shared__ (shared memory)",
     "threads run one after another, so the threads of a block cannot share a tile. Run this kernel on a GPU."),
    (r"\b__syncthreads\w*\b", "__syncthreads (a block-wide barrier)",
     "threads run one after another: a barrier would wait forever for threads that have not started."),
    (r"\b__syncwarp\b", "__syncwarp (a warp barrier)", "threads of a warp do not run in lockstep here."),
    (r"\b__shfl\w*", "warp shuffles (__shfl*)", "threads of a warp do not run in lockstep here."),
    (r"\b__ballot\w*", "warp votes (__ballot*)", "threads of a warp do not run in lockstep here."),
    (r"\b__(any|all|uni)(_sync)?\s*\(", "warp votes (__any_sync/__all_sync)", "threads of a warp do not run in lockstep here."),
    (r"\b__activemask\b", "__activemask", "threads of a warp do not run in lockstep here."),
    (r"\b__match_\w+", "warp match (__match_*_sync)", "threads of a warp do not run in lockstep here."),
    (r"\b__reduce_\w+_sync\b", "warp reductions (__reduce_*_sync)", "threads of a warp do not run in lockstep here."),
    (r"\bclock(64)?\s*\(", "clock()/clock64() (GPU cycle counters)",
     "CPU time says nothing about GPU cycles; time kernels on a GPU or use the recorded measurements."),
    (r"\b__nanosleep\b", "__nanosleep", "there is no GPU clock to sleep on."),
    (r"\b__st(wb|cg|cs|wt)\s*\(", "cache-hint stores (__stwb, __stcg, __stcs, __stwt)",
     "the backend does not model the GPU's caches; use a plain store (cache-hint loads run as plain loads)."),
    (r"\btex(1D|2D|3D|Cubemap)\w*\b|\btexture\s*<|\bcudaTextureObject_t\b", "textures",
     "texture fetches need the GPU's texture units."),
    (r"\bsurf\w*(read|write)\b|\bcudaSurfaceObject_t\b", "surfaces", "surface loads need the GPU's texture units."),
    (r"<<<", "dynamic parallelism (a kernel launch inside a kernel)", "the backend runs one launch at a time."),
    (r"\bcuda(DeviceSynchronize|Malloc\w*|Free|Memcpy\w*|GetParameterBuffer|LaunchDevice)\b",
     "the CUDA runtime API in device code", "only kernels and __device__ functions can be compiled."),
    (r"\bcooperative_groups\b|\bcg::|\bthis_thread_block\b|\bthis_grid\b", "cooperative groups",
     "threads run one after another: group syncs and collectives cannot be emulated."),
    (r"\bprintf\s*\(", "printf in a kernel",
     "its output would go to the Jupyter server's terminal, not to the notebook. "
     "Write the values into an output array and print them from Python."),
    (r"\b__constant__\b", "__constant__ memory",
     "the backend has no module globals to copy values into; pass the values as a kernel argument."),
    (r"\b__managed__\b", "__managed__ variables", "managed memory is a later topic; pass an array instead."),
    (r"\b__grid_constant__\b", "__grid_constant__ parameters", "they need the GPU's parameter space."),
    (r"\b(asm|__asm__)\b", "inline PTX assembly (asm)", "PTX cannot run on a CPU."),
    (r"\b(malloc|free)\s*\(", "device-side malloc/free", "allocate arrays in Python and pass them in."),
    (r"\b(throw|try)\b", "C++ exceptions in a kernel (throw/try)",
     "nvcc refuses them in device code, and here a throw could not be stopped safely; return an error code in an "
     "output array instead."),
    (r"\b__(half2?|nv_bfloat16\w*)\b", "half-precision types (__half, __nv_bfloat16)", "cuda_fp16.h is not emulated."),
    (r"\bnvcuda::|\bwmma::", "tensor-core fragments (wmma)", "tensor cores cannot be emulated."),
    (r"\b(assert|__trap|__brkpt)\s*\(", "assert/__trap in a kernel",
     "on the CPU its message would go to the Jupyter server's terminal, not to the notebook; check values "
     "in Python afterwards."),
]

# Calls that act on the whole process (issue 20): refused at compile time, by name.
_PROCESS_CALLS = re.compile(r"(?<![\w.>])(?:std\s*::\s*)?(exit|_exit|_Exit|quick_exit|abort|atexit|at_quick_exit|"
                            r"system|popen|fork|vfork|execl|execlp|execle|execv|execvp|execvpe|"
                            r"sigaction|fprintf|fputs|puts|putchar|fputc|fwrite|fflush|perror|dprintf)\s*\(")

# Headers whose declarations cuda_cpu.h already supplies: dropped (the line becomes blank).
_DROPPED_HEADERS = {"cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h",
                    "vector_types.h", "device_functions.h", "cuda/atomic"}  # cuda/atomic: cuda::atomic_ref
_CUDA_HEADER = re.compile(r"(^|/)(cuda\w*\.h|cooperative_groups.*|cub/.*|thrust/.*|mma\.h|sm_\w+\.h|curand\w*\.h|"
                          r"math_constants\.h|cuda/.*|nv/.*)$")


def blank(source: str) -> str:
    """The source with comments, the contents of string/char literals, and the lines only a GPU
    compile sees (``#if __CUDA_ARCH__ ...`` branches) replaced by spaces."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = ["\n" if ch == "\n" else " " for ch in source[i:j]]
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            out[i + 1:j] = " " * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return _blank_cuda_arch_only("".join(out))


_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_]\w*)|(&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%<>&|^!~()?:]))")


def evaluate_condition(expression: str, defined: dict[str, int] | None = None) -> bool | None:
    """The value of a preprocessor condition (``#if`` / ``#elif``), or None when it cannot be known.

    A small parser of C's integer and boolean expressions (C11 6.10.1): integers, ``defined X``,
    ``defined(X)``, unary ``! ~ - +``, the binary operators ``* / % + - << >> < <= > >= == != & ^ |
    && ||`` and ``?:``, with C's precedence. Names in ``defined`` have those values; any other name
    is unknown (a macro the backend cannot see), and so is the whole condition unless ``&&``,
    ``||`` or ``?:`` decide it without that name. Nothing is evaluated by Python's ``eval``.
    """
    values = defined or {}
    tokens: list[tuple[str, object]] = []
    pos, text = 0, expression.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            return None
        pos = m.end()
        if m.group(1):
            tokens.append(("num", int(m.group(1), 0) if not re.fullmatch(r"0\d+", m.group(1)) else int(m.group(1), 8)))
        elif m.group(2):
            tokens.append(("name", m.group(2)))
        elif m.group(3):
            tokens.append(("op", m.group(3)))
    i = 0

    def peek() -> object:
        return tokens[i][1] if i < len(tokens) and tokens[i][0] == "op" else None

    def take(op: str) -> bool:
        nonlocal i
        if peek() == op:
            i += 1
            return True
        return False

    def primary() -> int | None:
        nonlocal i
        if i >= len(tokens):
            raise ValueError("unexpected end")
        kind, value = tokens[i]
        i += 1
        if kind == "num":
            return int(value)  # type: ignore[arg-type]
        if kind == "name":
            if value == "defined":
                paren = take("(")
                if i >= len(tokens) or tokens[i][0] != "name":
                    raise ValueError("defined needs a name")
                name = tokens[i][1]
                i += 1
                if paren and not take(")"):
                    raise ValueError("missing )")
                return 1 if name in values else (0 if name == "__CUDA_ARCH__" else None)
            return values.get(str(value)) if value != "__CUDA_ARCH__" else 0
        if value == "(":
            v = ternary()
            if not take(")"):
                raise ValueError("missing )")
            return v
        if value in ("!", "~", "-", "+"):
            v = primary()
            if v is None:
                return None
            return {"!": lambda x: int(not x), "~": lambda x: ~x, "-": lambda x: -x, "+": lambda x: x}[value](v)  # type: ignore[index]
        raise ValueError(f"unexpected {value!r}")

    levels: list[dict[str, object]] = [
        {"*": lambda a, b: a * b, "/": lambda a, b: int(a / b), "%": lambda a, b: a - int(a / b) * b},
        {"+": lambda a, b: a + b, "-": lambda a, b: a - b},
        {"<<": lambda a, b: a << b, ">>": lambda a, b: a >> b},
        {"<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
         ">=": lambda a, b: int(a >= b)},
        {"==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b)},
        {"&": lambda a, b: a & b}, {"^": lambda a, b: a ^ b}, {"|": lambda a, b: a | b},
    ]

    def binary(level: int) -> int | None:
        if level < 0:
            return primary()
        left = binary(level - 1)
        while peek() in levels[level]:
            op = str(peek())
            take(op)
            right = binary(level - 1)
            if left is None or right is None:
                left = None
            elif op in "/%" and right == 0:
                raise ValueError("division by zero")
            else:
                left = levels[level][op](left, right)  # type: ignore[operator]
        return left

    def logical_and() -> int | None:
        left = binary(len(levels) - 1)
        while take("&&"):
            right = binary(len(levels) - 1)
            left = 0 if left == 0 or right == 0 else (None if left is None or right is None else 1)
        return left

    def logical_or() -> int | None:
        left = logical_and()
        while take("||"):
            right = logical_and()
            left = 1 if (left not in (0, None)) or (right not in (0, None)) else \
                (None if left is None or right is None else 0)
        return left

    def ternary() -> int | None:
        cond = logical_or()
        if take("?"):
            yes = ternary()
            if not take(":"):
                raise ValueError("missing :")
            no = ternary()
            return None if cond is None else (yes if cond else no)
        return cond

    try:
        result = ternary()
        if i != len(tokens):
            return None
    except (ValueError, RecursionError, OverflowError):
        return None
    return None if result is None else bool(result)


def _cuda_arch_condition(directive: str, expression: str) -> bool | None:
    """The value of an #if/#ifdef/#ifndef/#elif condition that mentions __CUDA_ARCH__ (undefined
    on the CPU, as in nvcc's host pass), or None when it does not mention it (left alone)."""
    if "__CUDA_ARCH__" not in expression:
        return None
    if directive == "ifdef":
        return False
    if directive == "ifndef":
        return True
    return evaluate_condition(expression)


def _blank_cuda_arch_only(text: str) -> str:
    """Blank the lines that only a GPU compile sees: #if branches that need __CUDA_ARCH__."""
    lines = text.split("\n")
    stack: list[tuple[bool, bool]] = []  # (this branch active, some branch of this #if already taken)
    out = []
    for line in lines:
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        active = all(a for a, _ in stack)
        if m:
            directive, expression = m.group(1), m.group(2)
            if directive in ("if", "ifdef", "ifndef"):
                value = _cuda_arch_condition(directive, expression)
                stack.append((value is not False, value is True))
            elif directive == "elif" and stack:
                _, taken = stack.pop()
                value = _cuda_arch_condition("if", expression)
                stack.append((not taken and value is not False, taken or value is True))
            elif directive == "else" and stack:
                _, taken = stack.pop()
                stack.append((not taken, True))
            elif directive == "endif" and stack:
                stack.pop()
            out.append(line)
            continue
        out.append(line if active else " " * len(line))
    return "\n".join(out)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


def quoted_includes(source: str, include_dirs: Sequence[Path] = ()) -> list[Path]:
    """The files that ``#include "x.h"`` lines of ``source`` name, found in ``include_dirs`` (-I)."""
    found = []
    for m in _QUOTED_INCLUDE.finditer(source):
        for d in include_dirs:
            path = Path(d) / m.group(1).strip()
            if path.is_file():
                found.append(path)
                break
    return found


def scan(source: str, source_name: str = "kernel source", include_dirs: Sequence[Path] = ()) -> None:
    """Raise :class:`UnsupportedFeatureError` for the first unsupported feature in ``source``.

    ``#include "x.h"`` is allowed when ``x.h`` is in one of ``include_dirs`` (-I)."""
    text = blank(source)
    hits = []
    for pattern, feature, why in _UNSUPPORTED:
        m = re.search(pattern, text)
        if m:
            hits.append((m.start(), feature, why))
    for m in re.finditer(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]", source, re.M):
        header = m.group(1).strip()
        if header in _DROPPED_HEADERS:
            continue
        if not text[m.start():m.end()].strip().startswith("#"):
            continue  # inside a comment
        if m.group(0).rstrip().endswith('"'):
            if any((Path(d) / header).is_file() for d in include_dirs):
                continue
            hits.append((m.start(), f'#include "{header}"',
                         "the source is compiled in a cache folder: paste the header's code in, or pass its folder "
                         "with include_dirs=[...] (or options=['-I', folder]), as for PyCUDA."))
        elif _CUDA_HEADER.search(header):
            hits.append((m.start(), f"#include <{header}>", "that CUDA library is not emulated."))
    for m in _PROCESS_CALLS.finditer(text):
        hits.append((m.start(), f"a call to {m.group(1)}()",
                     "on the CPU a kernel runs inside your notebook's Python process, so this call would act on that "
                     "process (end it, run a program, or write to the Jupyter server's terminal). Write results "
                     "into an output array and handle them in Python."))
    for m in re.finditer(r"\btemplate\s*<[^;{]*?\b__global__\b", text):
        hits.append((m.start(), "template kernels", "PyCUDA and the backend find kernels by their extern \"C\" name."))
    if hits:
        pos, feature, why = min(hits)
        raise UnsupportedFeatureError(feature, _line(text, pos), why, source_name)


def _matching(text: str, open_pos: int) -> int:
    """Index of the ``)`` matching the ``(`` at ``open_pos``."""
    depth = 0
    for i in range(open_pos, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise UnsupportedFeatureError("unbalanced parentheses", _line(text, open_pos), "check the kernel's signature.")


def _split_params(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the top-level comma-separated parameters in text[start:end]."""
    spans, depth, s = [], 0, start
    for i in range(start, end):
        c = text[i]
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((s, i))
            s = i + 1
    spans.append((s, end))
    return spans


def _parse_param(text: str, line: int, is_kernel: bool, function: str) -> Param | None:
    decl = " ".join(text.split())
    decl = decl.split("=")[0].strip()  # default arguments
    if not decl or decl == "void":
        return None
    m = re.match(r"^(.*?)\s*\b(\w+)\s*(\[\s*\])?$", decl)
    if not m or not m.group(1):
        raise UnsupportedFeatureError(f"the parameter declaration {decl!r}", line,
                                      f"the backend could not read a type and a name in {function}'s signature.")
    type_, name, brackets = m.group(1).strip(), m.group(2), m.group(3)
    if brackets:
        type_ += " *"
    if "&" in type_:
        if is_kernel:
            raise UnsupportedFeatureError(f"the reference parameter {name!r} of kernel {function}", line,
                                          "kernel parameters are passed by value or as pointers.")
        return Param(name, type_, None)
    stars = type_.count("*")
    if stars == 0:
        return Param(name, type_, None)
    if stars > 1:
        if is_kernel:
            raise UnsupportedFeatureError(f"the pointer-to-pointer parameter {name!r} of kernel {function}", line,
                                          "pass a flat array and compute indices instead.")
        return Param(name, type_, None)
    pointee = type_[:type_.rindex("*")].strip()
    return Param(name, type_, pointee)


def _functions(text: str) -> list[tuple[str, bool, int, int, int]]:
    """(name, is_kernel, name_pos, open_paren, close_paren) of every __global__/__device__ function."""
    found: dict[int, tuple[str, bool, int, int, int]] = {}
    for m in re.finditer(r"\b__(global|device)__\b", text):
        is_kernel = m.group(1) == "global"
        i = m.end()
        while True:
            stop = re.compile(r"[(;={}]").search(text, i)
            if not stop or text[stop.start()] != "(":
                break  # a __device__ variable, not a function
            open_pos = stop.start()
            ident = re.search(r"(\w+)\s*$", text[i:open_pos])
            if ident and ident.group(1) == "__launch_bounds__":
                i = _matching(text, open_pos) + 1
                continue
            if not ident:
                break
            close = _matching(text, open_pos)
            name = ident.group(1)
            prev = found.get(open_pos)
            found[open_pos] = (name, is_kernel or (prev[1] if prev else False), i + ident.start(1), open_pos, close)
            break
    return sorted(found.values(), key=lambda f: f[3])


def transform(source: str, source_name: str = "kernel.cu", include_dirs: Sequence[Path] = ()) -> Transformed:
    """Scan, rewrite and wrap ``source``; see the module docstring."""
    scan(source, source_name, include_dirs)
    text = blank(source)
    edits: list[tuple[int, int, str]] = []
    kernels: dict[str, KernelSignature] = {}
    for name, is_kernel, name_pos, open_pos, close in _functions(text):
        line = _line(text, name_pos)
        params = []
        for s, e in _split_params(text, open_pos + 1, close):
            param = _parse_param(text[s:e], line, is_kernel, name)
            if param is None:
                continue
            params.append(param)
            if param.is_pointer:
                newlines = source.count("\n", s, e)
                edits.append((s, e, f" cpu::ptr<{param.pointee}> {param.name}" + "\n" * newlines))
        if is_kernel:
            head = text[text.rfind("\n", 0, name_pos) + 1:name_pos]
            between = text[text.rfind("__global__", 0, name_pos):name_pos]
            if not re.search(r"\bvoid\b", between + head):
                raise UnsupportedFeatureError(f"the non-void kernel {name}", line, "a __global__ function must return void.")
            if name in kernels:
                raise UnsupportedFeatureError(f"two kernels named {name}", line, "overloaded kernels need C++ name mangling.")
            kernels[name] = KernelSignature(name, tuple(params), line)
    for m in re.finditer(r"\breinterpret_cast\s*<\s*([^<>;()]*?)\s*\*\s*>", text):
        edits.append((m.start(), m.end(), f"cpu::ptr_cast<{m.group(1)}>"))
    for m in re.finditer(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"][^\n]*", source, re.M):
        if m.group(1).strip() in _DROPPED_HEADERS and text[m.start():m.end()].strip().startswith("#"):
            edits.append((m.start(), m.end(), ""))
    out = source
    for s, e, new in sorted(edits, reverse=True):
        out = out[:s] + new + out[e:]
    return Transformed(_assemble(out, source_name, kernels), kernels)


def _assemble(body: str, source_name: str, kernels: dict[str, KernelSignature]) -> str:
    safe_name = source_name.replace("\\", "/").replace('"', "'")
    parts = ['#include "cuda_cpu.h"', f'#line 1 "{safe_name}"', body, "", '#line 1 "<cpu backend launch wrappers>"']
    for k in kernels.values():
        args, sizes = [], []
        for i, p in enumerate(k.params):
            if p.is_pointer:
                args.append(f"cpu::make_ptr<{p.pointee}>(args[{i}], &arrays[{i}])")
                sizes.append("0")
            else:
                args.append(f"*reinterpret_cast<std::remove_cv_t<{p.type}>*>(args[{i}])")
                sizes.append(f"sizeof(std::remove_cv_t<{p.type}>)")
        parts.append(
            f"static void zc_body_{k.name}(void** args, const cpu::array_info* arrays) {{\n"
            f"    (void)args; (void)arrays;\n"
            f"    {k.name}({', '.join(args)});\n}}\n"
            f'extern "C" int zc_launch_{k.name}(cpu::launch* L, void** args, const cpu::array_info* arrays) {{\n'
            f"    return cpu::start(L, zc_body_{k.name}, args, arrays);\n}}\n"
            f'extern "C" const unsigned long long zc_sizes_{k.name}[] = {{{", ".join(sizes + ["0"])}}};'
        )
    return "\n".join(parts) + "\n"

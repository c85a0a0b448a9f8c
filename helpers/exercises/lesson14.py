"""avoid-hazards-on-mapped-memory's exercises: why a plain increment loses updates (final_count), a GPU-to-host flag
handshake kernel (publish), a host-to-GPU one (wait_for_flag), and the prediction of what an atomicAdd on mapped
memory costs."""

from __future__ import annotations

import re
import time
from typing import Any, Callable

import numpy as np

from ..i18n import _
from . import (Feedback, correct as _correct, hint as _hint, is_placeholder, kernel_failure_hint, live_module,
               not_yet as _not_yet)
from .returns import returned_none

# --------------------------------------------------------------------------- final_count
# (schedule, the counter after it): each step is (thread, "read") or (thread, "write"); a read copies the counter
# into the thread's own register, a write stores that register + 1.
RACE_CASES = (
    ([("A", "read"), ("A", "write"), ("B", "read"), ("B", "write")], 2),
    ([("A", "read"), ("B", "read"), ("A", "write"), ("B", "write")], 1),
    ([("A", "read"), ("B", "read"), ("A", "write"), ("A", "read"), ("A", "write"), ("B", "write")], 1),
    ([("A", "read"), ("B", "read"), ("C", "read"), ("C", "write"), ("B", "write"), ("A", "write")], 1),
    ([("A", "read"), ("A", "write"), ("B", "read"), ("C", "read"), ("B", "write"), ("C", "write"),
      ("A", "read"), ("A", "write")], 3),
)


def race_rule(schedule: list[tuple[str, str]]) -> int:
    """The counter after ``schedule`` (for the check and the tests)."""
    counter, register = 0, {}
    for thread, step in schedule:
        if step == "read":
            register[thread] = counter
        else:
            counter = register[thread] + 1
    return counter


def check_final_count(final_count: Callable[[list[tuple[str, str]]], Any]) -> Feedback:
    """avoid-hazards-on-mapped-memory: ``final_count(schedule)`` plays a schedule of plain read-modify-writes
    (``counter[0] = counter[0] + 1`` split into its read and its write) and returns the counter at the end."""
    if is_placeholder(final_count) or _empty_body(final_count):
        return _not_yet(_("define final_count(schedule): start the counter at 0, play each (thread, step) in order "
                          "(a read copies the counter into that thread's register, a write stores the register + "
                          "1) and return the counter."))
    for schedule, want in RACE_CASES:
        got = final_count([tuple(step) for step in schedule])
        forgot = returned_none(final_count, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("final_count returns `...`: return the counter's value after the schedule."))
        if not isinstance(got, (int, np.integer)) or isinstance(got, bool):
            return _hint(_("return the counter, a whole number; you returned {got!r}.").format(got=got),
                         _("keep the counter in a variable that starts at 0 and return it after the loop."))
        if int(got) == want:
            continue
        shown = ", ".join(f"{t} {s}" for t, s in schedule)
        writes = sum(s == "write" for _, s in schedule)
        if int(got) == writes:
            return _hint(_("for the schedule {shown} you returned the number of writes. What value does a write "
                           "store: one more than the counter now, or one more than what that thread read earlier?").format(
                             shown=shown),
                         _("a write stores the thread's register + 1, and the register holds what the counter was "
                           "at that thread's last read, whatever happened since."))
        return _hint(_("for the schedule {shown} you returned {got}. Does each thread keep its own copy of what it "
                       "read, or do the threads share one?").format(shown=shown, got=int(got)),
                     _("keep one register per thread (a dict keyed by the thread's name): a read sets only that "
                       "thread's register, a write uses only that thread's register."))
    return _correct(_("a plain increment is a read and a write; when another thread's read falls between them, "
                      "both store the same value and one increment is lost. Threads on the GPU interleave like "
                      "this by the thousand, which is why count_plainly loses updates and an atomic, one "
                      "indivisible read-modify-write, does not."))


def _empty_body(function: Callable[..., Any]) -> bool:
    """True for a function whose body is only ``...`` or ``pass``."""
    def empty(*args: Any) -> None:
        ...

    code = getattr(function, "__code__", None)
    return code is not None and code.co_code == empty.__code__.co_code


# --------------------------------------------------------------------------- publish
PUBLISH_N_CPU, PUBLISH_N_GPU, PUBLISH_TRIALS = 1000, 1 << 18, 5
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PAYLOAD_WRITE = re.compile(r"\bpayload\s*\[[^\]]*\]\s*=(?!=)|\*\s*\(\s*payload\b[^;=]*\)\s*=(?!=)")
_FLAG_WRITE = re.compile(r"\*\s*(?:\(\s*(?P<cast>[^)]*)\)\s*)?\(?\s*flag\s*\)?\s*=(?!=)|\bflag\s*\[\s*0\s*\]\s*=(?!=)"
                         r"|\batomicExch(?:_system)?\s*\(\s*(?:\([^)]*\)\s*)?flag\b")
_FENCE_SYSTEM = re.compile(r"__threadfence_system\s*\(\s*\)")
_FENCE_DEVICE = re.compile(r"__threadfence(?:_block)?\s*\(\s*\)")
# cuda::atomic_ref<T, scope> over the flag (libcu++, <cuda/atomic>): named (`ref name(*flag);`) or used at once.
_ATOMIC_REF = re.compile(r"atomic_ref\s*<(?P<args>[^<>]*)>\s*(?P<name>\w*)\s*[({]\s*"
                         r"(?:\*\s*\(?\s*flag\s*\)?|flag\s*\[\s*0\s*\])\s*[)}]")
_STRONG = {"load": ("acquire", "seq_cst", "acq_rel"), "store": ("release", "seq_cst", "acq_rel")}


def atomic_flag_ops(body: str, op: str) -> list[tuple[int, str, str]]:
    """Every ``load`` or ``store`` (``op``) through a ``cuda::atomic_ref`` to the flag in ``body``: (position, the
    memory order as written, "" for the default seq_cst; the scope, thread_scope_system by default)."""
    found = []
    for m in _ATOMIC_REF.finditer(body):
        args = m.group("args").split(",")
        scope = args[1].strip().split("::")[-1] if len(args) > 1 else "thread_scope_system"
        pattern = (rf"\b{m.group('name')}\s*\.\s*{op}\s*\(" if m.group("name") else rf"\G\s*\.\s*{op}\s*\(")
        calls = re.compile(pattern)
        for call in (calls.finditer(body, m.end()) if m.group("name") else [calls.match(body, m.end())]):
            if call is None:
                continue
            inner = body[call.end():_match_close(body, call.end() - 1, "(", ")") - 1]
            order = inner.split(",")[-1] if (op == "load" or "," in inner) else ""
            order = "" if op == "store" and "," not in inner else order
            found.append((call.start(), order.strip().split("::")[-1], scope))
    return sorted(found)


def _atomic_problem(ops: list[tuple[int, str, str]], op: str) -> Feedback | None:
    """A hint if an atomic_ref flag access has a scope that leaves the host out."""
    for _op, _order, scope in ops:
        if scope != "thread_scope_system":
            return _hint((_("the flag's atomic_ref has scope {scope}. Is the host, who waits for the flag, inside "
                            "that scope?") if op == "store" else
                          _("the flag's atomic_ref has scope {scope}. Is the host, who raises the flag, inside that "
                            "scope?")).format(scope=scope),
                         _("use cuda::thread_scope_system, the scope that includes the host's threads."))
    return None


def _strong(ops: list[tuple[int, str, str]], op: str) -> bool:
    """True when every atomic access orders the payload by itself (acquire loads, release stores, or seq_cst)."""
    return bool(ops) and all(order == "" or any(word in order for word in _STRONG[op]) for _, order, _ in ops)


def _match_close(code: str, start: int, open_: str, close: str) -> int:
    """Index just past the bracket that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == open_:
            depth += 1
        elif code[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)


def _flag_order(body: str, last_payload: int, flag: int, verb: str) -> Feedback | None:
    """The hint for a publish whose flag goes up before the payload's last write, or inside its loop (``verb``:
    how the source puts it, "written" or "stored"); None when the flag comes after the loop."""
    if flag < last_payload:
        return _hint(_("the flag is {verb} before the payload. What would a host polling the flag read "
                       "(publish_flag_first in section 3)?").format(verb=verb),
                     _("write the whole payload first, the flag last."))
    for start, end in _loops(body):
        if start < last_payload < end and start < flag < end:
            return _hint(_("the flag is raised inside the loop that writes the payload. When does it go up, and "
                           "what has been written by then?"), _("raise it once, after the loop."))
    return None


def _loops(code: str) -> list[tuple[int, int]]:
    """(start, end) of every for / while statement in ``code``."""
    spans = []
    for m in re.finditer(r"\b(for|while)\s*\(", code):
        after = _match_close(code, m.end() - 1, "(", ")")
        rest = code[after:]
        skip = len(rest) - len(rest.lstrip())
        if rest.lstrip().startswith("{"):
            end = _match_close(code, after + skip, "{", "}")
        else:
            end = code.find(";", after) + 1 or len(code)
        spans.append((m.start(), end))
    return spans


def _kernel_parts(source: str, kernel: str = "publish") -> tuple[str, str]:
    """(parameter list, body) of the kernel named ``kernel``, comments removed."""
    code = _COMMENTS.sub("", source)
    m = re.search(rf"__global__\s+void\s+{kernel}\s*\(", code)
    if not m:
        return "", ""
    params_end = _match_close(code, m.end() - 1, "(", ")")
    brace = code.find("{", params_end)
    if brace < 0:
        return code[m.end():params_end - 1], ""
    return code[m.end():params_end - 1], code[brace + 1:_match_close(code, brace, "{", "}") - 1]


def review_publish(source: str) -> Feedback | None:
    """The source checks of ``publish`` (both modes): the payload, then ``__threadfence_system()``, then a store to
    the flag through a volatile pointer. None if all hold; else the hint for the first problem."""
    params, body = _kernel_parts(source)
    payload_writes = [m.start() for m in _PAYLOAD_WRITE.finditer(body)]
    flag_writes = list(_FLAG_WRITE.finditer(body))
    stores = atomic_flag_ops(body, "store")
    if stores and (not flag_writes or stores[0][0] < flag_writes[0].start()):
        return _review_atomic_publish(body, payload_writes, stores)
    if not payload_writes or not flag_writes:
        missing = "`payload[i] = value;`" if not payload_writes else "`*flag = raise;`"
        return _hint(_("the check reads your source and cannot find {missing}. Does your kernel write through the "
                       "parameters themselves?").format(missing=missing),
                     _("write the payload as payload[i] = ... and raise the flag with *flag = raise."))
    last_payload, flag = payload_writes[-1], flag_writes[0].start()
    misplaced = _flag_order(body, last_payload, flag, _("written"))
    if misplaced:
        return misplaced
    system_fences = [m.start() for m in _FENCE_SYSTEM.finditer(body)]
    between = [f for f in system_fences if last_payload < f < flag]
    if not between:
        if any(last_payload < m.start() < flag for m in _FENCE_DEVICE.finditer(body)):
            return _hint(_("__threadfence() orders your writes only as threads of this GPU see them. Is the host "
                           "inside its scope? Section 3 names the fence whose scope is the whole system."),
                         _("use the system-scope fence, __threadfence_system(), in the same place."))
        if any(f < last_payload for f in system_fences):
            return _hint(_("the fence comes before the payload writes. Which writes does a fence order: those "
                           "before it, or those after it?"),
                         _("it orders what was written before it, so move it after the payload loop, just before "
                           "the flag store."))
        if any(f > flag for f in system_fences):
            return _hint(_("the fence comes after the flag. By then, could the flag already be visible before the "
                           "payload?"), _("move the fence between the payload loop and the flag store."))
        return _hint(_("no fence between the payload and the flag. Does CUDA's memory model order two stores to "
                       "different addresses as the host sees them (the H200 happened to keep them in order, "
                       "section 3, but does anything promise it)?"),
                     _("nothing does: put a fence whose scope includes the host (section 3) between the payload "
                       "loop and the flag store."))
    cast = flag_writes[0].group("cast") if "cast" in flag_writes[0].groupdict() else None
    atomic = flag_writes[0].group(0).lstrip().startswith("atomicExch")
    flag_param = next((p for p in params.split(",") if re.search(r"\bflag\s*$", p.strip())), "")
    if not (atomic or "volatile" in flag_param or (cast and "volatile" in cast)):
        return _hint(_("the flag is not volatile: the compiler may keep the store in a register or merge it with "
                       "others, so it need not reach memory when the code says. Which qualifier makes every access "
                       "through a pointer a real one (section 3)?"),
                     _("add the volatile qualifier to the flag parameter's type (the parameter list may change)."))
    return None


def _review_atomic_publish(body: str, payload_writes: list[int], stores: list[tuple[int, str, str]]) -> Feedback | None:
    """review_publish for a flag raised with ``cuda::atomic_ref<..., thread_scope_system>::store``: after the payload,
    outside its loop, and either a release store or a system-scope fence before a relaxed one."""
    if not payload_writes:
        return _hint(_("the check reads your source and cannot find `payload[i] = value;`. Does your kernel write "
                       "through the parameters themselves?"), _("write the payload as payload[i] = ..."))
    last_payload, flag = payload_writes[-1], stores[0][0]
    misplaced = _flag_order(body, last_payload, flag, _("stored"))
    if misplaced:
        return misplaced
    problem = _atomic_problem(stores, "store")
    if problem is not None or _strong(stores, "store"):
        return problem
    if any(last_payload < m.start() < flag for m in _FENCE_SYSTEM.finditer(body)):
        return None
    return _hint(_("the flag's store is atomic but relaxed: it is indivisible, yet orders none of the payload's "
                   "stores before it. Which memory order makes the writes before a store visible to whoever sees "
                   "the store?"),
                 _("store with cuda::memory_order_release (or put __threadfence_system() before a relaxed store)."))


def _run_publish(source: str, live: bool) -> tuple[np.ndarray, int, list[int]]:
    """Run ``publish`` with one thread; return (payload after it, flag after it, elements written when the host
    first saw the flag, per trial: -1 if never seen). With live=False the CPU backend runs it to the end, no polling."""
    if live:
        from ..memory import gpu
        from ..experiments.hazards import _poll
        fn = live_module(source).get_function("publish")
        n = PUBLISH_N_GPU
        payload, flag = gpu.mapped_empty(n, np.float32), gpu.mapped_empty(1024, np.uint32)
        try:
            at_flag = []
            for trial in range(PUBLISH_TRIALS):
                value, raise_ = np.float32(trial + 1), trial + 1
                payload.fill(0.0)
                flag[0] = 0
                fn(gpu.device_pointer(payload), np.uint64(n), value, gpu.device_pointer(flag), np.uint32(raise_),
                   block=(1, 1, 1), grid=(1, 1))
                saw = _poll(flag, 0, raise_, 2.0)
                snapshot = payload.copy()
                gpu.synchronize()
                at_flag.append(int(np.count_nonzero(snapshot == value)) if saw else -1)
            return payload.copy(), int(flag[0]), at_flag
        finally:
            gpu.free(payload, flag)
    from .. import cpu
    fn = cpu.SourceModule(source, name="publish.cu").get_function("publish")
    n = PUBLISH_N_CPU
    payload, flag = cpu.mapped_empty(n, np.float32), cpu.mapped_empty(1, np.uint32)
    payload.fill(0.0)
    flag[0] = 0
    fn(cpu.device_pointer(payload), np.uint64(n), np.float32(PUBLISH_TRIALS), cpu.device_pointer(flag),
       np.uint32(PUBLISH_TRIALS), block=(1, 1, 1), grid=(1, 1))
    return payload.copy(), int(flag[0]), []


def check_publish(source: str) -> Feedback:
    """avoid-hazards-on-mapped-memory: CUDA C ``publish(payload, n, value, flag, raise)``: one thread writes
    ``value`` into payload[0..n),
    then ``__threadfence_system()``, then raises the flag through a volatile pointer.

    In both modes it first runs on the CPU backend, which runs a kernel to the end and stops any access out of
    bounds, and the order is checked in the source (one GPU may keep an order that another does not). Live it then
    runs on the GPU while the host polls the flag (as ``experiments.handshake`` does) and counts what was written
    when the flag was seen.
    """
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the body of publish: write value into payload[0..n), then make those writes "
                          "visible to the host before the flag, then raise the flag (*flag = raise)."))
    from ..mode import detect

    try:  # the CPU backend first, in both modes: it stops an access out of bounds, which a GPU may not notice
        payload, flag, _rest = _run_publish(source, live=False)
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return _run_hint(exc)
    problem = _result_problem(payload, flag) or review_publish(source)
    if problem is not None:
        return problem
    live = detect().live
    at_flag: list[int] = []
    if live:
        try:
            payload, flag, at_flag = _run_publish(source, live=True)
        except Exception as exc:  # noqa: BLE001
            return _run_hint(exc)
        problem = _result_problem(payload, flag)
        if problem is not None:
            return problem
        n = PUBLISH_N_GPU
        early = [w for w in at_flag if 0 <= w < n]
        if -1 in at_flag:
            return _hint(_("the host did not see the flag within 2 s in some trial: is the flag store reached?"),
                         _("check that the store to the flag runs in the one thread launched, after the loop, and "
                           "writes raise."))
        if early:
            return _hint(_("in {n_early} of {n_at_flag} trials the host saw the flag with only {min_early} of {n} "
                           "elements written. What must come between the payload and the flag store?").format(
                             n_early=len(early), n_at_flag=len(at_flag), min_early=min(early), n=n),
                         _("the flag must be the last store, after a fence whose scope includes the host."))
    where = (_("on the CPU backend and on the GPU: in all {n_at_flag} trials the host saw the whole payload when "
               "it saw the flag").format(n_at_flag=len(at_flag)) if live
             else _("on the CPU backend (live, the check polls the flag while the GPU runs the same source)"))
    if _strong(atomic_flag_ops(_kernel_parts(source)[1], "store"), "store"):
        return _correct(_("the payload, then a system-scope release store of the flag, {where}. Release orders "
                          "every write before it ahead of the flag for whoever sees the flag, the host included.").format(
                            where=where))
    return _correct(_("payload, __threadfence_system(), then a volatile or atomic flag store, {where}. The fence "
                      "orders the payload before the flag for every observer, the host included, whatever this GPU "
                      "happens to do.").format(where=where))


def _run_hint(exc: Exception) -> Feedback:
    """The hint for a publish kernel that did not build or run."""
    return kernel_failure_hint(exc, "publish", _("an access past the end of the payload"),
                               _(": which indices does your loop write, and which is the last element of the "
                                 "payload?"),
                               _("loop while i < n, not i <= n."))


def _result_problem(payload: np.ndarray, flag: int) -> Feedback | None:
    """A hint if the payload or the flag after the kernel is not what the last trial (value = raise = trials) leaves."""
    want_value = payload.dtype.type(PUBLISH_TRIALS)
    n = payload.size
    if not np.any(payload):
        return _hint(_("the payload is still all zeros. Which elements must the kernel write, and with what?"),
                     _("write value into every element, payload[i] = value for i from 0 to n - 1."))
    if not np.all(payload == want_value):
        done = int(np.count_nonzero(payload == want_value))
        return _hint(_("{done} of {n} payload elements hold value after the kernel. One thread runs (block = grid "
                       "= 1): must it loop over all n elements itself?").format(done=done, n=n),
                     _("write the payload in a loop over i from 0 to n - 1 in that one thread."))
    if flag != PUBLISH_TRIALS:
        return _hint(_("the flag holds {flag} after the kernel, not raise ({PUBLISH_TRIALS}). Which value must the "
                       "flag store write (the exercise says *flag = raise)?").format(
                         flag=flag, PUBLISH_TRIALS=PUBLISH_TRIALS),
                     _("store the parameter raise, not a constant: the host waits for that value."))
    return None


# --------------------------------------------------------------------------- wait_for_flag
WAIT_N, WAIT_EXPECTED, WAIT_VALUE = 256, 7, 2.5
WAIT_CPU_TIMEOUT_S, WAIT_HOST_DELAY_S = 5.0, 0.05
WAIT_GPU_SPINS, WAIT_GPU_BOUND_S, WAIT_TRIALS = 1 << 21, 15.0, 3
_WAIT_PARAMS = ("flag", "expected", "max_spins", "payload", "copy", "n", "seen")


def _uses(body: str, name: str) -> list[int]:
    """Where ``body`` names the parameter ``name``."""
    return [m.start() for m in re.finditer(rf"\b{name}\b", body)]


def review_wait(source: str) -> Feedback | None:
    """The source checks of ``wait_for_flag`` (both modes; the CPU backend runs threads in order and keeps no stale
    copy, so it cannot show these): the flag is loaded through volatile or a system-scope ``cuda::atomic_ref``, never
    through a weak load with a cache hint (``__ldcv``, ``__ldcg``: ptxas may hoist them out of the loop, as the SASS
    and the spin_loop experiment show) nor the read-only path; ``__threadfence_system()`` comes between the flag load
    and the payload loads, unless the atomic load is an acquire load, which orders them by itself."""
    params, body = _kernel_parts(source, "wait_for_flag")
    flag_param = next((q for q in params.split(",") if re.search(r"\bflag\s*$", q.strip())), "")
    flag_at, payload_at = _uses(body, "flag"), [m.start() for m in re.finditer(r"\bpayload\s*\[|\*\s*\(\s*payload\b",
                                                                                body)]
    if not flag_at or not payload_at:
        missing = "the flag" if not flag_at else _("the payload (payload[i])")
        return _hint(_("the check reads your source and cannot find where it loads {missing}. Does your kernel "
                       "read through the parameters themselves?").format(missing=missing),
                     _("load the flag as *flag (or flag[0]) in the spin loop and the payload as payload[i]."))
    read_only = re.search(r"__ldg\s*\(\s*(\([^)]*\)\s*)?&?\s*flag\b", body) or "__restrict__" in flag_param
    if read_only:
        return _hint(_("the flag is loaded through the SM's read-only data path (__ldg or a const __restrict__ "
                       "pointer). That path is meant for data that does not change while the kernel runs: may the "
                       "compiler load it once, and may the SM's cache keep serving the first value (section 4)?"),
                     _("drop __ldg / __restrict__ for the flag: load it through a volatile pointer (or a "
                       "system-scope atomic_ref with acquire) so that every turn loads it."))
    loads = atomic_flag_ops(body, "load")
    problem = _atomic_problem(loads, "load")
    if problem is not None:
        return problem
    volatile = ("volatile" in flag_param or re.search(r"volatile[^;]*\*[^;]*\bflag\b", body)
                or re.search(r"\batomic\w*\s*\(\s*(\([^)]*\)\s*)?&?\s*flag\b", body) or loads)
    hint = re.search(r"\b(__ldc[vg])\s*\(\s*(\([^)]*\)\s*)?&?\s*flag\b", body)
    if not volatile and hint:
        return _hint(_("the flag is loaded with {group}. A cache hint says where the line may be kept, not that "
                       "the load must happen again: it is an ordinary weak load, which the compiler may issue "
                       "once, before the loop, so that every turn tests the same register (section 4's SASS and "
                       "spin_loop show it). What kind of load must the compiler issue on every turn?").format(
                         group=hint.group(1)),
                     _("a volatile load (const volatile unsigned int *flag, then *flag in the loop), or a "
                       "cuda::atomic_ref<unsigned int, cuda::thread_scope_system> loaded with "
                       "cuda::memory_order_acquire."))
    if not volatile:
        return _hint(_("the flag is a plain load, an ordinary weak load. Nothing in your kernel writes it, so may "
                       "the compiler load it once and keep testing the copy in a register? On the GPU such a spin "
                       "may never see the host's write. Which loads must the compiler issue every time (section 4)?"),
                     _("declare the flag parameter volatile (const volatile unsigned int *flag), or load it "
                       "through a system-scope cuda::atomic_ref with acquire: the parameter list may change."))
    if _strong(loads, "load"):
        return None  # an acquire load keeps the payload loads after it: no fence needed
    first_payload = payload_at[0]
    fences = [m.start() for m in _FENCE_SYSTEM.finditer(body)]
    if loads and not any(loads[0][0] < f < first_payload for f in fences):
        return _hint(_("the flag's atomic load is relaxed: it is a real load every turn, but orders nothing after "
                       "it. Could a payload load be served from before the host wrote it?"),
                     _("load with cuda::memory_order_acquire (or put __threadfence_system() after the loop)."))
    if not any(flag_at[0] < f < first_payload for f in fences):
        if any(flag_at[0] < m.start() < first_payload for m in _FENCE_DEVICE.finditer(body)):
            return _hint(_("__threadfence() orders loads and stores only as threads of this GPU see them. Is the "
                           "host, who wrote the payload, inside its scope?"),
                         _("use the system-scope fence, __threadfence_system(), in the same place."))
        if any(f < flag_at[0] for f in fences):
            return _hint(_("the fence comes before the flag is loaded. Which loads must it keep apart: those "
                           "before the wait and those after, or the flag load and the payload loads?"),
                         _("put it after the spin loop, before the first payload load."))
        return _hint(_("nothing comes between the flag load and the payload loads. Could the compiler or the "
                       "memory system serve a payload load before the flag load that saw the host's write, and so "
                       "read the payload from before the host wrote it?"),
                     _("put a fence whose scope includes the host (section 3) after the spin loop, before the "
                       "first payload load."))
    return None


def _wait_buffers(backend: Any, n: int) -> tuple[np.ndarray, ...]:
    flag, payload = backend.mapped_empty(1, np.uint32), backend.mapped_empty(n, np.float32)
    copy, seen = backend.mapped_empty(n, np.float32), backend.mapped_empty(1, np.uint32)
    flag[0], seen[0] = 0, 99
    payload.fill(0.0)
    copy.fill(-1.0)
    return flag, payload, copy, seen


def _host_writes(flag: np.ndarray, payload: np.ndarray, delay_s: float) -> None:
    """The host's side: wait, write the payload, then raise the flag (x86 keeps the host's stores in order)."""
    time.sleep(delay_s)
    payload.fill(WAIT_VALUE)
    flag[0] = WAIT_EXPECTED


def _wait_cpu(source: str, *, raise_flag: bool, max_spins: int) -> tuple[int, np.ndarray]:
    """Run wait_for_flag on the CPU backend while a host thread writes the payload and raises the flag (or never
    does); a launch that outlives WAIT_CPU_TIMEOUT_S raises KernelTimeoutError. Returns (seen, copy)."""
    import threading

    from .. import cpu

    fn = cpu.SourceModule(source, name="wait_for_flag.cu").get_function("wait_for_flag")
    flag, payload, copy, seen = _wait_buffers(cpu, WAIT_N)
    host = threading.Thread(target=_host_writes, args=(flag, payload, WAIT_HOST_DELAY_S), daemon=True)
    if raise_flag:
        host.start()
    try:
        fn(cpu.device_pointer(flag), np.uint32(WAIT_EXPECTED), np.uint64(max_spins), cpu.device_pointer(payload),
           cpu.device_pointer(copy), np.uint64(WAIT_N), cpu.device_pointer(seen), block=(1, 1, 1), grid=(1, 1),
           timeout=WAIT_CPU_TIMEOUT_S)
    finally:
        if raise_flag:
            host.join()
    return int(seen[0]), copy.copy()


def _wait_gpu(source: str) -> list[tuple[int, bool, bool]]:
    """Live: per trial, launch asynchronously, let the host write the payload and raise the flag, and wait for the
    kernel at most WAIT_GPU_BOUND_S (its own max_spins bounds it too). (seen, payload copied, finished in time)."""
    import pycuda.driver as drv

    from ..memory import gpu

    fn = live_module(source).get_function("wait_for_flag")
    out = []
    for _trial in range(WAIT_TRIALS):
        flag, payload, copy, seen = _wait_buffers(gpu, WAIT_N)
        try:
            end = drv.Event()
            fn(gpu.device_pointer(flag), np.uint32(WAIT_EXPECTED), np.uint64(WAIT_GPU_SPINS),
               gpu.device_pointer(payload), gpu.device_pointer(copy), np.uint64(WAIT_N), gpu.device_pointer(seen),
               block=(1, 1, 1), grid=(1, 1))
            end.record()
            _host_writes(flag, payload, 0.02)
            deadline = time.perf_counter() + WAIT_GPU_BOUND_S
            while not end.query() and time.perf_counter() < deadline:
                time.sleep(0.001)
            finished = end.query()
            if finished:
                out.append((int(seen[0]), bool(np.all(copy == WAIT_VALUE)), True))
            else:
                return out + [(0, False, False)]  # the buffers stay allocated: the kernel still reads them
        finally:
            if out and out[-1][2]:
                gpu.free(flag, payload, copy, seen)
    return out


def check_wait_for_flag(source: str) -> Feedback:
    """avoid-hazards-on-mapped-memory: CUDA C ``wait_for_flag(flag, expected, max_spins, payload, copy, n, seen)``:
    one thread spins until ``*flag == expected`` (at most ``max_spins`` loads), sets ``*seen`` to 1 or 0, and when
    it saw the flag copies ``payload[0..n)``, which the host wrote before the flag, into ``copy``.

    On the CPU backend a host thread raises the flag while the kernel spins (and, in a second run, never does: the
    spin must end by itself); every launch is bounded by a timeout, so no answer hangs the check. The load and the
    fence are read in the source, since the CPU backend keeps no stale copy. Live, the GPU runs it while the host
    writes the payload and raises the flag, and the host waits a bounded time.
    """
    if is_placeholder(source) or not isinstance(source, str):
        return _not_yet(_("write the body of wait_for_flag: spin until *flag == expected (at most max_spins "
                          "loads), set *seen, and if the flag came, copy payload[0..n) into copy."))
    from .. import cpu
    from ..mode import detect

    params, body = _kernel_parts(source, "wait_for_flag")
    flag_param = next((q for q in params.split(",") if re.search(r"\bflag\s*$", q.strip())), "")
    if re.search(r"__ldc?[gv]\s*\(\s*(\([^)]*\)\s*)?&?\s*flag\b", body) or "__restrict__" in flag_param:
        return review_wait(source) or _hint(_("a weak load (__ldg, __ldcg, __ldcv, __restrict__) is no way to wait "
                                              "for a flag."), _("load the flag through a volatile pointer."))
    try:
        seen, copy = _wait_cpu(source, raise_flag=False, max_spins=1 << 16)
    except cpu.KernelTimeoutError:
        return _hint(_("with no flag ever raised, your kernel was still spinning after {WAIT_CPU_TIMEOUT_S:g} s. "
                       "On a GPU, what would a spin with no end do to the GPU and the program waiting for it?").format(
                         WAIT_CPU_TIMEOUT_S=WAIT_CPU_TIMEOUT_S),
                     _("stop the loop after max_spins loads as well as when the flag equals expected."))
    except Exception as exc:  # noqa: BLE001 (a check never raises)
        return _wait_failure(exc)
    if seen != 0:
        return _hint(_("with no flag ever raised, *seen was {seen}, not 0. Does *seen say whether the flag came, "
                       "whatever happened?").format(seen=seen),
                     _("set *seen = 1 only when the loaded flag equals expected, else 0."))
    if np.any(copy != -1.0):
        return _hint(_("with no flag ever raised, your kernel still wrote copy. What is in the payload before the "
                       "host has written it?"), _("copy the payload only when the flag was seen."))
    try:
        seen, copy = _wait_cpu(source, raise_flag=True, max_spins=1 << 62)
    except cpu.KernelTimeoutError:
        return _hint(_("the host raised the flag to expected after {WAIT_HOST_DELAY_S:g} s, yet the kernel was "
                       "still running after {WAIT_CPU_TIMEOUT_S:g} s. Which value ends your loop?").format(
                         WAIT_HOST_DELAY_S=WAIT_HOST_DELAY_S, WAIT_CPU_TIMEOUT_S=WAIT_CPU_TIMEOUT_S),
                     _("leave the loop when the loaded flag equals expected (the parameter, not a constant)."))
    except Exception as exc:  # noqa: BLE001
        return _wait_failure(exc)
    if seen != 1:
        return _hint(_("the host raised the flag {WAIT_HOST_DELAY_S:g} s after the launch, and *seen came back "
                       "{seen}. Did the kernel wait for it, loading the flag again on every turn of the loop?").format(
                         WAIT_HOST_DELAY_S=WAIT_HOST_DELAY_S, seen=seen),
                     _("spin while the loaded flag differs from expected and fewer than max_spins loads were made; "
                       "after the loop set *seen = 1 if the last load equalled expected."))
    if not np.all(copy == WAIT_VALUE):
        done = int(np.count_nonzero(copy == WAIT_VALUE))
        return _hint(_("{done} of {WAIT_N} elements of copy hold the host's payload. Which elements must the one "
                       "thread copy, and when?").format(done=done, WAIT_N=WAIT_N),
                     _("after the flag was seen, copy[i] = payload[i] for i from 0 to n "
                       "- 1."))
    problem = review_wait(source)
    if problem is not None:
        return problem
    if not detect().live:
        return _correct(_("a flag load the compiler must issue every turn, bounded, and the payload loads kept "
                          "after it (an acquire load, or __threadfence_system()): on the CPU backend the kernel "
                          "waited for the host's flag and copied its payload, and ended by itself when no flag "
                          "came (live, the check runs the same source on the GPU)."))
    try:
        trials = _wait_gpu(source)
    except Exception as exc:  # noqa: BLE001
        return _wait_failure(exc)
    if not all(done for _, _, done in trials):
        return _hint(_("on the GPU the kernel was still running {WAIT_GPU_BOUND_S:g} s after the host raised the "
                       "flag. Does every turn of the loop load the flag from memory, and count towards max_spins?").format(
                         WAIT_GPU_BOUND_S=WAIT_GPU_BOUND_S),
                     _("load the flag through a volatile pointer inside the loop and add 1 to a counter each turn."))
    if not all(seen == 1 for seen, _, _ in trials):
        return _hint(_("on the GPU the kernel ran out of spins without seeing the host's flag. Does each load of "
                       "the flag reach memory, or could it be served from a register or a cache?"),
                     _("load the flag through volatile or a system-scope atomic_ref acquire load: never a plain "
                       "load or one with a cache hint (__ldg, __ldcg, __ldcv)."))
    if not all(copied for _, copied, _ in trials):
        return _hint(_("on the GPU the kernel saw the flag but copied a payload the host had not finished writing. "
                       "What orders the payload loads after the flag load?"),
                     _("put __threadfence_system() between the spin loop and the payload loads."))
    return _correct(_("in all {n_trials} trials on the GPU the kernel waited for the host's flag and copied the "
                      "whole payload: a volatile or atomic load reaches memory on every turn, the bound keeps a "
                      "lost flag from hanging the GPU, and acquire (or __threadfence_system()) keeps the payload "
                      "loads after the flag load.").format(n_trials=len(trials)))


def _wait_failure(exc: Exception) -> Feedback:
    """The hint for a wait_for_flag kernel that did not build or run."""
    return kernel_failure_hint(exc, "wait_for_flag", _("an access past the end of the payload or copy"),
                               _(": which indices does your copy loop touch, and which is the last element?"),
                               _("loop while i < n, not i <= n."))


# --------------------------------------------------------------------------- prediction
def median_seconds(atomics: Any, method: str, memory: str) -> float:
    return float(np.median([r["seconds"][0] for r in atomics.select(method=method, memory=memory)]))


def atomic_ratio(atomics: Any) -> float:
    """How many times as long atomicAdd took on a counter in mapped memory as in device memory."""
    return median_seconds(atomics, "count_atomically", "zero_copy") / median_seconds(atomics, "count_atomically", "device")


def per_warp_ns(atomics: Any) -> float:
    """Nanoseconds per warp-wide atomicAdd on mapped memory (32 increments each)."""
    expected = atomics.rows[0]["expected"]
    return median_seconds(atomics, "count_atomically", "zero_copy") / (expected / 32) * 1e9


def zero_copy_load_ns(latency: Any) -> float:
    """One dependent zero-copy load (measure-latency's run) with the table out of the CPU's caches, the figure the
    other lessons quote (older records without that row: the median over the zero-copy rows)."""
    evicted = [r for r in latency.select(memory="zero_copy") if r.get("cpu_cache", "evicted") == "evicted"]
    return float(np.median([r["load_ns"] for r in evicted or latency.select(memory="zero_copy")]))


def compare_prediction(predicted: Any, atomics: Any, latency: Any = None) -> str:
    """Compare the learner's guess of how many times as long ``atomicAdd`` takes on mapped memory as on device
    memory with the run: ``atomics`` is the atomics result (or the ratio itself), ``latency`` measure-latency's
    result, for one dependent zero-copy load. Works on the untouched ``...``."""
    ratio = atomic_ratio(atomics) if hasattr(atomics, "select") else float(atomics)
    seen = _("Measured: atomicAdd on mapped memory took {ratio:,.0f}x as long as on device memory.").format(
               ratio=ratio)
    why = ""
    if hasattr(atomics, "select") and latency is not None:
        per_warp, load = per_warp_ns(atomics), zero_copy_load_ns(latency)
        why = (_(" Each warp-wide atomic took {per_warp:.0f} ns; one dependent zero-copy load took {load:.0f} ns").format(
                   per_warp=per_warp, load=load)
               + (_(": about one PCIe round trip per update, the updates one after another.")
                  if 0.5 <= per_warp / load <= 2 else "."))
    if is_placeholder(predicted):
        return _("No prediction was made (predicted_atomic_ratio is still `...`). {seen}{why}").format(
                   seen=seen, why=why)
    if (isinstance(predicted, (bool, np.bool_)) or not isinstance(predicted, (int, float, np.integer, np.floating))
            or not np.isfinite(predicted) or predicted <= 0):
        return _("A prediction here is a positive number, how many times as long as on device memory (e.g. 50), "
                 "without quotes; you gave {predicted!r}. {seen}{why}").format(predicted=predicted, seen=seen, why=why)
    gap = predicted / ratio
    text = _("You predicted {predicted:,.0f}x. {seen}").format(predicted=float(predicted), seen=seen)
    if 0.5 <= gap <= 2:
        return text + _(" Your guess was within a factor of 2.") + why
    if gap < 0.5:
        return (text + _(" Far more than you guessed: a bandwidth ratio (the link against device memory) misleads "
                         "here, since the updates to one word are serialised and each waits for the link's latency.") + why)
    return text + _(" Less than you guessed.") + why


CHECKS = {"final_count": check_final_count, "publish": check_publish, "wait_for_flag": check_wait_for_flag}

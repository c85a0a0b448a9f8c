"""avoid-hazards-on-mapped-memory's exercises: a GPU-to-host flag handshake kernel (publish), counting the trials in
which the host
saw the flag before the payload (incomplete), and the prediction of what an atomicAdd on mapped memory costs."""

from __future__ import annotations

import re
import time
from typing import Any, Callable

import numpy as np

from . import (Feedback, correct as _correct, hint as _hint, is_placeholder, kernel_failure_hint, live_module,
               not_yet as _not_yet)

# --------------------------------------------------------------------------- incomplete
INCOMPLETE_CASES = (
    ({"n": 100, "trials": 5, "written_at_flag": [100, 100, 37, 100, 0]}, 2),
    ({"n": 100, "trials": 4, "written_at_flag": [-1, 100, 99, -1]}, 1),   # -1: the flag was never seen
    ({"n": 8, "trials": 3, "written_at_flag": [8, 8, 8]}, 0),
    ({"n": 8, "trials": 3, "written_at_flag": [-1, -1, -1]}, 0),
)


def incomplete_trials(row: dict[str, Any]) -> int:
    """What the lesson's own cells count (not the learner's function): trials with 0 <= written_at_flag < n."""
    return sum(0 <= w < row["n"] for w in row["written_at_flag"])


def check_incomplete(incomplete: Callable[[dict[str, Any]], Any], *, rows: list[dict[str, Any]] | None = None) -> Feedback:
    """avoid-hazards-on-mapped-memory: ``incomplete(row)`` counts the trials of a handshake row in which the host
    saw the flag but not
    the whole payload (``written_at_flag`` between 0 and n - 1; -1 means the flag was never seen)."""
    if is_placeholder(incomplete):
        return _not_yet("define incomplete(row) returning how many trials saw the flag with fewer than row['n'] "
                        "payload elements written.")
    for row, want in INCOMPLETE_CASES:
        got = incomplete(dict(row, written_at_flag=list(row["written_at_flag"])))
        if is_placeholder(got):
            return _not_yet("incomplete returns `...`: return a count of trials.")
        if isinstance(got, (float, np.floating)) and not float(got).is_integer():
            return _hint(f"you returned {got}, a fraction. Does the exercise ask for a share of the trials or for "
                         "how many?", "return the NUMBER of trials (the table next to it shows the trials), an int: "
                         "do not divide by the trials.")
        if not isinstance(got, (int, np.integer, float, np.floating)) or isinstance(got, bool):
            return _hint(f"return a whole number of trials; you returned {got!r}.",
                         "count with sum(...) over the trials and return that number.")
        got = int(got)
        if got == want:
            continue
        written = row["written_at_flag"]
        if got == sum(w < row["n"] for w in written):
            return _hint("you also counted the trials with -1. What does -1 mean: did the host see the flag there?",
                         "-1 means the host never saw the flag (it timed out), a different failure: count only "
                         "trials that saw the flag with part of the payload.")
        if got == sum(w == row["n"] for w in written):
            return _hint("you counted the COMPLETE payloads. Which trials are the hazard?",
                         "count the trials where the flag was seen with fewer than n elements written.")
        if got == sum(0 <= w < row["n"] - 1 for w in written) or got == sum(0 < w < row["n"] for w in written):
            return _hint("an off-by-one at one end of the range. Is a trial with 0 elements written incomplete? "
                         "One with n - 1?",
                         "both are: the payload is complete only when all n elements are written, and -1 is not a "
                         "count of elements.")
        return _hint(f"for written_at_flag = {written} and n = {row['n']} you returned {got}. Which values of w mean "
                     "the flag was seen before the whole payload?",
                     f"{want} trials here: w from 0 up to, not including, n.")
    extra = ""
    if rows:
        counts = {r["kernel"]: int(incomplete(r)) for r in rows if r.get("direction") == "gpu_to_host"}
        extra = " On this run: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + "."
    return _correct("a flag seen before the payload is complete is the hazard: the host would act on data still "
                    "being written; a flag never seen is a timeout, another failure." + extra)


# --------------------------------------------------------------------------- publish
PUBLISH_N_CPU, PUBLISH_N_GPU, PUBLISH_TRIALS = 1000, 1 << 18, 5
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PAYLOAD_WRITE = re.compile(r"\bpayload\s*\[[^\]]*\]\s*=(?!=)|\*\s*\(\s*payload\b[^;=]*\)\s*=(?!=)")
_FLAG_WRITE = re.compile(r"\*\s*(?:\(\s*(?P<cast>[^)]*)\)\s*)?\(?\s*flag\s*\)?\s*=(?!=)|\bflag\s*\[\s*0\s*\]\s*=(?!=)"
                         r"|\batomicExch(?:_system)?\s*\(\s*(?:\([^)]*\)\s*)?flag\b")
_FENCE_SYSTEM = re.compile(r"__threadfence_system\s*\(\s*\)")
_FENCE_DEVICE = re.compile(r"__threadfence(?:_block)?\s*\(\s*\)")


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


def _kernel_parts(source: str) -> tuple[str, str]:
    """(parameter list, body) of the kernel ``publish``, comments removed."""
    code = _COMMENTS.sub("", source)
    m = re.search(r"__global__\s+void\s+publish\s*\(", code)
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
    if not payload_writes or not flag_writes:
        missing = "`payload[i] = value;`" if not payload_writes else "`*flag = raise;`"
        return _hint(f"the check reads your source and cannot find {missing}. Does your kernel write through the "
                     "parameters themselves?",
                     "write the payload as payload[i] = ... and raise the flag with *flag = raise.")
    last_payload, flag = payload_writes[-1], flag_writes[0].start()
    if flag < last_payload:
        return _hint("the flag is written before the payload. What would a host polling the flag read "
                     "(publish_flag_first in section 3)?", "write the whole payload first, the flag last.")
    for start, end in _loops(body):
        if start < last_payload < end and start < flag < end:
            return _hint("the flag is raised inside the loop that writes the payload. When does it go up, and what "
                         "has been written by then?", "raise it once, after the loop.")
    system_fences = [m.start() for m in _FENCE_SYSTEM.finditer(body)]
    between = [f for f in system_fences if last_payload < f < flag]
    if not between:
        if any(last_payload < m.start() < flag for m in _FENCE_DEVICE.finditer(body)):
            return _hint("__threadfence() orders your writes only as threads of this GPU see them. Is the host "
                         "inside its scope? Section 3 names the fence whose scope is the whole system.",
                         "use the system-scope fence, __threadfence_system(), in the same place.")
        if any(f < last_payload for f in system_fences):
            return _hint("the fence comes before the payload writes. Which writes does a fence order: those before "
                         "it, or those after it?",
                         "it orders what was written before it, so move it after the payload loop, just before the "
                         "flag store.")
        if any(f > flag for f in system_fences):
            return _hint("the fence comes after the flag. By then, could the flag already be visible before the "
                         "payload?", "move the fence between the payload loop and the flag store.")
        return _hint("no fence between the payload and the flag. Does CUDA's memory model order two stores to "
                     "different addresses as the host sees them (the H200 happened to keep them in order, section "
                     "3, but does anything promise it)?",
                     "nothing does: put a fence whose scope includes the host (section 3) between the payload loop "
                     "and the flag store.")
    cast = flag_writes[0].group("cast") if "cast" in flag_writes[0].groupdict() else None
    atomic = flag_writes[0].group(0).lstrip().startswith("atomicExch")
    flag_param = next((p for p in params.split(",") if re.search(r"\bflag\s*$", p.strip())), "")
    if not (atomic or "volatile" in flag_param or (cast and "volatile" in cast)):
        return _hint("the flag is not volatile: the compiler may keep the store in a register or merge it with "
                     "others, so it need not reach memory when the code says. Which qualifier makes every access "
                     "through a pointer a real one (section 3)?",
                     "add the volatile qualifier to the flag parameter's type (the parameter list may change).")
    return None


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
        return _not_yet("write the body of publish: write value into payload[0..n), then make those writes visible "
                        "to the host before the flag, then raise the flag (*flag = raise).")
    from ..mode import detect

    try:  # the CPU backend first, in both modes: it stops an access out of bounds, which a GPU may not notice
        payload, flag, _ = _run_publish(source, live=False)
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
            return _hint("the host did not see the flag within 2 s in some trial: is the flag store reached?",
                         "check that the store to the flag runs in the one thread launched, after the loop, and "
                         "writes raise.")
        if early:
            return _hint(f"in {len(early)} of {len(at_flag)} trials the host saw the flag with only {min(early)} of {n} "
                         "elements written. What must come between the payload and the flag store?",
                         "the flag must be the last store, after a fence whose scope includes the host.")
    where = (f"on the CPU backend and on the GPU: in all {len(at_flag)} trials the host saw the whole payload when it "
             "saw the flag" if live
             else "on the CPU backend (live, the check polls the flag while the GPU runs the same source)")
    return _correct(f"payload, __threadfence_system(), then a volatile flag store, {where}. The fence orders the "
                    "payload before the flag for every observer, the host included, whatever this GPU happens to do.")


def _run_hint(exc: Exception) -> Feedback:
    """The hint for a publish kernel that did not build or run."""
    return kernel_failure_hint(exc, "publish", "an access past the end of the payload",
                               ": which indices does your loop write, and which is the last element of the payload?",
                               "loop while i < n, not i <= n.")


def _result_problem(payload: np.ndarray, flag: int) -> Feedback | None:
    """A hint if the payload or the flag after the kernel is not what the last trial (value = raise = trials) leaves."""
    want_value = payload.dtype.type(PUBLISH_TRIALS)
    n = payload.size
    if not np.any(payload):
        return _hint("the payload is still all zeros. Which elements must the kernel write, and with what?",
                     "write value into every element, payload[i] = value for i from 0 to n - 1.")
    if not np.all(payload == want_value):
        done = int(np.count_nonzero(payload == want_value))
        return _hint(f"{done} of {n} payload elements hold value after the kernel. One thread runs (block = grid = "
                     "1): must it loop over all n elements itself?",
                     "write the payload in a loop over i from 0 to n - 1 in that one thread.")
    if flag != PUBLISH_TRIALS:
        return _hint(f"the flag holds {flag} after the kernel, not raise ({PUBLISH_TRIALS}). Which value must the "
                     "flag store write (the exercise says *flag = raise)?",
                     "store the parameter raise, not a constant: the host waits for that value.")
    return None


# --------------------------------------------------------------------------- prediction
def compare_prediction(predicted: Any, ratio: float, per_warp_ns: float | None = None,
                       load_ns: float | None = None) -> str:
    """Compare the learner's guess of how many times as long ``atomicAdd`` takes on mapped memory as on device
    memory with the run's ``ratio``. Works on the untouched ``...``."""
    seen = f"Measured: atomicAdd on mapped memory took {ratio:,.0f}x as long as on device memory."
    why = ""
    if per_warp_ns is not None and load_ns is not None:
        near = 0.5 <= per_warp_ns / load_ns <= 2
        why = (f" Each warp-wide atomic took {per_warp_ns:.0f} ns; one dependent zero-copy load took {load_ns:.0f} ns "
               "(lesson 07's record)" + (": about one PCIe round trip per update, the updates one after another." if near
                               else ": compare the two with the hypothesis in the box below the table."))
    if is_placeholder(predicted) or not isinstance(predicted, (int, float, np.integer, np.floating)) or predicted <= 0:
        return f"No prediction was made (predicted_atomic_ratio is still `...`). {seen}{why}"
    gap = predicted / ratio
    text = f"You predicted {float(predicted):,.0f}x. {seen}"
    if 0.5 <= gap <= 2:
        return text + " Your guess was within a factor of 2." + why
    if gap < 0.5:
        return (text + " Far more than you guessed: a bandwidth ratio (lesson 06's link against device memory) "
                "misleads here, since the updates to one word are serialised and each waits for the link's latency."
                + why)
    return text + " Less than you guessed." + why


CHECKS = {"incomplete": check_incomplete, "publish": check_publish}

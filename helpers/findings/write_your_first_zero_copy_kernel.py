"""write-your-first-zero-copy-kernel's sentences on what ran: where the seed's kernel runs, its pointers, what passing
arrays by value did, whether pinned memory leaked, and what contexts share. Live or recorded comes from the result
quoted, the backend from the kernel object itself."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..experiments import expect
from ..i18n import N_, _
from ..platform.notes import platform_note
from ..tables import Table, Text, join


_CONTEXT = {"primary": N_("primary"), "created": N_("created")}   # where the contexts table says memory lived


def _said(value: Any) -> str:
    """A yes-or-no answer as the tables show it: True or False in English."""
    return _("True") if value else _("False")


def _context(name: str) -> str:
    """``primary`` or ``created`` in the chosen language (any other name as it is)."""
    return _(_CONTEXT.get(name, name))


def on_this_machine() -> Text:
    """What this machine changes in the lesson, beside the reference GPU (``helpers.platform.notes``)."""
    return Text(platform_note("write-your-first-zero-copy-kernel"))


def on_gpu(kernel: Any) -> bool:
    """Whether ``kernel`` is PyCUDA's (it runs on the GPU) rather than the CPU backend's."""
    return type(kernel).__module__.startswith("pycuda")


def backend(kernel: Any, gpu_name: str) -> Text:
    """Where the kernel just compiled will run, read from the kernel object."""
    if on_gpu(kernel):
        return Text(_("`vector_add_kernel` compiled by nvcc; it runs on the GPU ({gpu}).").format(gpu=gpu_name))
    return Text(_("`vector_add_kernel` compiled by the C++ compiler; it runs on the CPU backend `zc.cpu` (no GPU "
                  "here): every thread on the CPU, every access checked against the arrays' bounds."))


def pointers(hosts: Sequence[np.ndarray], devices: Sequence[Any], names: str = "abc") -> Table:
    """Each array's host address beside the device pointer the driver gave for it."""
    equal = [int(d) == h.ctypes.data for h, d in zip(hosts, devices)]
    rows = [(f"h_{name} / d_{name}", f"{h.ctypes.data:#x}", f"{int(d):#x}", _said(same))
            for name, h, d, same in zip(names, hosts, devices, equal)]
    same = all(equal)
    return Table([_("array"), _("host address"), _("device pointer"), _("equal")], rows,
                 caption=_("*device pointer == host pointer for all of them*") if same
                 else _("*device pointer == host pointer for not all of them*"))


def by_value(result: Any) -> Any:
    """What launching the seed's kernel with the arrays themselves did, and a check of it."""
    row = result.rows[0]
    raised = (_("the launch raised `{type}: {error}`").format(type=row["error_type"], error=row["error"])
              if row["raised"] else _("no error was raised"))
    after = _("gave the right sums") if row["context_ok_after"] else _("FAILED")
    said = _("Passing the three arrays themselves packed {nbytes:,} bytes of parameters ({origin}): {raised}; "
             "afterwards a launch with device pointers {after}.").format(
        nbytes=row["passed_argument_bytes"], origin=result.origin(), raised=raised, after=after)
    checks = expect((bool(row["raised"]) and row["error_type"] == "LaunchError",
                     _("the driver refuses a parameter buffer that does not match the kernel's parameter list"),
                     row["error_type"] or _("no error")),
                    (bool(row["context_ok_after"]), _("the context still works after the refused launch"),
                     _("it works") if row["context_ok_after"] else _("it does not")))
    return join(f"**{result.describe()}**", Text(said), checks)


def leak(runs: Sequence[bool], before: int, after: int, device: Any) -> Text:
    """The seed program run several times: did every run pass, and did the bytes held grow?"""
    held = (_("page-locked bytes the helpers hold") if device.__name__.startswith("helpers.memory")
            else _("bytes of mapped arrays the CPU backend knows"))
    passed = _("{passed} of {runs} runs passed").format(passed=sum(map(bool, runs)), runs=len(runs))
    if after == before:
        return Text(_("{passed}; {held}: {before:,} before, {after:,} after: **unchanged**, nothing leaked.").format(
            passed=passed, held=held, before=before, after=after))
    return Text(_("{passed}; {held}: {before:,} before, {after:,} after: **grew by {grew:,}**: something was not "
                  "freed.").format(passed=passed, held=held, before=before, after=after, grew=after - before))


def contexts(result: Any) -> Any:
    """Mapped memory used across two contexts, and what importing ``pycuda.autoinit`` did."""
    autoinit = next(r for r in result.rows if "autoinit_context_is_primary" in r)
    said = _("`import pycuda.autoinit` made another context current: {changed}; that context is the primary one: "
             "{primary} ({origin}).").format(changed=_said(autoinit["autoinit_changed_current"]),
                                            primary=_said(autoinit["autoinit_context_is_primary"]),
                                            origin=result.origin())
    table = Table([_("allocated in"), _("kernel launched from"), "PORTABLE", _("kernel wrote it correctly"),
                   _("error")],
                  [(_context(r["allocated_in"]), _context(r["used_from"]), _said(r["portable"]), _said(r["correct"]),
                    r["error"] or "-")
                   for r in result.rows if r["allocated_in"]])
    return join(f"**{result.describe()}**", Text(said), table)



"""A learner's function that returned None: an untouched stub ("not yet") or a ``return`` left out, or a branch that
ends without one (a hint). Every lesson's function exercises share it, from pin-host-memory on."""

from __future__ import annotations

import dis
from typing import Any

from ..i18n import N_, _
from . import Feedback, hint

_EMPTY_OPS = {"RESUME", "NOP", "CACHE", "RETURN_CONST", "LOAD_CONST", "RETURN_VALUE"}
_STEP = N_("every path through the function must end in `return` and a value: a last line without `return` computes "
           "its value and drops it, and an `if` without an `else` returns None whenever its test is false.")


def empty_body(function: Any) -> bool:
    """True for a function whose body is only a docstring, comments, ``...`` or ``pass``: an untouched stub, which
    returns None without computing anything."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    return all(ins.opname in _EMPTY_OPS and (ins.opname not in ("RETURN_CONST", "LOAD_CONST") or ins.argval is None)
               for ins in dis.get_instructions(code))


def returned_none(function: Any, got: Any, case: str = "") -> Feedback | None:
    """The hint for ``got``, what ``function`` returned, when it is None although the function's body does something:
    a ``return`` left out, or a case (``case`` names the one it ran on) that ends without one. None otherwise: a
    value, or an untouched stub (its check says "not yet")."""
    if got is not None or empty_body(function):
        return None
    name = getattr(function, "__name__", "your function")
    if case:
        said = _("{name} returned None for {case}: is a `return` missing, or a case left out?").format(
            name=name, case=case)
    else:
        said = _("{name} returned None: is a `return` missing, or a case left out?").format(name=name)
    return hint(said, _(_STEP))

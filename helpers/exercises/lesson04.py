"""map-pages-on-the-gpu's exercises: the device address of one element of a mapped array; when the device pointer
is the host pointer; and the prediction of how many kinds of pinned memory keep their address."""

from __future__ import annotations

import difflib
import re
from typing import Any, Callable

import numpy as np

from ..i18n import _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, live_module, not_yet as _not_yet
from .returns import returned_none

# (dtype, elements, index) of the check's arithmetic cases; each runs with a device pointer equal to the host
# address (unified addressing) and with one that differs (a GPU without it), so only d_a can be the start.
ADDRESS_CASES = (("float32", 64, 5), ("float64", 64, 7), ("int16", 64, 9), ("float32", 64, 0), ("uint8", 64, 33),
                 ("float64", 64, 63))
OTHER_DEVICE_BASE = 0x13_0480_0000    # a device address unlike any host one: what a GPU without UVA could return

POKE_SOURCE = r"""
extern "C" __global__ void poke(unsigned char *p, int value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *p = (unsigned char)value;
    }
}
"""
POKE_VALUE = 0x5A


def address_cases() -> list[tuple[np.ndarray, int, int]]:
    """(array, index, device pointer of a[0]) cases, host arrays only (the tests' and the check's arithmetic)."""
    cases = []
    for k, (dtype, n, i) in enumerate(ADDRESS_CASES):
        a = np.zeros(n, dtype)
        cases.append((a, i, int(a.ctypes.data)))
        cases.append((a, i, OTHER_DEVICE_BASE + 0x1000 * k))
    return cases


def device_address_rule(a: np.ndarray, i: int, d_a: int) -> int:
    """The documented rule, for the check: the mapping keeps a byte's offset from the start of the buffer."""
    return int(d_a) + int(i) * int(a.strides[0])


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _reads_the_value(device_address: Callable[..., Any], a: np.ndarray, i: int, d_a: int, got: Any) -> bool:
    """True when the answer changes with what the array holds, the address and index left alone: it used a[i]'s value,
    not its position."""
    saved = a.copy()
    try:
        a[:] = 1e9 if a.dtype.kind == "f" else np.iinfo(a.dtype).max // 2
        other = device_address(a, i, d_a)
        return bool(other != got)
    except Exception:   # the learner's code may not take other values: then this is not the mistake to name
        return False
    finally:
        a[:] = saved


def _arithmetic(device_address: Callable[..., Any]) -> Feedback | None:
    """The first wrong case's hint, or None when every case is right."""
    for a, i, d_a in address_cases():
        got = device_address(a, i, d_a)
        forgot = returned_none(device_address, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("device_address returns `...`: return the address a kernel would use for a[i]."))
        if _reads_the_value(device_address, a, i, d_a, got):
            return _hint(_("your address changed when only the values stored in the array changed: a[i] is the "
                           "element's value, not where it lies. Where in memory does a[i] start?"),
                         _("leave the array's contents out: the address depends only on d_a, the index and the size "
                           "of one element."))
        if isinstance(got, str):
            return _hint(_("device_address returned str, the text of an address: return the int, not its hex "
                           "text. A kernel's pointer argument is a number."),
                         _("drop hex(...) and return the integer itself; hex() is only for showing an address."))
        if not _is_integer(got):
            return _hint(_("device_address returned {name}, not a whole number. An address is an integer count of "
                           "bytes; which operations keep it one?").format(name=type(got).__name__),
                         _("build it from integers only: d_a, the index and the element's size, with + and *, no "
                           "`/`."))
        want = device_address_rule(a, i, d_a)
        if int(got) == want:
            continue
        host = int(a.ctypes.data)
        if d_a != host and int(got) == host + (want - d_a):
            return _hint(_("you started from the array's host address. On a GPU without unified addressing the "
                           "driver gives another address for a[0] (section 3): which of your arguments is an "
                           "address that the GPU's page tables know?"),
                         _("start from d_a, the device pointer the driver gave for a[0], and add how far a[i] lies "
                           "from a[0] in memory."))
        if int(got) == d_a + i and i > 0 and a.itemsize > 1:
            return _hint(_("you added the index itself. Addresses count bytes: how many bytes does one {dtype} "
                           "element take, and so how far is a[i] from a[0]?").format(dtype=a.dtype),
                         _("an array knows the size of one element in bytes: a.itemsize."))
        if int(got) == d_a + 4 * i and a.itemsize != 4:
            return _hint(_("right for 4-byte elements, but this array holds {dtype}. Where does your code still "
                           "assume float32?").format(dtype=a.dtype),
                         _("ask the array for the size of one element (a.itemsize) instead of writing 4."))
        if int(got) == d_a and i > 0:
            return _hint(_("every element got the address of a[0]. Where does a[i] lie, relative to a[0]?"),
                         _("add to d_a the number of bytes between a[0] and a[i]."))
        if int(got) == want - d_a:
            return _hint(_("you returned how far a[i] lies from a[0], not where it lies: a distance, not an "
                           "address. Where does the array start for the GPU?"),
                         _("one of the three arguments is an address; add your distance to it."))
        for near in (i + 1, i - 1):
            if near >= 0 and int(got) == d_a + near * a.itemsize:
                return _hint(_("your address of a[{i}] is one element off: it is where a[{near}] starts. How many "
                               "whole elements lie before a[{i}]?").format(i=i, near=near),
                             _("try your expression by hand for i = 0: a[0] starts at d_a itself, zero bytes "
                               "after it."))
        if i > 0 and int(got) == d_a + i * a.nbytes:
            return _hint(_("each step of your index moves by the whole array's size in bytes (a.nbytes). a[i] "
                           "lies i elements after a[0]: how many bytes is one element?"),
                         _("the array's size in bytes counts every element; you need the size of one."))
        return _hint(_("for a {dtype} array and i = {i} your address is {got:+d} bytes from d_a. How many bytes "
                       "lie between a[0] and a[i], and does the mapping change that distance?").format(
                         dtype=a.dtype, i=i, got=int(got) - d_a),
                     _("the GPU's page table moves whole pages; inside the buffer, distances stay as they are: the "
                       "device address is d_a plus the offset of a[i] in bytes."))
    return None


def _on_mapped_memory(device_address: Callable[..., Any]) -> tuple[Feedback | None, bool, bool]:
    """Write one byte through the learner's address of a[i] with a kernel, and look for it in a[i] from the CPU.
    Returns (a hint or None, whether d_a == the host address everywhere, whether it ran on the GPU)."""
    from ..mode import detect

    live = detect().live
    if live:
        from ..memory import gpu as backend
        poke = live_module(POKE_SOURCE).get_function("poke")
    else:
        from .. import cpu as backend
        poke = backend.SourceModule(POKE_SOURCE, name="poke.cu").get_function("poke")
    same = True
    for dtype, n, i in ADDRESS_CASES[:3]:
        a = backend.mapped_empty(n, np.dtype(dtype))
        try:
            a[:] = 0
            d_a = int(backend.device_pointer(a))
            same &= d_a == int(a.ctypes.data)
            address = int(device_address(a, i, d_a))
            if not (d_a <= address < d_a + a.nbytes):   # never let a kernel write outside the buffer
                return _hint(_("on a mapped {dtype} array your address of a[{i}] lies outside the array. Which "
                               "argument gives where the array starts for the GPU?").format(dtype=dtype, i=i),
                             _("start from d_a and add the distance from a[0] to a[i] in bytes.")), same, live
            poke(np.intp(address), np.int32(POKE_VALUE), block=(1, 1, 1), grid=(1, 1))
            backend.synchronize()
            raw = a.view(np.uint8)
            hit = np.flatnonzero(raw)
            if list(hit) != [i * a.itemsize] or raw[hit[0]] != POKE_VALUE:
                return _hint(_("a kernel wrote one byte through your address of a[{i}] in a mapped {dtype} array, "
                               "and the CPU did not find it at the first byte of a[i]. How far is a[i] from a[0]?").format(
                                 i=i, dtype=dtype),
                             _("the distance from a[0] to a[i] is i times the size of one element in bytes.")), same, live
        finally:
            backend.free(a)
    return None, same, live


def check_device_address(device_address: Callable[[np.ndarray, int, int], int]) -> Feedback:
    """map-pages-on-the-gpu: ``device_address(a, i, d_a)``, the address a CUDA kernel uses for ``a[i]`` of a mapped
    array whose ``a[0]`` the driver maps at ``d_a``. Judged by behaviour: arithmetic cases with and without unified
    addressing, then a kernel writes one byte through the address (on the GPU live, on the CPU backend in replay) and
    the CPU looks for it in ``a[i]``."""
    if is_placeholder(device_address):
        return _not_yet(_("define device_address(a, i, d_a) returning the address a kernel uses for a[i]."))
    problem = _arithmetic(device_address)
    if problem is not None:
        return problem
    problem, same, live = _on_mapped_memory(device_address)
    if problem is not None:
        return problem
    where = (_("on the GPU, through mapped memory") if live else
             _("on the CPU backend; live, a GPU kernel does the same through mapped memory"))
    if same and not live:
        why = (_("Here the CPU backend gave the host address a.ctypes.data as d_a, as a driver with unified "
                 "addressing (UVA) does: live, the driver maps the pinned pages at the same virtual page numbers in "
                 "the GPU's page table as in the CPU's, and a page table translates the page, never the offset "
                 "inside it, so every element's device address is its host address."))
    elif same:
        why = (_("Here the driver's d_a was the host address a.ctypes.data itself: with unified addressing (UVA) "
                 "the driver maps the pinned pages at the same virtual page numbers in the GPU's page table as in "
                 "the CPU's, and a page table translates the page, never the offset inside it, so every element's "
                 "device address is its host address."))
    else:
        why = (_("Here d_a differed from the host address a.ctypes.data (no unified addressing): only the start "
                 "moves; the distance from a[0] to a[i] is the same on both sides, because a page table translates "
                 "pages, never the offset inside them."))
    return _correct(_("Your address was right with both kinds of d_a the check tried: the host address itself (UVA) "
                      "and a different one (a GPU without UVA). ")
                    + _("A kernel wrote through your address of a[i] and the CPU found the byte in a[i] ({where}). ").format(
                        where=where)
                    + why)


KINDS = ("mapped (DEVICEMAP)", "mapped + write-combined", "mapped + portable", "pinned, no DEVICEMAP flag",
         "registered (cuMemHostRegister)")


def check_cases() -> list[tuple[int, int, str]]:
    """(UNIFIED_ADDRESSING, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, kind) in the order the check tries them: without
    unified addressing first, then registered memory under both values, then the other kinds, so that one mistake
    is named at a time."""
    without = [(0, can_use, kind) for can_use in (1, 0) for kind in KINDS]
    return without + [(1, can_use, kind) for kind in KINDS[-1:] + KINDS[:-1] for can_use in (1, 0)]


WRITE_COMBINED = "mapped + write-combined"
UNIFIED_KINDS = ("mapped (DEVICEMAP)", "mapped + portable", "pinned, no DEVICEMAP flag")


def same_address_rule(allocation: str, attributes: dict[str, int]) -> bool:
    """Where the documents promise device pointer == host pointer, for the check: the Runtime API's Unified
    Addressing section for ``cudaHostAlloc`` memory, except write-combined memory (its *Exceptions, Disjoint
    Addressing*: "a distinct host and device address"); ``cuMemHostGetDevicePointer``'s reference, by
    ``CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM``, for registered memory (map-pages-on-the-gpu)."""
    if not attributes.get("UNIFIED_ADDRESSING") or allocation == WRITE_COMBINED:
        return False
    if allocation.startswith("registered"):
        return bool(attributes.get("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"))
    return True


def ran_with(identity: Any) -> dict[str, int]:
    """The attributes of the GPU an ``address_identity`` result ran on: the record's in replay, this GPU's live."""
    recorded = identity.provenance.get("attributes")
    if recorded:
        return dict(recorded)
    from ..memory import gpu

    return gpu.device_attributes()


def _strings(code: Any) -> set[str]:
    """The string constants of a function's code (those in a tuple or set of names too), nested functions' included."""
    found = set()
    for const in code.co_consts:
        if isinstance(const, str):
            found.add(const)
        elif isinstance(const, (tuple, frozenset)):
            found |= {item for item in const if isinstance(item, str)}
        elif hasattr(const, "co_consts"):
            found |= _strings(const)
    return found


ATTRIBUTE_CASES = tuple({"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can_use}
                        for uva in (0, 1) for can_use in (1, 0))


def _pattern(same_address: Callable[[str, dict[str, int]], bool], name: str) -> list[bool] | None:
    """What the learner's rule answers for allocation ``name`` under each of ATTRIBUTE_CASES; None when it raises or
    answers something without a truth value."""
    try:
        return [bool(same_address(name, dict(attrs))) for attrs in ATTRIBUTE_CASES]
    except Exception:   # the learner's rule may not expect this name: then it says nothing about it
        return None


def _like(name: str, kind: str) -> float:
    """How much ``name`` looks like the allocation ``kind``: the best match of one of its words (0 when none)."""
    words = [w for w in re.split(r"[^a-z]+", kind.lower()) if len(w) >= 4]
    text = name.lower()
    return max((1.0 if w in text else difflib.SequenceMatcher(None, w, t).ratio())
               for w in words for t in re.split(r"[^a-z]+", text) or [text])


def _name_never_matched(same_address: Callable[[str, dict[str, int]], bool], kind: str) -> str | None:
    """A name like ``kind`` (the name the check passed) that the learner's rule compares the allocation with, under
    which it answers otherwise than for ``kind`` itself: the comparison never matched. A name under which the rule
    answers as the documents do comes first (then that is the only slip); else the likeliest such name, or None."""
    code = getattr(same_address, "__code__", None)
    if code is None:
        return None
    want = [same_address_rule(kind, attrs) for attrs in ATTRIBUTE_CASES]
    held = [cell.cell_contents for cell in getattr(same_address, "__closure__", None) or ()
            if isinstance(getattr(cell, "cell_contents", None), (str, tuple, frozenset))]   # names from outside
    strings = _strings(code) | {n for value in held for n in ([value] if isinstance(value, str) else value)
                                if isinstance(n, str)}
    names = [n for n in strings - set(KINDS) - set(ATTRIBUTE_CASES[0]) if len(n) <= 60 and "\n" not in n]
    given = _pattern(same_address, kind)
    found = [(pattern == want, _like(n, kind), n) for n in sorted(names) if _like(n, kind) >= 0.75
             and (pattern := _pattern(same_address, n)) is not None and pattern != given]
    return max(found)[2] if found else None


def _answers(same_address: Callable[[str, dict[str, int]], bool]) -> dict[tuple[int, int, str], bool] | None:
    """The rule's answer for every case the check tries, or None when one of them raises."""
    table = {}
    for kind in KINDS:
        pattern = _pattern(same_address, kind)
        if pattern is None:
            return None
        for attrs, got in zip(ATTRIBUTE_CASES, pattern):
            table[(attrs["UNIFIED_ADDRESSING"], attrs["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"], kind)] = got
    return table


def _key_error(exc: KeyError, attrs: dict[str, int]) -> Feedback:
    """A key read that the check does not pass: an attribute section 1 shows but the check leaves out, a misspelled
    one, or an allocation name missing from the learner's own dict."""
    key = exc.args[0] if exc.args else None
    if key in KINDS:
        return _hint(_("your code raised KeyError: {key!r}. The check passes the allocation names of section 2's "
                       "table, and a dict of yours has no entry for {key!r}. Which names did you give it?").format(
                         key=key),
                     _("give that dict one entry per row of section 2's table, each name copied from its "
                       "allocation column, or compare the names instead of looking them up."))
    return _hint(_("your code raised KeyError: {key!r}. The check passes `attributes` with two keys only, {keys}: "
                   "which of your reads asks for a key it does not hold?").format(
                     key=key, keys=", ".join(repr(k) for k in attrs)),
                 _("copy the two keys as the exercise cell's comment spells them; section 1's third attribute, "
                   "CAN_MAP_HOST_MEMORY, says whether a GPU maps host memory at all, not at which address."))


def _family(same_address: Callable[[str, dict[str, int]], bool], uva: int, can_use: int, kind: str,
            got: bool) -> Feedback | None:
    """The hint for a wrong answer that a whole family of mistakes gives, seen in all its answers: a name compared
    that never matched, one answer for everything, UNIFIED_ADDRESSING alone, registered memory decided before unified
    addressing, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM read for other kinds. None when it is none of these."""
    unmatched = _name_never_matched(same_address, kind)
    if unmatched is not None:
        return _hint(_("your rule compares the allocation with {unmatched!r}, a name the check never passes: it passed "
                       "{kind!r}, so that comparison never matched. How does section 2's table spell the "
                       "allocations?").format(unmatched=unmatched, kind=kind),
                     _("copy each name you compare from the allocation column of section 2's table, or compare "
                       "only the part of it that no other row shares."))
    table = _answers(same_address)
    if table is None:
        return None
    values = set(table.values())
    if values == {True}:
        return _hint(_("your rule returned True for every allocation and every value of the attributes: it reads "
                       "neither yet. Section 3 lists the cases where equality is not promised: which of them rules "
                       "out every kind at once?"),
                     _("decide one case at a time, starting from the attribute without which no kind keeps the host "
                       "address."))
    if values == {False}:
        return _hint(_("your rule returned False for every allocation and every value of the attributes: it reads "
                       "neither yet. The Unified Addressing section (section 1) promises some kinds the host's "
                       "pointer value: which kinds, and on which GPUs?"),
                     _("start from the memory that section promises the host's pointer value, and the attribute "
                       "the GPU needs for it."))
    if all(answer == bool(u) for (u, _c, _k), answer in table.items()):
        return _hint(_("your rule follows UNIFIED_ADDRESSING alone: it gives all five kinds the same answer. Which "
                       "kinds does section 3 say need more than unified addressing?"),
                     _("keep that test, and give each exception section 3 names a case of its own."))
    registered = KINDS[-1]
    if (not uva and kind == registered
            and not any(answer for (u, _c, k), answer in table.items() if not u and k != registered)):
        return _hint(_("without UNIFIED_ADDRESSING your rule says False for every kind but registered memory, where "
                       "it returned {got}: it reads CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM before it asks whether "
                       "addressing is unified. Can registered memory keep its host address without unified "
                       "addressing (section 3)?").format(got=got),
                     _("put the tests in order: the one every kind needs before the one only registered memory "
                       "needs."))
    if uva and not can_use and kind != registered and table[(1, 1, kind)] == same_address_rule(kind, {
            "UNIFIED_ADDRESSING": 1, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 1}):
        return _hint(_("with CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 0 your rule changed its answer for {kind!r}, "
                       "which is not registered memory. Which allocations does that attribute speak of?").format(
                         kind=kind),
                     _("read the attribute's name to its end, then look for the one row of section 2's table it "
                       "names."))
    return None


def check_same_address(same_address: Callable[[str, dict[str, int]], bool], *,
                       measured: Any = None, attributes: dict[str, int] | None = None) -> Feedback:
    """map-pages-on-the-gpu: ``same_address(allocation, attributes)`` predicts device pointer == host pointer.

    ``measured`` (the ``address_identity()`` result, or its rows with the ``attributes`` they ran with), when given,
    is compared with the prediction in the message.
    """
    if measured is not None and hasattr(measured, "rows"):
        attributes = attributes or ran_with(measured)
        measured = measured.rows
    if is_placeholder(same_address):
        return _not_yet(_("define same_address(allocation, attributes) returning True or False."))
    for uva, can_use, kind in check_cases():
        attrs = {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can_use}
        try:
            got = same_address(kind, dict(attrs))
        except AttributeError as exc:
            if "'dict' object has no attribute" not in str(exc):
                raise
            return _hint(_("your code raised AttributeError: {exc}. `attributes` is a dict, like the "
                           "table in section 1: how do you read one value from a dict?").format(exc=exc),
                         _("a dict is read by key, in square brackets, as the exercise cell's comment shows."))
        except KeyError as exc:
            return _key_error(exc, attrs)
        forgot = returned_none(same_address, got, _(
            "{kind!r} with UNIFIED_ADDRESSING = {uva} and CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = "
            "{can_use}").format(kind=kind, uva=uva, can_use=can_use))
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("same_address returns `...`: return True or False from the allocation and the two "
                             "attributes."))
        try:        # judged by what it decides: 1 and 0 (`return U and C`) decide as True and False do
            got = bool(got)
        except Exception:   # an array or an object without a truth value decides nothing
            return _hint(_("return True or False; for {kind!r} you returned {got!r}.").format(kind=kind, got=got)[:300],
                         _("return a comparison or bool(...) of the attributes: one truth value."))
        want = same_address_rule(kind, attrs)
        if got == want:
            continue
        family = _family(same_address, uva, can_use, kind, got)
        if family is not None:
            return family
        if not uva:
            return _hint(_("you predicted {got} for {kind!r} without UNIFIED_ADDRESSING. Without unified "
                           "addressing, can the device use the host's addresses at all (section 3)?").format(
                             got=got, kind=kind),
                         _("without UNIFIED_ADDRESSING the device has its own address for mapped memory; "
                           "only cuMemHostGetDevicePointer can give it, so test that attribute first."))
        if kind.startswith("registered"):
            return _hint(_("for registered memory with CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = {can_use} "
                           "you predicted {got}. What does that attribute say about memory registered with "
                           "cuMemHostRegister (cuMemHostGetDevicePointer's reference)?").format(
                             can_use=can_use, got=got),
                         _("registered memory keeps its host address only where that attribute is "
                           "non-zero. Give the registered allocation (section 2's table spells its name) a "
                           "case of its own that reads the attribute."))
        if kind == WRITE_COMBINED:
            return _hint(_("you predicted {got} for {kind!r} with unified addressing. What does the Unified "
                           "Addressing section say about memory allocated with cudaHostAllocWriteCombined "
                           "(section 3)?").format(got=got, kind=kind),
                         _("the documents give write-combined memory a distinct device address: the rule "
                           "promises equality only where the documents do, whatever one driver returned."))
        if kind.startswith("pinned, no DEVICEMAP"):
            return _hint(_("you predicted {got} for {kind!r}. Does the DEVICEMAP flag matter once "
                           "addressing is unified? Section 2's table has a row for it.").format(
                             got=got, kind=kind),
                         _("with unified addressing, cudaHostAlloc memory is mapped at the host address "
                           "with or without the DEVICEMAP flag (the Runtime API's Unified Addressing "
                           "section)."))
        if kind == "mapped + portable":
            return _hint(_("you predicted {got} for {kind!r}. Portable memory is pinned for every GPU, not only "
                           "the current one (section 1): does that change its address on this one?").format(
                             got=got, kind=kind),
                         _("the Unified Addressing section names the portable flag beside the mapped flag; "
                           "what does it say holds with or without either?"))
        return _hint(_("you predicted {got} for {kind!r} with unified addressing. What does unified "
                       "addressing give memory from cudaHostAlloc?").format(got=got, kind=kind),
                     _("with unified addressing, the Unified Addressing section promises cudaHostAlloc "
                       "memory device pointer == host pointer, with or without the mapped and portable "
                       "flags."))
    extra = ""
    if measured and attributes:
        agree = sum(bool(same_address(r["allocation"], dict(attributes))) == bool(r["equal"]) for r in measured)
        extra = _(" On the measured run it agrees with the `equal` column for {agree} of {n_measured} kinds.").format(
                    agree=agree, n_measured=len(measured))
        beyond = [r["allocation"] for r in measured if r["equal"] and not same_address(r["allocation"],
                                                                                       dict(attributes))]
        if beyond:
            extra += _(" Where it does not ({kinds}), the driver kept the host address without a documented promise: "
                       "your rule is right not to count on it.").format(kinds="; ".join(beyond))
    return _correct(_("equality needs unified addressing and no write-combined flag, and for registered memory also "
                      "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM; everywhere else ask the driver.") + extra)


CHECKS = {"device_address": check_device_address, "same_address": check_same_address}


def namespace() -> dict[str, Any]:
    """Names map-pages-on-the-gpu's exercise cells use besides NumPy."""
    return {}


def compare_prediction(predicted: Any, identity: Any) -> str:
    """map-pages-on-the-gpu's prediction: of the kinds of page-locked memory ``address_identity`` allocates, how many
    get device pointer == host pointer. Works on the untouched ``...`` (it says "no prediction")."""
    rows = identity.rows
    same = [row["allocation"] for row in rows if row["equal"]]
    where = (_("live on {gpu}") if identity.live else _("recorded on {gpu}")).format(gpu=identity.gpu)
    seen = (_("Measured ({where}): {n_same} of {n_rows} kinds kept the host address on the GPU").format(
                where=where, n_same=len(same), n_rows=len(rows))
            + (_(" ({kinds}).").format(kinds="; ".join(same)) if same else _(".")))
    if is_placeholder(predicted):
        return _("You made no prediction (`predicted_equal_kinds` is still `...`). {seen}").format(seen=seen)
    if not _is_integer(predicted) or not 0 <= predicted <= len(rows):
        return _("A prediction here is a whole number from 0 to {n_rows}; you gave {predicted!r}. {seen}").format(
                   n_rows=len(rows), predicted=predicted, seen=seen)
    text = _("You predicted {predicted}. {seen} ").format(predicted=int(predicted), seen=seen)
    if predicted == len(same):
        gpu = _("this GPU") if identity.live else _("the recorded {gpu}").format(gpu=identity.gpu)
        return text + _("Right.") + (_(" Every kind got the host's own address on {gpu}, write-combined memory "
                                       "too, which no document promises (the next section).").format(gpu=gpu)
                                  if len(same) == len(rows) else "")
    if predicted < len(same):
        return text + (_("More than you expected. Which rows surprised you: the one allocated without the "
                         "DEVICEMAP flag, the write-combined one, or the registered NumPy buffer? Section 1 names "
                         "what decides each; the next section says which equality no document promises."))
    return text + _("Fewer than you expected: the next section says which kinds need more than unified "
                    "addressing.")

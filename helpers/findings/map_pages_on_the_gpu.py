"""map-pages-on-the-gpu's sentences on measured figures: the GPU's attributes, which kinds of page-locked memory kept
their host address on the GPU, and the buffer drawn with its two page tables. Each says live or recorded from the
result it quotes."""

from __future__ import annotations

from typing import Any, Sequence

from ..exercises.lesson04 import same_address_rule
from ..platform import machine
from ..tables import Table, Text, bullets, join
from . import computed_from

ATTRIBUTES = ("UNIFIED_ADDRESSING", "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "CAN_MAP_HOST_MEMORY")
SECOND_LOOK = ("pinned, no DEVICEMAP flag", "registered (cuMemHostRegister)")


def attributes(course: Any) -> Table:
    """The two attributes that decide the device address, and CAN_MAP_HOST_MEMORY (whether the GPU maps host memory at
    all), with where they come from (the session knows)."""
    values = course.attributes
    return Table(["attribute", "value"], [(name, values[name]) for name in ATTRIBUTES],
                 caption=f"*{course.attributes_source}*")


def ran_on(identity: Any, attributes: dict[str, int]) -> dict[str, int]:
    """The attributes of the GPU ``identity`` ran on: the record's in replay, else ``attributes`` (this GPU's)."""
    return dict(identity.provenance.get("attributes") or attributes)


def promises(identity: Any, attributes: dict[str, int]) -> tuple[bool, str, str]:
    """One ``(ok, expected, got)`` check for ``zc.experiments.expect``: every kind the attributes promise kept its host
    address on the GPU and a kernel worked through it."""
    attrs = ran_on(identity, attributes)
    promised = [row for row in identity.rows if same_address_rule(row["allocation"], attrs)]
    kept = [row for row in promised if row["equal"] and row["kernel_through_host_pointer_ok"]]
    expected = ("every kind the attributes promise keeps its host address on the GPU, and a kernel works through it"
                if promised else "no kind is promised the host address (no unified addressing): ask the driver")
    got = f"{len(kept)} of {len(promised)} promised kinds kept it, {identity.origin()}"
    return len(kept) == len(promised), expected, got


def second_look(identity: Any) -> Text:
    """The two rows worth a second look, in words."""
    items = []
    for kind in SECOND_LOOK:
        row = identity.one(allocation=kind)
        if row["device_pointer"] is None:
            pointer = "no device pointer"
        else:
            pointer = f"a device pointer {'equal to' if row['equal'] else 'different from'} the host pointer"
        kernel = "worked" if row["kernel_through_host_pointer_ok"] else "FAILED"
        items.append(f"**{kind}**: {pointer}; the kernel through the host pointer {kernel}")
    return bullets(items, head=f"*{identity.origin()}:*")


def buffer(host: int, device: int, frames: Sequence[int | None], pagemap: Any) -> Text:
    """The buffer drawn next: its two addresses, what its frames are on the machine that read them, hidden frames."""
    same = "**equal**" if host == device else "**different**"
    text = (f"Host pointer `{host:#x}`, device pointer `{device:#x}`: {same} ({pagemap.origin()}). "
            + machine.address_caveat(pagemap.provenance, live=pagemap.live))
    if None in list(frames)[:8]:
        text += " Some frame numbers are hidden (not root): the figure draws those pages without arrows."
    return Text(text)


def figure_title(pagemap: Any) -> str:
    """The mapping figure's title, with where its frames come from."""
    return f"One pinned buffer, two page tables ({pagemap.origin()})"


def what_you_saw(identity: Any, host: int, device: int, pagemap: Any) -> Text:
    """The lesson's figures, computed from its results (this run's live, the record's in replay)."""
    same = [row["allocation"] for row in identity.rows if row["equal"]]
    worked = sum(bool(row["kernel_through_host_pointer_ok"]) for row in identity.rows)
    total = len(identity.rows)
    return join(bullets([
        f"On {identity.gpu} ({'live' if identity.live else 'recorded'}), {len(same)} of {total} kinds had device "
        f"pointer == host pointer" + (f": {'; '.join(same)}." if same else "."),
        f"A CUDA kernel launched with the host pointer itself worked for {worked} of {total} kinds.",
        f"The buffer drawn above: host `{host:#x}`, device `{device:#x}` ({pagemap.origin()}).",
    ], head=computed_from(identity)))

"""map-pages-on-the-gpu's sentences on measured figures: the GPU's attributes, which kinds of page-locked memory kept
their host address on the GPU, and the buffer drawn with its two page tables. Each says live or recorded from the
result it quotes."""

from __future__ import annotations

from typing import Any, Sequence

from ..exercises.lesson04 import same_address_rule
from ..experiments.result import check_figure
from ..platform import machine
from ..i18n import _
from ..tables import Table, Text, bullets, join
from . import computed_from

ATTRIBUTES = ("UNIFIED_ADDRESSING", "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "CAN_MAP_HOST_MEMORY")
SECOND_LOOK = ("pinned, no DEVICEMAP flag", "registered (cuMemHostRegister)")


def attributes(course: Any) -> Table:
    """The two attributes that decide the device address, and CAN_MAP_HOST_MEMORY (whether the GPU maps host memory at
    all), with where they come from (the session knows)."""
    values = course.attributes
    return Table([_("attribute"), _("value")], [(name, values[name]) for name in ATTRIBUTES],
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
    expected = (_("every kind the attributes promise keeps its host address on the GPU, and a kernel works through "
                  "it")
                if promised else _("no kind is promised the host address (no unified addressing): ask the driver"))
    got = _("{n_kept} of {n_promised} promised kinds kept it, {origin}").format(
              n_kept=len(kept), n_promised=len(promised), origin=identity.origin())
    return len(kept) == len(promised), expected, got


def kept_promises(identity: Any, attributes: dict[str, int]) -> Text:
    """:func:`promises` as a sentence: what the Runtime API promises, and the run; a broken promise reads (and,
    under ``ZC_STRICT_FIGURES``, raises) as ``zc.experiments.expect``'s unexpected figure."""
    ok, expected, got = promises(identity, attributes)
    if not ok:
        return check_figure(ok, expected, got)
    return Text(_("As the Runtime API's Unified Addressing section promises: {got} ({expected}).").format(
        got=got, expected=expected))


def second_look(identity: Any) -> Text:
    """The two rows worth a second look, in words."""
    items = []
    for kind in SECOND_LOOK:
        row = identity.one(allocation=kind)
        if row["device_pointer"] is None:
            pointer = _("no device pointer")
        else:
            pointer = (_("a device pointer equal to the host pointer") if row["equal"]
                       else _("a device pointer different from the host pointer"))
        kernel = _("worked") if row["kernel_through_host_pointer_ok"] else _("FAILED")
        items.append(_("**{kind}**: {pointer}; the kernel through the host pointer {kernel}").format(
                         kind=kind, pointer=pointer, kernel=kernel))
    return bullets(items, head=f"*{identity.origin()}:*")


def buffer(host: int, device: int, frames: Sequence[int | None], pagemap: Any) -> Text:
    """The buffer drawn next: its two addresses, what its frames are on the machine that read them, hidden frames."""
    same = _("**equal**") if host == device else _("**different**")
    text = (_("Host pointer `{host:#x}` ({origin}), device pointer `{device:#x}` derived from section 2's rule: "
              "{same}. ").format(host=host, device=device, same=same, origin=pagemap.origin())
            + machine.address_caveat(pagemap.provenance, live=pagemap.live))
    if None in list(frames)[:8]:
        text += _(" Some frame numbers are hidden (not root): the figure draws those pages without arrows.")
    return Text(text)


def figure_title(pagemap: Any, shown: int, total: int) -> str:
    """The mapping figure's title: how many of the buffer's pages it draws, and where its frames come from."""
    return _("One pinned buffer, two page tables: the first {shown} of its {total} pages\n({origin})").format(
        shown=shown, total=total, origin=pagemap.origin())


def what_you_saw(identity: Any, host: int, device: int, pagemap: Any) -> Text:
    """The lesson's figures, computed from its results (this run's live, the record's in replay)."""
    same = [row["allocation"] for row in identity.rows if row["equal"]]
    worked = sum(bool(row["kernel_through_host_pointer_ok"]) for row in identity.rows)
    total = len(identity.rows)
    return join(bullets([
        _("On {gpu} ({how}), {same} of {total} kinds had device pointer == host pointer").format(
            gpu=identity.gpu, how=_("live") if identity.live else _("recorded"), same=len(same), total=total)
        + (_(": {kinds}.").format(kinds="; ".join(same)) if same else _(".")),
        _("A CUDA kernel launched with the host pointer itself worked for {worked} of {total} kinds.").format(
            worked=worked, total=total),
        _("The buffer drawn above: host `{host:#x}` ({origin}), device `{device:#x}` derived from section 2's "
          "rule.").format(
            host=host, device=device, origin=pagemap.origin()),
    ], head=computed_from(identity)))

"""map-pages-on-the-gpu's sentences on measured figures: the GPU's attributes, which kinds of page-locked memory kept
their host address on the GPU, and the buffer drawn with its two page tables. Each says live or recorded from the
result it quotes."""

from __future__ import annotations

from typing import Any, Sequence

from ..exercises.lesson04 import UNIFIED_KINDS, WRITE_COMBINED, same_address_rule
from ..experiments.result import check_figure
from ..platform import machine
from ..platform.provenance import driver_version
from ..i18n import _
from ..tables import Table, Text, bullets, join
from . import computed_from

ATTRIBUTES = ("UNIFIED_ADDRESSING", "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM", "CAN_MAP_HOST_MEMORY")
REGISTERED = "registered (cuMemHostRegister)"
SECOND_LOOK = ("pinned, no DEVICEMAP flag", REGISTERED)


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
    """One ``(ok, expected, got)`` check for ``zc.experiments.expect``: every kind the documents promise the host
    address (:func:`~helpers.exercises.lesson04.same_address_rule`) kept it on the GPU and a kernel worked through
    it."""
    attrs = ran_on(identity, attributes)
    promised = [row for row in identity.rows if same_address_rule(row["allocation"], attrs)]
    kept = [row for row in promised if row["equal"] and row["kernel_through_host_pointer_ok"]]
    expected = (_("every kind the documents promise the host address keeps it on the GPU, and a kernel works "
                  "through it")
                if promised else _("no kind is promised the host address (no unified addressing): ask the driver"))
    got = _("{n_kept} of {n_promised} promised kinds kept it, {origin}").format(
              n_kept=len(kept), n_promised=len(promised), origin=identity.origin())
    return len(kept) == len(promised), expected, got


def _kept(identity: Any, kinds: Sequence[str]) -> str:
    """How many of ``kinds`` kept the host address and worked through it, as "3 of 3"."""
    rows = [identity.one(allocation=kind) for kind in kinds]
    kept = sum(bool(r["equal"] and r["kernel_through_host_pointer_ok"]) for r in rows)
    return _("{kept} of {n}").format(kept=kept, n=len(rows))


def write_combined_address(identity: Any, brief: bool = False) -> str:
    """The write-combined row against the documents, which give that memory "a distinct host and device address":
    where the run kept the host address anyway, the measurement contradicts them, scoped to its GPU and driver
    (map-pages-on-the-gpu; ``brief``, pointing back to it, for use-write-combined-and-registered-memory)."""
    row = identity.one(allocation=WRITE_COMBINED)
    if brief:
        return (_("**Write-combined** memory kept the host address on {gpu}, though the documents give it a "
                  "distinct one: do not rely on it.") if row["equal"] else
                _("**Write-combined** memory got a device address of its own on {gpu}, as documented.")).format(
                    gpu=identity.gpu)
    if not row["equal"]:
        return _("**Write-combined** memory got a device pointer of its own, as the Unified Addressing section "
                 "documents (\"a distinct host and device address\"), {origin}.").format(origin=identity.origin())
    driver = driver_version() if identity.live else identity.provenance.get("driver_version") or _("not recorded")
    return _("**Write-combined** memory kept the host address, {origin}, driver {driver}. The Unified Addressing "
             "section documents \"a distinct host and device address\" for it: this measurement contradicts the "
             "documentation. It is what that driver did on that GPU, not a promise; code must not rely on it and "
             "should ask the driver (`zc.gpu.device_pointer`, which calls `cuMemHostGetDevicePointer`).").format(
               origin=identity.origin(), driver=driver)


def kept_promises(identity: Any, attributes: dict[str, int]) -> Text:
    """Each kind against the reference that promises (or does not promise) it the host address: the Runtime API's
    Unified Addressing section for three kinds, ``CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`` for registered memory,
    and the documented exception for write-combined memory. A broken promise reads (and, under
    ``ZC_STRICT_FIGURES``, raises) as ``zc.experiments.expect``'s unexpected figure."""
    ok, expected, got = promises(identity, attributes)
    if not ok:
        return check_figure(ok, expected, got)
    attrs = ran_on(identity, attributes)
    if not attrs.get("UNIFIED_ADDRESSING"):
        return Text(_("{got} ({expected}).").format(got=got, expected=expected))
    registered = (_("kept it") if identity.one(allocation=REGISTERED)["equal"] else _("did not keep it"))
    can_use = attrs.get("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM")
    return bullets([
        _("The Runtime API's Unified Addressing section promises the host address to `cudaHostAlloc` memory with or "
          "without the mapped and portable flags: {kept} such kinds kept it.").format(
            kept=_kept(identity, UNIFIED_KINDS)),
        _("**Registered** memory: `CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM` = {can_use} (Driver API, "
          "`cuMemHostGetDevicePointer`) {promise}; it {registered}.").format(
            can_use=can_use, registered=registered,
            promise=_("promises it the host address") if can_use else _("promises it nothing")),
        write_combined_address(identity),
    ], head=f"*{identity.origin()}:*")


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
    """The buffer drawn next: its two addresses, what its frames are on the machine that read them (briefly: section
    1 of map-pages-on-the-gpu says what a VM's frames and the IOMMU mean), hidden frames."""
    same = _("**equal**") if host == device else _("**different**")
    text = (_("Host pointer `{host:#x}` ({origin}), device pointer `{device:#x}` derived from section 2's rule: "
              "{same}. ").format(host=host, device=device, same=same, origin=pagemap.origin())
            + machine.address_caveat(pagemap.provenance, live=pagemap.live, brief=True, deeper=_("section 1")))
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

"""The first cell of every lesson: start the session, decide the mode once and show it (start-here).

A lesson's first cell is three lines::

    %matplotlib inline
    import helpers as zc
    zc.start()

:func:`start` returns a :class:`Session` that shows itself (mode, GPU, the recorded reference); later cells reach the
same session with :func:`session`, and what it knows (the GPU's attributes, its PCIe link, the reference record's
headline figures) comes from the GPU live and from the record in replay, so no lesson tests the mode itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from . import records
from .errors import RecordError
from .i18n import _
from .mode import Mode, detect
from .tables import Table, Text

__all__ = ["Session", "start", "session"]


@dataclass
class Session:
    """What a lesson knows once started: the mode, the GPU (live) or the recorded one (replay), and the reference."""

    mode: Mode

    @property
    def live(self) -> bool:
        return self.mode.live

    @cached_property
    def reference(self) -> tuple[records.Record, Path]:
        """The reference record and its path (data/)."""
        return records.reference_record()

    @property
    def record(self) -> records.Record:
        return self.reference[0]

    @property
    def provenance(self) -> dict[str, Any]:
        return self.record["provenance"]

    @cached_property
    def gpu(self) -> str:
        """The GPU the figures come from: this machine's live, the recorded one in replay."""
        if self.live:
            from .memory import gpu

            return gpu.device_name()
        return str(self.provenance["gpu"])

    @cached_property
    def attributes(self) -> dict[str, int]:
        """The GPU's attributes that matter for zero-copy: read from the driver live, from the record in replay."""
        if self.live:
            from .memory import gpu

            return gpu.device_attributes()
        return dict(self.provenance["attributes"])

    @property
    def attributes_source(self) -> str:
        if self.live:
            return _("live, read from {gpu} by the CUDA driver").format(gpu=self.gpu)
        return _("REPLAY: recorded on {gpu} on {date} (data/{file})").format(
            gpu=self.gpu, date=self.provenance["date"][:10], file=self.reference[1].name)

    @cached_property
    def link(self) -> Any:
        """The PCIe link (``helpers.platform.pcie.Link``) of this GPU live, of the recorded one in replay; None
        where it cannot be read."""
        from .platform import pcie

        return pcie.read_link() if self.live else pcie.link_from_record(self.provenance)

    @cached_property
    def headline(self) -> dict[str, Any]:
        """The reference record's headline figures (``helpers.analysis.summary.headline``)."""
        from .analysis import summary

        return summary.headline(self.record)

    def record_line(self) -> str:
        p = self.provenance
        return _("{gpu} recorded on {date} (driver {driver}, CUDA {cuda}, PyCUDA {pycuda}), `data/{file}`").format(
            gpu=p["gpu"], date=p["date"][:10], driver=p["driver_version"], cuda=p["cuda_version"],
            pycuda=p["pycuda_version"], file=self.reference[1].name)

    def _rows(self) -> list[tuple[str, str]]:
        try:
            reference = self.record_line()
        except RecordError as exc:
            reference = _("none ({error})").format(error=exc)
        if self.live:
            return [(_("mode"), _("**live**: every measurement runs on this GPU")), ("GPU", self.gpu),
                    (_("reference"), _("{reference}, plotted beside your runs").format(reference=reference))]
        return [(_("mode"), _("**replay**: no GPU here; why: {reason}").format(reason=self.mode.reason)),
                ("GPU", _("none here; GPU figures are the recorded {gpu}'s").format(gpu=self.gpu)),
                (_("reference"), reference)]

    def _repr_markdown_(self) -> str:
        return Table([_("this session"), _("value")], self._rows())._repr_markdown_()   # no empty header cell

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}".replace("**", "").replace("`", "") for k, v in self._rows())

    __repr__ = __str__

    def describe(self) -> Text:
        """The mode in one sentence."""
        return Text(self.mode.describe())

    # write-your-first-zero-copy-kernel: the names its seed program calls, from the backend this session runs kernels
    # on, so that the lesson never tests the mode itself.
    @property
    def driver(self) -> Any:
        """``pycuda.driver`` live; its CPU backend twin ``helpers.cpu.driver`` in replay (``pagelocked_empty``,
        ``host_alloc_flags``, ``Context.synchronize``, ``HostAllocation.get_device_pointer``, ``free``)."""
        if self.live:
            import pycuda.driver as drv

            return drv
        from .cpu import driver as drv

        return drv

    @property
    def SourceModule(self) -> Any:  # noqa: N802 (PyCUDA's spelling)
        """``pycuda.compiler.SourceModule`` live (nvcc); ``helpers.cpu.SourceModule`` in replay, which compiles the
        same CUDA C with the C++ compiler and runs every thread on the CPU."""
        if self.live:
            from pycuda.compiler import SourceModule

            return SourceModule
        from .cpu import SourceModule

        return SourceModule

    @property
    def device(self) -> Any:
        """The short form of the seed's calls (``mapped_empty``, ``device_pointer``, ``free``, ``synchronize``,
        ``pinned_bytes_live``): ``helpers.memory.gpu`` live, ``helpers.cpu`` in replay."""
        if self.live:
            from .memory import gpu

            return gpu
        from . import cpu

        return cpu


_session: Session | None = None


def start() -> Session:
    """Decide the mode, set up the GPU when there is one, register the notebook's helpers, and return the
    :class:`Session`, which shows itself. Safe to call again when a notebook's cells are re-run: the context is made
    once and the session is the same."""
    global _session
    from .platform.linux_only import register

    register()  # %%linux_only, for the cells of pin-host-memory and map-pages-on-the-cpu that read /proc
    from .display.alt_text import register as alt_text

    alt_text()  # every figure shown gets alt text in its output metadata (the book's and slides' <img alt>)
    mode = detect()
    if mode.live:
        from .memory import gpu

        gpu.context()
    if _session is None or _session.mode != mode:
        _session = Session(mode)
    return _session


def session() -> Session:
    """The started :class:`Session` (started now when no cell has started it)."""
    return _session if _session is not None else start()

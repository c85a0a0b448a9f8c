"""Decide once whether the course runs live on a GPU or replays recorded data (start-here).

live:   PyCUDA imports, a CUDA device exists and it can map host memory.
replay: anything else; every experiment then returns a measurement recorded on a real GPU.

Set ``ZC_FORCE_REPLAY=1`` to replay even where a GPU exists (the tests use it to check
the replay path on a GPU machine).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["Mode", "detect", "require_live"]


@dataclass(frozen=True)
class Mode:
    """The course's mode: ``live`` and a sentence that says why."""

    live: bool
    reason: str
    cause: str = "live"  # live | forced | no-pycuda | driver | no-device | cannot-map

    @property
    def name(self) -> str:
        return "live" if self.live else "replay"

    def describe(self) -> str:
        """One line for a lesson's first output."""
        from .i18n import _

        if self.live:
            return _("Mode: live. {reason}").format(reason=self.reason)
        return _("Mode: replay (recorded measurements from a real GPU). Why: {reason}").format(reason=self.reason)


_detected: Mode | None = None


def _probe() -> Mode:
    from .i18n import _

    if os.environ.get("ZC_FORCE_REPLAY", "") not in ("", "0"):
        return Mode(False, _("ZC_FORCE_REPLAY is set"), "forced")
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        return Mode(False, _("PyCUDA is not installed or cannot load the CUDA driver ({exc})").format(exc=exc),
                    "no-pycuda")
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as exc:  # pycuda raises its own RuntimeError/LogicError subclasses
        return Mode(False, _("the CUDA driver did not start ({exc})").format(exc=exc), "driver")
    if count == 0:
        return Mode(False, _("the CUDA driver found no GPU"), "no-device")
    device = drv.Device(0)
    if not device.get_attribute(drv.device_attribute.CAN_MAP_HOST_MEMORY):
        return Mode(False, _("{gpu} cannot map host memory (CAN_MAP_HOST_MEMORY is 0)").format(gpu=device.name()),
                    "cannot-map")
    return Mode(True, _("GPU 0 is {gpu}; every measurement runs on it.").format(gpu=device.name()))


def detect(refresh: bool = False) -> Mode:
    """Return the course's mode, probing the machine only the first time (start-here)."""
    global _detected
    if _detected is None or refresh:
        _detected = _probe()
    return _detected


def require_live(what: str) -> None:
    """Raise :class:`NoGPUError` naming ``what`` unless the mode is live."""
    from .errors import HostMappingUnsupportedError, NoGPUError

    mode = detect()
    if mode.cause == "cannot-map":
        raise HostMappingUnsupportedError(
            f"{what} needs a GPU that can map page-locked host memory, but {mode.reason}. "
            "Zero-copy cannot work on this GPU; the course replays recorded measurements instead."
        )
    if not mode.live:
        raise NoGPUError(what, mode.reason)

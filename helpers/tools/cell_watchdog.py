"""Inside a simulated learner's Jupyter kernel: where a cell is stuck (``python -m helpers classroom``).

The classroom starts each lesson's kernel with ``--IPKernelApp.exec_lines`` calling :func:`install`. Before each
cell the kernel arms Python's :mod:`faulthandler` to write every thread's stack to ``$ZC_STACK_FILE`` once the cell
has run ``$ZC_CELL_STACK_AFTER`` seconds (a little under the classroom's cell timeout); the cell's end disarms it.
``SIGUSR1`` writes the stacks at once (the classroom sends it to a kernel it finds stalled). Not used by lessons.
"""

from __future__ import annotations

import faulthandler
import os
import signal
from typing import Any, TextIO

__all__ = ["install", "STACK_FILE", "STACK_AFTER"]

STACK_FILE = "ZC_STACK_FILE"
STACK_AFTER = "ZC_CELL_STACK_AFTER"
_file: TextIO | None = None


def _arm(*_: Any) -> None:
    seconds = float(os.environ.get(STACK_AFTER, "0") or 0)
    if _file is not None and seconds > 0:
        faulthandler.dump_traceback_later(seconds, repeat=False, file=_file, exit=False)


def _disarm(*_: Any) -> None:
    faulthandler.cancel_dump_traceback_later()


def install(shell: Any = None) -> bool:
    """Arm the watchdog around every cell of this IPython kernel; True when ``$ZC_STACK_FILE`` names a file."""
    global _file
    path = os.environ.get(STACK_FILE)
    if not path:
        return False
    _file = open(path, "a", buffering=1)
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is not None:
        shell.events.register("pre_run_cell", _arm)
        shell.events.register("post_run_cell", _disarm)
    faulthandler.register(signal.SIGUSR1, file=_file, all_threads=True)
    return True

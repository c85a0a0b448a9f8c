"""``%%linux_only``: run a notebook cell only where Linux's /proc exists (pin-host-memory and map-pages-on-the-cpu).

On macOS and Windows there is no /proc/self/pagemap, maps or status, so the cells that read them are
marked ``%%linux_only``: there the cell is skipped with a sentence that says why, and the lesson goes on
with the view recorded on the Linux GPU machine. On Linux the cell runs exactly as written.
:func:`helpers.course.start` registers the magic in every lesson's first cell.
"""

from __future__ import annotations

from typing import Any

from ..memory import pages

SKIPPED = ("Skipped: this cell reads Linux's /proc ({root} is missing here; macOS and Windows have none). "
           "The lesson goes on with the page tables recorded on the Linux GPU machine.")


def run_cell(cell: str, namespace: dict[str, Any]) -> str | None:
    """Run ``cell`` in ``namespace`` where /proc exists and return None; else return the sentence saying it was skipped."""
    if not pages.proc_available():
        return SKIPPED.format(root=pages.proc_root())
    exec(compile(cell, "<linux_only cell>", "exec"), namespace)  # noqa: S102 - the notebook's own cell
    return None


def register(shell: Any = None) -> bool:
    """Register ``%%linux_only`` in the running IPython (no-op outside IPython); True if registered."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False

    def linux_only(line: str, cell: str) -> None:
        skipped = run_cell(cell, shell.user_ns)
        if skipped:
            print(skipped)

    shell.register_magic_function(linux_only, magic_kind="cell", magic_name="linux_only")
    return True

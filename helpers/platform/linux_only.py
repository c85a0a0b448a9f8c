"""``%%linux_only``: run a notebook cell only where Linux's /proc exists (pin-host-memory and map-pages-on-the-cpu).

On macOS and Windows there is no /proc/self/pagemap, maps or status, so the cells that read them are
marked ``%%linux_only``: there the cell is skipped with a sentence that says why, and the lesson goes on
with the view recorded on the Linux GPU machine. On Linux the cell runs exactly as written, and, as in any cell,
the value of its last expression is shown.
:func:`helpers.course.start` registers the magic in every lesson's first cell.
"""

from __future__ import annotations

import ast
from typing import Any

from ..memory import pages

SKIPPED = ("Skipped: this cell reads Linux's /proc ({root} is missing here; macOS and Windows have none). "
           "The lesson goes on with the page tables recorded on the Linux GPU machine.")


def evaluate(cell: str, namespace: dict[str, Any]) -> tuple[str | None, Any]:
    """Run ``cell`` in ``namespace`` where /proc exists: (None, the value of its last expression, or None); else
    (the sentence saying it was skipped, None), with the names the cell assigns set to None, so a later cell may
    pass them on (map-pages-on-the-cpu's prediction)."""
    if not pages.proc_available():
        for node in ast.walk(ast.parse(cell)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and not node.id.startswith("_"):
                namespace.setdefault(node.id, None)
        return SKIPPED.format(root=pages.proc_root()), None
    tree = ast.parse(cell)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<linux_only cell>", "exec"), namespace)  # noqa: S102 - the notebook's own cell
    if last is None:
        return None, None
    return None, eval(compile(ast.Expression(last.value), "<linux_only cell>", "eval"), namespace)  # noqa: S307


def run_cell(cell: str, namespace: dict[str, Any]) -> str | None:
    """Run ``cell`` in ``namespace`` where /proc exists and return None; else return the sentence saying it was skipped."""
    return evaluate(cell, namespace)[0]


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

    def linux_only(line: str, cell: str) -> Any:
        skipped, value = evaluate(cell, shell.user_ns)
        if skipped:
            print(skipped)
        return value  # shown like a cell's last expression

    shell.register_magic_function(linux_only, magic_kind="cell", magic_name="linux_only")
    return True

"""Keep `git status` clean when JupyterLab saves a lesson with its outputs (`make lab`'s post-save hook).

The nbstripout filter that `make setup` installs makes git compare notebooks without their
outputs. But git reports a file whose size differs from the one recorded in its index as
modified before it runs any filter, so a saved run still shows in `git status` (and blocks a
`git pull`) although `git diff` is empty. After each save this hook asks git for the saved
notebook's filtered content; when it equals the index's, it refreshes the index entry (as
`git add` would, staging nothing). A notebook the learner really changed is left alone.
Not used by the lessons themselves.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60)


def refresh_after_save(model: Any = None, os_path: str = "", contents_manager: Any = None, **_: Any) -> bool:
    """Jupyter's ``ContentsManager.post_save_hook``: True when the saved notebook's index entry was refreshed.

    Never raises: a failed check must not turn a save into an error.
    """
    path = Path(os_path)
    if path.suffix != ".ipynb" or not path.is_file() or not shutil.which("git"):
        return False
    try:
        folder, name = path.parent, path.name
        if _git(folder, "config", "--get", "filter.nbstripout.clean").returncode != 0:
            return False  # without the filter, outputs are real changes
        listed = _git(folder, "ls-files", "--stage", "--", name)
        if listed.returncode != 0 or not listed.stdout.strip():
            return False  # not tracked
        indexed = listed.stdout.split()[1]
        filtered = _git(folder, "hash-object", "--", name)  # runs the clean filter, as `git add` would
        if filtered.returncode != 0 or filtered.stdout.strip() != indexed:
            return False
        return _git(folder, "update-index", "-q", "--", name).returncode == 0
    except (OSError, subprocess.SubprocessError, IndexError):
        return False

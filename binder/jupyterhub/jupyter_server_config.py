# Jupyter server configuration for a learner of the zero-copy course on a JupyterHub (instructor guide,
# "Accounts and serving"): after each save, git's index is refreshed as `make lab` does, so a lesson run and
# saved with its outputs leaves `git status` clean (helpers/tools/notebook_git.py; the clone needs the notebook
# filter, `.ci/git-filter install "$(command -v python)"`, which values.yaml's postStart runs).
#
# Install it where the learner's server reads its configuration, e.g. in the single-user image as
# /usr/local/etc/jupyter/jupyter_server_config.py (values.yaml mounts it there), or as
# ~/.jupyter/jupyter_server_config.py of each account on The Littlest JupyterHub.
import importlib.util
import os
from pathlib import Path


def _course_hook():
    """The course's post-save hook: from the installed course, else from the clone at $ZC_COURSE_DIR."""
    try:
        from helpers.tools.notebook_git import refresh_after_save
        return refresh_after_save
    except ImportError:
        clone = Path(os.environ.get("ZC_COURSE_DIR") or Path.home() / "zero-copy-course")
        source = clone / "helpers" / "tools" / "notebook_git.py"  # standard library only
        if not source.is_file():
            return None
        spec = importlib.util.spec_from_file_location("zero_copy_course_notebook_git", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.refresh_after_save


_hook = _course_hook()
if _hook is not None:
    c = get_config()  # noqa: F821 (given by Jupyter when it loads this file)
    c.FileContentsManager.post_save_hook = _hook

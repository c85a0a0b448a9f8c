"""Set the course up on Google Colab, or on any fresh machine, in the Python that runs this (README: 'On Colab').

Run it before the course is installed, as a script (it needs only the standard library)::

    %run /content/zero-copy-course/helpers/tools/colab.py /content/zero-copy-course     # in a Colab cell
    python3 helpers/tools/colab.py .                                                    # in a terminal

It puts the CUDA toolkit's ``bin/`` on PATH where ``nvcc`` is not on it yet (Colab installs CUDA in
/usr/local/cuda), decides live or replay with the repository's ``.ci/detect-gpu``, installs the course
editable (``pip install -e``) with PyCUDA, which pip builds from its source package with nvcc, when live,
and without it otherwise; if PyCUDA fails to build, the course is installed for replay and says why.
pip reads ``PIP_FIND_LINKS`` and ``PIP_NO_INDEX`` from the environment, so an offline machine can
install from a local folder of packages. Under IPython (``%run``) it also makes the fresh install
importable in the running kernel.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

CUDA_BIN_CANDIDATES = ("/usr/local/cuda/bin",)


def cuda_on_path(environ: dict[str, str] | None = None, candidates: tuple[str, ...] = CUDA_BIN_CANDIDATES) -> str | None:
    """Put the first candidate folder holding ``nvcc`` on PATH when nvcc is not found yet; return it, or None."""
    environ = os.environ if environ is None else environ
    if shutil.which("nvcc", path=environ.get("PATH", "")):
        return None
    for folder in candidates:
        if (Path(folder) / "nvcc").is_file():
            environ["PATH"] = folder + os.pathsep + environ.get("PATH", "")
            return folder
    return None


def course_folder(repo: str, target: Path) -> Path:
    """The course's folder: ``repo`` itself when it is a local folder, else a clone of it in ``target``."""
    local = Path(repo).expanduser()
    if local.is_dir():
        if not (local / "pyproject.toml").is_file():
            raise SystemExit(f"{local} is a folder but not the course (no pyproject.toml in it).")
        return local.resolve()
    if (target / "pyproject.toml").is_file():
        return target.resolve()
    if shutil.which("git") is None:
        raise SystemExit("git is needed to fetch the course from a URL; install it or pass a local folder.")
    done = subprocess.run(["git", "clone", "--depth", "1", repo, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git clone {repo} failed:\n{done.stderr.strip()}\nCheck REPO_URL.")
    return target.resolve()


def detect(course: Path) -> tuple[str, str]:
    """``("live" | "replay", why)`` from the course's ``.ci/detect-gpu``."""
    script = course / ".ci" / "detect-gpu"
    mode = subprocess.run(["bash", str(script)], capture_output=True, text=True).stdout.strip() or "replay"
    why = subprocess.run(["bash", str(script), "--reason"], capture_output=True, text=True).stdout.strip()
    return mode, why


def _pip(python: str, course: Path, extras: str) -> subprocess.CompletedProcess[str]:
    spec = f"{course}[{extras}]" if extras else str(course)
    return subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", spec],
                          capture_output=True, text=True)


def _refresh_imports() -> None:
    """Let the running interpreter see packages pip just installed (editable installs use .pth files)."""
    for folder in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        site.addsitedir(folder)
    importlib.invalidate_caches()


def setup(repo: str, target: str | os.PathLike[str] = "/content/zero-copy-course", python: str = sys.executable,
          extras: str = "") -> dict[str, Any]:
    """Install the course from ``repo`` (a URL or a local folder) into ``python``'s environment; return what happened.

    ``extras`` adds pyproject extras beside ``gpu`` (e.g. ``"test"`` to run the lessons under nbval).
    """
    added = cuda_on_path()
    course = course_folder(repo, Path(target))
    mode, why = detect(course)
    steps: list[str] = [f"nvcc: {'added ' + added + ' to PATH' if added else shutil.which('nvcc') or 'not found'}",
                        f".ci/detect-gpu: {mode} ({why})"]
    installed_gpu = False
    if mode == "live":
        done = _pip(python, course, ",".join(filter(None, ["gpu", extras])))
        if done.returncode == 0:
            installed_gpu = True
            steps.append("installed the course with PyCUDA (built from its source package with nvcc)")
        else:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
            steps.append(f"PyCUDA did not install, so the course will replay; pip said:\n{tail}")
    if not installed_gpu:
        done = _pip(python, course, extras)
        if done.returncode != 0:
            raise SystemExit(f"pip install -e {course} failed:\n{(done.stderr or done.stdout).strip()[-2000:]}")
        steps.append("installed the course for replay (recorded H200 measurements)")
    if Path(python).resolve() == Path(sys.executable).resolve():
        _refresh_imports()
    return {"course": str(course), "mode": "live" if installed_gpu else "replay", "detect_gpu": mode,
            "reason": why, "cuda_bin_added": added, "steps": steps}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="helpers/tools/colab.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="the course's repository URL, or a local folder holding it")
    parser.add_argument("--target", default="/content/zero-copy-course", help="where to clone a URL to")
    parser.add_argument("--extras", default="", help="pyproject extras to add, e.g. test")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    args = parser.parse_args(argv)
    result = setup(args.repo, args.target, extras=args.extras)
    print(json.dumps(result, indent=1) if args.json else "\n".join(result["steps"])
          + f"\nThe course is set up in {result['course']} ({result['mode']} mode).")
    return 0


if __name__ == "__main__":
    main()

"""Launch where the learner is: a fresh environment set up as Binder and Colab do runs lessons 00 and 06 in replay.

Binder builds binder/environment.yml (the course's dependencies, JupyterLab, a compiler) and runs binder/postBuild
(``pip install -e .``); Colab's runtime has Python with a Jupyter kernel, and the README's set-up cell runs
helpers/tools/colab.py, which pip-installs the course. So a new virtual environment gets ipykernel (the runtime's
kernel), then exactly ``python helpers/tools/colab.py REPO`` and ``binder/postBuild``; nothing from this checkout's
.venv. Its kernel runs lesson 00 and the measuring lesson 06 top to bottom in replay, and their figures carry
alt text.

It creates an environment and installs packages (about a minute, with pip's cache), so it runs under
``make test-launch`` (ZC_LAUNCH_TESTS=1), which .ci/run and the GitHub workflow call; ``make test`` skips it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ("00-start-here", "06-measure-bandwidth")

pytestmark = pytest.mark.skipif(os.environ.get("ZC_LAUNCH_TESTS", "") in ("", "0"),
                                reason="creates a fresh environment (about a minute): run `make test-launch`")


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, Path]:
    """A virtual environment set up as Colab's cell and Binder's postBuild do, and a kernelspec for it."""
    tmp = tmp_path_factory.mktemp("launch")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(tmp / "venv")], env=env)
    python = tmp / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "ipykernel"], env=env)
    setup = json.loads(_run([str(python), str(ROOT / "helpers" / "tools" / "colab.py"), str(ROOT), "--json",
                             "--target", str(tmp / "clone")], env=env).stdout)
    # Binder's postBuild, run as repo2docker does: from the repository's root, with the environment's Python first
    binder = dict(env, PATH=f"{python.parent}{os.pathsep}{env.get('PATH', '')}", NB_PYTHON_PREFIX=str(tmp / "venv"))
    _run(["bash", str(ROOT / "binder" / "postBuild")], env=binder, cwd=ROOT)
    _run([str(python), "-m", "ipykernel", "install", "--prefix", str(tmp / "kernel"), "--name", "zc-fresh"], env=env)
    installed = _run([str(python), "-m", "pip", "list", "--format=json"], env=env).stdout
    return {"python": python, "jupyter_path": tmp / "kernel" / "share" / "jupyter", "setup": setup,
            "installed": {p["name"].lower() for p in json.loads(installed)}}


def test_the_fresh_environment_holds_only_what_the_set_up_gives(fresh):
    assert (fresh["python"].parent.parent / "share/jupyter/lab/settings/overrides.json").is_file()  # postBuild ran
    assert fresh["setup"]["mode"] == "replay", fresh["setup"]
    assert "zero-copy-course" in fresh["installed"]
    for test_only in ("pytest", "nbval", "jupyterlab", "jupyter-book", "pycuda"):
        assert test_only not in fresh["installed"], f"{test_only} is in the fresh environment"


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_runs_in_the_fresh_environment(fresh, lesson, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    from helpers.display import alt_text

    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setenv("JUPYTER_PATH", str(fresh["jupyter_path"]))
    nb = nbformat.read(ROOT / "lessons" / f"{lesson}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.prefix)"))  # which Python ran the lesson
    NotebookClient(nb, kernel_name="zc-fresh", timeout=600,
                   resources={"metadata": {"path": str(ROOT / "lessons")}}).execute()
    first = next(c for c in nb.cells if c.cell_type == "code")
    # the session shows itself (zc.start(): Markdown and plain text), or an older lesson printed its mode
    text = "".join(o.get("text", "") + "".join(o.get("data", {}).get("text/plain", "")) for o in first.outputs)
    assert "replay" in text.lower(), text
    prefix = "".join(o.get("text", "") for o in nb.cells[-1].outputs).strip()
    assert Path(prefix).resolve() == fresh["python"].parent.parent.resolve(), prefix
    images = alt_text.image_outputs(nb)
    assert images, f"{lesson} drew no figure"
    assert all(alt_text.output_alt(out) for _, out in images), f"a figure of {lesson} has no alt text"

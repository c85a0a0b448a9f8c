"""The set-up's own checks: the nbstripout git filter (.ci/git-filter), the .venv repair check
(.ci/check-venv), and the pieces of `make book` and of `record`'s progress that need no build.

Tests of what is committed read git's copy (:func:`committed_bytes`), never the working copy: a learner who ran
and saved lesson 00 keeps its outputs on disk, and `make test` must still pass in that clone (issue 31)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from importlib.machinery import SourceFileLoader
from pathlib import Path

import nbformat
import pytest

from helpers.tools import book
from helpers.display import progress
from helpers.tools.notebook_git import refresh_after_save

ROOT = Path(__file__).resolve().parents[1]
LESSON = "00-start-here.ipynb"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def committed_bytes(root: Path, relative: str) -> bytes:
    """``relative`` as git holds it in ``root`` (the index's copy: the last commit, or what was staged, through the
    filter), not the working copy, which may hold a learner's saved outputs; the working copy where ``root`` is no
    git checkout or git does not track the file (a downloaded archive)."""
    if shutil.which("git"):
        shown = subprocess.run(["git", "-C", str(root), "show", f":{relative}"], capture_output=True)
        if shown.returncode == 0:
            return shown.stdout
    return (root / relative).read_bytes()


def copy_committed(root: Path, relative: str, destination: Path) -> None:
    """Write git's copy of ``relative`` (see :func:`committed_bytes`) to the same path under ``destination``."""
    target = destination / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(committed_bytes(root, relative))
    if (root / relative).stat().st_mode & 0o111:
        target.chmod(0o755)


def make_repo(folder: Path, root: Path = ROOT) -> Path:
    """A fresh git repository in ``folder`` holding the set-up scripts, .gitattributes and lesson 00 as committed in
    ``root``, committed."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    for relative in (".ci/git-filter", ".gitattributes", f"lessons/{LESSON}"):
        copy_committed(root, relative, folder)
    git(folder, "init", "-q")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lesson")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository holding the set-up scripts, .gitattributes and lesson 00, committed."""
    return make_repo(tmp_path)


def run_and_save(path: Path) -> None:
    """Execute the notebook in a fresh kernel and save it in place, outputs and all, as JupyterLab would."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)


def test_a_lesson_run_and_saved_leaves_git_clean_with_the_filter(repo):
    saved = repo / "lessons" / LESSON
    run_and_save(saved)
    assert any(c.get("outputs") for c in nbformat.read(saved, as_version=4).cells), "the run saved no outputs"
    assert git(repo, "status", "--porcelain") != "", "without the filter, a saved run should show as modified"

    out = subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "install", sys.executable],
                         capture_output=True, text=True, check=True).stdout
    assert "Installed nbstripout" in out
    assert git(repo, "diff", "--no-textconv") == "", "with the filter, git should see no change in content"
    # git still flags the file (its size changed) until the index is refreshed: make lab's post-save hook does it.
    assert refresh_after_save(os_path=str(saved)), "the post-save hook should refresh the unchanged lesson"
    assert git(repo, "status", "--porcelain") == "", "with the filter, git should see the lesson as committed"
    assert any(c.get("outputs") for c in nbformat.read(saved, as_version=4).cells), "the learner's outputs are kept"

    subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "uninstall"], check=True, capture_output=True)
    assert subprocess.run(["git", "-C", str(repo), "config", "--get", "filter.nbstripout.clean"]).returncode == 1


def test_the_install_sets_what_nbstripout_install_sets_and_needs_nbstripout(repo, tmp_path):
    """.ci/git-filter sets the filter's git config itself (starting nbstripout costs seconds): the same keys as
    `nbstripout --install`, its clean and textconv commands replaced; a Python without nbstripout is refused."""
    bare = tmp_path / "python-without-site-packages"
    bare.write_text(f"#!/bin/sh\nexec '{sys.executable}' -I -S \"$@\"\n")
    bare.chmod(0o755)
    refused = subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "install", str(bare)], capture_output=True,
                             text=True)
    assert refused.returncode != 0 and "nbstripout is not installed" in refused.stderr
    assert subprocess.run(["git", "-C", str(repo), "config", "--get", "filter.nbstripout.clean"]).returncode == 1

    def filter_config(where: Path) -> dict[str, str]:
        lines = git(where, "config", "--local", "--list").splitlines()
        return dict(line.split("=", 1) for line in lines if line.startswith(("filter.nbstripout.", "diff.ipynb.")))

    subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "install", sys.executable], check=True,
                   capture_output=True)
    ours = filter_config(repo)
    theirs_repo = tmp_path / "theirs"
    shutil.copytree(repo, theirs_repo, ignore=shutil.ignore_patterns(".git"))
    git(theirs_repo, "init", "-q")
    subprocess.run([sys.executable, "-m", "nbstripout", "--install", "--attributes", ".gitattributes"], check=True,
                   capture_output=True, cwd=theirs_repo)
    theirs = filter_config(theirs_repo)
    replaced = {"filter.nbstripout.clean", "filter.nbstripout.extrakeys", "diff.ipynb.textconv"}
    assert {k: v for k, v in ours.items() if k not in replaced} == {k: v for k, v in theirs.items() if k not in replaced}
    assert set(theirs) <= set(ours)
    assert (repo / ".gitattributes").read_text() == (theirs_repo / ".gitattributes").read_text()


def test_the_post_save_hook_leaves_a_real_change_alone(repo):
    subprocess.run(["bash", str(repo / ".ci" / "git-filter"), "install", sys.executable], check=True,
                   capture_output=True)
    saved = repo / "lessons" / LESSON
    nb = nbformat.read(saved, as_version=4)
    nb.cells[1].source += "\nprint('my own line')"
    nbformat.write(nb, saved)
    assert not refresh_after_save(os_path=str(saved))
    assert git(repo, "status", "--porcelain") == " M lessons/" + LESSON + "\n"
    assert git(repo, "diff", "--cached") == "", "nothing may be staged behind the learner's back"


LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb"))


def filter_committed(root: Path, lessons: list[str], folder: Path) -> dict[str, tuple[str, str]]:
    """Each committed lesson of ``root`` (git's copy, written into ``folder``) and what git's filter gives back for
    it, by name: one run of the filter's command (what .ci/git-filter installs, with the metadata keys it strips)
    over all the lessons, not one per lesson (each Python start that imports nbformat costs seconds)."""
    extrakeys = re.findall(r"metadata\.language_info[.a-z_]*", (root / ".ci" / "git-filter").read_text())
    assert extrakeys, "could not read the metadata keys .ci/git-filter strips"
    texts = {name: committed_bytes(root, f"lessons/{name}").decode("utf-8") for name in lessons}
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    stripped = subprocess.run([sys.executable, "-m", "nbstripout", "--keep-id", "-t", "--extra-keys", " ".join(extrakeys),
                               *lessons], capture_output=True, text=True, check=True, cwd=folder).stdout
    # -t writes each notebook in turn, as nbformat does: a JSON object whose closing brace alone ends a line
    parts = [part + "\n}\n" for part in stripped.split("\n}\n")[:-1]]
    assert len(parts) == len(lessons) and "".join(parts) == stripped, "could not split the filter's output per lesson"
    return {name: (texts[name], part) for name, part in zip(lessons, parts)}


@pytest.fixture(scope="module")
def filtered_lessons(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Every committed lesson and what git's filter gives back for it (:func:`filter_committed`)."""
    return filter_committed(ROOT, LESSONS, tmp_path_factory.mktemp("committed"))


@pytest.fixture(scope="module")
def kernel_display_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager().get_kernel_spec("python3").display_name


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_lesson_passes_the_filter_unchanged(lesson, filtered_lessons, kernel_display_name):
    """Once a learner saves the lesson, git compares the filter's output with the committed file:
    they must be equal, or a clean run shows as a change."""
    text, filtered = filtered_lessons[lesson]
    nb = json.loads(text)
    problems = []
    no_id = sum("id" not in c for c in nb["cells"])
    if no_id:
        problems.append(f"{no_id} cells have no id (the filter would give them random ones; "
                        f"`jupyter nbconvert --clear-output --inplace lessons/{lesson}` adds them)")
    if nb["metadata"].get("kernelspec", {}).get("display_name") != kernel_display_name:
        problems.append(f"its kernelspec display_name is {nb['metadata']['kernelspec'].get('display_name')!r}, "
                        f"where JupyterLab saves {kernel_display_name!r}")
    if problems:
        pytest.skip(f"{lesson}: {'; '.join(problems)}: once saved in JupyterLab it shows as modified; "
                    "the lesson's owner should fix its metadata")
    assert filtered == text, f"nbstripout changes the committed {lesson}: clear it and commit it again"


# --- .ci/check-venv -----------------------------------------------------------------------

def _load_check_venv():
    import importlib.util

    loader = SourceFileLoader("check_venv", str(ROOT / ".ci" / "check-venv"))
    spec = importlib.util.spec_from_loader("check_venv", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


check_venv = _load_check_venv()


class FakeDist:
    def __init__(self, name: str, version: str, requires: list[str]) -> None:
        self.version, self.requires, self.metadata = version, requires, {"Name": name}


def lookup_from(dists: dict[str, FakeDist]):
    def lookup(name: str) -> FakeDist:
        try:
            return dists[name.lower()]
        except KeyError:
            raise metadata.PackageNotFoundError(name) from None
    return lookup


COURSE = FakeDist("zero-copy-course", "0.1", ["numpy>=1.24", 'nbval>=0.11; extra == "test"',
                                               'pycuda>=2024.1; extra == "gpu"'])


def test_check_venv_finds_a_missing_extra_package():
    dists = {"zero-copy-course": COURSE, "numpy": FakeDist("numpy", "2.0", [])}
    assert check_venv.problems(["test"], lookup=lookup_from(dists)) == [
        "nbval is not installed (needed by zero-copy-course)"]
    dists["nbval"] = FakeDist("nbval", "0.11.0", ["pytest>=7"])
    assert check_venv.problems(["test"], lookup=lookup_from(dists)) == [
        "pytest is not installed (needed by nbval)"]
    dists["pytest"] = FakeDist("pytest", "8.0", [])
    assert check_venv.problems(["test"], lookup=lookup_from(dists)) == []


def test_check_venv_finds_an_old_version_and_ignores_other_extras():
    dists = {"zero-copy-course": COURSE, "numpy": FakeDist("numpy", "1.20", [])}
    assert check_venv.problems([], lookup=lookup_from(dists)) == [
        "numpy 1.20 does not satisfy numpy>=1.24 (needed by zero-copy-course)"]


def test_check_venv_passes_on_this_environment():
    """The extras `make test` set up (ZC_SETUP_EXTRAS, from the Makefile); lab and test when pytest runs alone."""
    extras = os.environ.get("ZC_SETUP_EXTRAS", "lab,test").split(",")
    assert check_venv.problems(extras) == []


# --- make book's pieces, and record's progress --------------------------------------------


def test_lesson_minutes_and_titles_come_from_the_lessons():
    paths = book.lesson_paths()
    assert [p.name[:2] for p in paths] == sorted(p.name[:2] for p in paths)
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        minutes = book.lesson_minutes(nb, path.name)
        assert f"{minutes} min" in "".join(c.source for c in nb.cells), path.name
        assert book.lesson_title(nb).startswith(path.name[:2]), path.name


def test_a_lesson_without_a_time_is_refused():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 99 · A lesson\n\nNo time given.")])
    with pytest.raises(book.BookError, match="Time to complete"):
        book.lesson_minutes(nb, "99-x.ipynb")


def test_the_book_index_lists_lessons_in_order_with_their_times_and_the_data():
    rows = [("00-a", "00 · A", 10), ("01-b", "01 · B", 25)]
    index = book._index(rows)
    assert index.index("lessons/00-a.ipynb") < index.index("lessons/01-b.ipynb")
    assert "| 10 min |" in index and "| 25 min |" in index and "35 minutes" in index
    from helpers import records

    _, path = records.reference_record()
    assert f"data/{path.name}" in index


def test_the_book_config_fetches_nothing():
    config = book._config("t")
    assert "intersphinx_mapping: {}" in config and 'execute_notebooks: "off"' in config


def test_record_progress_weighs_experiments_by_their_recorded_time():
    from helpers import records

    record, _ = records.reference_record()
    recorded = record["provenance"]["experiment_wall_seconds"]
    name = max(recorded, key=recorded.get)
    weights = progress.expected_seconds([name, "not-an-experiment"])
    assert weights[name] == pytest.approx(recorded[name])
    assert weights["not-an-experiment"] > 0


def test_help_lists_every_command_with_one_line():
    out = subprocess.run([sys.executable, "-m", "helpers", "--help"], capture_output=True, text=True, check=True).stdout
    commands = out.split("{", 1)[1].split("}", 1)[0].split(",")
    assert {"record", "summary", "targets", "model", "book"} <= set(commands)
    for name in commands:
        described = [line for line in out.splitlines() if line.startswith(f"{name} ")]
        assert described, f"the help's summary has no line for {name!r}"
        listed = [line for line in out.splitlines() if line.strip().startswith(name + " ")]
        assert len(listed) >= 2, f"argparse's list has no help text for {name!r}"


def test_the_book_carries_the_pages_the_lessons_link_to():
    names = [p.name for p in book.companion_pages()]
    assert "glossary.md" in names and "instructor-guide.md" in names
    toc = book._toc(["00-start-here", "glossary"])
    assert "file: lessons/glossary" in toc


def test_the_filter_works_from_a_clone_path_with_spaces_and_quotes(tmp_path: Path) -> None:
    """Issue 20: git runs the filter command through sh; the clone's (and the venv's) path goes in quoted,
    so spaces and quotes stay one word and `$(...)` in a folder name runs nothing."""
    filter_from_an_odd_path(tmp_path, ROOT)


def filter_from_an_odd_path(tmp_path: Path, root: Path) -> None:
    """The body of the test above, for the set-up files as committed in ``root``."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    odd = tmp_path / "my course's \"copy\" $(touch PWNED) `touch PWNED2`"
    odd.mkdir()
    (odd / ".ci").mkdir()
    (odd / "lessons").mkdir()
    (odd / "venv bin").mkdir()
    python = odd / "venv bin" / "python"
    python.write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")  # the venv's python, at an odd path
    python.chmod(0o755)
    for relative in (".ci/git-filter", ".gitattributes", f"lessons/{LESSON}"):
        copy_committed(root, relative, odd)
    git(odd, "init", "-q")
    git(odd, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(odd, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lesson")
    done = subprocess.run(["bash", str(odd / ".ci" / "git-filter"), "install", str(python)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    saved = odd / "lessons" / LESSON
    nb = nbformat.read(saved, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a saved output\n")]
    code.execution_count = 1
    nbformat.write(nb, saved)
    diff = subprocess.run(["git", "-C", str(odd), "diff", "--no-textconv"], capture_output=True, text=True)
    assert diff.returncode == 0 and diff.stdout == "", diff.stderr  # the filter ran and stripped the output
    assert not list(tmp_path.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*")), "a folder name ran a command"


def test_git_pull_after_a_saved_run_does_what_the_readme_says(repo: Path, tmp_path: Path) -> None:
    """Issue 20, README 'Clean git': a pull keeps the outputs of a lesson it does not change, and replaces a
    lesson it changes with the new version, without the learner's outputs and without a conflict."""
    pull_after_a_saved_run(repo, tmp_path, ROOT)


def pull_after_a_saved_run(repo: Path, tmp_path: Path, root: Path) -> None:
    """The body of the test above: ``repo`` from :func:`make_repo`, the README as committed in ``root``."""
    readme = committed_bytes(root, "README.md").decode("utf-8")
    assert "replaced by the new version, without your outputs" in " ".join(readme.split())
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / "lessons" / "other.ipynb").write_bytes((repo / "lessons" / LESSON).read_bytes())
    git(repo, *ident, "add", ".")
    git(repo, *ident, "commit", "-qm", "two lessons")
    clone = tmp_path / "learner"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    subprocess.run(["bash", str(clone / ".ci" / "git-filter"), "install", sys.executable], check=True,
                   capture_output=True)

    def save_output(path: Path, text: str) -> None:
        nb = nbformat.read(path, as_version=4)
        code = next(c for c in nb.cells if c.cell_type == "code")
        code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nbformat.write(nb, path)

    def outputs(path: Path) -> list:
        return [o for c in nbformat.read(path, as_version=4).cells for o in c.get("outputs", [])]

    for name in (LESSON, "other.ipynb"):
        save_output(clone / "lessons" / name, "my timing 12.3 GB/s\n")
    git(clone, "add", "lessons")  # refreshes the index, stages nothing (what make lab's hook does)
    assert git(clone, "status", "--porcelain") == ""
    nb = nbformat.read(repo / "lessons" / LESSON, as_version=4)  # upstream changes one lesson
    nb.cells[0].source += "\n\nA new sentence."
    nbformat.write(nb, repo / "lessons" / LESSON)
    git(repo, *ident, "commit", "-qam", "edit lesson")
    pulled = subprocess.run(["git", "-C", str(clone), *ident, "pull", "-q", "--no-rebase"], capture_output=True,
                            text=True)
    assert pulled.returncode == 0, pulled.stderr  # no conflict
    assert "A new sentence." in (clone / "lessons" / LESSON).read_text()
    assert outputs(clone / "lessons" / LESSON) == [], "the changed lesson is the new version, outputs gone"
    assert outputs(clone / "lessons" / "other.ipynb"), "the unchanged lesson keeps the learner's outputs"


def save_a_run(path: Path) -> None:
    """What a learner's run and save leaves in a lesson: outputs and execution counts in its code cells, and the
    kernel's language_info in its metadata (faster than running it; the run itself is tested above)."""
    nb = nbformat.read(path, as_version=4)
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"my run, cell {count}\n")]
    nb.metadata["language_info"] = {"name": "python", "version": sys.version.split()[0], "mimetype": "text/x-python"}
    nbformat.write(nb, path)


def test_the_committed_copy_tests_pass_in_a_clone_where_lesson_00_was_run_and_saved(tmp_path: Path) -> None:
    """Issue 31: a learner runs lesson 00, saves it, then runs `make test`. The tests of what is committed read git's
    copy, so they pass in that clone; read from the working copy, they would see the learner's outputs."""
    clone = tmp_path / "learner"
    for relative in (".ci/git-filter", ".gitattributes", f"lessons/{LESSON}", "README.md"):
        copy_committed(ROOT, relative, clone)
    git(clone, "init", "-q")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the course")
    subprocess.run(["bash", str(clone / ".ci" / "git-filter"), "install", sys.executable], check=True,
                   capture_output=True)
    saved = clone / "lessons" / LESSON
    save_a_run(saved)
    assert any(c.get("outputs") for c in nbformat.read(saved, as_version=4).cells), "the saved run has no outputs"
    assert git(clone, "diff", "--no-textconv") == "", "the filter should hide the saved outputs from git"

    committed = committed_bytes(clone, f"lessons/{LESSON}")
    assert committed == subprocess.run(["git", "-C", str(clone), "show", f"HEAD:lessons/{LESSON}"],
                                       capture_output=True, check=True).stdout
    assert not any(c.get("outputs") for c in json.loads(committed)["cells"])
    (tmp_path / "filtered").mkdir()
    text, filtered = filter_committed(clone, [LESSON], tmp_path / "filtered")[LESSON]
    assert filtered == text, "the committed-lesson test would fail in the learner's clone"
    working = tmp_path / "working"   # no git checkout: committed_bytes falls back to the working copy
    for relative in (".ci/git-filter", f"lessons/{LESSON}"):
        copy_committed(clone, relative, working)
    shutil.copy(saved, working / "lessons" / LESSON)
    _, from_working = filter_committed(working, [LESSON], tmp_path / "filtered")[LESSON]
    assert from_working != saved.read_text(encoding="utf-8"), "reading the working copy should have failed here"

    copied = make_repo(tmp_path / "repo", clone) / "lessons" / LESSON
    assert copied.read_bytes() == committed, "the scratch repositories start from the committed lesson"
    for folder in ("odd", "pull"):
        (tmp_path / folder).mkdir()
    filter_from_an_odd_path(tmp_path / "odd", clone)
    pull_after_a_saved_run(make_repo(tmp_path / "upstream", clone), tmp_path / "pull", clone)


def test_make_setup_is_named_in_the_readme_and_in_make_help() -> None:
    """Issue 31: `make setup` sets up without opening the lab; the README's Start here and `make help` name it."""
    start = (ROOT / "README.md").read_text(encoding="utf-8").split("## Start here", 1)[1].split("\n## ", 1)[0]
    assert "`make setup`" in start, "the README's Start here should name make setup"
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    shown = subprocess.run(["make", "-s", "-C", str(ROOT), "help"], capture_output=True, text=True, check=True).stdout
    assert any(line.split()[:2] == ["make", "setup"] for line in shown.splitlines()), shown

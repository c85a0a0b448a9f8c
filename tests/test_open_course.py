"""The files an open course needs (issue 24): licences, citation, contribution, CI workflows, launch buttons.

CITATION.cff, the workflows and the issue forms are validated offline against the JSON schemas check-jsonschema
ships (Citation File Format 1.2.0, GitHub workflows, GitHub issue forms); the workflows cannot run here, so the
tests also check that they run the README's commands. Each check is shown to fail on a broken example.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tools.lint import schema_errors, schemas, yaml_load

pytest.importorskip("check_jsonschema", reason="the test extra's check-jsonschema is needed: run `make setup`")

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LESSONS = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]-*.ipynb"))
SLUG = "OWNER/zero-copy-course"


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    """The check-jsonschema command itself, as a contributor would run it (no network: vendored schemas)."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------- licences and citation
def test_code_is_mit_and_text_cc_by_and_the_readme_says_which_is_which():
    code = (ROOT / "LICENSE").read_text(encoding="utf-8")
    text = (ROOT / "LICENSE-CONTENT").read_text(encoding="utf-8")
    assert code.startswith("MIT License") and "Permission is hereby granted, free of charge" in code
    assert "Attribution 4.0 International" in text and "Section 1 -- Definitions." in text  # the legal code itself
    for licence in (code, text):
        assert "helpers/" in licence and "lessons" in licence  # each says what it covers
    assert "[MIT licence](LICENSE)" in README and "[LICENSE-CONTENT](LICENSE-CONTENT)" in README
    assert "CC BY 4.0" in README


def test_citation_cff_is_valid_cff_1_2():
    done = check_jsonschema("vendor.citation-file-format", ROOT / "CITATION.cff")
    assert done.returncode == 0, done.stdout + done.stderr
    assert schema_errors("vendor.citation-file-format", ROOT / "CITATION.cff") == []
    cff = yaml_load(ROOT / "CITATION.cff")
    assert cff["cff-version"] == "1.2.0"
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{cff["version"]}"' in project, "CITATION.cff's version differs from pyproject.toml's"
    assert cff["repository-code"] == f"https://github.com/{SLUG}"


def test_an_invalid_citation_file_is_refused(tmp_path):
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    broken = tmp_path / "CITATION.cff"
    broken.write_text(re.sub(r"(?ms)^authors:.*?(?=^version:)", "", text), encoding="utf-8")  # authors are required
    assert any("authors" in e for e in schema_errors("vendor.citation-file-format", broken))
    broken.write_text(text.replace("cff-version: 1.2.0", "cff-version: 9.9"), encoding="utf-8")
    assert schema_errors("vendor.citation-file-format", broken)


# --------------------------------------------------------------------------- contributing
def test_contributing_covers_set_up_tests_lessons_records_and_style():
    guide = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for heading in ("## Set up", "## Test", "## Add a lesson", "## Record a new GPU into data/", "## Style"):
        assert heading in guide
    for needed in ("make setup", "make test", "make lint", "helpers/tools/lesson_times.py", "helpers/platform/doctor.py",
                   "helpers/tools/book.py", "make record", "provenance", "CODE_OF_CONDUCT.md"):
        assert needed in guide, needed


def test_the_code_of_conduct_is_the_contributor_covenant_2_1():
    conduct = (ROOT / "CODE_OF_CONDUCT.md").read_text(encoding="utf-8")
    assert conduct.startswith("# Contributor Covenant Code of Conduct")
    assert "version 2.1" in conduct and "Community Impact Guidelines" in conduct
    assert "[INSERT" not in conduct  # the contact is filled in


def test_issue_templates_are_valid_issue_forms():
    forms = sorted((ROOT / ".github" / "ISSUE_TEMPLATE").glob("*.yml"))
    forms = [f for f in forms if f.name != "config.yml"]
    assert {f.stem for f in forms} == {"bug", "lesson-error", "gpu-record"}
    assert schema_errors("vendor.github-issue-forms", *forms) == []


# --------------------------------------------------------------------------- CI workflows
WORKFLOWS = ROOT / ".github" / "workflows"


def _steps(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])


def test_make_lint_checks_every_schema():
    assert schemas() == []


def test_workflows_are_valid_github_workflows():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.stem for f in files} == {"test", "book", "gpu"}
    assert schema_errors("vendor.github-workflows", *files) == []


def test_an_invalid_workflow_is_refused(tmp_path):
    text = (WORKFLOWS / "test.yml").read_text(encoding="utf-8")
    broken = tmp_path / "test.yml"
    broken.write_text(text.replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest"), encoding="utf-8")
    assert schema_errors("vendor.github-workflows", broken)
    broken.write_text(text.replace("  workflow_dispatch:", "  workflow_dispatched:"), encoding="utf-8")
    assert schema_errors("vendor.github-workflows", broken)


def test_the_workflows_run_the_readmes_commands():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test = yaml_load(WORKFLOWS / "test.yml")
    steps = _steps(test["jobs"]["test"])
    assert "make test\n" in steps + "\n" and "make lint" in steps and "make test-launch" in steps
    assert "make test" in README and "make lab" in README
    book = yaml_load(WORKFLOWS / "book.yml")
    assert "make book" in _steps(book["jobs"]["build"])
    assert "actions/upload-pages-artifact" in _steps(book["jobs"]["build"])
    assert "actions/deploy-pages" in _steps(book["jobs"]["deploy"])
    assert book["permissions"]["pages"] == "write" and book["permissions"]["id-token"] == "write"
    gpu = yaml_load(WORKFLOWS / "gpu.yml")
    assert set(gpu["on"]) == {"workflow_dispatch"}  # started by hand only
    job = gpu["jobs"]["test-gpu"]
    assert "self-hosted" in job["runs-on"] and "gpu" in job["runs-on"]
    assert "make test-gpu" in _steps(job)
    for target in ("test", "lint", "test-launch", "book", "test-gpu", "slides"):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"no make {target}"
    # actionlint (run in CI) is told the self-hosted runner's label
    assert "gpu" in yaml_load(ROOT / ".github" / "actionlint.yaml")["self-hosted-runner"]["labels"]


# --------------------------------------------------------------------------- badges and launch buttons
def test_the_readme_has_badges_for_ci_the_book_binder_and_licences():
    head = README.split("## Start here")[0]
    for needed in ("actions/workflows/test.yml/badge.svg", "actions/workflows/book.yml/badge.svg",
                   "mybinder.org/badge_logo.svg", "colab-badge.svg", "(LICENSE)", "(LICENSE-CONTENT)"):
        assert needed in head, needed


def test_every_lesson_has_a_colab_badge_and_binder_opens_lesson_00():
    for lesson in LESSONS:
        url = f"https://colab.research.google.com/github/{SLUG}/blob/main/lessons/{lesson}.ipynb"
        assert url in README, f"README.md: no Colab badge for {lesson}: run `python -m helpers sync`"
    assert f"https://mybinder.org/v2/gh/{SLUG}/HEAD?urlpath=lab/tree/lessons/00-start-here.ipynb" in README
    slugs = set(re.findall(r"github(?:\.com)?/([\w-]+/zero-copy-course)", README))
    assert slugs == {SLUG}, f"the README names several repositories: {slugs}"


def test_binder_builds_the_courses_packages_and_a_compiler():
    from test_environment_files import load_pyproject, parse_environment_yml, parse_spec, pyproject_requirements

    env = parse_environment_yml((ROOT / "binder" / "environment.yml").read_text(encoding="utf-8"))
    conda = dict(parse_spec(dep) for dep in env["dependencies"])
    conda.update(parse_spec(dep) for dep in env["pip"] if not dep.startswith("-"))  # PyPI-only packages
    project = load_pyproject()["project"]
    runtime = pyproject_requirements({"dependencies": project["dependencies"]})
    for name, floor in runtime.items():
        assert name in conda, f"binder/environment.yml lacks {name}, a dependency of the course (conda or its pip list)"
        assert conda[name] == floor, f"{name}: floor {conda[name]} in binder/environment.yml, {floor} in pyproject"
    assert "jupyterlab" in conda
    compiler = "g++" in (ROOT / "binder" / "apt.txt").read_text().split() or "cxx-compiler" in conda
    assert compiler, "Binder's environment needs a C++ compiler for the CPU backend"
    post = (ROOT / "binder" / "postBuild").read_text(encoding="utf-8")
    assert "pip install -e ." in post and (ROOT / "binder" / "postBuild").stat().st_mode & 0o111


def test_the_colab_set_up_cell_runs_helpers_colab():
    assert "%run {COURSE}/helpers/tools/colab.py {COURSE}" in README
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "colab-metadata"), "--check"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("section", ["## Launch in the browser: Binder and Colab", "## Contribute, cite and reuse"])
def test_the_readme_says_how_to_launch_contribute_cite_and_reuse(section):
    assert section in README

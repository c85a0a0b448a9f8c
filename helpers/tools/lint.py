"""``make lint``: spelling, internal links and anchors, the lessons' notebook metadata, and the schemas of the
citation, workflow and issue-form files.

    python -m helpers.tools.lint [--only spelling|links|metadata|schemas ...]

- spelling: codespell over the documentation, the lessons' cells (markdown and code, not outputs) and the code,
  with the project's word list ``.ci/codespell-words.txt`` (CUDA and PyCUDA names codespell takes for typos);
- links: every relative Markdown link in the README, the other top-level documents, ``data/README.md``,
  ``lessons/*.md`` and the lessons' markdown cells points to a file that exists, and its ``#anchor`` to a heading
  (GitHub's or JupyterLab's form of it) or an explicit ``<a id=...>`` / ``(label)=`` target in that file;
- metadata: each lesson is nbformat 4.5 or newer with unique cell ids, a Python 3 kernelspec, Colab's GPU
  request (``.ci/colab-metadata``), a ``# `` title in its first cell, and valid reveal.js slide types;
- schemas: CITATION.cff (Citation File Format 1.2), the GitHub workflows and the issue forms against the JSON
  schemas check-jsonschema ships (offline; CI also runs actionlint on the workflows).

Each check returns a list of problems (``path:line: what``); :func:`main` prints them and exits 1 if any.
Used by ``make lint`` and ``tests/test_lint.py``; not by the lessons.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from .. import lessons as course_lessons, paths

ROOT = paths.ROOT
WORDS = ROOT / ".ci" / "codespell-words.txt"
DOCUMENTS = ("README.md", "CONTRIBUTING.md", "CODE_OF_CONDUCT.md", "data/README.md")
CODE = ("helpers", "tests", ".ci", ".github", "binder", "Makefile", "pyproject.toml", "environment.yml")
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
_EXPLICIT = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']|^\(([^)\s]+)\)=\s*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def lessons(root: Path = ROOT) -> list[Path]:
    """The lessons' notebooks under ``root`` that exist, in course order (:mod:`helpers.lessons`)."""
    return [p for p in course_lessons.notebooks(root / "lessons") if p.exists()]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def markdown_text(path: Path) -> list[tuple[str, int]]:
    """(text, first line) blocks of a Markdown file or of a notebook's markdown cells (line = cell number)."""
    if path.suffix == ".ipynb":
        return [(_source(c), i + 1) for i, c in enumerate(_cells(path)) if c["cell_type"] == "markdown"]
    return [(path.read_text(encoding="utf-8"), 1)]


# --------------------------------------------------------------------------- spelling
def spelling(root: Path = ROOT) -> list[str]:
    """codespell's findings in the documents, the lessons' cells and the code (see the module)."""
    codespell = Path(sys.executable).with_name("codespell")
    command = [str(codespell)] if codespell.exists() else [sys.executable, "-m", "codespell_lib"]
    paths = [str(root / p) for p in (*DOCUMENTS, "LICENSE", *CODE) if (root / p).exists()]
    paths += [str(p) for p in (root / "lessons").glob("*.md")] + [str(p) for p in (root / "lessons" / "solutions").glob("*.py")]
    problems = []
    with tempfile.TemporaryDirectory(prefix="zc-lint-") as tmp:
        for lesson in lessons(root):  # cells only: outputs (base64 images) are not text to spell-check
            for i, cell in enumerate(_cells(lesson)):
                (Path(tmp) / f"{lesson.name}.cell{i + 1}").write_text(_source(cell), encoding="utf-8")
        done = subprocess.run([*command, "--ignore-words", str(WORDS), "--skip", "*.json,*.png,*.svg,*.pyc",
                               "--check-hidden", *paths, tmp], capture_output=True, text=True)
        if done.returncode not in (0, 65):  # 65: misspellings found
            return [f"codespell failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}; "
                    "install it with `make setup` (it is in the test extra)."]
        for line in done.stdout.splitlines():
            line = line.replace(tmp + "/", "lessons/").replace(str(root) + "/", "")
            problems.append(re.sub(r"\.ipynb\.cell(\d+):\d+:", r".ipynb: cell \1:", line))
    return problems


# --------------------------------------------------------------------------- links and anchors
def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"<[^>]+>|[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text, flags=re.UNICODE).replace(" ", "-")


def jupyter_anchor(heading: str) -> str:
    """JupyterLab's anchor of a heading: its text, spaces as hyphens."""
    return re.sub(r"<[^>]+>|[`*]", "", heading).strip().replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a link may name in ``path``: its headings (GitHub's and JupyterLab's form) and explicit ids."""
    found: set[str] = set()
    for text, _ in markdown_text(path):
        text = _FENCE.sub("", text)
        for _, heading in _HEADING.findall(text):
            found |= {github_anchor(heading), jupyter_anchor(heading)}
        for a, b in _EXPLICIT.findall(text):
            found.add(a or b)
    return found


def link_documents(root: Path = ROOT) -> list[Path]:
    docs = [root / p for p in (*DOCUMENTS, "README.zh-CN.md") if (root / p).exists()]   # and the Chinese twins
    pages = sorted((root / "lessons").glob("*.md")) + sorted((root / "lessons" / "zh").glob("*.md"))
    return docs + pages + lessons(root)


def links(root: Path = ROOT, documents: Iterable[Path] | None = None) -> list[str]:
    """Relative links whose file or anchor does not exist (see the module)."""
    problems = []
    for doc in documents if documents is not None else link_documents(root):
        own = None
        for text, line in markdown_text(doc):
            text = _FENCE.sub("", text)
            for target in _LINK.findall(text) + _REFERENCE.findall(text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto:, ...
                    continue
                where = f"{doc.relative_to(root)}:{'cell ' if doc.suffix == '.ipynb' else ''}{line}"
                file_part, _, anchor = target.partition("#")
                file = (doc.parent / file_part).resolve() if file_part else doc
                if file_part and not file.exists():
                    problems.append(f"{where}: link to {target}: no file {file_part} (relative to {doc.parent.name or '.'}/)")
                    continue
                if anchor and file.suffix in (".md", ".ipynb"):
                    names = anchors(file) if file != doc else (own := own if own is not None else anchors(doc))
                    if anchor not in names:
                        problems.append(f"{where}: link to {target}: no heading or id '{anchor}' in {file.name}")
    return problems


# --------------------------------------------------------------------------- notebook metadata
def notebook_metadata(root: Path = ROOT, paths: Iterable[Path] | None = None) -> list[str]:
    """What is wrong in the lessons' notebook-level and cell metadata (see the module)."""
    problems = []
    for path in paths if paths is not None else lessons(root):
        name = path.name
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            problems.append(f"{name}: not valid JSON ({exc}); restore it with `git checkout {path.name}`.")
            continue
        if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
            problems.append(f"{name}: nbformat {nb.get('nbformat')}.{nb.get('nbformat_minor')}; cell ids need 4.5 "
                            "(nbformat.validator.normalize, or save it from JupyterLab 4).")
        meta = nb.get("metadata", {})
        if meta.get("kernelspec", {}).get("name") != "python3":
            problems.append(f"{name}: kernelspec {meta.get('kernelspec', {}).get('name')!r}, expected 'python3'.")
        if meta.get("language_info", {}).get("name") != "python":
            problems.append(f"{name}: language_info.name is not 'python'.")
        if meta.get("accelerator") != "GPU" or "colab" not in meta:
            problems.append(f"{name}: no Colab GPU request (accelerator, colab); run .ci/colab-metadata.")
        cells = nb.get("cells", [])
        ids = [c.get("id") for c in cells]
        if None in ids or len(set(ids)) != len(ids):
            problems.append(f"{name}: cell ids missing or repeated.")
        first = next((c for c in cells if c.get("cell_type") == "markdown"), None)
        if first is None or not _source(first).lstrip().startswith("# "):
            problems.append(f"{name}: the first markdown cell must start with the '# ' title.")
        for i, cell in enumerate(cells):
            kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
            if kind is not None and kind not in SLIDE_TYPES:
                problems.append(f"{name}: cell {i + 1}: slide_type {kind!r} is not one of {sorted(SLIDE_TYPES)}.")
            tags = cell.get("metadata", {}).get("tags", [])
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                problems.append(f"{name}: cell {i + 1}: tags must be a list of strings.")
    return problems


# --------------------------------------------------------------------------- schemas
SCHEMAS = {  # check-jsonschema's vendored schema: the files it validates
    "citation-file-format": ("CITATION.cff",),
    "github-workflows": (".github/workflows/*.yml",),
    "github-issue-forms": (".github/ISSUE_TEMPLATE/*.yml",),  # every form; config.yml is not one (below)
    "github-issue-config": (".github/ISSUE_TEMPLATE/config.yml",),
}


def yaml_load(path: Path) -> object:
    """A YAML file, parsed as YAML 1.2 (``on:`` stays a string) by check-jsonschema's own parser."""
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def schema_errors(schema: str, *files: Path) -> list[str]:
    """Errors of each file against check-jsonschema's vendored schema ``schema`` (e.g. github-workflows)."""
    from importlib.resources import files as package_files

    import jsonschema

    name = schema.removeprefix("vendor.")
    document = json.loads(package_files("check_jsonschema.builtin_schemas.vendor").joinpath(f"{name}.json")
                          .read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(document)(document)
    return [f"{path.name}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
            for path in files for error in validator.iter_errors(yaml_load(path))]


def schemas(root: Path = ROOT) -> list[str]:
    """CITATION.cff, the workflows and the issue forms against their schemas (see the module)."""
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        return ["check-jsonschema is not installed: run `make setup` (it is in the test extra)."]
    problems = []
    for schema, patterns in SCHEMAS.items():
        files = sorted(f for pattern in patterns for f in root.glob(pattern)
                       if schema != "github-issue-forms" or f.name != "config.yml")
        if not files:
            problems.append(f"no file for the {schema} schema ({', '.join(patterns)})")
        problems += schema_errors(schema, *files)
    return problems


CHECKS: dict[str, Callable[[], list[str]]] = {"spelling": spelling, "links": links, "metadata": notebook_metadata,
                                              "schemas": schemas}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.tools.lint", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(CHECKS), help="run only these checks")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.only or CHECKS:
        problems = CHECKS[name]()
        print(f"{name}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
        for problem in problems:
            print(f"  {problem}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

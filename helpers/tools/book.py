"""Build the course's website: every lesson executed, rendered with Jupyter Book (``make book``).

The lessons are executed here (replay without a GPU, live with one) into copies under
``build/book-src/``, each with a note of the mode and the recorded data it shows; the
Jupyter Book configuration is generated beside them (nothing is fetched from the network),
and the site is written to ``build/book/`` (entry page ``build/book/index.html``).
Not used by the lessons themselves.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from .. import lessons as course_lessons, paths, records
from ..errors import CourseError
from ..mode import detect

_TIME = re.compile(r"Time to complete:\**\s*(?:about\s+)?(\d+)\s*min", re.IGNORECASE)


class BookError(CourseError):
    """The book could not be built; the message says why and what to do."""


def lesson_paths(lessons: Path | None = None) -> list[Path]:
    """The lessons, ``NN-name.ipynb``, in course order (:mod:`helpers.lessons`)."""
    folder = lessons or paths.LESSONS
    found = course_lessons.notebooks(folder)
    missing = [p.name for p in found if not p.exists()]
    if missing:
        raise BookError(f"no lesson {', '.join(missing)} in {folder}: run `make book` from a clone of the course.")
    return found


def lesson_title(nb: Any) -> str:
    """The text of the lesson's first ``# `` heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise BookError("a lesson has no title (a markdown line starting with '# ').")


def lesson_minutes(nb: Any, name: str = "lesson") -> int:
    """Minutes from the lesson's own "Time to complete: N minutes" line."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = _TIME.search(cell.source)
            if match:
                return int(match.group(1))
    raise BookError(f"{name} has no 'Time to complete: N minutes' line; add one to its introduction.")


def provenance_note() -> str:
    """Markdown saying how this build ran: mode, and the recorded data replayed (or kept as reference)."""
    mode = detect()
    built = time.strftime("%Y-%m-%d %H:%M %Z")
    try:
        record, path = records.reference_record()
    except records.RecordError as exc:
        data = f"No recorded reference could be loaded: {exc}"
    else:
        p = record["provenance"]
        data = (f"Recorded data: `data/{path.name}`, measured on an {p['gpu']} on {p['date'][:10]} "
                f"(driver {p['driver_version']}, CUDA {p['cuda_version']}, PyCUDA {p['pycuda_version']}, "
                f"command `{p['command']}`).")
        if not mode.live:
            data += " Every measurement on this page is a replay of it."
    return (f"```{{note}}\nThis page was executed on {built} in **{'live' if mode.live else 'replay'}** mode: "
            f"{mode.describe()}\n\n{data}\n```")


def execute(nb: Any, cwd: Path, on_cell: Callable[[], None] | None = None, timeout: int = 900) -> Any:
    """Run every cell of ``nb`` in a fresh kernel with ``cwd`` as working folder; keep widget state."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    def hook(**_: Any) -> None:
        if on_cell:
            on_cell()

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(cwd)}}, on_cell_executed=hook)
    try:
        client.execute()
    except CellExecutionError as exc:
        raise BookError(f"a cell failed while executing the lesson, so the book was not built:\n{exc}") from None
    return nb


def give_figures_alt_text(nb: Any, name: str = "lesson") -> int:
    """Give every figure of an executed lesson its alt text as an HTML image (``helpers.display.alt_text``); a figure
    without alt text stops the build, naming the cell. Returns the number of figures."""
    from ..display import alt_text

    missing = [index for index, output in alt_text.image_outputs(nb) if alt_text.output_alt(output) is None]
    if missing:
        raise BookError(f"{name}: the figure(s) of cell(s) {sorted(set(missing))} have no alt text. Does the lesson "
                        "call zc.start() in its first cell (it registers helpers.display.alt_text)?")
    alt_text.embed_in_html(nb)
    return len(alt_text.image_outputs(nb))


def _config(title: str) -> str:
    # Offline: no intersphinx inventories, no launch buttons, no analytics, no repository links. Markdown outputs
    # (the course's tables and findings) are rendered as GitHub-flavoured Markdown, which has tables; myst-nb's
    # default, CommonMark, has none and would show a table as a paragraph of pipes.
    return f"""\
title: "{title}"
author: "The course's authors"
only_build_toc_files: true
exclude_patterns: [_build, "**.ipynb_checkpoints"]
execute:
  execute_notebooks: "off"
html:
  use_repository_button: false
  use_issues_button: false
  use_edit_page_button: false
  home_page_in_navbar: true
launch_buttons:
  thebe: false
sphinx:
  config:
    intersphinx_mapping: {{}}
    html_show_copyright: false
    nb_merge_streams: true
    nb_render_markdown_format: gfm
"""


def _toc(names: list[str]) -> str:
    return "format: jb-book\nroot: index\nchapters:\n" + "".join(f"  - file: lessons/{n}\n" for n in names)


def companion_pages(lessons: Path | None = None) -> list[Path]:
    """The Markdown pages beside the lessons (the glossary, the instructor guide), which the lessons link to."""
    return sorted((lessons or paths.LESSONS).glob("*.md"))


def _index(rows: list[tuple[str, str, int]]) -> str:
    table = "\n".join(f"| [{title}](lessons/{name}.ipynb) | {minutes} min |" for name, title, minutes in rows)
    total = sum(minutes for _, _, minutes in rows)
    return f"""\
# CUDA zero-copy memory, from pinned pages to PCIe transactions

Every lesson of the course, executed. Run them yourself in JupyterLab (`make lab`) to change
the code and move the sliders; on this site the outputs are those of the build below.

| Lesson | Time |
|---|---|
{table}

In all about {total} minutes ({total / 60:.1f} hours).

{provenance_note()}
"""


def build(output: Path | None = None, progress: bool = True, lessons: Path | None = None) -> Path:
    """Execute every lesson, generate the Jupyter Book sources and build the site; return its index.html."""
    import nbformat
    from tqdm import tqdm

    output = output or paths.BUILD / "book"
    source = output.parent / f"{output.name}-src"
    notebook_paths = lesson_paths(lessons)
    with warnings.catch_warnings():  # cells without ids get ids in the copies; the lessons stay as they are
        warnings.simplefilter("ignore")
        notebooks = [nbformat.read(p, as_version=4) for p in notebook_paths]
    rows = [(entry.name, f"{entry.id} · {entry.title}", entry.minutes) for entry in course_lessons.LESSONS]
    note = provenance_note()

    shutil.rmtree(source, ignore_errors=True)
    (source / "lessons").mkdir(parents=True)
    cells = sum(c.cell_type == "code" for nb in notebooks for c in nb.cells)
    with tqdm(total=cells, unit="cell", desc="executing lessons", disable=not progress, file=sys.stderr) as bar:
        for path, nb in zip(notebook_paths, notebooks):
            bar.set_postfix_str(path.stem)
            execute(nb, path.parent, on_cell=lambda: bar.update(1))
            give_figures_alt_text(nb, path.name)
            title_at = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), 0)
            nb.cells.insert(title_at + 1, nbformat.v4.new_markdown_cell(note))
            nbformat.write(nb, source / "lessons" / path.name)
    (source / "_config.yml").write_text(_config("CUDA zero-copy memory"), encoding="utf-8")
    pages = companion_pages(lessons)
    for page in pages:
        shutil.copy(page, source / "lessons" / page.name)
    (source / "_toc.yml").write_text(_toc([p.stem for p in notebook_paths] + [p.stem for p in pages]), encoding="utf-8")
    (source / "index.md").write_text(_index(rows), encoding="utf-8")

    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    if not jupyter_book.exists():
        raise BookError(f"Jupyter Book is not installed beside {sys.executable}: run `make book`, "
                        "or `pip install -e '.[book]'`.")
    if progress:
        print("rendering the site with Jupyter Book...", file=sys.stderr)
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    result = subprocess.run([str(jupyter_book), "build", str(source), "--builder", "html", "--warningiserror",
                             "--keep-going", "--quiet"], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise BookError(f"Jupyter Book failed (exit {result.returncode}):\n{result.stdout[-4000:]}"
                        f"{result.stderr[-4000:]}")
    html = source / "_build" / "html"
    unrendered = {path.stem: (want, got) for path, nb in zip(notebook_paths, notebooks)
                  if (want := markdown_tables(nb)) > (got := html_tables(html / "lessons" / f"{path.stem}.html"))}
    if unrendered:
        raise BookError(f"tables shown in the lessons are missing from the site, (in the outputs, in the page): "
                        f"{unrendered}; is nb_render_markdown_format still gfm in _config()?")
    shutil.rmtree(output, ignore_errors=True)
    shutil.move(str(html), str(output))
    return output / "index.html"


def markdown_tables(nb: nbformat.NotebookNode) -> int:
    """Tables in an executed notebook's Markdown outputs (a header line followed by a ``|---|`` line)."""
    count = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/markdown", ""))
            count += len(re.findall(r"^\|[^\n]*\|\n\|(?:\s*:?-+:?\s*\|)+\s*$", text, re.M))
    return count


def html_tables(page: Path) -> int:
    """Tables on a built page."""
    return page.read_text(encoding="utf-8").count("<table") if page.exists() else 0

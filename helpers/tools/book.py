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
from . import panels, repository, webfont, widgets_static
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


def relative_command(command: str, record_name: str) -> str:
    """A record's command with the recording machine's folder for the record replaced by ``data/`` (the course's)."""
    return re.sub(r"(?:\S*/)?" + re.escape(record_name), "data/" + record_name, command)


def provenance_note() -> str:
    """Markdown for the front page saying how this build ran: the mode (once), and the record replayed or kept as
    reference, with paths relative to the course."""
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
                f"command `{relative_command(p['command'], path.name)}`).")
        if not mode.live:
            data += " Every measurement on this site is a replay of it."
    why = mode.reason.rstrip(".")
    return (f"This site was executed on {built} in **{'live' if mode.live else 'replay'}** mode ({why}).\n\n"
            f"{data}")


def page_note(twin: str | None = None, label: str = "中文") -> str:
    """The one line a lesson's page carries under its title: when it was executed, and a link to its twin in the
    other edition (``twin``, relative to the page; ``label`` names that edition); the lesson's first output says
    the mode, the GPU and the record, so the line does not repeat them."""
    link = f" · {twin_note(twin, label).removeprefix('<small>').removesuffix('</small>')}" if twin else ""
    return (f"<small>Executed for this site on {time.strftime('%Y-%m-%d')}; "
            f'<a href="../index.html#how-this-site-was-built">how the site was built</a>.{link}</small>')


def twin_note(twin: str, label: str) -> str:
    """The line a companion page or the index carries under its title: the link to its twin."""
    return f'<small><a class="zc-twin" href="{twin}" hreflang="{"zh" if label == "中文" else "en"}">{label}</a></small>'


# A document's own line linking to its twin (README.md, the instructor guide: helpers.i18n.documents); the book
# replaces it with a link between the sites' pages.
_TWIN_LINE = re.compile(r"^\[(?:中文版|English)[^\]]*\]\([^)\s]+\)\n\n?", re.M)


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


def _config(title: str, language: str = "en") -> str:
    # Offline: no intersphinx inventories, no analytics, nothing fetched (formulas are MathML from
    # helpers.tools.maths, not MathJax from a CDN); the repository, issue, edit and launch
    # buttons are plain links to the one repository named in CITATION.cff (helpers.tools.repository). Markdown outputs
    # (the course's tables and findings) are rendered as GitHub-flavoured Markdown, which has tables; myst-nb's
    # default, CommonMark, has none and would show a table as a paragraph of pipes. Sphinx's ``language`` sets each
    # page's <html lang> (zh-CN for the Chinese edition, so browsers and screen readers pick Chinese fonts and voices).
    return f"""\
title: "{title}"
author: "{AUTHORS}"
only_build_toc_files: true
exclude_patterns: [_build, "**.ipynb_checkpoints"]
execute:
  execute_notebooks: "off"
repository:
  url: {repository.url()}
  branch: {repository.BRANCH}
  path_to_book: ""
html:
  use_repository_button: true
  use_issues_button: true
  use_edit_page_button: true
  home_page_in_navbar: true
  extra_footer: |
    {footer()}
launch_buttons:
  notebook_interface: jupyterlab
  binderhub_url: https://mybinder.org
  colab_url: https://colab.research.google.com
  thebe: false
sphinx:
  extra_extensions: [helpers.tools.maths]
  config:
    html_math_renderer: mathml
    language: {"zh_CN" if language == "zh" else "en"}
    intersphinx_mapping: {{}}
    html_show_copyright: false
    nb_merge_streams: true
    nb_render_markdown_format: gfm
"""


AUTHORS = "The zero-copy course contributors"


def footer() -> str:
    """The footer of every page: the licences and the repository (one HTML line)."""
    url = repository.url()
    return (f'<p>Code under the <a href="{url}/blob/{repository.BRANCH}/LICENSE">MIT licence</a>, text, notebooks and '
            f'data under <a href="{url}/blob/{repository.BRANCH}/LICENSE-CONTENT">CC BY 4.0</a>. '
            f'Source, issues and how to cite: <a href="{url}">{repository.slug()}</a>.</p>')


# Phones (issue 33): tables (in the theme's scrolling box, pst-scrollable-table-container) and long names scroll
# instead of running off the page; wide figures stack their panels
# or fit the width and zoom when tapped (helpers.tools.panels); a wide formula scrolls within its own box. Widgets are
# static snapshots (helpers.tools.widgets_static); CJK text has a web font cut at build time (helpers.tools.webfont).
CSS = """\
.cell_output { overflow-x: auto; }
article td, article th { overflow-wrap: break-word; }
section#glossary td:first-child { word-break: keep-all; }   /* the glossary's Chinese terms break at commas only */
article code.literal, article code.literal .pre { white-space: pre-wrap; overflow-wrap: anywhere; }
article div.math { overflow-x: auto; overflow-y: hidden; }
article math[display="block"] { font-size: 1.15em; }
@media (max-width: 640px) {
  article table { font-size: 0.8em; }
  article td, article th { min-width: 6.5em; }   /* a narrow column scrolls rather than breaking every word */
  article h1 { font-size: 1.7rem; }
  article h2 { font-size: 1.35rem; }
}
""" + panels.CSS + widgets_static.CSS


def _toc(names: list[str]) -> str:
    return "format: jb-book\nroot: index\nchapters:\n" + "".join(f"  - file: lessons/{n}\n" for n in names)


def link_repository_files(text: str, folder: Path | None = None) -> str:
    """Markdown links from a lesson or page in ``folder`` (default lessons/) to a file of the repository outside
    the book (``../binder/...``) as links to that file on GitHub (:mod:`helpers.tools.repository`), so that every
    link of the site resolves."""
    def outside(match: re.Match[str]) -> str:
        target = match.group(1)
        relative = ((folder or paths.LESSONS) / target).resolve().relative_to(paths.ROOT).as_posix()
        kind = "tree" if (paths.ROOT / relative).is_dir() else "blob"
        return f"]({repository.url()}/{kind}/{repository.BRANCH}/{relative}{match.group(2) or ''})"

    return re.sub(r"\]\((\.\./(?!lessons/)[^)#\s]+)(#[^)\s]*)?\)", outside, text)


def companion_pages(lessons: Path | None = None) -> list[Path]:
    """The Markdown pages beside the lessons (the glossary, the instructor guide), which the lessons link to."""
    return sorted((lessons or paths.LESSONS).glob("*.md"))


def _index(rows: list[tuple[str, str, int]]) -> str:
    table = "\n".join(f"| [{title}](lessons/{name}.ipynb) | {minutes} min | "
                      f"[Binder]({repository.lesson_links(name)['Binder']}) · "
                      f"[Colab]({repository.lesson_links(name)['Colab']}) |" for name, title, minutes in rows)
    total = sum(minutes for _, _, minutes in rows)
    url = repository.url()
    return f"""\
# CUDA zero-copy memory, from pinned pages to PCIe transactions

{twin_note("zh/index.html", "中文")}

A hands-on JupyterLab course on CUDA zero-copy memory: how host memory is pinned, how its pages are mapped for the
CPU and for the GPU, how a kernel reads it directly over the bus, and when that beats copying. This site shows every
lesson executed; to change the code and move the sliders, run the course yourself.

## Get and run the course

On your machine (Linux, macOS or WSL2; Python 3, `make`, git and a C++ compiler), with an NVIDIA GPU the lessons
run **live**, without one they **replay** measurements recorded on a real GPU:

```bash
git clone {url}.git
cd {repository.slug().split("/")[1]}
make lab     # sets everything up and opens lesson 00 in JupyterLab
```

In the browser, nothing to install: [open the course on Binder]({repository.lesson_links("00-start-here")["Binder"]})
(JupyterLab without a GPU, so it replays), or open one lesson in [Colab]({repository.lesson_links("00-start-here")["Colab"]}) (a T4
GPU when you choose a GPU runtime; the [README]({url}#on-colab) gives the set-up cell). Each lesson page has the
same launch buttons at its top (the rocket icon). Instructors: the [instructor guide](lessons/instructor-guide.md),
and the slides (`make slides`, or present the lessons live in JupyterLab with RISE).

## Lessons

| Lesson | Time | Run it |
|---|---|---|
{table}

In all about {total} minutes ({total / 60:.1f} hours). Terms are collected in the [glossary](lessons/glossary.md).

## Contribute, cite and reuse

Found an error? [Open an issue]({url}/issues); every page has an edit button (the pencil icon). The code is under
the MIT licence, the text, notebooks and data under CC BY 4.0; `CITATION.cff` says how to cite the course
([the repository]({url})).

## How this site was built

{provenance_note()}
"""


def _edition(language: str, lessons: Path | None) -> tuple[list[Path], list[Path], Callable[[Path], str | None]]:
    """The lessons, companion pages and twin of each page (a path relative to the page, or None) of an edition."""
    from ..i18n import documents, edition

    if language == "zh":
        notebook_paths = [edition.notebook(e) for e in edition.started() if edition.notebook(e).exists()]
        pages = [documents.GUIDE.target, documents.GLOSSARY.target]
        english = {p.stem for p in course_lessons.notebooks()} | {d.source.stem for d in (documents.GUIDE,
                                                                                         documents.GLOSSARY)}
        return notebook_paths, pages, lambda p: f"../../lessons/{p.stem}.html" if p.stem in english else None
    chinese = {p.stem for p in edition.NOTEBOOKS.glob("*.ipynb")} | {d.target.stem for d in (documents.GUIDE,
                                                                                              documents.GLOSSARY)}
    notebook_paths = lesson_paths(lessons)
    return notebook_paths, companion_pages(lessons), lambda p: (f"../zh/lessons/{p.stem}.html" if lessons is None
                                                              and p.stem in chinese else None)


def build(output: Path | None = None, progress: bool = True, lessons: Path | None = None,
          language: str = "en") -> Path:
    """Execute every lesson of an edition (``language``: "en", or "zh": the Chinese lessons built so far,
    ``lessons/zh/``, into ``build/book/zh/``), generate the Jupyter Book sources and build the site; return its
    index.html. Each page links to its twin in the other edition where there is one."""
    import nbformat
    from tqdm import tqdm

    zh = language == "zh"
    output = output or (paths.BUILD / "book" / "zh" if zh else paths.BUILD / "book")
    source = paths.BUILD / "book-src-zh" if zh else output.parent / f"{output.name}-src"
    notebook_paths, pages, twin = _edition(language, lessons)
    label = "English" if zh else "中文"
    with warnings.catch_warnings():  # cells without ids get ids in the copies; the lessons stay as they are
        warnings.simplefilter("ignore")
        notebooks = [nbformat.read(p, as_version=4) for p in notebook_paths]
    if zh:
        rows = [(p.stem, lesson_title(nb), course_lessons.find(p.stem).minutes)
                for p, nb in zip(notebook_paths, notebooks)]
    else:
        rows = [(entry.name, f"{entry.id} · {entry.title}", entry.minutes) for entry in course_lessons.LESSONS]

    shutil.rmtree(source, ignore_errors=True)
    (source / "lessons").mkdir(parents=True)
    cells = sum(c.cell_type == "code" for nb in notebooks for c in nb.cells)
    with tqdm(total=cells, unit="cell", desc="executing lessons", disable=not progress, file=sys.stderr) as bar:
        for path, nb in zip(notebook_paths, notebooks):
            bar.set_postfix_str(path.stem)
            execute(nb, path.parent, on_cell=lambda: bar.update(1))
            widgets_static.freeze(nb)
            give_figures_alt_text(nb, path.name)
            panels.stack_wide_figures(nb)
            title_at = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), 0)
            nb.cells.insert(title_at + 1, nbformat.v4.new_markdown_cell(page_note(twin(path), label)))
            for cell in nb.cells:
                if cell.cell_type == "markdown":
                    cell.source = _site_links(cell.source, path.parent, zh)
            nbformat.write(nb, source / "lessons" / path.name)
    (source / "_static").mkdir()
    (source / "_static" / "course.css").write_text(CSS + webfont.css(webfont.file_name()), encoding="utf-8")
    (source / "_static" / webfont.SCRIPT_NAME).write_text(webfont.SCRIPT, encoding="utf-8")
    (source / "_config.yml").write_text(_config(_zh_title() if zh else "CUDA zero-copy memory", language), encoding="utf-8")
    for page in pages:
        text = _TWIN_LINE.sub("", page.read_text(encoding="utf-8"), count=1)
        if twin(page):
            text = re.sub(r"^(# .*\n)", lambda m: f"{m.group(1)}\n{twin_note(twin(page), label)}\n", text, count=1,
                          flags=re.M)
        (source / "lessons" / page.name).write_text(_site_links(text, page.parent, zh), encoding="utf-8")
    (source / "_toc.yml").write_text(_toc([p.stem for p in notebook_paths] + [p.stem for p in pages]), encoding="utf-8")
    (source / "index.md").write_text(_index_zh(rows) if zh else _index(rows), encoding="utf-8")

    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    if not jupyter_book.exists():
        raise BookError(f"Jupyter Book is not installed beside {sys.executable}: run `make book`, "
                        "or `pip install -e '.[book]'`.")
    if progress:
        print(f"rendering the site ({language}) with Jupyter Book...", file=sys.stderr)
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
    if zh:
        _point_buttons_at_chinese_files(html)
    kept = None
    if not zh and (output / "zh").is_dir():     # the Chinese site lives inside the English one: keep it
        kept = Path(shutil.move(str(output / "zh"), str(paths.BUILD / "book-zh-kept")))
    shutil.rmtree(output, ignore_errors=True)
    shutil.move(str(html), str(output))
    if kept:
        shutil.move(str(kept), str(output / "zh"))
    webfont.subset(webfont.characters_in(output), output / "_static" / webfont.file_name())
    return output / "index.html"


def _site_links(text: str, folder: Path, zh: bool) -> str:
    """A page's Markdown links as the site needs them: in the Chinese site a link to the English glossary points to
    the Chinese one beside it, and links to files outside the site go to GitHub (:func:`link_repository_files`)."""
    if zh:
        text = re.sub(r"\]\(\.\./glossary\.md", "](glossary.md", text)
    return link_repository_files(text, folder)


def _point_buttons_at_chinese_files(html: Path) -> None:
    """The Chinese site's launch, edit and source buttons open the Chinese files (lessons/zh/), not the English."""
    pattern = re.compile(r"(https://[^\"'\s]*?/)lessons/((?:\d\d-[\w-]+\.ipynb)|instructor-guide\.md|glossary\.md)")
    for page in (html / "lessons").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(pattern.sub(r"\g<1>lessons/zh/\g<2>", text), encoding="utf-8")


def _zh_title() -> str:
    from ..i18n import documents

    built = documents.build(documents.README)
    return built.split("\n", 1)[0].removeprefix("# ").strip()


def _index_zh(rows: list[tuple[str, str, int]]) -> str:
    """The Chinese site's front page: the Chinese README's title, introduction and start section, then the
    translated lessons (phrases from the README's catalog: helpers.i18n.documents)."""
    from ..i18n import documents

    say = {key: documents.translated(documents.README, key, text) for key, text in documents._readme_strings()}
    built = documents.build(documents.README).split("\n### ", 1)[0]
    kept = [b for b in documents.blocks(built) if not b.startswith("[![") and not _TWIN_LINE.match(b + "\n")]
    table = "\n".join(f"| [{title}](lessons/{name}.ipynb) | {say['book/minutes'].format(minutes=minutes)} | "
                      f"[Binder]({repository.lesson_links('zh/' + name)['Binder']}) · "
                      f"[Colab]({repository.lesson_links('zh/' + name)['Colab']}) |" for name, title, minutes in rows)
    total = sum(minutes for _, _, minutes in rows)
    return "\n\n".join([kept[0], twin_note("../index.html", "English"), *kept[1:], say["book/lessons"],
                        f"{say['book/header']}\n|---|---|---|\n{table}", say["book/total"].format(minutes=total),
                        '<a id="how-this-site-was-built"></a>\n\n' + say["book/built"], provenance_note()]) + "\n"


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

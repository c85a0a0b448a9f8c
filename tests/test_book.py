"""make book (helpers.tools.book): the site leads to the course (issue 33) from the one repository setting
(helpers.tools.repository), says the mode once, and keeps wide figures legible on a phone. Offline: links only."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import nbformat

from helpers import lessons
from helpers.tools import book, repository

ROOT = Path(__file__).resolve().parents[1]


def test_one_setting_names_the_repository_and_the_readme_and_the_book_use_it():
    slug = repository.slug()
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", slug)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"github(?:\.com)?/([\w-]+/zero-copy-course)", readme)) == {slug}
    config = book._config("t")
    assert f"url: {repository.url()}" in config
    for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
        assert f"{button}: true" in config
    assert "binderhub_url: https://mybinder.org" in config and "colab_url: https://colab.research.google.com" in config


def test_a_fork_changes_one_line(tmp_path):
    citation = tmp_path / "CITATION.cff"
    citation.write_text('cff-version: 1.2.0\nrepository-code: "https://github.com/someone/zero-copy-course"\n')
    assert repository.slug(citation) == "someone/zero-copy-course"
    assert repository.site(citation) == "https://someone.github.io/zero-copy-course/"
    assert "gh/someone/zero-copy-course/HEAD" in repository.lesson_links("00-start-here", citation)["Binder"]


def test_every_page_has_the_licence_and_the_repository_in_its_footer():
    footer = book.footer()
    assert "MIT" in footer and "CC BY 4.0" in footer and repository.url() in footer
    assert "The course's authors" not in book._config("t")


def test_the_landing_page_says_how_to_get_and_run_the_course():
    rows = [(e.name, f"{e.id} · {e.title}", e.minutes) for e in lessons.LESSONS]
    index = book._index(rows)
    assert f"git clone {repository.url()}.git" in index and "make lab" in index
    assert "Binder" in index and "Colab" in index and f"{repository.url()}/issues" in index
    assert "MIT" in index and "CC BY 4.0" in index
    for entry in lessons.LESSONS:
        assert repository.lesson_links(entry.name)["Colab"] in index, entry.name
    assert "## How this site was built" in index


def test_the_mode_is_said_once_and_paths_are_the_courses():
    note = book.provenance_note()
    assert note.count("mode") == 1 and "Mode:" not in note
    assert "/tmp/" not in note and not re.search(r"`[^`]*\s/\w[^`]*`", note), note
    assert "mode" not in book.page_note().lower()
    assert book.relative_command("python3 -m helpers record --output /tmp/o/lead/x-1.json", "x-1.json") \
        == "python3 -m helpers record --output data/x-1.json"


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
    return base64.b64encode(header + b"\x00" * 16).decode()


def test_two_panel_figures_are_marked_to_stay_legible_on_a_phone():
    cells = []
    for width, height in ((1300, 420), (700, 380)):
        png = _png(width, height)
        output = nbformat.v4.new_output("display_data", data={"image/png": png,
                                                              "text/html": f'<img src="data:image/png;base64,{png}"/>'})
        cells.append(nbformat.v4.new_code_cell("fig", outputs=[output]))
    nb = nbformat.v4.new_notebook(cells=cells)
    assert book.mark_wide_figures(nb) == 1
    assert 'class="zc-wide"' in nb.cells[0].outputs[0].data["text/html"]
    assert "zc-wide" not in nb.cells[1].outputs[0].data["text/html"]
    assert "img.zc-wide" in book.CSS and "max-width: 640px" in book.CSS and "overflow-wrap: anywhere" in book.CSS


def test_a_link_to_a_repository_file_outside_the_book_goes_to_github():
    text = "see [`values.yaml`](../binder/jupyterhub/values.yaml#L3) and [lesson 06](06-measure-bandwidth.ipynb)"
    linked = book.link_repository_files(text)
    assert f"]({repository.url()}/blob/{repository.BRANCH}/binder/jupyterhub/values.yaml#L3)" in linked
    assert "](06-measure-bandwidth.ipynb)" in linked
    assert f"]({repository.url()}/tree/{repository.BRANCH}/data)" in book.link_repository_files("[d](../data)")

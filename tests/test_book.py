"""make book (helpers.tools.book): the site leads to the course (issue 33) from the one repository setting
(helpers.tools.repository), says the mode once, keeps wide figures legible on a phone (helpers.tools.panels) and
renders formulas as MathML when building (helpers.tools.maths). Offline: links only."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest

from helpers import lessons
from helpers.tools import book, maths, panels, repository

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


def _figure(*panels: tuple[int, int]) -> str:
    """A PNG of white panels side by side with a black frame each, parted by 20 blank columns, as base64."""
    import io

    from PIL import Image, ImageDraw

    width = sum(w for w, _ in panels) + 20 * (len(panels) - 1)
    image = Image.new("RGB", (width, max(h for _, h in panels)), "white")
    draw, left = ImageDraw.Draw(image), 0
    for w, h in panels:
        draw.rectangle((left + 5, 5, left + w - 5, h - 5), outline="black", width=2)
        left += w + 20
    out = io.BytesIO()
    image.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_two_panel_figures_stack_and_one_panel_figures_zoom_on_a_phone():
    cells = []
    for png in (_figure((640, 420), (640, 420)), _figure((1300, 420)), _figure((700, 380))):
        html = f'<img src="data:image/png;base64,{png}" alt="Line chart &#x27;x&#x27;"/>'
        output = nbformat.v4.new_output("display_data", data={"image/png": png, "text/html": html})
        cells.append(nbformat.v4.new_code_cell("fig", outputs=[output]))
    nb = nbformat.v4.new_notebook(cells=cells)
    assert panels.stack_wide_figures(nb) == {"split": 1, "zoom": 1}
    two, one, narrow = (c.outputs[0].data["text/html"] for c in nb.cells)
    assert 'class="zc-wide zc-split"' in two and "aria-label=\"Line chart &#x27;x&#x27;\"" in two
    pieces = [base64.b64decode(p) for p in re.findall(r'<span class="zc-panels".*?base64,([^"]+)".*?base64,([^"]+)"',
                                                      two)[0]]
    widths = [panels.size(p)[0] for p in pieces]
    assert sum(widths) == 1300 and all(630 <= w <= 670 for w in widths), widths
    assert 'class="zc-wide" tabindex="0"' in one and "zc-panels" not in one
    assert "zc-" not in narrow
    assert "img.zc-split" in book.CSS and "max-width: 640px" in book.CSS and "overflow-wrap: anywhere" in book.CSS


def test_a_link_to_a_repository_file_outside_the_book_goes_to_github():
    text = "see [`values.yaml`](../binder/jupyterhub/values.yaml#L3) and [lesson 06](06-measure-bandwidth.ipynb)"
    linked = book.link_repository_files(text)
    assert f"]({repository.url()}/blob/{repository.BRANCH}/binder/jupyterhub/values.yaml#L3)" in linked
    assert "](06-measure-bandwidth.ipynb)" in linked
    assert f"]({repository.url()}/tree/{repository.BRANCH}/data)" in book.link_repository_files("[d](../data)")


def test_the_book_renders_formulas_as_mathml_without_mathjax(tmp_path):
    """The book's Sphinx renders maths with helpers.tools.maths (MathML when building), so a page with a formula
    loads no MathJax from a CDN and keeps no TeX delimiters."""
    pytest.importorskip("latex2mathml", reason="the book extra is not installed: `make book` renders the formulas")
    from sphinx.application import Sphinx

    assert "extra_extensions: [helpers.tools.maths]" in book._config("t")
    assert "html_math_renderer: mathml" in book._config("t")
    (tmp_path / "conf.py").write_text('extensions = ["helpers.tools.maths"]\nhtml_math_renderer = "mathml"\n')
    (tmp_path / "index.rst").write_text("Maths\n=====\n\nInline :math:`t_\\text{launch}` and\n\n"
                                        ".. math::\n\n   \\text{bytes} = \\text{bandwidth} \\times \\text{latency}\n")
    app = Sphinx(tmp_path, tmp_path, tmp_path / "out", tmp_path / "doctree", "html", status=None,
                 warningiserror=True)
    app.build()
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert page.count("<math ") == 2 and 'display="block"' in page and "<mtext>latency</mtext>" in page
    assert "mathjax" not in page.lower() and "$" not in page and "\\(" not in page and "\\[" not in page


def test_markdown_formulas_become_mathml_and_code_keeps_its_dollars():
    pytest.importorskip("latex2mathml", reason="the slides extra is not installed: `make slides` renders formulas")
    text = "Costs $5 and $6; `$HOME`; $x_i$ here.\n\n```bash\necho $$PWD$$\n```\n\n$$a \\times b$$\n"
    converted = maths.markdown_with_mathml(text)
    assert "$5 and $6" in converted and "`$HOME`" in converted and "echo $$PWD$$" in converted
    assert converted.count("<math ") == 2 and 'display="block"' in converted and "<msub>" in converted
    with pytest.raises(maths.MathsError, match="cannot convert"):
        maths.mathml("\\frac{1}{")


def test_every_lessons_formulas_convert():
    """A formula latex2mathml cannot read would stop `make book` and `make slides`: every lesson's converts here."""
    pytest.importorskip("latex2mathml", reason="the book extra is not installed: `make book` renders the formulas")
    converted = 0
    for entry in lessons.LESSONS:
        for cell in nbformat.read(entry.notebook(), as_version=4).cells:
            if cell.cell_type == "markdown":
                text = maths.markdown_with_mathml(cell.source)
                converted += text.count("<math ")
                assert "$$" not in re.sub(r"(?s)```.*?```|`[^`]*`", "", text), entry.name
    assert converted >= 2, "lessons 08 and 10 hold formulas"

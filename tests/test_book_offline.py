"""make book and make slides fetch nothing (issue 33): a widget becomes a static snapshot of its saved state
(helpers.tools.widgets_static), and CJK text gets a web font cut to the pages' characters (helpers.tools.webfont)."""

from __future__ import annotations

import base64

import nbformat
import pytest

from helpers.tools import book, slides, webfont, widgets_static

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()


def _model(name: str, **state: object) -> dict:
    return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}


def _explorer() -> nbformat.NotebookNode:
    """A notebook as executing it with widget state kept leaves it: sliders, toggles, an image and a note."""
    state = {
        "box": _model("VBoxModel", children=["IPY_MODEL_row", "IPY_MODEL_width", "IPY_MODEL_img", "IPY_MODEL_note"]),
        "row": _model("HBoxModel", children=["IPY_MODEL_stride"]),
        "stride": _model("IntSliderModel", description="stride", value=1, min=1, max=64),
        "width": _model("ToggleButtonsModel", description="width", index=2, _options_labels=["a", "b", "float4"]),
        "img": {**_model("ImageModel", format="png"), "buffers": [{"path": ["value"], "encoding": "base64",
                                                                    "data": PNG}]},
        "note": _model("HTMLModel", value="<small>Model: a link</small>"),
    }
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {widgets_static.STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    view = {"model_id": "box", "version_major": 2, "version_minor": 0}
    lost = {"model_id": "gone", "version_major": 2, "version_minor": 0}
    nb.cells = [nbformat.v4.new_code_cell("explorer()", outputs=[
        nbformat.v4.new_output("display_data", {widgets_static.VIEW: view, "text/plain": "VBox(...)"}),
        nbformat.v4.new_output("display_data", {widgets_static.VIEW: lost, "text/plain": "VBox(...)"})])]
    return nb


def test_a_widget_becomes_a_static_snapshot_and_its_state_is_dropped():
    nb = _explorer()
    assert widgets_static.freeze(nb) == 2
    assert "widgets" not in nb.metadata, "the saved state makes myst-nb load require.js and embed-amd from CDNs"
    shown, lost = (o["data"] for o in nb.cells[0].outputs)
    assert widgets_static.VIEW not in shown and widgets_static.VIEW not in lost
    html = shown["text/html"]
    assert "stride = <code>1</code> (of 1–64)" in html and "width = <code>float4</code>" in html
    assert f'src="data:image/png;base64,{PNG}"' in html and 'class="zc-wide" tabindex="0"' in html
    assert 'alt="The widget&#x27;s figure at stride 1, width float4."' in html
    assert "<small>Model: a link</small>" in html
    assert "JupyterLab" in html and "JupyterLab" in lost["text/html"], "the snapshot says where it is interactive"
    assert widgets_static.freeze(nb) == 0


def test_the_cjk_font_is_cut_to_the_characters_the_pages_use(tmp_path):
    pytest.importorskip("fontTools", reason="the book extra installs fonttools")
    pytest.importorskip("manimgx_fonts_cjk", reason="the set-up installs the CJK font package")
    chars = webfont.characters(["零拷贝 (zero-copy), 页锁定。", "no CJK here", "术语表"])
    assert chars == "".join(sorted(set("零拷贝页锁定。术语表")))
    font = webfont.subset(chars, tmp_path / webfont.file_name())
    assert font is not None and set(chars) <= webfont.covered(font)
    assert "定" in webfont.covered(font) and "中" not in webfont.covered(font), "the whole font was shipped"
    assert webfont.subset("", tmp_path / "none.woff2") is None


def test_the_book_and_the_decks_declare_the_font_after_the_latin_ones():
    css = webfont.css("course-cjk.woff2")
    assert "@font-face" in css and 'url("course-cjk.woff2")' in css
    assert f'--pst-font-family-base: var(--pst-font-family-base-system), "{webfont.FAMILY}"' in css
    deck = webfont.deck_css("fonts/x.woff2")
    assert "@font-face" in deck and f'"Source Sans Pro", Helvetica, sans-serif, "{webfont.FAMILY}"' in deck
    assert ".zc-widget img" in book.CSS and slides.FONT == "fonts"

"""The Chinese edition's figures: with Chinese chosen, a figure with Chinese title, axis labels and legend draws every
glyph (matplotlib's "Glyph ... missing from font" warning fails the test), and without the CJK font it would not."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import rcParams  # noqa: E402

from helpers import paths  # noqa: E402
from helpers.i18n import fonts  # noqa: E402

LABELS = {"title": "零拷贝读取带宽：锁页内存与显存", "x": "缓冲区大小 (MiB)", "y": "带宽 (GB/s)",
          "legend": "合并访问，线程束"}


def _draw() -> None:
    """A figure in the course's style with Chinese everywhere a learner reads, drawn to pixels."""
    with plt.style.context(str(paths.STYLE)):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 4], [10.5, -20.0, 40.0], marker="o", label=LABELS["legend"])
        ax.set_title(LABELS["title"], fontweight="bold")
        ax.set(xlabel=LABELS["x"], ylabel=LABELS["y"])
        ax.legend()
        fig.canvas.draw()
        plt.close(fig)


@pytest.fixture
def restore_fonts():
    saved = list(rcParams["font.sans-serif"])
    yield
    rcParams["font.sans-serif"] = saved


def test_chinese_labels_draw_without_a_missing_glyph(restore_fonts, caplog):
    assert fonts.use_cjk_font() == fonts.FAMILY
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing.*")
        _draw()
    complaints = [r.getMessage() for r in caplog.records if r.name.startswith("matplotlib")]
    assert not complaints, f"matplotlib complained about the font (a learner sees it under the figure): {complaints}"


def test_without_the_cjk_font_the_same_figure_misses_glyphs(restore_fonts):
    rcParams["font.sans-serif"] = ["DejaVu Sans"]
    with pytest.warns(UserWarning, match="[Gg]lyph.*missing"):
        _draw()


def test_the_font_file_is_the_open_font_licensed_noto_sans_cjk():
    from importlib import metadata

    assert fonts.font_file().exists()
    assert metadata.metadata("manimgx-fonts-cjk")["License-Expression"] == "OFL-1.1"

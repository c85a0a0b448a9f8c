"""The Chinese edition joins sentences as Chinese does: no ASCII space after full-width punctuation (。？！：；) in
the helpers' translations, every lesson's check messages and hints (all their tries) and the findings of start-here,
write-your-first-zero-copy-kernel and coalesce-and-align-accesses, in replay; a hint quotes an error as written
(Markdown's marks escaped, cut at a word) without a full stop after its closing bracket; every catalog writes a
percentage as 12.5%, with no space (issue 35)."""

from __future__ import annotations

import re

import polib
import pytest

from helpers import exercises, experiments, i18n
from helpers.exercises import ended, graded_message, lesson05, lesson09, quoted

from typical_wrong import collect

# Words, not measurements: every check runs on the recorded figures (live on the H200, the tries of wait_for_flag's
# wrong answers, which spin on a flag, took 37 s).
pytestmark = pytest.mark.usefixtures("replay")

SPACED = re.compile(r"[。？！：；] (?!\|)")   # " |" closes a table cell


@pytest.fixture
def chinese():
    i18n.use_language("zh")
    yield
    i18n.use_language("en")


def _spaced(text: str) -> list[str]:
    return [text[max(0, m.start() - 20):m.end() + 20] for m in SPACED.finditer(str(text))]


def test_no_translation_has_a_space_after_full_width_punctuation():
    found = [e.msgid[:60] for e in polib.pofile(str(i18n.STRINGS_CATALOG))
             if not e.obsolete and (SPACED.search(e.msgstr) or re.search(r"[。？！：；]\s+$", e.msgstr))]
    assert not found, found


# A figure and its percent sign: "12.5 %" (a printf conversion such as "%0" or "%d" aside).
SPACED_PERCENT = re.compile(r"[\d}][ \u00a0\u2009\u202f]+%(?![\w%{(])")


def _catalogs() -> list:
    from helpers.i18n import edition

    return sorted(edition.CATALOGS.glob("*.po")) + [i18n.STRINGS_CATALOG]


@pytest.mark.parametrize("catalog", _catalogs(), ids=lambda p: p.name)
def test_a_percentage_is_written_without_a_space(catalog):
    """Chinese technical writing writes 12.5%, as the outputs do (Python's {:.1%}): every catalog (lessons,
    solutions, documents, helpers) too."""
    found = [f"{e.msgctxt or e.msgid[:40]!r}: {m.group(0)!r}" for e in polib.pofile(str(catalog))
             if not e.obsolete for m in SPACED_PERCENT.finditer(e.msgstr)]
    assert not found, f"{catalog.name}: write 12.5% (no space):\n" + "\n".join(found)


def test_a_spaced_percentage_is_found_and_code_is_not():
    assert [m.group(0) for m in SPACED_PERCENT.finditer("中位数 5 %，最大 10 %） {x:g} %")] == ["5 %", "0 %", "} %"]
    assert not SPACED_PERCENT.search('12.5% 有用；asm("mov.u64 %0, %%globaltimer;")；printf("%d %s")')


def test_sentences_and_series_follow_the_language(chinese):
    assert i18n.sentences("是哪一个？", "下一步：看第 3 节。", "", "还是卡住了？") == "是哪一个？下一步：看第 3 节。还是卡住了？"
    assert i18n.series(["'runs'", "'refused'"]) == "'runs'、'refused'"
    i18n.use_language("en")
    assert i18n.sentences("Which one?", "Next step: read it.") == "Which one? Next step: read it."
    assert i18n.series(["'runs'", "'refused'"]) == "'runs', 'refused'"


def test_a_graded_hint_joins_its_parts_without_a_space(chinese):
    feedback = exercises.hint("是哪一个？", "读第一行。")
    assert _spaced(graded_message(feedback, 3, "09", "coalesce")) == []


@pytest.mark.parametrize("key", sorted(collect()), ids=lambda k: "/".join(k))
def test_every_try_of_a_typical_wrong_answer_reads_without_a_space(chinese, key):
    lesson, name = key
    for typical in collect()[key]:
        exercises.reset_tries(lesson, name)
        i18n.use_language("en")
        answer = typical.wrong()   # built from the English solution text (its comments translate in Chinese)
        i18n.use_language("zh")
        for _try in range(3):
            message = exercises.check(lesson, name, answer, **typical.context).message
            assert _spaced(message) == [], message
    exercises.reset_tries(lesson, name)


def test_the_predictions_read_without_a_space(chinese):
    by_value, stride = experiments.reference("pass_by_value"), experiments.reference("stride")
    said = [lesson05.compare_prediction(p, by_value) for p in (..., "runs", "refused", "garbage", "maybe")]
    said += [lesson09.compare_prediction(p, stride) for p in (..., 0.5, 50, 0.001, "half")]
    assert "'runs'、'refused'、'garbage'" in said[4]
    for text in said:
        assert _spaced(text) == [], text


def test_the_findings_read_without_a_space(chinese):
    import helpers as zc
    from helpers.findings import coalesce_and_align_accesses as f09, start_here as f00

    course = zc.session()
    stride, offset, width = (experiments.reference(n) for n in ("stride", "offset", "vector_width"))
    shown = [f00.essentials(course.attributes), f00.what_you_saw(course), f00.headline(course),
             f00.attributes(course), f00.course_plan(), f00.reference_record(course),
             f09.stride(stride, experiments.reference("memcpy")), f09.misalignment(offset), f09.vector_width(width),
             f09.what_you_saw(stride, offset, width), f09.requests_in_flight(stride, experiments.reference("latency"))]
    for item in shown:
        text = item._repr_markdown_() if hasattr(item, "_repr_markdown_") else str(item)
        assert _spaced(text) == [], text[:400]


def test_a_quoted_error_shows_as_written_and_is_cut_at_a_word():
    assert quoted("Invalid __global__ read in cpu::ptr<float> [x]") == \
        r"Invalid \_\_global\_\_ read in cpu::ptr\<float\> \[x\]"
    long = "outside parameter 'src' (float32 array of shape (33, 50), 6600 bytes)."
    cut = quoted(long, 50)
    assert cut.endswith("…") and len(cut) <= 51 and long.startswith(cut[:-1]) and not cut[:-1].endswith(" ")
    assert quoted(long) == long.replace("_", r"\_")


def test_a_sentence_ending_in_a_bracket_gets_no_second_full_stop(chinese):
    assert ended("（报错：… 6600 bytes).）") == "（报错：… 6600 bytes).）"
    assert ended("[… 6600 bytes).]") == "[… 6600 bytes).]"
    assert ended("保留这一行") == "保留这一行。"
    i18n.use_language("en")
    assert ended("name 'x' is not defined") == "name 'x' is not defined."

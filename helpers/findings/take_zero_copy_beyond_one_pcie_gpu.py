"""The figures take-zero-copy-beyond-one-pcie-gpu quotes, computed from its results
(``zc.findings.take_zero_copy_beyond_one_pcie_gpu``), so the text agrees with the run live and in replay."""

from __future__ import annotations

from ..exercises.lesson15 import share_with_threads
from ..experiments.result import Result
from ..i18n import _
from ..tables import Table, Text


def kernel_share(traffic: Result, threads: int = 8) -> Text:
    """One sentence: what ``threads`` copying CPU threads left the kernel, live or recorded (the result says)."""
    where = (_("measured live on {gpu}") if traffic.live else _("recorded on {gpu}")).format(gpu=traffic.gpu)
    share = share_with_threads(traffic, threads)
    return Text(_("With {threads} CPU threads copying memory, the kernel read at {share:.0%} of its rate alone "
                  "({where}).").format(threads=threads, share=share, where=where))


def platform_classes() -> Table:
    """Section 1's answer in a table: the platform class (helpers.platform.doctor.platform_class) of this machine's
    GPU 0 and of the recorded GPU whose figures replay shows."""
    from ..experiments import reference
    from ..platform import doctor, facts

    recorded = facts.gpu_from_record(reference("managed").provenance)
    return Table([_("GPU"), _("platform class")],
                 [(_("this machine"), f"`{doctor.platform_class(facts.current().gpu)}`"),
                  (_("the recorded {gpu}").format(gpu=recorded.name), f"`{doctor.platform_class(recorded)}`")])


def whats_next(slug: str = "take-zero-copy-beyond-one-pcie-gpu") -> Text:
    """What follows the lesson ``slug`` in the registry (helpers.lessons): the next lesson, or that it is the last."""
    from .. import lessons

    ids = lessons.ids()
    here = lessons.lesson_id(slug)
    if here == ids[-1]:
        return Text(_("This is the last of the course's {n_ids} lessons. [Lesson {lesson_id}]({name})'s decision "
                      "table and the [glossary](glossary.md) collect what the course measured; `python -m helpers "
                      "doctor` says what your machine changes.").format(
                        n_ids=len(ids), lesson_id=lessons.lesson_id('decide-when-zero-copy-wins'), name=lessons.lesson('decide-when-zero-copy-wins').notebook().name))
    following = lessons.lesson(ids[ids.index(here) + 1])
    return Text(_("Next: [{label}]({name}).").format(label=following.label, name=following.notebook().name))

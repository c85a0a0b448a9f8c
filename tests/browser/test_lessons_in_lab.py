"""Lessons 00, 05 and 09 run in JupyterLab in a real Chromium: Run All, no error, every figure (make test-browser).

The figures expected in each cell are those the same lesson gives when executed by nbclient in
a fresh kernel; lesson 09's sector explorer must redraw when its stride slider moves.
"""

from __future__ import annotations

import json
import time
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ["00-start-here.ipynb", "05-write-your-first-zero-copy-kernel.ipynb", "09-coalesce-and-align-accesses.ipynb"]
RUN_TIMEOUT_S = 300
CELLS = ".jp-NotebookPanel:visible .jp-Notebook .jp-Cell.jp-CodeCell"


@lru_cache(maxsize=None)
def expected_images(lesson: str) -> tuple[int, ...]:
    """Images (PNG/SVG outputs) per code cell when the lesson runs under nbclient, in the same mode."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "lessons" / lesson, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "lessons")}}).execute()
    return tuple(sum(1 for out in cell.get("outputs", []) if {"image/png", "image/svg+xml"} & set(out.get("data", {})))
                 for cell in nb.cells if cell.cell_type == "code")


def open_and_run_all(page: Any, lab: dict[str, Any], lesson: str) -> float:
    """Open the lesson (`make lab` serves lessons/) in its own workspace, Run > Run All Cells, wait until no cell is queued or running."""
    workspace = lesson.split("-")[0]
    page.goto(f"{lab['url']}/lab/workspaces/w{workspace}/tree/lessons/{lesson}?reset&token={lab['token']}",
              timeout=120_000)
    page.locator(CELLS).first.wait_for(timeout=120_000)
    wait_for_kernel_idle(page, lab, lesson, 120)
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    t0 = time.monotonic()
    prompts = page.locator(f"{CELLS} .jp-InputPrompt")
    while time.monotonic() - t0 < RUN_TIMEOUT_S:
        texts = prompts.all_inner_texts()
        if texts and not any("*" in t for t in texts) and all(t.strip() not in ("[ ]:", "") for t in texts[:1]):
            break
        time.sleep(2)
    else:
        pytest.fail(f"{lesson} was still running after {RUN_TIMEOUT_S} s")
    wait_for_kernel_idle(page, lab, lesson, 60)
    return time.monotonic() - t0


def wait_for_kernel_idle(page: Any, lab: dict[str, Any], lesson: str, timeout_s: float) -> None:
    """Until the lab's session for ``lesson`` has a kernel whose state is idle (REST API); answers a
    "Select Kernel" dialog with the notebook's own kernel if one appears."""
    deadline = time.monotonic() + timeout_s
    state = "no session"
    while time.monotonic() < deadline:
        dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
        if dialog.count():
            dialog.locator("button", has_text="Select").first.click()
        with urllib.request.urlopen(f"{lab['url']}/api/sessions?token={lab['token']}", timeout=10) as answer:
            sessions = [s for s in json.load(answer) if s.get("path", "").endswith(lesson)]
        if sessions and sessions[0].get("kernel"):
            state = sessions[0]["kernel"].get("execution_state", "unknown")
            if state == "idle":
                return
        time.sleep(1)
    pytest.fail(f"{lesson}: the kernel was not idle after {timeout_s:.0f} s (state: {state})")


def cell_report(page: Any) -> list[dict[str, Any]]:
    """For each code cell: its prompt, the number of images in its outputs, and any traceback text."""
    return page.locator(CELLS).evaluate_all("""cells => cells.map(cell => ({
        prompt: (cell.querySelector('.jp-InputPrompt') || {}).innerText || '',
        images: cell.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg.main-svg, '
                                      + '.jp-RenderedImage img, .jp-RenderedSVG svg').length,
        widgetImages: cell.querySelectorAll('.jupyter-widgets img').length,
        errors: [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map(o => o.innerText).filter(t => t.includes('Traceback') || /^\\w*Error\\b/m.test(t)),
    }))""")


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_in_jupyterlab(lab, page, lesson):
    seconds = open_and_run_all(page, lab, lesson)
    cells = cell_report(page)
    expected = expected_images(lesson)
    assert len(cells) == len(expected), f"JupyterLab shows {len(cells)} code cells, the notebook has {len(expected)}"
    not_run = [i for i, c in enumerate(cells) if not c["prompt"].strip().strip("[]:").isdigit()]
    assert not not_run, f"{lesson}: code cells {not_run} did not run (prompts {[cells[i]['prompt'] for i in not_run]})"
    errors = [(i, c["errors"][0][:400]) for i, c in enumerate(cells) if c["errors"]]
    assert not errors, f"{lesson}: error outputs: {errors}"
    shown = tuple(c["images"] for c in cells)
    missing = [(i, want, got) for i, (want, got) in enumerate(zip(expected, shown)) if got < want]
    assert not missing, f"{lesson}: (code cell, figures expected, figures shown): {missing}"
    print(f"{lesson}: ran in {seconds:.0f} s in JupyterLab, {sum(shown)} figures")
    if lesson.startswith("09-"):
        check_sector_explorer_redraws(page)


def check_sector_explorer_redraws(page: Any) -> None:
    """Move the explorer's stride slider with the keyboard; its drawing (an image widget) must change."""
    slider = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="stride")).first
    slider.scroll_into_view_if_needed()
    image = page.locator(".jupyter-widgets img").first
    image.wait_for(timeout=30_000)
    src_before, shot_before = image.get_attribute("src"), image.screenshot()
    readout = slider.locator(".widget-readout")
    value_before = readout.inner_text().strip()
    slider.locator(".noUi-handle").first.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if readout.inner_text().strip() != value_before and image.get_attribute("src") != src_before:
            break
        time.sleep(0.5)
    value_after = readout.inner_text().strip()
    assert value_after != value_before, f"the stride slider did not move (still {value_before})"
    time.sleep(1)
    assert image.get_attribute("src") != src_before, f"stride {value_before} -> {value_after}: the drawing was not replaced"
    assert image.screenshot() != shot_before, f"stride {value_before} -> {value_after}: the drawing looks the same"

"""The built site and decks as a learner and an instructor meet them in Chromium (issue 33; `make test-browser`
after `make book` and `make slides`, as .ci/run does).

Every page of the book leads to the course (repository, issues, edit, licence; launch buttons on the lessons); on
a phone's 420 px a page says the mode once, shows no path of the recording machine and does not run off the
screen; every deck opens offline as reveal.js slides, none over the word budget besides its speaker notes.
Screenshots at 1366 and 420 px of the index and lessons 00, 06, 09, 10, 12 and 15 go to build/screenshots/; so do
a formula on a page and on a slide (MathML, rendered when building: no MathJax, no CDN) and the stacked panels of a
two-panel figure and a tapped wide figure on a phone. No page or deck loads a script from the network: lesson 09's
widget is a static snapshot; CJK text draws in the web font the build ships (screenshot: the glossary).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from helpers.tools import book, repository, slide_plan, webfont

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "build" / "book"
SLIDES = ROOT / "build" / "slides"
SHOTS = ROOT / "build" / "screenshots"
PAGES = ["index", "lessons/00-start-here", "lessons/06-measure-bandwidth", "lessons/09-coalesce-and-align-accesses",
         "lessons/10-model-zero-copy-reads", "lessons/12-decide-when-zero-copy-wins",
         "lessons/15-take-zero-copy-beyond-one-pcie-gpu"]


def _built(folder: Path, target: str) -> Path:
    if not (folder / "index.html").exists():
        pytest.skip(f"no {folder.relative_to(ROOT)}: run `make {target}` first")
    return folder


def offline_page(browser: Any, width: int) -> tuple[Any, list[str]]:
    """A page at ``width`` px on which every web request is refused and noted."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    asked: list[str] = []

    def refuse(route: Any) -> None:
        if route.request.url.startswith(("http://", "https://")):
            asked.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    return page, asked


def test_every_page_of_the_book_leads_to_the_course():
    site = _built(BOOK, "book")
    url = repository.url()
    pages = [site / "index.html", *sorted((site / "lessons").glob("*.html"))]
    assert len(pages) > 16
    for page in pages:
        html = page.read_text(encoding="utf-8")
        name = page.relative_to(site)
        assert f'href="{url}"' in html, f"{name}: no link to the repository"
        assert f"{url}/issues" in html, f"{name}: no link to open an issue"
        assert "CC BY 4.0" in html and "MIT licence" in html, f"{name}: no licence in the footer"
        assert "The course's authors" not in html
        if (ROOT / "lessons" / f"{page.stem}.ipynb").exists():
            links = repository.lesson_links(page.stem)
            assert "mybinder.org/v2/gh/" in html and "colab.research.google.com/github/" in html, \
                f"{name}: no launch buttons"
            assert f"{url}/edit/{repository.BRANCH}/lessons/{page.stem}.ipynb" in html, f"{name}: no edit link"
            assert links["Colab"].split("/blob/")[1] in html
    index = re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8"))
    assert f"git clone {url}.git" in index and "make lab" in index


@pytest.mark.parametrize("width", [1366, 420])
def test_pages_read_at_a_desk_and_on_a_phone(browser, width):
    site = _built(BOOK, "book")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, asked = offline_page(browser, width)
    for name in PAGES:
        page.goto((site / f"{name}.html").as_uri())
        page.wait_for_load_state("load")
        text = page.inner_text("main")
        assert "/tmp/" not in text, f"{name}: a temporary path of the recording machine"
        article = page.inner_text("article")
        top = article.split(page.locator("article h2").first.inner_text())[0]   # what comes before section 1
        # the session table's "mode" row, the old note's "in replay mode" and mode.describe()'s "Mode: replay"
        said = len(re.findall(r"(?m)^mode\s*$|\bin (?:replay|live) mode\b|Mode: (?:replay|live)", top))
        assert said <= 1, f"{name}: before its first section the page says the mode {said} times"
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 2, f"{name} at {width} px runs {overflow} px off the screen"
        page.screenshot(path=str(SHOTS / f"{name.split('/')[-1][:2]}-{width}.png"), full_page=False)
    assert not asked, f"a page asked the network for {sorted(set(asked))[:5]}"
    page.context.close()


REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=[\"']?(?:https?:)?//|require(?:\.min)?\.js|embed-amd\.js")


def test_no_page_or_deck_loads_a_script_from_the_network():
    built = [*sorted(_built(BOOK, "book").rglob("*.html")), *sorted(SLIDES.glob("*.html"))]
    remote = [p.relative_to(ROOT).as_posix() for p in built if REMOTE_SCRIPT.search(p.read_text(encoding="utf-8"))]
    assert not remote, f"pages that load a script from a CDN: {remote[:5]}"


def test_the_cjk_font_ships_with_the_book_and_the_decks_and_covers_their_text():
    site, decks = _built(BOOK, "book"), _built(SLIDES, "slides")
    sites = [site, *([site / "zh"] if (site / "zh" / "index.html").exists() else [])]  # each edition its own font
    styles = [*[(f"book {s.name}", s, (s / "_static" / "course.css").read_text(encoding="utf-8"), s / "_static")
                for s in sites],
              *[(d.relative_to(decks).as_posix(), d, d.read_text(encoding="utf-8"), d.parent / "fonts")
                for d in sorted(decks.rglob("*.slides.html"))]]   # each deck against the font beside it
    for name, folder, style, fonts in styles:
        assert "@font-face" in style and webfont.FAMILY in style, f"{name}: no @font-face for the CJK font"
        if folder in sites:
            pages = [p for pattern in ("*.html", "*.js") for p in folder.rglob(pattern)
                     if "_static" not in p.parts and (folder != site or "zh" not in p.relative_to(site).parts)]
            used = webfont.characters(p.read_text(encoding="utf-8", errors="ignore") for p in pages)
        else:
            used = webfont.characters([style])
        shipped = fonts / webfont.file_name()
        assert used and shipped.exists(), f"{name}: no CJK text (the glossary's terms) or no {shipped.name}"
        missing = set(used) - webfont.covered(shipped)
        assert not missing, f"{name}: the font lacks {''.join(sorted(missing))[:40]}"


def drawn_without_the_font(page: Any) -> list[str]:
    """The texts with CJK characters that Chromium drew with fewer glyphs from the web font than they have CJK
    characters: boxes (it kept them for text laid out while the font was loading, until webfont.SCRIPT)."""
    page.wait_for_timeout(200)
    count = page.evaluate("""() => { let n = 0; const cjk = /[\\u3000-\\u30ff\\u4e00-\\u9fff\\uff00-\\uffef]/g;
        for (const e of document.querySelectorAll("body *")) {
            const own = [...e.childNodes].filter(c => c.nodeType === 3).map(c => c.data).join("");
            const k = (own.match(cjk) || []).length;
            if (k && e.getClientRects().length) { e.dataset.zcCjk = k; n++; } }
        return n; }""")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    boxes = []
    for node in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-zc-cjk]"})["nodeIds"]:
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        ours = sum(f["glyphCount"] for f in fonts if f["isCustomFont"] and "CJK" in f["familyName"])
        attributes = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]
        if ours < int(dict(zip(attributes[0::2], attributes[1::2]))["data-zc-cjk"]):
            boxes.append(cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"][:80])
    assert count, "no CJK text on the page"
    return boxes


def test_lesson_09s_widget_shows_its_snapshot_and_chinese_draws_in_the_web_font(browser):
    site = _built(BOOK, "book")
    page, asked = offline_page(browser, 1366)
    page.goto((site / "lessons" / "09-coalesce-and-align-accesses.html").as_uri())
    snapshot = page.locator(".zc-widget").first
    snapshot.scroll_into_view_if_needed()
    assert snapshot.locator("img").first.evaluate("i => i.complete && i.naturalWidth > 100")
    assert "stride" in snapshot.inner_text() and "JupyterLab" in snapshot.inner_text()
    snapshot.screenshot(path=str(SHOTS / "09-widget-1366.png"))
    page.goto((site / "lessons" / "glossary.html").as_uri())
    page.wait_for_load_state("load")
    loaded = page.evaluate(f"""async () => {{ await document.fonts.ready;
        return [...document.fonts].filter(f => f.family.includes("{webfont.FAMILY}")).map(f => f.status); }}""")
    assert loaded == ["loaded"], f"the CJK web font did not load: {loaded}"
    assert not drawn_without_the_font(page), "CJK text drawn in a font without its glyphs (boxes)"
    page.locator("article table").first.screenshot(path=str(SHOTS / "glossary-cjk-1366.png"))
    assert not asked, f"asked the network for {sorted(set(asked))[:5]}"
    page.context.close()


def test_every_deck_opens_offline_as_slides_within_the_word_budget(browser):
    decks = sorted(_built(SLIDES, "slides").glob("*.slides.html"))
    assert decks, "make slides wrote no deck"
    page, asked = offline_page(browser, 1366)
    for deck in decks:
        page.goto(deck.as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
        assert page.evaluate("Reveal.getTotalSlides()") > 5, f"{deck.name} is not a deck of slides"
        html = page.evaluate("document.querySelector('.reveal .slides').outerHTML")
        counts = slide_plan.slide_words(html)
        worst = max(counts)
        assert worst <= slide_plan.BUDGET, f"{deck.name}: a slide holds {worst} words"
        assert '<aside class="notes">' in html, f"{deck.name} has no speaker notes"
        if deck.name.startswith("09-"):   # its title slide says 合并访问
            assert not drawn_without_the_font(page), f"{deck.name}: CJK text drawn as boxes"
        if deck.name.startswith("06-"):
            page.evaluate("Reveal.slide(0, 0)")
            page.screenshot(path=str(SHOTS.parent / "slides-06-title.png"))
    assert not asked, f"a deck asked the network for {sorted(set(asked))[:5]}"
    page.context.close()


MATHS = ["08-keep-enough-bytes-in-flight", "10-model-zero-copy-reads"]   # the lessons with formulas


def _drawn_as_maths(page: Any, selector: str) -> dict:
    """The first formula's box, its namespace and its computed display (``block math`` or ``math`` where the browser
    lays it out as MathML)."""
    return page.evaluate("""(sel) => { const m = document.querySelector(sel); if (!m) return null;
        const r = m.getBoundingClientRect();
        return {width: r.width, height: r.height, mathml: m.namespaceURI === "http://www.w3.org/1998/Math/MathML",
                display: getComputedStyle(m).display}; }""", selector)


def test_formulas_are_mathml_on_the_page_and_on_the_slide(browser):
    site, decks = _built(BOOK, "book"), _built(SLIDES, "slides")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, asked = offline_page(browser, 1366)
    for name in MATHS:
        html = (site / "lessons" / f"{name}.html").read_text(encoding="utf-8")
        assert "<math " in html and "mathjax@" not in html and "tex-mml-chtml" not in html, name
        page.goto((site / "lessons" / f"{name}.html").as_uri())
        text = page.inner_text("article")
        assert "$$" not in text and "\\text{" not in text and "\\frac" not in text, f"{name}: raw TeX on the page"
        box = _drawn_as_maths(page, "article math[display=block]")
        # "block math": the browser lays the element out as MathML (a fraction stands taller than a line of text)
        assert box and box["mathml"] and box["display"] == "block math" and box["height"] > 14, (name, box)
        page.locator("article div.math").first.screenshot(path=str(SHOTS / f"{name[:2]}-maths-1366.png"))
    for name in MATHS:
        page.goto((decks / f"{name}.slides.html").as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
        page.evaluate("""() => { const m = document.querySelector('.reveal .slides math');
            const s = m.closest('section'); const i = Reveal.getIndices(s); Reveal.slide(i.h, i.v); }""")
        page.wait_for_timeout(800)   # the slide transition
        text = page.inner_text(".reveal .slides section.present")
        assert "$$" not in text and "\\text{" not in text, f"{name}: raw TeX on the slide"
        box = _drawn_as_maths(page, ".reveal .slides section.present math")
        assert box and box["mathml"] and "math" in box["display"] and box["height"] > 14, (name, box)
        page.screenshot(path=str(SHOTS.parent / f"slides-{name[:2]}-maths.png"))
    assert not asked, f"a page with formulas asked the network for {sorted(set(asked))[:5]}"
    page.context.close()


def test_wide_figures_stack_or_zoom_on_a_phone(browser):
    site = _built(BOOK, "book")
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1366, 420):
        page, _ = offline_page(browser, width)
        page.goto((site / "lessons" / "06-measure-bandwidth.html").as_uri())
        whole, stacked = page.locator("img.zc-split").first, page.locator(".zc-panels").first
        assert whole.is_visible() == (width > 640) and stacked.is_visible() == (width <= 640), width
        if width <= 640:
            boxes = [page.locator(".zc-panels img").nth(i).bounding_box() for i in (0, 1)]
            assert boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"] - 1, "the panels are not one above the other"
            assert all(b["x"] >= 0 and b["x"] + b["width"] <= width for b in boxes), boxes
            assert all(b["width"] >= 0.75 * width for b in boxes), "a panel is shrunk below the screen's width"
            stacked.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"06-panels-{width}.png"))
            legend_side = page.locator(".zc-panels img").nth(1)
            legend_side.click()
            assert legend_side.bounding_box()["width"] > width, "a tapped panel does not zoom"
            page.goto((site / "lessons" / "10-model-zero-copy-reads.html").as_uri())
            wide = page.locator("img.zc-wide[tabindex]").first
            wide.scroll_into_view_if_needed()
            before = wide.bounding_box()["width"]
            wide.click()
            after = wide.bounding_box()["width"]
            assert before <= width < after, (before, after)
            page.screenshot(path=str(SHOTS / f"10-zoomed-{width}.png"))
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 2, f"a zoomed figure runs {overflow} px off the page, not within its output"
        page.context.close()


def test_the_site_says_how_it_was_built_with_the_courses_paths():
    site = _built(BOOK, "book")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "How this site was built" in index and "/tmp/" not in index
    assert re.search(r"data/[\w.-]+\.json", index)
    assert book.AUTHORS in index

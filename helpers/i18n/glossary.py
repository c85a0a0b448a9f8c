"""The glossary (lessons/glossary.md, 术语表) as the Chinese edition's reference for terms: each term's Chinese
form is the one a Chinese lesson uses wherever its English twin uses the term, and no other form of it appears.

A glossary row pairs the English terms of its first column with the Chinese forms of its second, one for one when
both list as many (``thread, block, grid`` / ``线程, 线程块, 网格``; an English term left without a form is not checked); a form's parenthesised part is an aside, not the
form. :data:`OTHER_FORMS` lists the other Chinese renderings of a term found in the literature, which the lessons
must not use; :data:`NOT_CHECKED` the terms whose English word is too common to require the form (said why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths

__all__ = ["Term", "terms", "OTHER_FORMS", "NOT_CHECKED", "problems", "first_uses"]

GLOSSARY = paths.LESSONS / "glossary.md"

# The glossary's Chinese form -> renderings the course does not use (one Chinese term per concept).
OTHER_FORMS: dict[str, tuple[str, ...]] = {
    "零拷贝": ("零复制", "零副本"),
    "锁页内存": ("页锁定内存", "钉住内存", "页面锁定内存"),
    "映射内存": ("已映射内存",),
    "合并访问": ("聚合访问", "联合访问", "合并内存访问"),
    "核函数": ("内核函数",),
    "显存": ("设备内存",),
    "流式多处理器": ("流多处理器",),
    "二级缓存": ("L2 缓存", "L2缓存"),
    "回放模式": ("重放模式",),
    "统一虚拟寻址": ("统一虚拟地址", "统一寻址"),
    "有用带宽": ("有效带宽",),        # useful bandwidth: the bytes the threads asked for, per second
    "未对齐": ("不对齐",),
    "线程束": ("卷绕",),
    "可分页内存": ("分页内存",),
    "物理主机": ("物理宿主机",),      # the physical host under the recording VM (the 主机, 设备 row)
}

# English terms too common in other senses to require the glossary's form wherever they appear.
NOT_CHECKED: dict[str, str] = {
    "page": "'page' also heads compound terms (page table, page-locked) that carry their own forms",
    "host": "'host' appears inside 'host memory' and code names; 主机 is checked through 'host, device' pairs",
    "device": "'device' is also 'a device' in general (a network card); 设备 or 显存 follows the sense",
    "link": "'link' is also a hyperlink in the lessons' text",
    "block": "'block' is also a block of memory (compaction gathers free memory into larger blocks)",
    "tag": "'tag' is also a notebook cell's tag (the exercise tag)",
    "completion": "'completion' is also the time to complete a lesson",
    "scope": "'scope' is also a claim's scope (its platform)",
    "event": "'event' is used in its everyday sense too",
    "stream": "'stream' is used in its everyday sense too",
    "L1": "the L1 is named by its letters in both editions",
    "generation": "'generation' is used for GPU generations too",
    "volatile": "kept as the C keyword `volatile` in both editions",
}


@dataclass(frozen=True)
class Term:
    """One English term and the Chinese form the course uses for it."""

    english: str
    chinese: str


# Glossary cells that name two forms in one: "一级/二级缓存" is 一级缓存 and 二级缓存.
JOINED = {"一级/二级缓存": "一级缓存, 二级缓存"}


def _forms(cell: str) -> list[str]:
    cell = JOINED.get(cell.strip(), cell)
    cell = re.sub(r"（[^）]*）|\([^)]*\)", "", cell)
    return [" ".join(part.split()) for part in re.split(r"[,，]", cell) if part.strip()]


def terms(glossary: Path = GLOSSARY) -> list[Term]:
    """The glossary's (English, Chinese) pairs, from the rows whose Chinese column is filled."""
    found = []
    for line in glossary.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] in {"term", "---"} or not cells[1]:
            continue
        english = [e.strip("` ") for e in _forms(cells[0])]
        chinese = _forms(cells[1])
        found += [Term(e, c) for e, c in zip(english, chinese)]   # unpaired English terms are not checked
    return found


def prose(markdown: str) -> str:
    """Markdown without code spans, code blocks and link targets: the words a reader reads as text."""
    markdown = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    return re.sub(r"`[^`]*`|\]\([^)]*\)", " ", markdown)


def _uses(text: str, english: str, glossary: Path = GLOSSARY) -> bool:
    """Whether ``text`` uses the English term on its own (bandwidth inside useful bandwidth is the longer term)."""
    for longer in {t.english for t in terms(glossary)}:
        if english.lower() in longer.lower() and english.lower() != longer.lower():
            text = re.sub(rf"(?<![\w-]){re.escape(longer)}(?![\w-])", " ", text, flags=re.I)
    return re.search(rf"(?<![\w-]){re.escape(english)}(?![\w-])", text, re.I) is not None


def _alone(form: str, text: str, glossary: Path) -> str:
    """``text`` with every longer glossary form that holds ``form`` blanked out (线程 inside 线程束 is not 线程)."""
    for longer in {t.chinese for t in terms(glossary)}:
        if form in longer and form != longer:
            text = text.replace(longer, "\u3000" * len(longer))
    return text


def problems(english: str, chinese: str, glossary: Path = GLOSSARY) -> list[str]:
    """What the Chinese text of a lesson gets wrong against its English text: a glossary term the English uses
    whose Chinese form is absent, and any other form of a glossary term."""
    found = []
    for term in terms(glossary):
        if term.english in NOT_CHECKED or not re.search(r"[\u4e00-\u9fff]", term.chinese) or (
                term.english.lower() in term.chinese.lower()):   # "PCIe 总线": the English is the form's core
            continue
        if _uses(prose(english), term.english, glossary) and (
                term.chinese not in _alone(term.chinese, chinese, glossary)):
            found.append(f"the English uses {term.english!r}: the Chinese must say {term.chinese} (lessons/glossary.md)")
    for form, others in OTHER_FORMS.items():
        rest = prose(chinese).replace(form, " ")
        found += [f"{other!r} is not the course's term: write {form} (lessons/glossary.md)"
                  for other in others if other in rest]
    return found


def _checked(english: str, chinese: str, glossary: Path) -> list[Term]:
    """The glossary terms the English text uses (and whose form the Chinese text holds)."""
    return [t for t in terms(glossary) if t.english not in NOT_CHECKED and re.search(r"[\u4e00-\u9fff]", t.chinese)
            and _uses(prose(english), t.english, glossary) and t.chinese in _alone(t.chinese, chinese, glossary)]


def _names(term: Term, text: str) -> bool:
    """Whether ``text`` names the English term (one of its words, case aside)."""
    words = [w for w in re.split(r"[\s/-]+", term.english.lower()) if len(w) >= 2]
    return any(w in text.lower() for w in words)


def first_uses(english: str, chinese: str, glossary: Path = GLOSSARY) -> list[str]:
    """Terms whose first use in the Chinese text (headings aside) has no English beside it: the form followed by a
    parenthesis naming the English term, or inside a parenthesis that does, or right after the English term."""
    text = re.sub(r"(?m)^#.*$", "", prose(chinese))   # headings stay short: the English comes in the text
    found = []
    for term in _checked(english, text, glossary):
        if term.english.lower() in term.chinese.lower():   # "PCIe 总线" carries its English already
            continue
        at = _alone(term.chinese, text, glossary).find(term.chinese)
        after = re.match(r"[*\s]*[（(]([^）)]*)", text[at + len(term.chinese):])
        opened = max(text.rfind("（", 0, at), text.rfind("(", 0, at))
        closed = max(text.rfind("）", 0, at), text.rfind(")", 0, at))
        ends = [i for i in (text.find("）", at), text.find(")", at)) if i >= 0]
        inside = text[opened + 1:min(ends, default=len(text))] if opened > closed else None
        if after and _names(term, after.group(1)) or inside is not None and (
                _names(term, inside) or _names(term, text[max(0, opened - 40):opened])):
            continue
        found.append(f"{term.chinese} ({term.english}): its first use, {text[max(0, at - 15):at + 25]!r}, "
                     "gives no English term in parentheses")
    return found

"""Every hint's code runs where the learner stands (issue 31): a name or code a check's message shows (between
backticks, or a dotted call written in the prose, such as ``zc.sector_explorer.draw_warp(1, 1, 1)``) must name what
exists in the lesson at that exercise: the ``zc`` face and its attributes, what the notebook's cells defined before
the check, the exercise's own names; and a call to a known function must fit its signature.

The messages are read from ``helpers/exercises/lessonNN.py`` statically (the string arguments of ``hint``,
``not_yet``, ``correct`` and their kin, an f-string's fields read as ``1``), so every branch's message is checked,
not only those a wrong answer reaches. CUDA code in a message (a kernel line) is not Python and is left out.
A lesson whose hints are known to fail may be marked xfail(strict) in KNOWN; the failure lists each hint and the files to change.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from helpers import exercises as course_exercises
from tests import learner_names as ln

EXERCISES = ln.ROOT / "helpers" / "exercises"
MODULES = {path.stem[-2:]: [path] for path in sorted(EXERCISES.glob("lesson[0-9][0-9].py"))}
MODULES["09"].append(EXERCISES / "coalescing.py")       # lesson 09's kernel exercise keeps its messages there
FEEDBACK = re.compile(r"^_?(hint|not_yet|correct|Feedback|ExerciseResult)$|_hint$")
CUDA = re.compile(r"\b(__\w+|threadIdx|blockIdx|blockDim|gridDim|int|float|float4|unsigned|const|volatile|extern|"
                  r"void|atomic\w*|size_t|return)\b|;|->|&\w|\+\+|\w\s*\*\s*\w+\s*[,)=]")
BACKTICKS = re.compile(r"`([^`\n]+)`")
# code in prose: a name followed by attributes, calls and subscripts, e.g. np.random.default_rng(seed).permutation(n)
BARE = re.compile(r"(?<![\w.`/])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\((?:[^()\n]|\([^()\n]*\))*\)|\[[^\]\n]*\])*)")
NOT_CODE = re.compile(r"\.(py|cu|ipynb|json|md|h|so)\b|^(e\.g|i\.e|etc)\b")
# xfail(strict) for lessons whose hints fail today; fix them and remove the entry
KNOWN: dict[str, str] = {}


@dataclass(frozen=True)
class Message:
    """One message of a check: where it is written, the function around it, and its text."""

    path: Path
    line: int
    function: str
    text: str


def _constants(tree: ast.Module) -> dict[str, ast.AST]:
    """A module's top-level ``NAME = value`` assignments."""
    return {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


def _render(node: ast.AST, constants: dict[str, ast.AST]) -> str | None:
    """The text a string expression makes (an f-string's fields as ``1``), or None when it is no string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "1" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _render(node.left, constants), _render(node.right, constants)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name) and node.id in constants:
        return _render(constants[node.id], constants)
    return None


def _texts(node: ast.AST, constants: dict[str, ast.AST]) -> list[str]:
    """The strings an argument can make: itself, or those of its parts (the branches of a conditional...)."""
    text = _render(node, constants)
    if text is not None:
        return [text]
    return [t for child in ast.iter_child_nodes(node) for t in _texts(child, constants)]


def messages(path: Path) -> list[Message]:
    """Every message a check module's feedback calls can show."""
    tree = ast.parse(path.read_text())
    constants, found = _constants(tree), []
    for node, stack in ln.calls_in_functions(tree):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None) or ""
        if FEEDBACK.search(name):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                found.extend(Message(path, node.lineno, stack[0] if stack else "", text)
                             for text in _texts(argument, constants))
    return found


def spans(text: str) -> list[str]:
    """The code a message shows: its backticked spans, and dotted names or calls written in the prose (not one the
    message says not to use: "no math.ceil")."""
    code = BACKTICKS.findall(text)
    prose = BACKTICKS.sub(" ", text)

    def shown(match: re.Match) -> bool:
        return not re.search(r"\b(no|not|never|instead of)\s+$", prose[:match.start()])

    code += [m.group(1) for m in BARE.finditer(prose)    # dotted before any call: f(x) in prose may be a formula
             if "." in re.split(r"[(\[]", m.group(1))[0] and not NOT_CODE.search(m.group(1)) and shown(m)]
    return [c.strip() for c in code if c.strip()]


# --------------------------------------------------------------------------- where a message is read
def _calls(tree: ast.Module) -> dict[str, set[str]]:
    """Which of the module's top-level functions each one calls (by name)."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    return {name: {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
                   if isinstance(n, (ast.Name, ast.Attribute))} & set(functions)
            for name, node in functions.items()}


@lru_cache(maxsize=None)
def reached_from(path: Path) -> dict[str, set[str]]:
    """For each top-level function of a check module, the exercises whose check reaches it."""
    checks = {fn.__name__: name for name, fn in course_exercises.checks(path.stem[-2:]).items()
              if fn.__module__.endswith(path.stem)}
    graph = _calls(ast.parse(path.read_text()))
    reached: dict[str, set[str]] = {name: set() for name in graph}
    for start, exercise in checks.items():
        todo, seen = [start], set()
        while todo:
            function = todo.pop()
            if function in seen or function not in graph:
                continue
            seen.add(function)
            reached[function].add(exercise)
            todo.extend(graph[function])
    return reached


@dataclass(frozen=True)
class Scope:
    """What the learner has where a message shows: names bound (with what they were assigned; the exercise cell's
    and its solution's own variables too: a hint may speak of them) and, for plain names in an expression, every
    word of the exercise's code and its solution (a kernel's variables)."""

    names: dict[str, ast.AST | None]
    vocabulary: frozenset[str]


@lru_cache(maxsize=None)
def scope(lesson: str, exercise_names: frozenset[str]) -> Scope:
    """The scope at the checks of ``exercise_names`` (at the lesson's last check when the message is reached from
    none)."""
    chosen = [e for e in ln.exercises(lesson) if e.name in exercise_names] or list(ln.exercises(lesson))
    names: dict[str, ast.AST | None] = ln.defined_before(lesson, max(e.check.index for e in chosen))
    vocabulary: set[str] = set()
    for exercise in chosen:
        if exercise.cell.tree is not None:
            names.update({k: v for k, v in ln.bound_names(exercise.cell.tree, inside=True).items() if k not in names})
        solution = course_exercises.solution(lesson, exercise.name)
        solved = ln.parse_cell(solution)
        if solved is not None:
            names.update({k: None for k in ln.bound_names(solved, inside=True) if k not in names})
        vocabulary |= set(re.findall(r"[A-Za-z_]\w*", exercise.cell.source + "\n" + solution))
    return Scope(names, frozenset(vocabulary))


# --------------------------------------------------------------------------- judging one span
def _roots(tree: ast.AST) -> set[int]:
    """ids of the Name nodes that are called or whose attributes are taken (they must exist, not merely be words)."""
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            roots.add(id(node.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            roots.add(id(node.func))
    return roots


def _signature_problem(function: Any, call: ast.Call, bound_method: bool) -> str | None:
    """Why ``call`` does not fit ``function``'s signature, or None."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    if any(isinstance(a, ast.Starred) or isinstance(a, ast.Constant) and a.value is Ellipsis for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None   # f(...) or f(*args): any arguments
    args = [object()] * (len(call.args) + bound_method)
    try:
        signature.bind(*args, **{k.arg: object() for k in call.keywords})
    except TypeError as exc:
        return f"does not fit {function.__qualname__}{signature}: {exc}"
    return None


def span_problems(span: str, where: Scope) -> list[str]:
    """What in ``span`` would fail for the learner: a name not defined, an attribute that does not exist, a call that
    does not fit the function. A span that is not Python (CUDA, a formula in words) gives none."""
    if CUDA.search(span):
        return []
    try:
        tree = ast.parse(span)
    except SyntaxError:
        return []
    problems, roots, there = [], _roots(tree), ln.always_there()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in there:
            if node.id not in where.names and (id(node) in roots or node.id not in where.vocabulary):
                problems.append(f"`{node.id}` is not defined there")
        elif isinstance(node, ast.Attribute):
            owner = ln.resolve(node.value, where.names)
            if owner is not ln.MISSING and not ln.has_attribute(owner, node.attr):
                problems.append(f"`{ast.unparse(node)}` does not exist")
        elif isinstance(node, ast.Call):
            function = ln.resolve(node.func, where.names)
            if function is not ln.MISSING and callable(function) and not isinstance(function, ln.Instance):
                method = isinstance(node.func, ast.Attribute) and isinstance(
                    ln.resolve(node.func.value, where.names), ln.Instance)
                why = _signature_problem(function, node, method)
                if why:
                    problems.append(f"`{ast.unparse(node)}` {why}")
    return problems


def failures(lesson: str) -> list[str]:
    """Every failing span of a lesson's check messages, with its file, line and function."""
    found = []
    for path in MODULES[lesson]:
        reached = reached_from(path) if path.stem.startswith("lesson") else {}
        for message in messages(path):
            where = scope(lesson, frozenset(reached.get(message.function, set())))
            for span in spans(message.text):
                for problem in span_problems(span, where):
                    found.append(f"{path.name}:{message.line} ({message.function}): {problem}, in "
                                 f"{message.text[:160]!r}")
    return sorted(set(found))


LESSONS = [lesson for lesson in MODULES if ln.exercises(lesson)]


def _param(lesson: str) -> Any:
    if lesson in KNOWN:
        reason = f"{KNOWN[lesson]}; change {ln.where(lesson)}"
        return pytest.param(lesson, marks=pytest.mark.xfail(strict=True, reason=reason))
    return lesson


@pytest.mark.parametrize("lesson", [_param(lesson) for lesson in LESSONS])
def test_every_name_and_call_a_hint_shows_exists_in_the_lesson(lesson):
    found = failures(lesson)
    assert not found, f"lesson {lesson} (change {ln.where(lesson)}), hints whose code fails:\n" + "\n".join(found)


def test_the_reader_finds_the_code_in_messages():
    """The extraction itself: backticks, a dotted call in prose, a bare dotted name; not file names or 'e.g.'."""
    text = ("draw it: view.draw_warp(1, 1)? read `len(set(...))` and course.attributes[\"L2\"], e.g. in "
            "lesson09.py or 1.5 GB/s, and no math.ceil")
    assert spans(text) == ["len(set(...))", "view.draw_warp(1, 1)", 'course.attributes["L2"]']


def test_a_missing_name_a_missing_attribute_and_a_wrong_call_are_found():
    where = scope("09", frozenset({"sectors_per_warp"}))
    assert span_problems("view.draw_warp(1, 0, 4)", where) == ["`view` is not defined there"]
    assert span_problems("zc.sector_explorer.draw_warp(1, 0, 4)", where) == []
    assert span_problems("zc.sector_explorer.no_such_thing(1)", where) == [
        "`zc.sector_explorer.no_such_thing` does not exist"]
    wrong = span_problems("zc.sector_explorer.draw_warp(1, 2, 3, 4, 5, 6, 7)", where)
    assert len(wrong) == 1 and "does not fit draw_warp" in wrong[0]
    assert span_problems("if (t < rows * cols) { int r = t / cols; }", where) == []   # CUDA: not judged here
    assert span_problems("offset + t * stride", where) == []    # the exercise's own words


def test_every_lesson_with_exercises_is_read():
    assert set(LESSONS) == set(course_exercises.LESSONS_WITH_EXERCISES)
    assert all(messages(path) for paths in MODULES.values() for path in paths)


# --------------------------------------------------------------------------- names a lesson's text and outputs show
# A dotted name a lesson's Markdown or a finding's output shows is one a learner copies into a cell, where only the
# face is bound (`import helpers as zc`): it is written `zc.gpu.…` / `zc.pages.…` and exists (issue 31: lesson 13
# wrote `gpu.RegisteredArray`, `gpu.host_flags` and `helpers.memory.pages.page_aligned_empty`).
SHOWN = re.compile(r"(?<![\w./-])((?:zc|gpu|pages|helpers)(?:\.[A-Za-z_]\w*)+)")
# xfail(strict) for lessons whose Markdown shows such names today; fix them and remove the entry
KNOWN_TEXT: dict[str, str] = {}


def shown_name_problems(text: str) -> list[str]:
    """The dotted names ``text`` shows that fail in a lesson cell: not under ``zc.``, or absent from the face."""
    import helpers as zc

    problems = []
    for name in SHOWN.findall(text):
        if NOT_CODE.search(name):
            continue
        root, *attributes = name.split(".")
        if root != "zc":
            problems.append(f"`{name}` (only `zc` is bound in a lesson: `zc.{name}`?)"
                            if root != "helpers" else f"`{name}` (only `zc` is bound in a lesson)")
            continue
        owner: Any = zc
        for attribute in attributes:
            if not hasattr(owner, attribute):
                problems.append(f"`{name}` does not exist")
                break
            owner = getattr(owner, attribute)
    return problems


def _markdown(lesson: str) -> str:
    import nbformat

    path, _ = ln.notebook(lesson)
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def _text_param(lesson: str) -> Any:
    if lesson in KNOWN_TEXT:
        return pytest.param(lesson, marks=pytest.mark.xfail(strict=True, reason=KNOWN_TEXT[lesson]))
    return lesson


@pytest.mark.parametrize("lesson", [_text_param(lesson) for lesson in sorted(MODULES)])
def test_every_dotted_name_a_lesson_shows_is_reached_through_zc(lesson):
    found = shown_name_problems(_markdown(lesson))
    assert not found, f"lesson {lesson}'s Markdown shows names a learner cannot run:\n" + "\n".join(found)


def _outputs() -> dict[str, list[str]]:
    """The text of outputs that name functions, computed as the lessons compute them (replay, the reference record)."""
    from helpers import experiments
    from helpers.findings import map_pages_on_the_gpu as gpu_pages
    from helpers.findings import use_write_combined_and_registered_memory as found

    reg, identity = experiments.reference("registered"), experiments.reference("address_identity")
    wc, pagemap = experiments.reference("write_combined"), experiments.reference("pagemap_pinned")
    attributes = dict(identity.provenance.get("attributes") or {"UNIFIED_ADDRESSING": 1})
    return {"04": [str(gpu_pages.second_look(identity)), str(gpu_pages.promises(identity, attributes))],
            "13": [str(found.this_machine()), str(found.verdict(wc)), str(found.flags(identity)),
                   str(found.registration(reg)), str(found.probes(reg)), str(found.refusals()),
                   str(found.summary(wc, pagemap, identity, reg, attributes))]}


@pytest.mark.parametrize("lesson", ["04", "13"])
def test_every_dotted_name_an_output_shows_is_reached_through_zc(lesson):
    found = [p for text in _outputs()[lesson] for p in shown_name_problems(text)]
    assert not found, f"lesson {lesson}'s outputs show names a learner cannot run:\n" + "\n".join(found)


def test_the_shown_name_reader_finds_bare_and_misspelled_names():
    assert shown_name_problems("with `gpu.RegisteredArray(a)` or helpers.memory.pages.page_aligned_empty") == [
        "`gpu.RegisteredArray` (only `zc` is bound in a lesson: `zc.gpu.RegisteredArray`?)",
        "`helpers.memory.pages.page_aligned_empty` (only `zc` is bound in a lesson)"]
    assert shown_name_problems("`zc.gpu.RegisteredArray`, zc.pages.page_aligned_empty(2048), 04-on-the-gpu.ipynb") == []
    assert shown_name_problems("zc.gpu.no_such_thing") == ["`zc.gpu.no_such_thing` does not exist"]

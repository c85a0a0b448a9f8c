"""pyproject.toml and environment.yml must list the same packages.

`make` installs from pyproject.toml (dependencies plus the lab, test and gpu
extras); conda users install from environment.yml. The two drift apart easily,
so these tests compare package names (normalised) and floor versions (>=).
environment.yml is parsed line by line, so PyYAML is not needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Conda-only entries that have no counterpart in pyproject's dependency lists.
CONDA_ONLY = {"python", "pip"}


def normalise(name: str) -> str:
    """PEP 503 name normalisation: case-insensitive, -, _ and . alike."""
    return re.sub(r"[-_.]+", "-", name).lower()


_SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'numpy>=1.24' -> ('numpy', '1.24'); 'pip' -> ('pip', None).

    Works for PEP 508 requirements and conda match specs alike; only a
    '>=' floor is extracted (environment markers after ';' are ignored).
    """
    match = _SPEC.match(spec.split(";")[0])
    if not match:
        raise ValueError(f"cannot parse package spec {spec!r}")
    name, rest = match.groups()
    floor = re.search(r">=\s*([^,\s]+)", rest)
    return normalise(name), floor.group(1) if floor else None


def parse_environment_yml(text: str) -> dict:
    """Tiny parser for the subset of YAML that environment.yml uses.

    Returns {"name": str, "channels": [...], "dependencies": [...],
    "pip": [...]}, where "pip" holds the entries of the `- pip:` sub-list.
    """
    result: dict = {"name": None, "channels": [], "dependencies": [], "pip": []}
    section = None  # top-level key whose list we are reading
    in_pip = False
    for raw in text.splitlines():
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if indent == 0:
            key, _, value = stripped.partition(":")
            section, in_pip = key.strip(), False
            if section == "name":
                result["name"] = value.strip().strip("'\"")
            continue
        if not stripped.startswith("- "):
            raise ValueError(f"unexpected line in environment.yml: {raw!r}")
        item = stripped[2:].strip().strip("'\"")
        if section == "dependencies":
            if item == "pip:":
                in_pip, pip_indent = True, indent
            elif in_pip and indent > pip_indent:
                result["pip"].append(item)
            else:
                in_pip = False
                result["dependencies"].append(item)
        elif section in result and isinstance(result[section], list):
            result[section].append(item)
    return result


def conda_requirements(env: dict) -> dict[str, str | None]:
    reqs = dict(parse_spec(dep) for dep in env["dependencies"])
    reqs.update(parse_spec(dep) for dep in env["pip"] if not dep.startswith("-"))   # PyPI-only packages
    for name in CONDA_ONLY:
        reqs.pop(name, None)
    return reqs


def pyproject_requirements(project: dict) -> dict[str, str | None]:
    specs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        specs.extend(extra)
    return dict(parse_spec(spec) for spec in specs)


def differences(conda: dict[str, str | None], pypi: dict[str, str | None]) -> list[str]:
    """Human-readable list of every way the two requirement sets disagree."""
    problems = []
    for name in sorted(conda.keys() - pypi.keys()):
        problems.append(f"{name} is in environment.yml but not in pyproject.toml")
    for name in sorted(pypi.keys() - conda.keys()):
        problems.append(f"{name} is in pyproject.toml but not in environment.yml")
    for name in sorted(conda.keys() & pypi.keys()):
        a, b = conda[name], pypi[name]
        if a and b and a != b:
            problems.append(f"{name}: floor >={a} in environment.yml but >={b} in pyproject.toml")
    return problems


def load_pyproject() -> dict:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        tomllib = pytest.importorskip(
            "tomli", reason="reading pyproject.toml needs tomllib (Python 3.11+) or tomli"
        )
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def env() -> dict:
    return parse_environment_yml((ROOT / "environment.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def project() -> dict:
    return load_pyproject()["project"]


# --- the real files ---------------------------------------------------------


def test_environment_yml_basics(env):
    assert env["name"] == "zero-copy-course"
    assert env["channels"] == ["conda-forge"]
    assert "-e ." in env["pip"], "environment.yml must pip-install the helpers package (-e .)"


def test_same_packages_and_floors(env, project):
    problems = differences(conda_requirements(env), pyproject_requirements(project))
    assert not problems, "pyproject.toml and environment.yml disagree:\n" + "\n".join(problems)


def test_same_python_floor(env, project):
    conda_python = dict(parse_spec(dep) for dep in env["dependencies"]).get("python")
    assert conda_python is not None, "environment.yml must give python a floor (python>=X)"
    assert project["requires-python"] == f">={conda_python}"


# --- the check itself can fail ----------------------------------------------

_PYPROJECT_EXAMPLE = {
    "dependencies": ["numpy>=1.24", "Foo_Bar>=2.0"],
    "optional-dependencies": {"test": ["pytest>=7.0"]},
}

_ENV_EXAMPLE = """\
name: example
channels:
  - conda-forge
dependencies:
  - python>=3.10
  - pip
  - numpy>=1.24
  - foo-bar>=2.0   # normalised name matches Foo_Bar
  - pytest
  - pip:
      - -e .
"""


def test_example_that_agrees_passes():
    env = parse_environment_yml(_ENV_EXAMPLE)
    assert env["pip"] == ["-e ."]
    assert differences(conda_requirements(env), pyproject_requirements(_PYPROJECT_EXAMPLE)) == []


def test_package_in_one_file_only_is_caught():
    env = parse_environment_yml(_ENV_EXAMPLE.replace("  - pip:\n", "  - scipy>=1.10\n  - pip:\n"))
    assert differences(conda_requirements(env), pyproject_requirements(_PYPROJECT_EXAMPLE)) == [
        "scipy is in environment.yml but not in pyproject.toml"
    ]
    extra = {**_PYPROJECT_EXAMPLE, "optional-dependencies": {"test": ["pytest>=7.0", "nbval>=0.11"]}}
    env = parse_environment_yml(_ENV_EXAMPLE)
    assert differences(conda_requirements(env), pyproject_requirements(extra)) == [
        "nbval is in pyproject.toml but not in environment.yml"
    ]


def test_different_floor_is_caught():
    env = parse_environment_yml(_ENV_EXAMPLE.replace("numpy>=1.24", "numpy>=1.26"))
    assert differences(conda_requirements(env), pyproject_requirements(_PYPROJECT_EXAMPLE)) == [
        "numpy: floor >=1.26 in environment.yml but >=1.24 in pyproject.toml"
    ]

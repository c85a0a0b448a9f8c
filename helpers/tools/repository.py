"""Where the course lives, named in one place: ``CITATION.cff``'s ``repository-code``.

The book's repository, issue, edit and launch links (``make book``, :mod:`helpers.tools.book`) and the README's
badges name the same repository; ``tests/test_open_course.py`` checks that they agree. In a fork, change the
``OWNER`` in that one line (and the README's badges with it). Nothing here touches the network: these are links.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths

BRANCH = "main"
_FIELD = re.compile(r'^repository-code:\s*"?(https://github\.com/([\w.-]+/[\w.-]+?))"?\s*$', re.M)


def url(citation: Path | None = None) -> str:
    """The repository's web address, e.g. ``https://github.com/OWNER/zero-copy-course``."""
    path = citation or paths.ROOT / "CITATION.cff"
    match = _FIELD.search(path.read_text(encoding="utf-8"))
    if not match:
        raise ValueError(f"{path} has no 'repository-code: \"https://github.com/OWNER/NAME\"' line; add one.")
    return match.group(1)


def slug(citation: Path | None = None) -> str:
    """``OWNER/NAME`` of the repository."""
    return url(citation).removeprefix("https://github.com/")


def owner(citation: Path | None = None) -> str:
    """The account that holds the repository (``OWNER`` until a fork sets it)."""
    return slug(citation).split("/")[0]


def site(citation: Path | None = None) -> str:
    """Where GitHub Pages publishes the book (``.github/workflows/book.yml``)."""
    account, name = slug(citation).split("/")
    return f"https://{account}.github.io/{name}/"


def lesson_links(stem: str, citation: Path | None = None) -> dict[str, str]:
    """Launch and source links of one lesson (``00-start-here``): Binder, Colab, GitHub."""
    name = slug(citation)
    return {
        "Binder": f"https://mybinder.org/v2/gh/{name}/HEAD?urlpath=lab/tree/lessons/{stem}.ipynb",
        "Colab": f"https://colab.research.google.com/github/{name}/blob/{BRANCH}/lessons/{stem}.ipynb",
        "GitHub": f"{url(citation)}/blob/{BRANCH}/lessons/{stem}.ipynb",
    }

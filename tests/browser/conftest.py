"""JupyterLab started as `make lab` starts it, and a Chromium driven by Playwright (`make test-browser`).

These tests run only when ZC_BROWSER_TESTS=1 (`make test-browser` sets it): each takes a
minute. Without Playwright or a Chromium they skip and say why. The lab gets its own settings
folder with autosave off, so running the lessons writes nothing into lessons/.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAILURES = ROOT / "build" / "browser-failures"
# Flags that work as root in a container, with no network beyond the lab on 127.0.0.1.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SYSTEM_CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("ZC_BROWSER_TESTS", "") in ("", "0"):
        skip = pytest.mark.skip(reason="browser tests run with `make test-browser` (ZC_BROWSER_TESTS=1)")
        for item in items:
            if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
                item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item._zc_failed = report.failed  # type: ignore[attr-defined]


def chromium_path() -> str | None:
    """The system's Chromium: $ZC_CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH."""
    if os.environ.get("ZC_CHROMIUM"):
        return os.environ["ZC_CHROMIUM"]
    for name in SYSTEM_CHROMIUMS:
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lessons_state() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((ROOT / "lessons").glob("*.ipynb"))}


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium: the system's (through executable_path) or Playwright's own."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: run `make test-browser`, "
                                   "which installs the course's `browser` extra")
    executable = chromium_path()
    with sync_api.sync_playwright() as p:
        try:
            launched = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        except sync_api.Error as exc:
            where = executable or "Playwright's own Chromium"
            pytest.skip(f"no usable Chromium ({where}: {str(exc).splitlines()[0]}); install one: "
                        "`apt-get install chromium` (Debian/Ubuntu), or `playwright install chromium`, "
                        "or set ZC_CHROMIUM to a Chromium's path")
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """JupyterLab started by `make lab LAB_ARGS=...` on a free port; its URL and token. Stopped at the end,
    and the lessons are checked to be byte-for-byte as before."""
    home = tmp_path_factory.mktemp("lab")
    settings = home / "settings"
    for plugin, values in {"@jupyterlab/docmanager-extension/plugin": {"autosave": False},
                           "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none",
                                                                                "autoStartDefaultKernel": True},
                           "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                                            "checkForUpdates": False}}.items():
        target = settings / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
            f"--IdentityProvider.token={token}")
    log = (home / "lab.log").open("w")
    before = _lessons_state()
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # `make lab` may first repair .venv
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail("`make lab` did not start JupyterLab:\n" + (home / "lab.log").read_text()[-3000:])
            time.sleep(1)
        yield {"url": base, "token": token, "log": home / "lab.log"}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    changed = [name for name, data in _lessons_state().items() if before.get(name) != data]
    assert not changed, f"running the lessons in JupyterLab changed {changed} on disk (autosave?)"


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser page; a screenshot of it is kept in build/browser-failures/ if the test fails."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    if getattr(request.node, "_zc_failed", False):
        FAILURES.mkdir(parents=True, exist_ok=True)
        shot = FAILURES / f"{request.node.name.replace('/', '_')}.png"
        try:
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
        except Exception as exc:  # the page may be gone; the failure itself is what matters
            print(f"no screenshot of the failure: {exc}")
    context.close()

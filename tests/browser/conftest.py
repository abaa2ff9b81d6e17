"""Browser fixtures: the real app on uvicorn (``live``) and Debian's chromium driven by
Playwright for Python (``page``).

Chromium comes from the system (``scripts/with-chromium.sh`` installs it for ``make
test`` and exports ``TOKENRISK_TEST_CHROMIUM``); Playwright's own browser download cannot
work here.  Without chromium the tests are skipped only when this user cannot install
it (not root), with a reason that says so; as root a missing chromium is a failure.

Every request the page makes to anything but the live server is aborted and recorded,
and each test fails if there was one: the page and the API docs must work offline.  Every
console error and uncaught exception of the page is recorded too, and fails the test;
the one exception is chromium's "Failed to load resource" line for an HTTP error status
the test expects the API to answer (``console.expect_status(404)``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pagecheck import DESKTOP, Console
from playwright.sync_api import Browser, Page, Route, expect, sync_playwright
from reliability.liveserver import LiveServer

from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


expect.set_options(timeout=90_000)  # a check on a loaded machine may take a while


def chromium_path() -> str:
    found = os.environ.get("TOKENRISK_TEST_CHROMIUM") or shutil.which("chromium")
    if found:
        return found
    if os.geteuid() == 0:
        pytest.fail("chromium is missing; run `make test` (scripts/with-chromium.sh installs it)")
    pytest.skip("BROWSER TESTS NOT RUN: chromium is not installed and this user is not root")


@pytest.fixture(scope="session")
def live(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("page"), deadline=60.0)
    with LiveServer(settings, devnet) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Per module: Playwright's sync API keeps an event loop set on this thread while it
    runs, which would break ``asyncio.run`` in the tests that follow (the CLI's)."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


LOCAL = "http://127.0.0.1:"
"""The live servers of the tests (several may run): anything else is from elsewhere."""


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(browser: Browser, live: LiveServer, console: Console) -> Iterator[Page]:
    """A fresh browser tab; requests leaving the live server are aborted and fail the test,
    and so does any console error the test did not expect."""
    context = browser.new_context(viewport=DESKTOP)
    outside: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    tab = context.new_page()
    tab.on("console", console.record)
    tab.on("pageerror", console.crash)
    tab.set_default_timeout(90_000)
    try:
        yield tab
    finally:
        context.close()
    assert outside == [], f"the page tried to load from elsewhere: {outside}"
    assert console.unexpected() == [], f"console errors: {console.unexpected()}"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS

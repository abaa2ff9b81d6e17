"""Helpers of the browser tests: open a token's page and wait for the answer, what the
banner must say for an API answer, and what a person would see as broken, measured from
the DOM of the page as rendered.

``LAYOUT_PROBLEMS`` runs in the page and lists, in words: the page scrolling sideways,
visible elements sticking out of their container (horizontally; containers that scroll
or clip are allowed to hold wider content), elements whose own content is wider than
they are, and text wrapped letter by letter (a text of six or more characters laid out
on three or more lines with fewer than four characters a line on average).  An empty
list means none was found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import ConsoleMessage, Error, Page, ViewportSize, expect
from reliability.liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

DESKTOP: ViewportSize = {"width": 1100, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
FAILED_LOAD = re.compile(r"Failed to load resource: the server responded with a status of (\d+)")


@dataclass
class Console:
    """The page's console errors and uncaught exceptions, and the HTTP error statuses a
    test expects the API to answer (chromium logs each as a console error)."""

    errors: list[str] = field(default_factory=list)
    expected: set[int] = field(default_factory=set)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def expect_status(self, *statuses: int) -> None:
        self.expected.update(statuses)

    def allow(self, pattern: str) -> None:
        """A console error the test expects (e.g. the CSP blocking an outside load)."""
        self.allowed.append(re.compile(pattern))

    def record(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def crash(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error}")

    def unexpected(self) -> list[str]:
        def allowed(text: str) -> bool:
            match = FAILED_LOAD.search(text)
            if match and int(match.group(1)) in self.expected:
                return True
            return any(p.search(text) for p in self.allowed)

        return [e for e in self.errors if not allowed(e)]


RISK_KIND = {
    "very_low": "ok",
    "low": "ok",
    "medium": "caution",
    "high": "danger",
    "very_high": "danger",
    "honeypot": "honeypot",
}
"""The banner's colour for each ``summary.risk`` when the token is not a honeypot."""


def expected_kind(body: dict[str, Any]) -> str:
    """The banner an IsHoneypot answer must get: the honeypot decision first (absent:
    unknown), then the risk, so a green banner never sits above a high risk."""
    result = body.get("honeypotResult")
    if result is None:
        return "unknown"
    if result["isHoneypot"]:
        return "honeypot"
    return RISK_KIND.get(body["summary"]["risk"], "unknown")


def token(devnet: RunningDevnet, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


def api(live: LiveServer, path: str, **params: str) -> httpx.Response:
    return httpx.get(f"{live.url}{path}", params=params, timeout=120)


def open_token(page: Page, live: LiveServer, chain: int | str, address: str) -> None:
    """Open the token's shareable URL and wait until the page has its whole answer (or
    an error): the page sets ``body[data-state]`` to done or error when it is finished."""
    page.goto(f"{live.url}/token/{chain}/{address}")
    expect(page.locator("body")).to_have_attribute("data-state", re.compile("^(done|error)$"))


LAYOUT_PROBLEMS = "\n".join(
    line
    for line in Path(__file__).with_name("layout.js").read_text(encoding="utf-8").splitlines()
    if not line.startswith("//")
)
"""The checker's source, an arrow function (its leading comment lines dropped, so that
Playwright calls it rather than evaluating it as an expression)."""


def layout_problems(page: Page) -> list[str]:
    """What is broken in the page's layout at its current viewport (empty when nothing)."""
    problems: list[str] = page.evaluate(LAYOUT_PROBLEMS)
    return problems

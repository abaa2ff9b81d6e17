"""axe-core (npm, pinned in package.json) on the page in its main states, at desktop and
phone width: no serious or critical accessibility violation (labels, contrast, names,
landmarks, keyboard access), and the check is shown to catch one.

axe is injected as a script, which the page's CSP forbids, so these tabs bypass the CSP
(every other browser test runs under it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pagecheck import DESKTOP, PHONE, open_token, token
from playwright.sync_api import Browser, Page, ViewportSize, expect
from reliability.liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = {"serious", "critical"}


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is a dev dependency)")
    context = browser.new_context(viewport=DESKTOP, bypass_csp=True)
    try:
        yield context.new_page()
    finally:
        context.close()


def violations(page: Page) -> list[dict[str, Any]]:
    """axe's serious and critical violations of the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
    )
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in found
        if v["impact"] in SERIOUS
    ]


def at_both_widths(page: Page) -> dict[str, list[dict[str, Any]]]:
    sizes: dict[str, ViewportSize] = {"desktop": DESKTOP, "phone": PHONE}
    out = {}
    for name, size in sizes.items():
        page.set_viewport_size(size)
        out[name] = violations(page)
    return out


@pytest.mark.parametrize("token_id", ["plain", "sell-whitelist", "latent-pause", "reflection"])
def test_token_pages_have_no_serious_violations(
    tab: Page, live: LiveServer, devnet: RunningDevnet, token_id: str
) -> None:
    open_token(tab, live, 31337, token(devnet, token_id)["address"])
    expect(tab.locator("#result")).to_be_visible()
    tab.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    assert at_both_widths(tab) == {"desktop": [], "phone": []}


def test_the_empty_form_and_an_error_have_no_serious_violations(
    tab: Page, live: LiveServer
) -> None:
    tab.goto(live.url + "/")
    assert at_both_widths(tab) == {"desktop": [], "phone": []}
    tab.fill("#address", "0x1234")
    tab.keyboard.press("Enter")  # the form works from the keyboard
    expect(tab.locator("#error")).to_be_visible()
    assert at_both_widths(tab) == {"desktop": [], "phone": []}


def test_the_check_can_fail(tab: Page, live: LiveServer) -> None:
    """An unlabelled input and grey-on-grey text are reported: the check is not blind."""
    tab.goto(live.url + "/")
    tab.evaluate(
        """() => {
        document.querySelector("label[for=address]").remove();
        document.querySelector("#address").removeAttribute("aria-describedby");
        document.querySelector("#address").removeAttribute("placeholder");
        const faint = document.createElement("p");
        faint.textContent = "barely readable";
        faint.style.color = "#eeeeee";
        document.querySelector("main").append(faint);
    }"""
    )
    found = {v["id"] for v in violations(tab)}
    assert {"label", "color-contrast"} <= found, found

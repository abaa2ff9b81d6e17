"""Every devnet token on the page, at desktop and phone width, in a real chromium.

For each token of the catalogue: the banner is the one the API's answer calls for (the
honeypot decision, then the risk: never green above a high risk), every harmful owner
power is a card and a sentence in the verdict, nothing overflows its container or wraps
letter by letter (measured from the DOM), the console stays clean, and a screenshot at
each width is kept in build/test-artifacts/tokens/ for a person to look at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pagecheck import (
    PHONE,
    Console,
    api,
    expected_kind,
    layout_problems,
    open_token,
    token,
)
from playwright.sync_api import Page, expect
from reliability.liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

CATALOGUE = Path(__file__).resolve().parents[2] / "src/tokenrisk/devnet/catalogue.json"
TOKEN_IDS = [t["id"] for t in json.loads(CATALOGUE.read_text(encoding="utf-8"))["tokens"]]
SHOT: dict[str, Any] = {"full_page": True, "type": "jpeg", "quality": 70}
"""Screenshots for a person to look at: JPEG encodes in half a PNG's time (0.35 against
0.7 s a token on a 2-core machine, 80 tokens), readable at this quality."""


def check_answer(page: Page, body: dict[str, Any]) -> None:
    """The banner and the owner-power cards say what the API answered."""
    kind = expected_kind(body)
    expect(page.locator("#verdict")).to_have_attribute("data-kind", kind)
    now = page.locator("#verdict-now")
    if kind == "honeypot":
        expect(now).to_contain_text("Honeypot")
    elif kind == "unknown":
        expect(now).to_contain_text("Could not tell")
    else:
        expect(now).to_contain_text("Sells work today")
    powers = body.get("ownerPowers")
    expect(page.locator("#powers-section")).to_be_visible(visible=powers is not None)
    findings = (powers or {}).get("findings", [])
    for finding in findings:
        card = page.locator(f'[data-finding="{finding["id"]}"]').first
        expect(card.locator("h3")).to_have_text(finding["title"])
        expect(card.locator("table.evidence")).to_be_hidden()  # one click away
        hook = [e["after"] for e in finding["evidence"] if e["what"].startswith("hook contract")]
        if hook:  # a power of the pool's V4 hook says where, with the hook's address
            expect(card.locator("[data-hook]")).to_have_attribute("data-hook", hook[0])
    hooks = (body.get("pair") or {}).get("pair", {}).get("hooks")
    if hooks:  # the traded V4 pool's hook is shown beside the pool
        expect(page.locator("#costs")).to_contain_text("its hook (runs on every swap)")
    harmful = [f for f in findings if f["severity"] != "info"]
    if harmful:  # the worst power is in the verdict, in words
        worst = harmful[0]["title"].removeprefix("Owner can ")
        expect(page.locator("#verdict-owner")).to_contain_text(worst)


def check_error(page: Page, body: dict[str, Any], status: int) -> None:
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#result")).to_be_hidden()
    expect(page.locator("#error-detail")).to_contain_text(f"HTTP {status}")
    if body.get("reason"):
        expect(page.locator("#error-title")).to_have_text("No pool to trade in")
        expect(page.locator("#error-text")).to_contain_text(body["reason"])


@pytest.mark.parametrize("token_id", TOKEN_IDS)
def test_every_token_reads_right_at_desktop_and_phone_width(
    page: Page,
    live: LiveServer,
    devnet: RunningDevnet,
    console: Console,
    artifacts: Path,
    token_id: str,
) -> None:
    address = token(devnet, token_id)["address"]
    answer = api(live, "/v2/IsHoneypot", address=address, chainID="31337")
    body = answer.json()
    if answer.status_code != 200:
        console.expect_status(answer.status_code)
    shots = artifacts / "tokens"
    shots.mkdir(exist_ok=True)

    open_token(page, live, devnet.manifest["chainId"], address)
    if answer.status_code == 200:
        check_answer(page, body)
    else:
        check_error(page, body, answer.status_code)
    assert layout_problems(page) == []
    page.screenshot(path=str(shots / f"{token_id}-desktop.jpg"), **SHOT)

    page.set_viewport_size(PHONE)
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    assert layout_problems(page) == []
    page.screenshot(path=str(shots / f"{token_id}-phone.jpg"), **SHOT)

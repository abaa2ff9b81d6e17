"""The page for people, in a real headless chromium against the live service on the devnet.

What the page shows is compared with what the API answers for the same token, and the
verdicts with the devnet's measured ground truth (the build's manifest).  A screenshot of
each token page is written to build/test-artifacts/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from reliability.liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration


def token(devnet: RunningDevnet, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


def api(live: LiveServer, path: str, **params: str) -> Any:
    response = httpx.get(f"{live.url}{path}", params=params, timeout=120)
    response.raise_for_status()
    return response.json()


def open_token(page: Page, live: LiveServer, chain: int, address: str) -> None:
    page.goto(f"{live.url}/token/{chain}/{address}")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-kind", re.compile("ok|honeypot|unknown"))
    expect(page.locator("#holders-status")).not_to_have_text("Loading holders…")
    expect(page.locator("#pairs-status")).not_to_have_text("Loading pools…")


def journey_on_page(page: Page) -> list[dict[str, str]]:
    steps = []
    for item in page.locator("#journey li").all():
        reason = item.locator(".reason")
        steps.append(
            {
                "step": item.get_attribute("data-step") or "",
                "outcome": item.locator(".outcome").inner_text().lower(),
                "reason": reason.inner_text() if reason.count() else "",
            }
        )
    return steps


def test_honest_token(page: Page, live: LiveServer, devnet: RunningDevnet, artifacts: Path) -> None:
    plain = token(devnet, "plain")
    assert plain["expected"]["isHoneypot"] is False
    open_token(page, live, devnet.manifest["chainId"], plain["address"])
    body = api(live, "/v2/IsHoneypot", address=plain["address"], chainID="31337")

    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ok")
    expect(page.locator("#token-address")).to_have_text(body["token"]["address"])
    assert [s["outcome"] for s in journey_on_page(page)] == ["ok", "ok", "ok"]
    costs = page.locator("#costs").inner_text()
    assert f"{body['simulationResult']['sellTax']:.2f} %" in costs
    assert f"{int(body['simulationResult']['sellGas']):,} gas" in costs
    pools = page.locator("#pairs tbody").inner_text()
    for pool in plain["pools"]:
        assert pool["address"].lower() in pools  # GetPairs sends lower-case addresses
    assert page.locator("#holders tbody tr").count() > 0
    page.screenshot(path=str(artifacts / "page-honest-plain.png"), full_page=True)


def test_honeypot_token_with_its_revert_reason_and_chart(
    page: Page, live: LiveServer, devnet: RunningDevnet, artifacts: Path
) -> None:
    trap = token(devnet, "sell-whitelist")
    assert trap["expected"]["isHoneypot"] is True
    open_token(page, live, devnet.manifest["chainId"], trap["address"])
    body = api(live, "/v2/IsHoneypot", address=trap["address"], chainID="31337")

    expect(page.locator("#verdict")).to_have_attribute("data-kind", "honeypot")
    expect(page.locator("#verdict")).to_contain_text("HONEYPOT")
    shown = journey_on_page(page)
    assert [(s["step"], s["outcome"]) for s in shown] == [
        (s["step"], s["outcome"]) for s in body["journey"]
    ]
    failed = next(s for s in body["journey"] if s["outcome"] == "failed" and "reason" in s)
    assert failed["step"] == "sell"
    assert any(failed["reason"] in s["reason"] for s in shown)
    for flag in body["summary"]["flags"]:
        expect(page.locator("#reasons")).to_contain_text(flag["description"])

    analysis = body["holderAnalysis"]
    bars = {
        bar.get_attribute("data-label"): int(bar.get_attribute("data-count") or "-1")
        for bar in page.locator("#holders-chart svg rect.bar").all()
    }
    expected = {f"{b['tax']} %": b["count"] for b in analysis["taxDistribution"]}
    if int(analysis["failed"]):
        expected["failed"] = int(analysis["failed"])
    if int(analysis["siphoned"]):
        expected["siphoned"] = int(analysis["siphoned"])
    assert bars == expected
    assert expected.get("failed", 0) > 0  # a whitelist trap: holders' sells fail
    page.screenshot(path=str(artifacts / "page-honeypot-sell-whitelist.png"), full_page=True)
    assert (artifacts / "page-honeypot-sell-whitelist.png").stat().st_size > 10_000


def test_search_without_a_chain_gets_a_shareable_url(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    plain = token(devnet, "plain")
    page.goto(live.url + "/")
    page.fill("#address", plain["address"].lower())
    page.click("#check")
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ok")
    assert page.url == f"{live.url}/token/{devnet.manifest['chainId']}/{plain['address']}"
    expect(page.locator("#share a")).to_have_attribute("href", page.url.removeprefix(live.url))


def test_a_bad_address_is_explained(page: Page, live: LiveServer) -> None:
    page.goto(live.url + "/")
    page.fill("#address", "0x1234")
    page.click("#check")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error")).to_contain_text("not an address")
    expect(page.locator("#result")).to_be_hidden()


def test_an_api_error_is_shown_with_its_status(page: Page, live: LiveServer) -> None:
    nothing = "0x00000000000000000000000000000000000dEaD1"
    expected = httpx.get(f"{live.url}/v2/IsHoneypot", params={"address": nothing}, timeout=60)
    assert expected.status_code >= 400
    page.goto(f"{live.url}/token/31337/{nothing}")
    expect(page.locator("#error")).to_contain_text(expected.json()["error"])
    expect(page.locator("#error")).to_contain_text(f"HTTP {expected.status_code}")
    page.goto(f"{live.url}/token/abc/{nothing}")
    expect(page.locator("#error")).to_contain_text("HTTP 400")


@pytest.mark.parametrize(("path", "ready"), [("/docs", ".swagger-ui .info"), ("/redoc", "h1")])
def test_api_docs_work_offline(page: Page, live: LiveServer, path: str, ready: str) -> None:
    page.goto(live.url + path)
    expect(page.locator(ready).first).to_contain_text("tokenrisk")
    assert "IsHoneypot" in page.content()

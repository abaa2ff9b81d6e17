"""The page for people, in a real headless chromium against the live service on the devnet.

What the page shows is compared with what the API answers for the same token, and the
verdicts with the devnet's measured ground truth (the build's manifest).  A screenshot of
each token page is written to build/test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pagecheck import Console, api, expected_kind, open_token, token
from playwright.sync_api import Page, expect
from reliability.liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.findings import FINDINGS

pytestmark = pytest.mark.integration


def percent(value: float) -> str:
    """As the page writes a percentage: whole numbers bare, fractions to 2 decimals."""
    return f"{int(value)}%" if float(value).is_integer() else f"{value:.2f}%"


def journey_on_page(page: Page) -> list[dict[str, str]]:
    steps = []
    for item in page.locator("#journey li").all():
        reason = item.locator(".reason code")
        steps.append(
            {
                "step": item.get_attribute("data-step") or "",
                "outcome": item.get_attribute("data-outcome") or "",
                "reason": reason.inner_text() if reason.count() else "",
            }
        )
    return steps


def test_honest_token(page: Page, live: LiveServer, devnet: RunningDevnet, artifacts: Path) -> None:
    plain = token(devnet, "plain")
    assert plain["expected"]["isHoneypot"] is False
    open_token(page, live, devnet.manifest["chainId"], plain["address"])
    body = api(live, "/v2/IsHoneypot", address=plain["address"], chainID="31337").json()

    expect(page.locator("#verdict")).to_have_attribute("data-kind", expected_kind(body))
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ok")
    expect(page.locator("#verdict-now")).to_contain_text("Sells work today")
    expect(page.locator("#token-address")).to_have_text(body["token"]["address"])
    assert [s["outcome"] for s in journey_on_page(page)] == ["ok", "ok", "ok"]
    costs = page.locator("#costs").inner_text()
    assert percent(body["simulationResult"]["sellTax"]) in costs
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
    body = api(live, "/v2/IsHoneypot", address=trap["address"], chainID="31337").json()

    expect(page.locator("#verdict")).to_have_attribute("data-kind", "honeypot")
    expect(page.locator("#verdict-now")).to_contain_text("Honeypot: a buyer cannot sell")
    shown = journey_on_page(page)
    assert [(s["step"], s["outcome"]) for s in shown] == [
        (s["step"], s["outcome"]) for s in body["journey"]
    ]
    failed = next(s for s in body["journey"] if s["outcome"] == "failed" and "reason" in s)
    assert failed["step"] == "sell"
    reason = failed["reason"].removeprefix("execution reverted: ")
    assert any(reason == s["reason"] for s in shown)  # the token's words, in monospace
    for flag in body["summary"]["flags"]:
        text = FINDINGS[flag["flag"]].title if flag["flag"] in FINDINGS else flag["description"]
        expect(page.locator("#reasons")).to_contain_text(text)

    analysis = body["holderAnalysis"]
    bars = {
        bar.get_attribute("data-label"): int(bar.get_attribute("data-count") or "-1")
        for bar in page.locator("#holders-chart svg rect.bar").all()
    }
    expected = {f"{b['tax']}%": b["count"] for b in analysis["taxDistribution"]}
    if int(analysis["failed"]):
        expected["failed"] = int(analysis["failed"])
    if int(analysis["siphoned"]):
        expected["taken"] = int(analysis["siphoned"])
    assert bars == expected
    assert expected.get("failed", 0) > 0  # a whitelist trap: holders' sells fail
    expect(page.locator("#chart-legend")).to_contain_text("could not sell")
    expect(page.locator("#holders-chart svg")).to_contain_text("wallets")  # the y axis
    page.screenshot(path=str(artifacts / "page-honeypot-sell-whitelist.png"), full_page=True)
    assert (artifacts / "page-honeypot-sell-whitelist.png").stat().st_size > 10_000


def test_an_owner_power_reads_as_a_sentence_with_its_evidence_one_click_away(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    """The issue's example: a token whose owner can pause trading is not a green banner."""
    latent = token(devnet, "latent-pause")
    open_token(page, live, devnet.manifest["chainId"], latent["address"])
    body = api(live, "/v2/IsHoneypot", address=latent["address"], chainID="31337").json()
    findings = body["ownerPowers"]["findings"]
    finding = next(f for f in findings if f["id"] == "owner_can_pause_trading")
    kind = FINDINGS[finding["id"]]

    expect(page.locator("#verdict")).to_have_attribute("data-kind", expected_kind(body))
    assert expected_kind(body) == "danger"
    expect(page.locator("#verdict-now strong")).to_have_text("Sells work today.")
    owner = page.locator("#verdict-owner")
    expect(owner).to_contain_text("The owner can stop trading at any time.")

    card = page.locator('[data-finding="owner_can_pause_trading"]')
    expect(card.locator("h3")).to_have_text(kind.title)
    expect(card).to_contain_text(kind.meaning)
    expect(card).to_contain_text(kind.advice)
    expect(card).to_contain_text("a single wallet")  # the owner is an EOA
    expect(card).to_contain_text("Simulated")
    evidence = card.locator("table.evidence")
    expect(evidence).to_be_hidden()
    card.get_by_text("Show evidence").click()
    expect(evidence).to_be_visible()
    reverts = evidence.locator("code.revert")
    assert reverts.count() == sum(1 for e in finding["evidence"] if "revert" in e["after"])
    font = reverts.first.evaluate("e => getComputedStyle(e).fontFamily")
    assert "mono" in font.lower()
    expect(card.locator(".call code").first).to_have_text(finding["function"])

    future = page.locator("#future li")
    expect(future).to_have_count(len(body["ownerPowers"]["futureSells"]))
    for label in ("In 1 hour:", "In 1 day:", "In 7 days:", "In 30 days:"):
        expect(page.locator("#future")).to_contain_text(label)


def test_search_without_a_chain_gets_a_shareable_url(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    plain = token(devnet, "plain")
    page.goto(live.url + "/")
    page.fill("#address", plain["address"].lower())
    page.click("#check")
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ok")
    assert page.url == f"{live.url}/token/{devnet.manifest['chainId']}/{plain['address']}"
    expect(page.locator("#share-link")).to_have_value(page.url)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#copy-link")
    expect(page.locator("#copy-status")).to_have_text("Link copied.")
    assert page.evaluate("navigator.clipboard.readText()") == page.url


@pytest.mark.parametrize(("path", "ready"), [("/docs", ".swagger-ui .info"), ("/redoc", "h1")])
def test_api_docs_work_offline(
    page: Page, live: LiveServer, console: Console, path: str, ready: str
) -> None:
    # ReDoc's footer asks for its logo from a CDN: the docs' CSP blocks it, as it should
    console.allow(r"^Loading the image 'https://cdn\.redoc\.ly/.*Content Security Policy")
    page.goto(live.url + path)
    expect(page.locator(ready).first).to_contain_text("tokenrisk")
    assert "IsHoneypot" in page.content()

"""Loading, errors and partial answers on the page, each said in words with what to do.

Bad input, an unknown chain, rate limiting and a node that went down are real: the
live service answers them (a second live server with a rate limit of three requests a
minute; a third one on its own anvil, stopped mid-test).  A check that takes long, a
504, a lost connection, a node that cannot trace and the fields other issues are adding
(a timelock or multisig owner, static evidence, an unmeasured tax) are fault injection:
the page's request is held, refused, or answered with the real answer edited.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pagecheck import PHONE, Console, api, layout_problems, open_token, token
from playwright.sync_api import Page, Route, expect
from reliability.liveserver import LiveServer

from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.risk import TRACE_UNAVAILABLE

pytestmark = pytest.mark.integration


def edit_answer(page: Page, change: Any, headers: dict[str, str] | None = None) -> None:
    """Answer the page's IsHoneypot with the live answer as ``change(body)`` edits it."""

    def handle(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        change(body)
        route.fulfill(response=response, json=body, headers={**response.headers, **(headers or {})})

    page.route("**/v2/IsHoneypot?*", handle)


def test_a_bad_address_is_explained(page: Page, live: LiveServer) -> None:
    page.goto(live.url + "/")
    page.fill("#address", "0x1234")
    page.click("#check")
    expect(page.locator("#error-title")).to_have_text("That is not a token address")
    expect(page.locator("#error-text")).to_contain_text("this has 4 after 0x")
    expect(page.locator("#error-help")).to_contain_text("block explorer")
    expect(page.locator("#result")).to_be_hidden()
    page.set_viewport_size(PHONE)
    assert layout_problems(page) == []


def test_an_unknown_chain_and_a_bad_checksum_say_what_to_do(
    page: Page, live: LiveServer, devnet: RunningDevnet, console: Console
) -> None:
    console.expect_status(400)
    plain = token(devnet, "plain")
    unknown = api(live, "/v2/IsHoneypot", address=plain["address"], chainID="999999")
    assert unknown.status_code == 400
    open_token(page, live, 999999, plain["address"])
    expect(page.locator("#error-title")).to_have_text("This chain is not known here")
    expect(page.locator("#error-help")).to_contain_text("Pick a chain from the list")
    expect(page.locator("#error-detail")).to_contain_text(unknown.json()["error"])
    expect(page.locator("#error-detail")).to_contain_text("HTTP 400")

    wrong = "0x00000000000000000000000000000000000dEaD1"  # a checksum error
    answer = api(live, "/v2/IsHoneypot", address=wrong, chainID="31337")
    open_token(page, live, 31337, wrong)
    expect(page.locator("#error-detail")).to_contain_text(answer.json()["error"])
    expect(page.locator("#error-detail")).to_contain_text(f"HTTP {answer.status_code}")
    expect(page.locator("#retry")).to_be_hidden()  # asking again will not help


def test_a_token_without_a_pool_says_why(
    page: Page, live: LiveServer, devnet: RunningDevnet, console: Console
) -> None:
    console.expect_status(404)
    lonely = token(devnet, "no-pair")
    body = api(live, "/v2/IsHoneypot", address=lonely["address"], chainID="31337").json()
    open_token(page, live, 31337, lonely["address"])
    expect(page.locator("#error-title")).to_have_text("No pool to trade in")
    expect(page.locator("#error-text")).to_contain_text(body["token"]["name"])
    expect(page.locator("#error-text")).to_contain_text(body["reason"])
    expect(page.locator("#error-help")).to_contain_text("pick that chain")


@pytest.fixture(scope="module")
def limited(devnet: RunningDevnet) -> Iterator[LiveServer]:
    """A live server allowing three requests a minute: one check (IsHoneypot, GetPairs,
    TopHolders), then 429."""
    settings = Settings(
        devnet=False, data_dir=Path(tempfile.mkdtemp()), deadline=60.0, rate_limit_per_minute=3
    )
    with LiveServer(settings, devnet) as server:
        yield server


def test_rate_limited(
    page: Page, limited: LiveServer, devnet: RunningDevnet, console: Console
) -> None:
    console.expect_status(429)
    open_token(page, limited, 31337, token(devnet, "plain")["address"])
    expect(page.locator("#verdict")).to_be_visible()
    open_token(page, limited, 31337, token(devnet, "fot-3")["address"])
    expect(page.locator("#error-title")).to_have_text("Too many checks for now")
    expect(page.locator("#error-help")).to_contain_text(
        re.compile(r"Try again in \d+(\.\d)? (second|minute)s?\.")
    )
    expect(page.locator("#retry")).to_be_visible()


def test_the_node_going_down(page: Page, console: Console, tmp_path: Path) -> None:
    """A live server on its own anvil; the anvil stops; the next check says so, in words."""
    console.expect_status(503)
    node = start_devnet()
    try:
        settings = Settings(devnet=False, data_dir=tmp_path, deadline=30.0)
        with LiveServer(settings, node) as server:
            plain = next(t for t in node.manifest["tokens"] if t["id"] == "plain")
            open_token(page, server, 31337, plain["address"])
            expect(page.locator("#verdict")).to_be_visible()
            node.stop()
            other = next(t for t in node.manifest["tokens"] if t["id"] == "fot-3")
            open_token(page, server, 31337, other["address"])
            expect(page.locator("#error-title")).to_have_text("The node cannot be reached")
            expect(page.locator("#error-help")).to_contain_text("/health")
            expect(page.locator("#error-detail")).to_contain_text("HTTP 503")
            expect(page.locator("#retry")).to_be_visible()
    finally:
        node.stop()


def test_loading_then_a_timeout_then_a_retry(
    page: Page, live: LiveServer, devnet: RunningDevnet, console: Console
) -> None:
    console.expect_status(504)
    plain = token(devnet, "plain")
    held: list[Route] = []
    page.route("**/v2/IsHoneypot?*", lambda route: held.append(route))  # held until released
    page.goto(f"{live.url}/token/31337/{plain['address']}")
    expect(page.locator("#status")).to_contain_text("a simulated buyer buys, sends and sells it")
    expect(page.locator("body")).to_have_attribute("data-state", "loading")
    expect(page.locator("#check")).to_be_disabled()
    assert len(held) == 1
    held[0].fulfill(status=504, json={"code": 504, "error": "the check did not finish in time"})
    expect(page.locator("#error-title")).to_have_text("The check took too long")
    expect(page.locator("#status")).to_be_empty()

    page.unroute("**/v2/IsHoneypot?*")
    page.click("#retry")
    expect(page.locator("body")).to_have_attribute("data-state", "done")
    expect(page.locator("#verdict")).to_have_attribute("data-kind", "ok")


def test_the_server_out_of_reach(
    page: Page, live: LiveServer, devnet: RunningDevnet, console: Console
) -> None:
    console.allow(r"net::ERR_FAILED")
    page.route("**/v2/IsHoneypot?*", lambda route: route.abort())
    open_token(page, live, 31337, token(devnet, "plain")["address"])
    expect(page.locator("#error-title")).to_have_text("Could not reach the tokenrisk server")
    expect(page.locator("#retry")).to_be_visible()


def test_a_partial_answer_from_the_node_limits(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    """The devnet's reflection token has no balance slot: two checks are stated unchecked."""
    reflection = token(devnet, "reflection")
    body = api(live, "/v2/IsHoneypot", address=reflection["address"], chainID="31337").json()
    assert body.get("unchecked"), "the devnet no longer has a partial answer to show"
    open_token(page, live, 31337, reflection["address"])
    partial = page.locator("#partial")
    expect(partial).to_be_visible()
    expect(partial.locator("li")).to_have_count(len(body["unchecked"]))
    for entry in body["unchecked"]:
        check = entry.split(": ")[0]
        expect(partial).to_contain_text(check[0].upper() + check[1:])
    expect(partial).to_contain_text("Treat these parts as unknown, not as safe")


def test_a_node_without_traces_a_fork_and_a_skipped_chain(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    def untraced(body: dict[str, Any]) -> None:
        body.pop("contractCode", None)
        body["summary"]["flags"].append(
            {
                "flag": "call_trace_unavailable",
                "description": TRACE_UNAVAILABLE,
                "severity": "info",
                "severityIndex": 4,
            }
        )
        body["chain"]["forkBlock"] = 21000000

    edit_answer(page, untraced, headers={"X-Skipped-Chains": "8453"})
    open_token(page, live, 31337, token(devnet, "plain")["address"])
    partial = page.locator("#partial")
    expect(partial).to_contain_text("Contracts called while trading")
    expect(partial).to_contain_text("no debug_traceCall")
    expect(partial).to_contain_text("Chain 8453")
    expect(page.locator("#code-section")).to_be_hidden()
    expect(page.locator("#token-meta")).to_contain_text("local fork made at block 21,000,000")


def test_fields_the_api_is_growing_are_rendered_defensively(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    """Fields other branches add (#24: caller kinds, confidence, the control that lowered a
    severity; #31: a tax not measured), edited into a real answer: shown in words, never
    as a crash or a 0."""

    def grown(body: dict[str, Any]) -> None:
        powers = body["ownerPowers"]
        owner = powers["findings"][0]["caller"]
        for caller in powers["callers"]:
            caller.setdefault("kind", "eoa")
            if caller["address"] == owner:
                caller.update(isContract=True, kind="timelock", delay=172800)
        powers["callers"].append(
            {
                "address": "0x000000000000000000000000000000000000bEEF",
                "foundBy": ["getRoleMember(0x00, 0)"],
                "isContract": True,
                "kind": "multisig",
                "threshold": 2,
                "signers": 3,
            }
        )
        powers["findings"][0].update(control="timelock, delay 2 days", severity="medium")
        static = dict(powers["findings"][0], confidence="static", id="owner_can_mint")
        static["title"] = "Owner can mint new tokens"
        powers["findings"].append(static)
        del body["simulationResult"]["sellTax"]
        body["taxDetails"]["sell"] = {"tokenUnit": 0, "notMeasured": {"effective": "no quote"}}
        body["taxDetails"]["holders"] = {"soldAtPoolLimit": 0, "notMeasured": "no holder sold"}

    edit_answer(page, grown)
    open_token(page, live, 31337, token(devnet, "latent-pause")["address"])
    expect(page.locator("#verdict-owner")).to_contain_text(
        "The owner can stop trading and mint new tokens after a wait of 2 days."
    )
    pause = page.locator('[data-finding="owner_can_pause_trading"]')
    expect(pause).to_contain_text("a timelock: every call waits 2 days")
    expect(pause).to_contain_text("rated lower for that: timelock, delay 2 days")
    expect(page.locator("#callers")).to_contain_text("a multisig needing 2 of 3 signatures")
    expect(page.locator("#powers-scope")).not_to_contain_text("contract acts only through")
    expect(page.locator('[data-finding="owner_can_mint"]')).to_contain_text("static analysis")
    sell_tax = page.locator("#costs tr", has_text="Sell tax").first
    expect(sell_tax.locator("td")).to_have_text("not measured: against the quote: no quote")
    holders = page.locator("#costs tr", has_text="real holders").first
    expect(holders.locator("td")).to_have_text("not measured: no holder sold")
    expect(page.locator("#verdict-now")).to_contain_text("the sell tax was not measured")


def test_the_layout_checker_can_fail(page: Page, live: LiveServer) -> None:
    """The DOM measurements the other tests rely on do report what they look for."""
    page.goto(live.url + "/")
    assert layout_problems(page) == []
    page.evaluate(
        """() => {
        const narrow = document.createElement("p");
        narrow.style.width = "12px";
        narrow.textContent = "TRANSFER_FROM_FAILED";
        narrow.style.overflowWrap = "anywhere";
        const wide = document.createElement("div");
        wide.style.width = "3000px";
        wide.textContent = "wide";
        document.querySelector("main").append(narrow, wide);
    }"""
    )
    problems = layout_problems(page)
    assert any("wraps letter by letter" in p for p in problems), problems
    assert any("sticks out of its container" in p for p in problems), problems
    assert any("scrolls sideways" in p for p in problems), problems


def test_answers_are_never_parsed_as_markup(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    """Token names and revert reasons are the token's words: text, never HTML."""

    def hostile(body: dict[str, Any]) -> None:
        body["token"]["name"] = '<img src=x onerror="window.pwned=1">'
        body["summary"]["flags"].append(
            {"flag": "x", "description": "<b>bold</b>", "severity": "high", "severityIndex": 16}
        )

    edit_answer(page, hostile)
    open_token(page, live, 31337, token(devnet, "plain")["address"])
    expect(page.locator("#token-title")).to_contain_text('<img src=x onerror="window.pwned=1">')
    expect(page.locator("#reasons")).to_contain_text("<b>bold</b>")
    assert page.locator("#result img").count() == 0
    assert page.evaluate("window.pwned") is None
    assert json.loads(page.locator("#finding-kinds").inner_text())  # the data block is JSON

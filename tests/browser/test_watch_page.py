"""The watch feature on the page (issue #28), in a real chromium against a live server
running the real watcher (``serve --watch``'s embedded one) on the devnet: the "Watch
this token" button changes the key's watchlist as ``GET /v2/watch`` reports it, and the
live feed shows the ``new_pool`` event of a token ``tokenrisk devnet launch`` deploys and
the ``alert`` that ``tokenrisk devnet arm`` causes, with its before/after and transaction.
Without a watcher the page shows neither (the other browser tests' server has none).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pagecheck import DESKTOP, PHONE, Console, layout_problems, open_token, token
from playwright.sync_api import Browser, Page, expect
from reliability.liveserver import LiveServer
from test_accessibility import at_both_widths

from tokenrisk.config import Settings, WatchConfig
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.tiers import Tier

pytestmark = pytest.mark.integration
CLI = "from tokenrisk.cli.main import main; main()"
TRAP = "latent-trading-switch"  # honest until its owner calls setTradingOpen(false)
WAIT = 120.0  # seconds any one wait may take (bounded loops)


def _rpc(url: str, method: str, *params: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return httpx.post(url, json=body, timeout=30).json()["result"]


def _cli(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args], env=env, capture_output=True, timeout=120, check=True
    )
    return done.stdout.decode().strip()


def _until(what: str, probe: Any) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def watching(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server with the watcher inside; the chain's changes are undone afterwards (the
    devnet is shared with the other tests)."""
    snapshot = _rpc(devnet.url, "evm_snapshot")
    watch = WatchConfig(embedded=True, poll_interval=0.2)
    data_dir = tmp_path_factory.mktemp("watch-page")
    settings = Settings(devnet=False, data_dir=data_dir, deadline=60.0, watch=watch)
    try:
        with LiveServer(settings, devnet) as server:
            _until("the watcher's first cursor", lambda: _status(server)["31337"]["block"])
            yield server
    finally:
        _rpc(devnet.url, "evm_revert", snapshot)


def _status(server: LiveServer) -> dict[str, Any]:
    chains: dict[str, Any] = httpx.get(f"{server.url}/v2/watch/status", timeout=30).json()["chains"]
    return chains


def _listed(server: LiveServer) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = httpx.get(f"{server.url}/v2/watch", timeout=30).json()["watching"]
    return rows


def test_without_a_watcher_the_page_has_no_feed_or_button(
    page: Page, live: LiveServer, devnet: RunningDevnet
) -> None:
    open_token(page, live, 31337, token(devnet, "plain")["address"])
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#watch-box")).to_be_hidden()
    expect(page.locator("#feed-section")).to_be_hidden()


def test_the_button_watches_and_unwatches_a_token(
    page: Page, watching: LiveServer, devnet: RunningDevnet
) -> None:
    plain = token(devnet, "plain")["address"]
    open_token(page, watching, 31337, plain)
    button = page.locator("#watch-button")
    expect(button).to_have_text("Watch this token")
    button.click()
    expect(page.locator("#watch-status")).to_contain_text("Watching")
    expect(button).to_have_text("Stop watching")
    assert [(w["address"].lower(), w["chainID"]) for w in _listed(watching)] == [
        (plain.lower(), 31337)
    ]

    open_token(page, watching, 31337, plain)  # the button reads the watchlist
    expect(button).to_have_text("Stop watching")
    button.click()
    expect(page.locator("#watch-status")).to_contain_text("No longer watching")
    expect(button).to_have_text("Watch this token")
    assert _listed(watching) == []


def test_the_feed_shows_a_launch_and_an_armed_trap(
    page: Page, browser: Browser, watching: LiveServer, devnet: RunningDevnet
) -> None:
    page.goto(watching.url + "/")
    expect(page.locator("#feed-section")).to_be_visible()
    expect(page.locator("#feed-status")).to_contain_text("Connected")

    launched = json.loads(_cli("devnet", "launch", "--rpc-url", devnet.url))
    pool = page.locator(f'#feed li[data-kind="new_pool"][data-token="{launched["token"].lower()}"]')
    expect(pool).to_have_count(1)
    expect(pool).to_contain_text("New pool")
    expect(pool).to_contain_text("Sells work")  # PlainToken: honest
    expect(pool).to_contain_text(re.compile(re.escape(launched["pair"]), re.IGNORECASE))

    trap = token(devnet, TRAP)["address"]
    open_token(page, watching, 31337, trap)
    page.locator("#watch-button").click()
    expect(page.locator("#watch-button")).to_have_text("Stop watching")
    _until("the baseline answer", lambda: "answer" in _listed(watching)[0])

    tx = _cli("devnet", "arm", TRAP, "--rpc-url", devnet.url)
    alert = page.locator(f'#feed li[data-kind="alert"][data-token="{trap.lower()}"]')
    expect(alert).to_have_count(1)
    expect(alert.locator('[data-field="isHoneypot"]')).to_have_text("Honeypot: no → yes")
    expect(alert.locator(".tx")).to_have_text(tx)
    expect(alert).to_contain_text("Now: Honeypot")
    expect(page.locator("#feed > li")).to_have_count(2)  # nothing repeated

    # the same feed, replayed on a fresh page: no serious accessibility violation, and
    # nothing sticks out or wraps letter by letter
    context = browser.new_context(viewport=DESKTOP, bypass_csp=True)  # axe is injected
    try:
        tab = context.new_page()
        tab.goto(watching.url + "/")
        expect(tab.locator("#feed > li")).to_have_count(2)
        assert at_both_widths(tab) == {"desktop": [], "phone": []}
        for size in (DESKTOP, PHONE):  # readable cards at both widths
            tab.set_viewport_size(size)
            assert layout_problems(tab) == []
    finally:
        context.close()


def test_a_full_watchlist_says_what_to_do(
    page: Page, devnet: RunningDevnet, console: Console, tmp_path: Path
) -> None:
    """A key past its tier's watchlist limit (here 0) gets the 403 in words."""
    watch = WatchConfig(embedded=True, poll_interval=0.2)
    tiers = {"default": Tier(max_watchlist=0)}
    settings = Settings(devnet=False, data_dir=tmp_path, deadline=60.0, watch=watch, tiers=tiers)
    console.expect_status(403)
    with LiveServer(settings, devnet) as server:
        open_token(page, server, 31337, token(devnet, "plain")["address"])
        page.locator("#watch-button").click()
        expect(page.locator("#watch-status")).to_contain_text("cannot watch more tokens")
        expect(page.locator("#watch-status")).to_contain_text("HTTP 403")
        expect(page.locator("#watch-button")).to_have_text("Watch this token")
        assert _listed(server) == []

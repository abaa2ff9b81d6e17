"""Two re-check triggers of issue #28, on the devnet with the real watcher.

A large liquidity change: a watched token is re-checked when a Mint or Burn of its pool
moves at least ``liquidity_threshold`` percent of the pool's base reserve: a 5 %
addition passes without a check, a 48 % one brings exactly one.

A time bomb's horizon: the catalogue's ``time-bomb`` (sells revert from a block number
on) is sellable at the head, and its owner-power scan sees a later sell fail; the watcher
keeps that horizon with the answer (``sellsFailFrom``) and re-checks once a block passes
it (the rule is unit-tested; reaching the real horizon would take anvil minutes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_watch import _until_caught_up, service, store  # noqa: F401 (fixtures)

from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.launch import launch
from tokenrisk.devnet.liquidity import add_v2_liquidity
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.service import Service
from tokenrisk.store.engine import Store
from tokenrisk.store.watch import WatchStore
from tokenrisk.watch.watcher import Bounds, Watcher

pytestmark = pytest.mark.integration
SUPPLY = 10**9 * 10**18  # launch's: half of it and 10 ETH go into the pool


async def test_only_a_large_liquidity_change_rechecks(
    devnet: Any,
    service: Service,  # noqa: F811
    store: Store,  # noqa: F811
) -> None:
    bounds = Bounds(blocks_per_step=5, liquidity_threshold=20.0)
    watcher = Watcher(service.honeypot, WatchStore(store), bounds)
    await _until_caught_up(watcher)
    launched = await launch(devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    await _until_caught_up(watcher)
    assert WatchStore(store).add("", 31337, launched.token, 10)
    await _until_caught_up(watcher)  # the baseline
    assert WatchStore(store).snapshot(31337, launched.token.lower()) is not None
    owner = devnet.manifest["addresses"]["OWNER"]
    chain = Chain(devnet.url)
    try:
        checks = watcher.checks
        small = (SUPPLY // 40, 10**18 // 2)  # 0.5 ETH into 10: 5 %
        await add_v2_liquidity(chain, owner, launched.token, WETH, small, "small")
        await _until_caught_up(watcher)
        assert watcher.checks == checks

        large = (SUPPLY // 4, 5 * 10**18)  # 5 ETH into 10.5: 48 %
        await add_v2_liquidity(chain, owner, launched.token, WETH, large, "large")
        await _until_caught_up(watcher)
        assert watcher.checks == checks + 1
    finally:
        await chain.aclose()
    kinds = [e.kind for e in WatchStore(store).events_after(0)]
    assert kinds == ["new_pool"]  # an honest token's answer did not change


async def test_a_time_bomb_answer_keeps_its_horizon(
    devnet: Any,
    service: Service,  # noqa: F811
    store: Store,  # noqa: F811
) -> None:
    """The real scan's later sells give the horizon (block and time); blocks before it
    bring no re-check.  Reaching it takes ~7,000 blocks (the scan's 1 d sell), which
    anvil mines in minutes: the rule at the horizon is the unit test's
    (test_a_time_bomb_horizon_rechecks_at_the_first_block_past_it)."""
    bomb = next(t for t in devnet.manifest["tokens"] if t["id"] == "time-bomb")["address"]
    watcher = Watcher(service.honeypot, WatchStore(store), Bounds(blocks_per_step=50))
    await _until_caught_up(watcher)
    assert WatchStore(store).add("", 31337, bomb, 10)
    await _until_caught_up(watcher)  # the baseline
    baseline = WatchStore(store).snapshot(31337, bomb.lower())
    assert baseline is not None and baseline["isHoneypot"] is False
    horizon = baseline["sellsFailFrom"]
    rpc = service.nodes.node(31337).rpc
    head = await rpc.call("eth_getBlockByNumber", ["latest", False])
    assert horizon["block"] > int(head["number"], 16) + 250  # 1 h (300 blocks) still sells
    assert horizon["timestamp"] > int(head["timestamp"], 16) + 3600

    checks = watcher.checks
    await rpc.call("anvil_mine", [hex(20)])
    await _until_caught_up(watcher)
    assert watcher.checks == checks  # nothing happened to the token: no re-check
    plain = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")["address"]
    assert WatchStore(store).add("", 31337, plain, 10)
    await _until_caught_up(watcher)
    plain_answer = WatchStore(store).snapshot(31337, plain.lower())
    assert plain_answer is not None and plain_answer["sellsFailFrom"] is None

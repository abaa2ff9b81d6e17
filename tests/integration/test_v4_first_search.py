"""A token's first V4 pool search reads its likely hookless pools' state beside the
``Initialize`` events (#27), and the state of the pools the Node's recent events of every
token name (read after an earlier token's first search): a pool found there is ready in
one round trip; a pool with a hook the index does not name (its key unknown until the
events) in two, as before.  Real anvil (which gives each log its block's time), on a Node
that searched a token before (its native pools, which price the pools, remembered): the
rows equal those of a search without the guess and the index."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from test_v4_known_pools import Rounds

from tokenrisk.chain import v4
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.node import Node
from tokenrisk.chain.registry import UniswapV4
from tokenrisk.chain.rpc import RpcSettings
from tokenrisk.checks.target import search_pools
from tokenrisk.checks.venue import created
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import DEVNET_ID, connect_devnet

pytestmark = pytest.mark.integration


@pytest.fixture
async def nodes(devnet: RunningDevnet, tmp_path: Path) -> AsyncIterator[list[tuple[Node, Rounds]]]:
    """Two fresh services' devnet Nodes (nothing remembered), each client behind a Rounds."""
    out, services = [], []
    for i in range(2):
        settings = Settings(devnet=False, data_dir=tmp_path / f"data{i}", deadline=60.0)
        svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
        rounds = Rounds(devnet.url)
        node = svc.nodes[DEVNET_ID]
        node.rpc = CoalescingRpc(
            devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds
        )
        services.append((svc, rounds))
        out.append((node, rounds))
    try:
        yield out
    finally:
        for svc, rounds in services:
            await svc.close()
            await rounds.aclose()


@pytest.mark.parametrize(
    ("entry_id", "guessed", "indexed", "alone"),
    [
        ("v4-plain", 1, 1, 2),
        ("v4-hook-owner-fee", 2, 1, 2),
        ("v4-erc20-weth", 2, 1, 2),  # against WETH the ERC-20, with a hook
        ("v4-dynamic-fee-raise", 2, 1, 2),  # a dynamic-fee pool
    ],
)
async def test_a_first_search_reads_the_likely_pools_state_with_the_events(
    nodes: list[tuple[Node, Rounds]],
    devnet: RunningDevnet,
    monkeypatch: pytest.MonkeyPatch,
    entry_id: str,
    guessed: int,
    indexed: int,
    alone: int,
) -> None:
    """Rounds of a first search with the hookless guess alone (no index kept), with the
    recent index too, and with neither; the same rows each time."""
    token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    (node, rounds), (other, other_rounds) = nodes
    warm = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain")
    for each in (node, other):  # the node's capabilities and its native pools remembered
        await search_pools(each, warm)
        await v4.recent_settled(_manager(each), each.v4_pools)  # the refresh it started
    node.v4_pools.clear()  # the index forgotten: the guess alone
    counted, searches = [], []
    for each, counter in ((node, rounds), (other, other_rounds)):
        counter.rounds.clear()
        searches.append(await search_pools(each, token))
        counted.append(len(counter.rounds))
    first, indexed_search = searches
    monkeypatch.setattr(v4, "_guessed", lambda *_: v4._nothing())
    monkeypatch.setattr(v4, "recent_found", lambda *_: [])
    other.v4_pools.clear()
    other_rounds.rounds.clear()
    without = await search_pools(other, token)
    assert counted == [guessed, indexed] and indexed_search == first
    assert [p.version for p in first.pools] == ["V4"] and first == without
    assert first.pools[0].created_at_timestamp is not None
    assert len(other_rounds.rounds) == alone, other_rounds.rounds


async def test_a_wrong_index_is_not_used(
    nodes: list[tuple[Node, Rounds]], devnet: RunningDevnet
) -> None:
    """An index naming another pool for the token (its key read wrong here): the events
    name other pools, so the state is read after them (two round trips), same rows."""
    token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "v4-hook-owner-fee")
    (node, rounds), (other, _) = nodes
    warm = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain")
    for each in (node, other):
        await search_pools(each, warm)
        await v4.recent_settled(_manager(each), each.v4_pools)
    manager = node.chain.uniswap_v4
    assert manager is not None
    (real,) = v4.recent_found(manager, token, node.v4_pools)
    wrong = replace(real, key=replace(real.key, fee=real.key.fee + 1))
    key = v4._recent_key(manager)
    head, index = node.v4_pools.value(key) or []
    node.v4_pools.put(key, [head, index | {token.lower(): (wrong,)}])
    rounds.rounds.clear()
    found = await search_pools(node, token)
    assert len(rounds.rounds) == 2, rounds.rounds
    assert found == await search_pools(other, token)


async def test_a_v4_pools_creation_is_its_initialize_event(
    nodes: list[tuple[Node, Rounds]], devnet: RunningDevnet
) -> None:
    """IsHoneypot's pool creation asks nothing for a V4 pool: its time and transaction
    came with the pool (a factory's creation events never name it)."""
    (node, rounds), _ = nodes
    token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "v4-plain")
    (pool,) = (await search_pools(node, token)).pools
    assert pool.created_at_timestamp is not None and pool.creation_tx_hash
    rounds.rounds.clear()
    assert await created(node, pool, token, False) == pool
    assert rounds.rounds == []


def _manager(node: Node) -> UniswapV4:
    assert node.chain.uniswap_v4 is not None
    return node.chain.uniswap_v4

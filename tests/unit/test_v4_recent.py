"""The Node's recent ``Initialize`` events of every token (no node): what the index keeps
(from the oldest block on, one entry per pool, the newest ``RECENT_MAX``, by each
non-native currency), what a token's first search takes from it, and when it is read."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from tokenrisk.caching import MemoryCache
from tokenrisk.chain import v4
from tokenrisk.chain.abi import checksum
from tokenrisk.chain.registry import load_registry
from tokenrisk.chain.v4 import Found, PoolKey, recent_found, recent_index, refresh_recent

ETH = "0x0000000000000000000000000000000000000000"
TOKEN = "0x00000000000000000000000000000000000000AA"
OTHER = "0x00000000000000000000000000000000000000bB"
HOOK = "0x00000000000000000000000000000000000000C0"


def _found(block: int, other: str = ETH, hooks: str = HOOK) -> Found:
    c0, c1 = sorted((TOKEN, other), key=lambda a: int(a, 16))
    return Found(PoolKey(c0, c1, 3000, 60, hooks), block, f"0x{block:064x}", 1_000 + block)


def test_the_index_keeps_each_pool_once_from_the_oldest_block_by_currency() -> None:
    old, mine, theirs = _found(5), _found(20), _found(30, OTHER)
    index = recent_index([old, mine], [mine, theirs], oldest=10)
    assert index == {TOKEN.lower(): (mine, theirs), OTHER.lower(): (theirs,)}
    assert ETH not in index  # native ETH names no token's pools


def test_the_index_keeps_the_newest_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v4, "RECENT_MAX", 2)
    pools = [_found(b, hooks=f"0x{b:040x}") for b in (1, 2, 3)]
    assert recent_index([], pools, oldest=0)[TOKEN.lower()] == tuple(pools[1:])


class _Rpc:
    """Answers the index's eth_getLogs with ``logs`` (or an error), counting batches."""

    def __init__(self, logs: Any) -> None:
        self.logs, self.batches = logs, 0
        self.calls: list[Any] = []

    async def batch(self, calls: list[Any], **_: Any) -> list[Any]:
        self.batches += 1
        self.calls += calls
        return [self.logs for _ in calls]


def _log(found: Found) -> dict[str, Any]:
    key = found.key
    data = (
        key.fee.to_bytes(32, "big")
        + key.tick_spacing.to_bytes(32, "big", signed=True)
        + int(key.hooks, 16).to_bytes(32, "big")
        + bytes(64)
    )
    topics = [v4.INITIALIZE_TOPIC, key.id, *(f"0x{int(c, 16):064x}" for c in key.as_tuple()[:2])]
    return {
        "topics": topics,
        "data": "0x" + data.hex(),
        "blockNumber": hex(found.block),
        "transactionHash": found.tx_hash,
        "blockTimestamp": hex(found.stamp or 0),
    }


async def test_a_refresh_reads_once_per_head_and_a_token_takes_its_pools() -> None:
    chain = load_registry()[1]
    assert chain.uniswap_v4 is not None
    manager = chain.uniswap_v4
    memo: MemoryCache[str, list[Any]] = MemoryCache(8)
    pool = _found(manager.deployed_block + 10)
    rpc = _Rpc([_log(pool)])
    refresh_recent(rpc, manager, memo, manager.deployed_block + 20, None)  # type: ignore[arg-type]
    refresh_recent(rpc, manager, memo, manager.deployed_block + 20, None)  # type: ignore[arg-type]
    await v4.recent_settled(manager, memo)
    assert recent_found(manager, TOKEN, memo) == [pool] and rpc.batches == 1
    refresh_recent(rpc, manager, memo, manager.deployed_block + 20, None)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert rpc.batches == 1  # the index is at that head already
    rpc.logs = []
    refresh_recent(rpc, manager, memo, manager.deployed_block + 21, None)  # type: ignore[arg-type]
    await v4.recent_settled(manager, memo)
    assert recent_found(manager, TOKEN, memo) == [pool] and rpc.batches == 2  # nothing new


async def test_a_range_refused_twice_is_never_read_again() -> None:
    """Refused as one range, then in the fallback windows: nothing predicted, and the
    next refresh reads only the blocks since that head (less REREAD)."""
    chain = load_registry()[1]
    assert chain.uniswap_v4 is not None
    manager = chain.uniswap_v4
    memo: MemoryCache[str, list[Any]] = MemoryCache(8)
    head = manager.deployed_block + 5_000
    refused = _Rpc("not a list")
    refresh_recent(refused, manager, memo, head, None)  # type: ignore[arg-type]
    await v4.recent_settled(manager, memo)
    assert recent_found(manager, TOKEN, memo) == [] and refused.batches == 2
    assert len(refused.calls) == 1 + 3  # the range, then its 2,000-block windows
    refused.calls.clear()
    refresh_recent(refused, manager, memo, head + 1, None)  # type: ignore[arg-type]
    await v4.recent_settled(manager, memo)
    assert refused.calls[0][1][0]["fromBlock"] == hex(head - v4.REREAD + 1)


async def test_a_large_first_read_is_decoded_the_same() -> None:
    """A first read of hundreds of events (decoded off the event loop): every pool kept."""
    chain = load_registry()[1]
    assert chain.uniswap_v4 is not None
    manager = chain.uniswap_v4
    memo: MemoryCache[str, list[Any]] = MemoryCache(8)
    first = manager.deployed_block + 1
    pools = [_found(first + i, hooks=checksum(f"0x{i + 1:040x}")) for i in range(300)]
    rpc = _Rpc([_log(p) for p in pools])
    refresh_recent(rpc, manager, memo, first + 400, None)  # type: ignore[arg-type]
    await v4.recent_settled(manager, memo)
    assert recent_found(manager, TOKEN, memo) == pools


async def test_a_capped_node_is_read_in_windows_within_the_budget() -> None:
    """All three windows read: the pool is kept; a budget of two stops above it: the
    index goes on from the head alone (nothing predicted for the token)."""
    chain = load_registry()[1]
    assert chain.uniswap_v4 is not None
    manager = chain.uniswap_v4
    head = manager.deployed_block + 25
    pool = _found(manager.deployed_block + 3)
    for budget, kept in ((3, [pool]), (2, [])):  # 26 blocks in windows of 10: three
        memo: MemoryCache[str, list[Any]] = MemoryCache(8)
        rpc = _Rpc([_log(pool)])
        limited = replace(manager, log_windows=budget)
        refresh_recent(rpc, limited, memo, head, 10)  # type: ignore[arg-type]
        await v4.recent_settled(limited, memo)
        assert recent_found(limited, TOKEN, memo) == kept

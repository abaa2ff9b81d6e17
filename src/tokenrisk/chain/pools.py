"""A token's pools on every DEX the registry knows: V2/V3 (:mod:`tokenrisk.chain.dex`)
and Uniswap V4 (:mod:`tokenrisk.chain.v4`), ranked together; what the checks call."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tokenrisk.chain import dex, v4
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.v4 import Unsearched as Unsearched
from tokenrisk.chain.v4 import remembered as remembered
from tokenrisk.model import Pool


@dataclass(frozen=True)
class Found:
    """A token's pools, deepest first, and the history the node kept the search from
    reading (V4 pools created there are unknown; the answer must say so)."""

    pools: list[Pool]
    unsearched: Unsearched | None = None


async def search_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
    log_span: int | None = None,
) -> Found:
    """Every base-token pool of ``token``, V2/V3 and V4, deepest (USD) first; ``memo``
    (the Node's) remembers the native token's pools, ``events`` (the Node's) the V4
    ``Initialize`` events read; ``log_span`` is the node's ``eth_getLogs`` range cap
    (``Capabilities.get_logs_max_range``), which bounds the V4 search's windows.
    V2/V3 and V4 are searched at once: one round trip for a token without V4 pools."""
    found, (more, missed) = await asyncio.gather(
        dex.find_pools(rpc, chain, token, block, memo),
        v4.v4_pools(rpc, chain, token, block, memo, events, log_span),
    )
    return Found(v4.candidate_sort([*found, *more]) if more else found, missed)


async def find_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
) -> list[Pool]:
    """The pools of :func:`search_pools` (for callers that state no search limit)."""
    return (await search_pools(rpc, chain, token, block, memo, events)).pools


async def resolve_pair(
    rpc: RpcClient, chain: Chain, address: str, block: str = "latest"
) -> tuple[str, str] | None:
    """(token, pair) when ``address`` is a V2/V3 pool (a V4 pool has no address)."""
    return await dex.resolve_pair(rpc, chain, address, block)


async def other_pools(
    rpc: RpcClient, chain: Chain, token: str, found: list[dex.Creation], base_pools: list[Pool]
) -> list[Pool]:
    """Pools against tokens that are not base tokens (V2/V3 factories' creation events)."""
    return await dex.other_pools(rpc, chain, token, found, base_pools)


async def with_creation(rpc: RpcClient, pools: list[Pool], found: list[dex.Creation]) -> list[Pool]:
    """``pools`` with their creation block's time and transaction where an event matches
    (V4 pools carry theirs from the ``Initialize`` event already)."""
    return await dex.with_creation(rpc, pools, found)

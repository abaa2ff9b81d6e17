"""A token's pools on every DEX the registry knows: V2/V3 (:mod:`tokenrisk.chain.dex`)
and Uniswap V4 (:mod:`tokenrisk.chain.v4`), ranked together; what the checks call."""

from __future__ import annotations

import asyncio

from tokenrisk.chain import dex, v4
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.model import Pool


async def find_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
) -> list[Pool]:
    """Every base-token pool of ``token``, V2/V3 and V4, deepest (USD) first; ``memo``
    (the Node's) remembers the native token's pools, ``events`` (the Node's) the V4
    ``Initialize`` events read.  V2/V3 and V4 are searched at once: one round trip for
    a token without V4 pools."""
    found, more = await asyncio.gather(
        dex.find_pools(rpc, chain, token, block, memo),
        v4.v4_pools(rpc, chain, token, block, memo, events),
    )
    return v4.candidate_sort([*found, *more]) if more else found


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

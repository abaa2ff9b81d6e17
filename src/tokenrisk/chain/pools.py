"""A token's base-token pools on every DEX the registry knows: V2/V3
(:mod:`tokenrisk.chain.dex`) and Uniswap V4 (:mod:`tokenrisk.chain.v4`), ranked together.

The rest of a pool search (a pair's tokens, pools against other tokens, creation times)
is V2/V3 only and is called in :mod:`tokenrisk.chain.dex` directly."""

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

"""A token's base-token pools on a Node's chain, on every DEX the registry knows: V2/V3
(:mod:`tokenrisk.chain.dex`) and Uniswap V4 (:mod:`tokenrisk.chain.v4`), ranked together;
and the V4 history a node's ``eth_getLogs`` cap kept the search from reading.

The search takes the :class:`~tokenrisk.chain.node.Node` because its bounds and memories
are the Node's: the log range cap it probed once, the wrapped native token's pools, the
V4 ``Initialize`` events read so far.  The rest of a pool search (a pair's tokens, pools
against other tokens, creation times) is V2/V3 only and is called in
:mod:`tokenrisk.chain.dex` directly."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tokenrisk.chain import dex, v4
from tokenrisk.chain.node import Node
from tokenrisk.model import Pool, Unsearched


@dataclass(frozen=True)
class Found:
    """A token's pools, deepest first, and the history the node kept the search from
    reading (V4 pools created there are unknown; the answer must say so)."""

    pools: list[Pool]
    unsearched: Unsearched | None = None


async def search_pools(node: Node, token: str) -> Found:
    """Every base-token pool of ``token`` on ``node``'s chain, V2/V3 and V4, deepest
    (USD) first, at the latest block.  The Node remembers the native token's pools and
    the V4 ``Initialize`` events read; the V4 search's windows are bounded by the node's
    ``eth_getLogs`` range cap (``Capabilities.get_logs_max_range``, probed once).
    V2/V3 and V4 are searched at once: one round trip for a token without V4 pools."""
    rpc, chain, memo = node.rpc, node.chain, node.native_pools
    span = (await node.capabilities()).get_logs_max_range if chain.uniswap_v4 else None
    found, (more, missed) = await asyncio.gather(
        dex.find_pools(rpc, chain, token, "latest", memo),
        v4.v4_pools(rpc, chain, token, "latest", memo, node.v4_pools, span),
    )
    return Found(v4.candidate_sort([*found, *more]) if more else found, missed)


def unsearched_before(node: Node, token: str) -> Unsearched | None:
    """What the Node's last search of ``token`` could not read of the V4 history (None:
    nothing missed, or no search remembered), so an answer served from the results
    cache states it too, without searching again."""
    return v4.remembered(node.chain, node.v4_pools, token)

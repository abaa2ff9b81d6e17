"""GetPairs: the token's pools on every configured chain, ranked."""

from __future__ import annotations

import asyncio
import math

from tokenrisk.chain import created, dex
from tokenrisk.chain.abi import parse_address
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.chain.tokens import read_token
from tokenrisk.checks.results import PairRow
from tokenrisk.checks.target import base_pools, on_every_chain
from tokenrisk.checks.tasks import finish, given
from tokenrisk.model import Pool


async def get_pairs(
    nodes: Nodes, address: str, chain_id: int | None, limit: int = 10
) -> list[PairRow]:
    """The ``limit`` first pairs of the token (all chains merged) in :func:`rank_pools` order.

    The symbols of the token and of each chain's base tokens (the two sides of most
    pools) are read beside the search, not after it (issue #27); any other side's after.
    """
    token = parse_address(address)
    chosen = nodes.select(chain_id)
    ahead = {
        (n.id, a.lower()): asyncio.ensure_future(read_token(n.rpc, a))
        for n in chosen
        for a in (token, *(b.address for b in n.chain.base_tokens))
    }
    try:
        search = await on_every_chain(chosen, lambda n: _pairs_on(n, token))
        pools = rank_pools([p for _, ps in search.skip_down() for p in ps], limit)
        keys = sorted({(p.chain_id, a) for p in pools for a in (p.token0, p.token1)})
        infos = await asyncio.gather(
            *(ahead.get((c, a.lower())) or read_token(nodes.node(c).rpc, a) for c, a in keys)
        )
    finally:
        for task in ahead.values():
            await finish(task)
    symbols = {key: info.symbol for key, info in zip(keys, infos, strict=True)}
    return [
        PairRow(p, (symbols[(p.chain_id, p.token0)], symbols[(p.chain_id, p.token1)]))
        for p in pools
    ]


async def _pairs_on(node: Node, token: str) -> list[Pool]:
    """Base-token pools, then pools against other tokens, all with their creation data.

    Pools against other tokens are found from the factories' creation events, so a node
    that caps ``eth_getLogs`` ranges lists only the base-token pools (their creation
    then comes from the node's history: :mod:`tokenrisk.chain.created`).  A Uniswap V4
    pool's creation is its ``Initialize`` event, read with the pool (no history search:
    its address is the PoolManager's).  The blocks of the creations found last time are
    read beside the lookup (their timestamps and hashes, confirming them); a creation
    read now takes its block's time from its event where the node gives it
    (``blockTimestamp``), else its block is read after the lookup."""
    rpc, chain = node.rpc, node.chain
    kept = created.kept_blocks(node, token)
    early = asyncio.ensure_future(dex.block_stamps(rpc, kept) if kept else given({}))
    try:
        base, found = await asyncio.gather(base_pools(node, token), created.creations(node, token))
        others = await dex.other_pools(rpc, chain, token, found or [], base)
        known = await created.complete(node, found, [p for p in base if p.version != "V4"])
        pools = [*base, *others]
        listed = {p.address.lower() for p in pools}
        # as with_creation would read them: only the blocks of the listed pools' events,
        # and of those only the ones the events read now did not carry the time of
        events = [c for c in known if c.pool.lower() in listed]
        stamps = await dex.stamps_of(rpc, events, await early)
        return await dex.with_creation(rpc, pools, known, stamps)
    finally:
        await finish(early)


def rank_pools(pools: list[Pool], limit: int) -> list[Pool]:
    """The ``limit`` first pools: pools against registry base tokens before pools against
    other tokens; then USD liquidity descending (unknown liquidity last); then creation
    time (older first, unknown last); then address.

    Every pool already carries its creation time where known (one batched ``eth_getLogs``
    over the factories reads them all, or the node's history on range-capped nodes, for
    ``CreatedAtTimestamp``), so ranking reads nothing more.
    """

    def order(p: Pool) -> tuple[bool, float, float, str]:
        created = p.created_at_timestamp
        return (not p.against_base, -p.depth, math.inf if created is None else created, p.address)

    return sorted(pools, key=order)[:limit]

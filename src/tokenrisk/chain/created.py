"""When and in which transaction each pool of a token was created, on any node.

The direct way is one full-history ``eth_getLogs`` of the factories' creation events
(:func:`tokenrisk.chain.dex.creations`).  Public providers cap the block range of
``eth_getLogs`` (the capability probe measures it, ``get_logs_max_range``), or refuse
the wide query with a range error.  Then each discovered pool's creation block is found
from the node's history of state (:func:`tokenrisk.chain.history.creation_block`, the
project's one creation-block search), and one ``eth_getLogs`` over that single block
reads the factory's event for its transaction hash.

Creation never changes once its block is final, so each pool's is kept on the Node once
it is :data:`SETTLED` blocks deep, whichever way it was found; a check that needs only
known pools (IsHoneypot's pair) then asks the node nothing for it -- the full-history
``eth_getLogs`` was most of the node's work in a repeated check (docs/performance.md).
GetPairs reads the events every time, since they also announce new pools, but only
those after the last settled block it read them through (:func:`creations`).

Creation data is optional ("where known"): a node without old state (not an archive
node) or without ``eth_getLogs`` leaves it unknown, never fails the request for it.
Real node failures (node down, throttled, garbage, timeout) still raise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tokenrisk.chain import dex
from tokenrisk.chain.history import creation_block
from tokenrisk.chain.node import Node
from tokenrisk.errors import MethodUnsupported, RpcError
from tokenrisk.model import Pool

_RANGE_CODES = frozenset({-32005, -32602, -32614})
"""JSON-RPC codes providers use for "ask for less" (limit exceeded, invalid params)."""
SETTLED = 12
"""Blocks above a pool's creation before it is kept: a reorg deeper than this (none on
the supported chains in practice) could move the creation to another block."""
_RANGE_TEXT = (
    "range",
    "too many blocks",
    "block limit",
    "more than",
    "too many results",
    "too large",
    "exceed",
    "too wide",
)
"""How providers word a refused ``eth_getLogs`` range (rate limits are NodeThrottled
already and never reach this test)."""


def range_refused(error: RpcError) -> bool:
    """True when ``error`` says the ``eth_getLogs`` query spans too much."""
    if isinstance(error, MethodUnsupported):
        return False
    lowered = error.message.lower()
    return error.code in _RANGE_CODES or any(text in lowered for text in _RANGE_TEXT)


async def creations(node: Node, token: str) -> list[dex.Creation] | None:
    """Every pool a registry factory created with ``token``, from one full-range lookup;
    None when the node caps ``eth_getLogs`` ranges (probed, or the query was refused as
    too wide): then :func:`complete` looks each pool up in the node's history.

    Incremental: the events up to a settled block (:data:`SETTLED` below the head) are
    kept on the Node with the pools they announced, so a later lookup reads only the
    blocks after it (the first one reads from block 0).
    """
    if (await node.capabilities()).get_logs_max_range is not None:
        return None
    key = token.lower()
    through, known = node.scanned.value(key) or (-1, ())
    try:
        fresh = await dex.creations(node.rpc, node.chain, token, from_block=through + 1)
    except RpcError as exc:
        if range_refused(exc):
            return None
        raise
    found = {c.pool: c for c in (*known, *fresh)}
    settled = (await node.head()).number - SETTLED
    if settled > through:
        kept = tuple(c for c in found.values() if c.block <= settled)
        node.scanned.put(key, (settled, kept))
    return sorted(found.values(), key=lambda c: (c.block, c.pool))


async def with_creations(node: Node, token: str, pools: list[Pool]) -> list[Pool]:
    """``pools`` (of ``token``, on registry DEXes) with their creation time and
    transaction where known, by whichever way the node allows (none when every pool's
    creation is kept on the Node already)."""
    kept = [node.created.value(p.address.lower()) for p in pools]
    known = [c for c in kept if c is not None]
    if len(known) < len(pools):
        known = await complete(node, await creations(node, token), pools)
        await keep(node, known)
    return await dex.with_creation(node.rpc, pools, known)


async def keep(node: Node, found: Sequence[dex.Creation]) -> None:
    """Keep on the Node the creations at least :data:`SETTLED` blocks deep."""
    if not found:
        return
    head = (await node.head()).number
    for creation in found:
        if head - creation.block >= SETTLED:
            node.created.put(creation.pool.lower(), creation)


async def complete(
    node: Node, found: list[dex.Creation] | None, pools: Sequence[Pool]
) -> list[dex.Creation]:
    """``found`` when the full-range lookup answered, else the creation of each of
    ``pools`` from the node's history (pools it cannot tell are left out)."""
    if found is not None:
        return found
    looked = await asyncio.gather(*(pool_creation(node, pool) for pool in pools))
    return [c for c in looked if c is not None]


async def pool_creation(node: Node, pool: Pool) -> dex.Creation | None:
    """The creation of one pool (registry DEX) from history; None when the node cannot
    tell (no old state, no logs for the block).  Kept on the Node once settled."""
    key = pool.address.lower()
    known = node.created.value(key)
    if known is not None:
        return known
    head = await node.head()
    block = await creation_block(node.rpc, pool.address, head.number)
    found = await _event_in(node, pool, block) if block is not None else None
    if found is not None:
        await keep(node, [found])
    return found


async def _event_in(node: Node, pool: Pool, block: int) -> dex.Creation | None:
    """The factory's event creating ``pool`` in ``block``: one ``eth_getLogs`` over one
    block (within any range cap), filtered by the factory, event and the two tokens."""
    venue = dex.dex_of(node.chain, pool)
    query = {
        "address": venue.factory,
        "topics": [dex.creation_event(venue), dex.topic(pool.token0), dex.topic(pool.token1)],
        "fromBlock": hex(block),
        "toBlock": hex(block),
    }
    try:
        logs = await node.rpc.call("eth_getLogs", [query])
    except RpcError:
        return None  # no logs for that block (pruned, refused): unknown, not a failure
    for log in logs if isinstance(logs, list) else []:
        created = dex.read_creation(venue, log)
        if created is not None and created.pool.lower() == pool.address.lower():
            return created
    return None

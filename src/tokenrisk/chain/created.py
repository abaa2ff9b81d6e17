"""When and in which transaction each pool of a token was created, on any node.

The direct way is one full-history ``eth_getLogs`` of the factories' creation events
(:func:`tokenrisk.chain.dex.creations`).  Public providers cap the block range of
``eth_getLogs`` (the capability probe measures it, ``get_logs_max_range``), or refuse
the wide query with a range error.  Then each discovered pool's creation block is found
from the node's history of state (:func:`tokenrisk.chain.history.creation_block`, the
project's one creation-block search), and one ``eth_getLogs`` over that single block
reads the factory's event for its transaction hash.

A creation is kept on the Node with the hash of its block, whichever way it was found,
and a token's creation events with the head they were read through; each is used again
only while the chain still has that block with that hash (read with the timestamps, or
beside the newer events), so a reorg or a devnet revert makes them be read afresh.  A
check that needs only known pools (IsHoneypot's pair) then asks the node for no events
-- the full-history ``eth_getLogs`` was most of the node's work in a repeated check
(docs/performance.md) -- and GetPairs reads only the events after the head it last
read them through (they also announce new pools).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tokenrisk.chain import dex
from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.history import creation_block
from tokenrisk.chain.node import Node
from tokenrisk.errors import MethodUnsupported, RpcError
from tokenrisk.model import Pool

_RANGE_CODES = frozenset({-32005, -32602, -32614})
"""JSON-RPC codes providers use for "ask for less" (limit exceeded, invalid params)."""
REREAD = 4
"""Blocks up to the kept head that a later lookup reads again: behind a load balancer
one backend may answer a head another has not yet indexed logs for; the kept events
are then completed by the next lookup instead of missing that block for good."""
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

    Incremental: the events up to the head they were last read at are kept on the Node
    with that head's hash; a later lookup reads only the blocks after it (and the last
    :data:`REREAD` before it), and checks in the same round trip that the chain still
    has that block (else it reads them all).
    """
    if (await node.capabilities()).get_logs_max_range is not None:
        return None
    key, head = token.lower(), await node.head()
    kept = node.scanned.value(key)
    try:
        if kept is not None and kept[0] <= head.number:
            through, hash_, known = kept
            block, fresh = await asyncio.gather(
                node.rpc.call("eth_getBlockByNumber", [hex(through), False]),
                _events(node, token, max(0, through + 1 - REREAD), head.number),
            )
            if isinstance(block, dict) and str(block.get("hash", "")).lower() == hash_:
                found = {c.pool: c for c in (*known, *fresh)}
                return _scanned(node, key, head, list(found.values()))
            node.scanned.forget(key)  # that block is gone (a reorg, a revert): read all
        events = await dex.creations(node.rpc, node.chain, token, (0, head.number))
        return _scanned(node, key, head, events)
    except RpcError as exc:
        if range_refused(exc):
            return None
        raise


async def _events(node: Node, token: str, first: int, last: int) -> list[dex.Creation]:
    """The creation events of blocks ``first`` to ``last`` (none when that is empty)."""
    if first > last:
        return []
    return await dex.creations(node.rpc, node.chain, token, (first, last))


def _scanned(
    node: Node, key: str, head: ChainHead, found: list[dex.Creation]
) -> list[dex.Creation]:
    """Keep ``found`` as read through ``head``; oldest first."""
    node.scanned.put(key, (head.number, head.hash, tuple(found)))
    return sorted(found, key=lambda c: (c.block, c.pool))


async def with_creations(node: Node, token: str, pools: list[Pool]) -> list[Pool]:
    """``pools`` (of ``token``, on registry DEXes) with their creation time and
    transaction where known, by whichever way the node allows (no events at all when
    every pool's creation is kept on the Node and its block is still there)."""
    kept = [node.created.value(p.address.lower()) for p in pools]
    known = [c for c in kept if c is not None]
    if pools and len(known) == len(pools):
        stamps = await dex.block_stamps(node.rpc, [c.block for c in known])
        if all(dex.current(c, stamps) for c in known):
            return await dex.with_creation(node.rpc, pools, known, stamps)
        for creation in known:
            node.created.forget(creation.pool.lower())
    known = await complete(node, await creations(node, token), pools)
    for creation in known:
        node.created.put(creation.pool.lower(), creation)
    return await dex.with_creation(node.rpc, pools, known)


def kept_blocks(node: Node, token: str) -> list[int]:
    """The blocks of ``token``'s creations this node's last :func:`creations` lookup
    kept: their stamps can be read beside the lookup that confirms them."""
    kept = node.scanned.value(token.lower())
    return [c.block for c in kept[2]] if kept is not None else []


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
    tell (no old state, no logs for the block).  Kept on the Node once found, and used
    again while its block still has the hash it had (one header read)."""
    key = pool.address.lower()
    known = node.created.value(key)
    if known is not None:
        if dex.current(known, await dex.block_stamps(node.rpc, [known.block])):
            return known
        node.created.forget(key)  # a reorg or a revert: search again
    head, caps = await asyncio.gather(node.head(), node.capabilities())
    floor = caps.state_floor()
    block = await creation_block(node.rpc, pool.address, head.number, floor=floor)
    found = await _event_in(node, pool, block) if block is not None else None
    if found is not None:
        node.created.put(key, found)
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

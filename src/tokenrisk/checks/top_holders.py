"""TopHolders, and the Transfer-log index kept fresh for every check (IsHoneypot,
TopHolders, the index job of :mod:`tokenrisk.jobs`) with the holder counts it gives.

The index itself is :mod:`tokenrisk.holders.index`; this module decides, per request,
whether to bring it up to the head inline or leave that to a background job.  TopHolders
lists the largest holders now, from the index brought up to date.
"""

from __future__ import annotations

import asyncio

from tokenrisk import metrics
from tokenrisk.chain.abi import checksum, parse_address
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import is_contract
from tokenrisk.checks.deps import HolderIndex, HoldersDeps
from tokenrisk.checks.results import HolderBalance, TopHoldersResult
from tokenrisk.checks.tasks import finish
from tokenrisk.errors import NotFoundError, StoreConflict
from tokenrisk.holders.index import (
    DEVNET_CHAIN_IDS,
    IndexSettings,
    first_window_ahead,
    head_block,
    holder_candidates,
    holder_count,
    index_token,
    ranked_live,
    total_supply,
)

# TOPHOLDERS


async def top_holders(
    deps: HoldersDeps, address: str, chain_id: int, limit: int = 50
) -> TopHoldersResult:
    """The ``limit`` largest holders now (the API bounds ``limit`` by the caller's tier).

    Two round trips to the node when the index is current (issue #27): the code check
    beside the index's refresh (which reads the head, and the code itself before it
    writes anything; with a job queue the refresh waits for the check, so no job is
    queued for an address without code), then the supply, the candidates' balances and
    whether each candidate is a contract, together.

    Raises UnknownChain, and NotFoundError when there is no contract at ``address``.
    """
    token = parse_address(address)
    node, index = deps.nodes.node(chain_id), deps.index
    inline = index.queue is None
    refreshed = asyncio.create_task(refresh_index(index, node, token)) if inline else None
    try:
        (flags,) = [await is_contract(node.rpc, [token])]
        if not flags[0]:
            raise NotFoundError("no contract at this address on this chain")
        await (refreshed if refreshed is not None else refresh_index(index, node, token))
    finally:
        if refreshed is not None:
            await finish(refreshed)
    candidates = await holder_candidates(index.store, chain_id, token, limit)
    addresses = [a for a, _ in candidates]
    supply, rows, codes = await asyncio.gather(
        total_supply(node.rpc, token),
        ranked_live(node.rpc, token, candidates, limit),
        _contracts(node, addresses),
    )
    contract = dict(zip(addresses, codes, strict=True))
    holders = tuple(HolderBalance(checksum(a), b, contract[a]) for a, b in rows)
    return TopHoldersResult(supply or 0, holders)


async def _contracts(node: Node, addresses: list[str]) -> list[bool]:
    """Whether each address holds code (no request for none)."""
    return await is_contract(node.rpc, addresses) if addresses else []


# THE INDEX, FRESH FOR A CHECK


async def refresh_index(index: HolderIndex, node: Node, token: str) -> None:
    """Bring the token's index up to the head, or have a background job do it.

    With a job queue (Redis configured, see :mod:`tokenrisk.jobs`) an index more than
    ``index_inline_blocks`` behind the head is left to ``tokenrisk worker``: the check
    goes on with the index as stored.  Otherwise concurrent requests for one token wait
    for a single indexer; when another process holds the token's cursor
    (StoreConflict), a few short retries follow, then the stored index is used as it is
    (at most a few blocks behind).
    """
    queue, chain_id = index.queue, node.id
    if queue is not None and await _blocks_behind(index, node, token) > queue.inline_blocks:
        await queue.enqueue(chain_id, token)
        return
    lock = index.locks.setdefault((chain_id, token.lower()), asyncio.Lock())
    async with lock:
        for attempt in range(3):
            try:
                settings = IndexSettings(state_floor=(await node.capabilities()).state_floor())
                stats = await index_token(node.rpc, index.store, chain_id, token, settings=settings)
                metrics.index_refreshed(chain_id, stats.blocks)
                return
            except StoreConflict:
                await asyncio.sleep(0.05 * (attempt + 1))


def index_ahead(index: HolderIndex, node: Node, token: str, fraction: float) -> None:
    """A first index's first window of logs asked now, at the head ``node`` read less
    than ``fraction`` of a block interval ago (:meth:`Node.recent`), beside the check's
    own head read and the search that confirms the token, rather than after them
    (:func:`~tokenrisk.holders.index.first_window_ahead`, which uses it only at the
    head the check then reads).  Not with a job queue: the index may be left to it."""
    head = node.recent(fraction) if index.queue is None else None
    if head is not None:
        first_window_ahead(node.rpc, index.store, node.id, token, head)


async def _blocks_behind(index: HolderIndex, node: Node, token: str) -> int:
    """Blocks between the token's index cursor and the head (the whole chain if never
    indexed: the indexer's start block is not known before it runs)."""
    head, cursor = await asyncio.gather(
        head_block(node.rpc),
        asyncio.to_thread(index.store.get_cursor, node.id, token.lower()),
    )
    return head - (cursor.last_block if cursor is not None else -1)


async def holders_counted(index: HolderIndex, node: Node, token: str) -> int | None:
    """The token's holder count from the index; None when it has never been indexed."""
    return await holder_count(index.store, node.id, token)


async def base_token_holders(index: HolderIndex, node: Node, base: str) -> int | None:
    """Holder count of the pair's other token where it is indexed; None when unknown.

    On a devnet the base token's Transfer logs are few, so they are indexed here; on a
    real chain (millions of WETH transfers) only a background index job can, and until
    one has, the count stays unknown (None) rather than a partial number.
    """
    if node.id in DEVNET_CHAIN_IDS:
        await refresh_index(index, node, base)
    return await holders_counted(index, node, base)

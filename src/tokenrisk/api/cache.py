"""Results cache: recent answers keyed on the chain heads they were computed at.

A key is ``(endpoint, heads, parameters)`` where ``heads`` holds, for every chain the
request may touch, ``(chain id, head block number, head block hash)``.  Nothing is ever
keyed on "latest": a new block (or a reorg, or a devnet ``evm_revert`` that reuses a
block number with different contents) gives a new key, so an entry can only be reused
while the chain still shows the head it was computed at, and at most ``ttl`` seconds.

The cache is in memory, per process, and bounded: the least recently used entry is
dropped when ``max_entries`` is reached.  Values are stored as given and must be
treated as immutable by callers (the API stores JSON-ready values it never mutates).
Only successful results are stored; errors are always recomputed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Mapping

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.node import Node
from tokenrisk.errors import TokenRiskError, UnknownChain

DEFAULT_MAX_ENTRIES = 2048

Heads = tuple[tuple[int, int, str], ...]
"""Sorted ``(chain id, head block number, head block hash)`` of every chain in a key."""


class ResultCache(MemoryCache[Hashable, object]):
    """The in-process results cache: a :class:`~tokenrisk.caching.MemoryCache` whose
    entries live ``ttl`` seconds (``ttl <= 0`` disables it: every ``get`` misses, ``put``
    stores nothing).  ``clock`` is injectable for tests; it must be monotonic.
    """

    def __init__(
        self,
        ttl: float,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(max_entries, ttl, clock)


async def chain_heads(
    nodes: Mapping[int, Node], chain_id: int | None, max_age: float = 0.0
) -> Heads | None:
    """The heads part of a key: the given chain, or every configured chain (sorted).

    One ``eth_getBlockByNumber("latest")`` per chain, concurrently, unless the Node read
    its head at most ``max_age`` seconds ago (:meth:`~tokenrisk.chain.node.Node.head`).
    Returns None when some but not all chains failed to answer: the request then runs
    uncached and the check itself decides what a partial outage means.  Raises the first
    chain's error when every chain failed (UnknownChain for an unconfigured ``chain_id``).
    """
    ids = [chain_id] if chain_id is not None else sorted(nodes)
    if not ids:
        return ()
    if chain_id is not None and chain_id not in nodes:
        raise UnknownChain(f"chain {chain_id} is not configured")
    replies = await asyncio.gather(*(nodes[i].head(max_age) for i in ids), return_exceptions=True)
    heads: list[tuple[int, int, str]] = []
    failures: list[BaseException] = []
    for chain, reply in zip(ids, replies, strict=True):
        if isinstance(reply, BaseException):
            failures.append(reply)
        else:
            heads.append((chain, reply.number, reply.hash))
    unexpected = [f for f in failures if not isinstance(f, TokenRiskError)]
    if unexpected or not heads:
        raise (unexpected or failures)[0]
    return None if failures else tuple(heads)

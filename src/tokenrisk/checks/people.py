"""Who sells as themselves in a check: the largest EOA holders and the snipers that still
hold, with balances read from the chain (the index says who holds, ``balanceOf`` how
much: reflection and rebasing tokens change balances without Transfer logs)."""

from __future__ import annotations

import asyncio
from collections.abc import Set

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import checksum
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import balances_of, is_contract
from tokenrisk.holders.index import top_holders
from tokenrisk.holders.launch import sniper_addresses
from tokenrisk.model import Pool
from tokenrisk.store.engine import Store

People = tuple[tuple[str, int], ...]
"""(holder, balance) pairs, in the order the check found them."""
CrowdMemo = MemoryCache[tuple[int, str, str], tuple[People, People]]
"""Per (chain, token, pool): the holders and the holding snipers the last check found
(``checks.holder_sells`` sends their sells with the reads that find them again)."""

_SKIP = {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
SAMPLE_MAX = 2_000
"""Most holders whose sells are simulated in one check.  A larger candidate set is
sampled by balance: the largest ``SAMPLE_MAX // 2`` always, the rest evenly spaced by
balance rank over the remaining candidates (see :func:`sample_by_balance`)."""


async def largest_holders(
    node: Node, store: Store, limit: int, token: str, pools: list[Pool], block: str = "latest"
) -> list[tuple[str, int]]:
    """The ``limit`` largest EOA holders with their balances read from the chain at
    ``block`` (the head the sells are simulated on: a newer block may have moved them)."""
    skip = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    rows = await top_holders(store, node.id, token, limit * 2)
    rows = sample_by_balance(rows, SAMPLE_MAX)
    addresses = [checksum(a) for a, _ in rows if a.lower() not in skip]
    if not addresses:
        return []
    people = await _holding_people(node, token, addresses, block)
    return people[:limit]


async def indexed_people(
    node: Node, store: Store, limit: int, token: str, pools: list[Pool], skip: Set[str]
) -> tuple[People, People]:
    """Who :func:`largest_holders` and :func:`holding_snipers` will most likely find,
    from the index alone (no node call): the largest indexed holders and the snipers
    among them, with their indexed balances, as if every one were a person whose
    ``balanceOf`` the index got right.  A guess to send sells ahead with, never an
    answer (``checks.holder_sells`` uses it only when the reads find exactly these)."""
    left_out = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    left_out |= {s.lower() for s in skip}
    rows = await top_holders(store, node.id, token, limit * 2)
    people = tuple(
        (checksum(a), b)
        for a, b in sample_by_balance(rows, SAMPLE_MAX)
        if a.lower() not in left_out
    )[:limit]
    indexed = {a.lower(): b for a, b in rows}
    snipers = await sniper_addresses(store, node.id, token, pools)
    # a sniper outside the largest rows: sold out, or a small holder (then a miss)
    held = tuple((checksum(a), indexed[a]) for a in snipers if a not in left_out and a in indexed)
    return people, held


async def holding_snipers(
    node: Node, store: Store, token: str, pools: list[Pool], skip: Set[str], block: str = "latest"
) -> list[tuple[str, int]]:
    """The snipers (``holders.launch``) that still hold a balance and are not contracts,
    leaving out ``skip`` and the token itself."""
    found = await sniper_addresses(store, node.id, token, pools)
    left_out = {s.lower() for s in skip} | {token.lower()}
    found = [checksum(a) for a in found if a not in left_out]
    if not found:
        return []
    return await _holding_people(node, token, found, block)


async def _holding_people(
    node: Node, token: str, addresses: list[str], block: str
) -> list[tuple[str, int]]:
    """``addresses`` that are not contracts and hold a balance at ``block``, with it."""
    flags, balances = await asyncio.gather(
        is_contract(node.rpc, addresses, block), balances_of(node.rpc, token, addresses, block)
    )
    return [(a, b) for a, c, b in zip(addresses, flags, balances, strict=True) if b and not c]


def sample_by_balance(rows: list[tuple[str, int]], cap: int) -> list[tuple[str, int]]:
    """At most ``cap`` of ``rows`` (largest balance first): the top half of the cap as
    they are, then every k-th of the rest, so small holders are represented in
    proportion to their number rather than left out.  Order is kept."""
    if len(rows) <= cap:
        return rows
    top = cap // 2
    rest = rows[top:]
    picks = cap - top
    step = len(rest) / picks
    return rows[:top] + [rest[int(i * step)] for i in range(picks)]

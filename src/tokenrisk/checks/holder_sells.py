"""``holderAnalysis``: the analysed holders and the snipers that still hold sell in
simulation.  Analysed: the largest holders up to the configured limit, skipping pools,
the zero/dead addresses and contracts (a contract cannot sign a transaction, so "can it
sell like a person" does not apply); past ``SAMPLE_MAX`` candidates, a sample by
balance (:func:`tokenrisk.checks.people.sample_by_balance`)."""

from __future__ import annotations

import asyncio
from collections.abc import Set
from dataclasses import replace
from typing import Any

from tokenrisk.chain.node import Node
from tokenrisk.checks.people import (
    CrowdMemo,
    People,
    holding_snipers,
    indexed_people,
    largest_holders,
)
from tokenrisk.checks.sells import capped, pool_sell_limit, sell_all
from tokenrisk.holders.siphon import siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate
from tokenrisk.model import HolderStats, Pool
from tokenrisk.simulate.simulator import Simulator
from tokenrisk.store.engine import Store


async def analyse_holders(
    node: Node,
    store: Store,
    limit: int,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str] = frozenset(),
    memo: CrowdMemo | None = None,
) -> HolderStats | None:
    """Sell simulations of the ``limit`` largest holders and of the snipers that still
    hold; None when there is nobody to analyse.

    Reads the holder index: the caller brings it up to date (``refresh_index``).
    ``skip``: addresses not to analyse (the provider of simulated liquidity, whose
    balance the simulation has already changed).  ``memo``: who the last check found;
    their sells go out with the reads that find this check's people, and are used
    only when those reads find exactly the same people and balances (else they are
    dropped and the sells go out after the reads, as without a memo).
    """
    token = sim.route.token
    # the snipers' reads share the largest holders' round trip, the siphon's the sells
    at = sim.base.tag  # balances as of the block the sells are simulated on
    holding = asyncio.ensure_future(holding_snipers(node, store, token, pools, skip, at))
    try:
        return await _analyse(node, store, limit, sim, pools, skip, holding, memo)
    finally:
        holding.cancel()  # a no-op once it is done


async def _analyse(
    node: Node,
    store: Store,
    limit: int,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str],
    holding: asyncio.Future[list[tuple[str, int]]],
    memo: CrowdMemo | None = None,
) -> HolderStats | None:
    token = sim.route.token
    key = (node.id, token.lower(), sim.route.pool.address.lower())
    guess = memo.value(key) if memo is not None else None
    if guess is None:  # first sight: the holders and snipers as the index has them
        guess = await indexed_people(node, store, limit, token, pools, skip)
    early = _sells(node, store, sim, guess) if guess[0] else None
    try:
        found = await largest_holders(node, store, limit, token, pools, sim.base.tag)
        people = tuple(p for p in found if p[0] not in skip)
        if not people:
            return None
        held = tuple(await holding)
        if memo is not None:
            memo.put(key, (people, held))
        if early is None or guess != (people, held):
            _drop(early)
            early = _sells(node, store, sim, (people, held))
        sold, siphoned, fresh = await early
    finally:
        _drop(early)
    results = [replace(r, siphoned=True) if r.holder in siphoned else r for r in sold]
    cap = pool_sell_limit(sim)
    over = sum(1 for (_, b), (_, c) in zip(people, capped(list(people), cap), strict=True) if c < b)
    snipers = _sniper_sells(list(held), results, fresh)
    stats = aggregate(results)
    if over:
        stats = replace(stats, sold_at_pool_limit=over, pool_limit_wei=cap)
    return replace(
        stats,
        snipers_success=sum(1 for r in snipers if r.ok),
        snipers_failed=sum(1 for r in snipers if not r.ok),
    )


def _sells(
    node: Node, store: Store, sim: Simulator, crowd: tuple[People, People]
) -> asyncio.Future[tuple[list[HolderSell], set[str], list[HolderSell]]]:
    """The sells of ``crowd`` (people, holding snipers), the siphon check of the people
    and the sells of the snipers not among them, all started now."""
    people, held = crowd
    names = [a for a, _ in people]
    return asyncio.ensure_future(
        asyncio.gather(
            sell_all(sim, capped(list(people), pool_sell_limit(sim))),
            siphoned_holders(node.rpc, store, node.id, sim.route.token, names),
            _other_snipers(sim, list(held), set(names)),
        )
    )


def _drop(started: asyncio.Future[Any] | None) -> None:
    if started is not None and not started.done():
        started.cancel()
        started.add_done_callback(_seen)


def _seen(future: asyncio.Future[Any]) -> None:
    """A cancelled gather ends with a CancelledError set: retrieved, so asyncio does not
    report it as never retrieved."""
    if not future.cancelled():
        future.exception()


async def _other_snipers(
    sim: Simulator, held: list[tuple[str, int]], people: Set[str]
) -> list[HolderSell]:
    """The sells of the holding snipers (``holding_snipers``) not in ``people`` (capped
    at what the pool can take, as for every holder)."""
    todo = capped([(a, b) for a, b in held if a not in people], pool_sell_limit(sim))
    return await sell_all(sim, todo)


def _sniper_sells(
    holding: list[tuple[str, int]], analysed: list[HolderSell], fresh: list[HolderSell]
) -> list[HolderSell]:
    """Sell results of the snipers that still hold a balance and are not contracts:
    those among the analysed holders reuse their result, then the ``fresh`` ones."""
    known = {r.holder: r for r in analysed}
    return [known[a] for a, _ in holding if a in known] + fresh

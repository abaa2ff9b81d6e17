"""``holderAnalysis``: the analysed holders and the snipers that still hold sell in
simulation.  Analysed: the largest holders up to the configured limit, skipping pools,
the zero/dead addresses and contracts (a contract cannot sign a transaction, so "can it
sell like a person" does not apply); past ``SAMPLE_MAX`` candidates, a sample by
balance (:func:`tokenrisk.checks.people.sample_by_balance`)."""

from __future__ import annotations

import asyncio
from collections.abc import Set
from dataclasses import replace

from tokenrisk.chain.node import Node
from tokenrisk.checks.people import holding_snipers, largest_holders
from tokenrisk.checks.sells import capped, pool_sell_limit, sell_all
from tokenrisk.holders.siphon import siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate
from tokenrisk.model import HolderStats, Pool
from tokenrisk.simulate.engine import Simulator
from tokenrisk.store.engine import Store


async def analyse_holders(
    node: Node,
    store: Store,
    limit: int,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str] = frozenset(),
) -> HolderStats | None:
    """Sell simulations of the ``limit`` largest holders and of the snipers that still
    hold; None when there is nobody to analyse.

    Reads the holder index: the caller brings it up to date (``refresh_index``).
    ``skip``: addresses not to analyse (the provider of simulated liquidity, whose
    balance the simulation has already changed).
    """
    token = sim.route.token
    # the snipers' reads share the largest holders' round trip, the siphon's the sells
    at = sim.base.tag  # balances as of the block the sells are simulated on
    holding = asyncio.ensure_future(holding_snipers(node, store, token, pools, skip, at))
    try:
        return await _analyse(node, store, limit, sim, pools, skip, holding)
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
) -> HolderStats | None:
    token = sim.route.token
    found = await largest_holders(node, store, limit, token, pools, sim.base.tag)
    people = [p for p in found if p[0] not in skip]
    if not people:
        return None
    cap = pool_sell_limit(sim)
    sells = capped(people, cap)
    siphon = asyncio.ensure_future(
        siphoned_holders(node.rpc, store, node.id, token, [a for a, _ in people])
    )
    # the snipers that are not among ``people`` sell alongside them
    others = asyncio.ensure_future(_other_snipers(sim, holding, {a for a, _ in people}))
    try:
        sold = await sell_all(sim, sells)
        siphoned = await siphon
        held, fresh = await others
    finally:
        siphon.cancel()
        others.cancel()
    results = [replace(r, siphoned=True) if r.holder in siphoned else r for r in sold]
    over = sum(1 for (_, b), (_, c) in zip(people, sells, strict=True) if c < b)
    snipers = _sniper_sells(held, results, fresh)
    stats = aggregate(results)
    if over:
        stats = replace(stats, sold_at_pool_limit=over, pool_limit_wei=cap)
    return replace(
        stats,
        snipers_success=sum(1 for r in snipers if r.ok),
        snipers_failed=sum(1 for r in snipers if not r.ok),
    )


async def _other_snipers(
    sim: Simulator, holding: asyncio.Future[list[tuple[str, int]]], people: Set[str]
) -> tuple[list[tuple[str, int]], list[HolderSell]]:
    """The snipers still holding a balance (``holding``: :func:`holding_snipers`), and
    the sells of those not in ``people`` (capped at what the pool can take, as for
    every holder)."""
    held = await holding
    todo = capped([(a, b) for a, b in held if a not in people], pool_sell_limit(sim))
    return held, await sell_all(sim, todo)


def _sniper_sells(
    holding: list[tuple[str, int]], analysed: list[HolderSell], fresh: list[HolderSell]
) -> list[HolderSell]:
    """Sell results of the snipers that still hold a balance and are not contracts:
    those among the analysed holders reuse their result, then the ``fresh`` ones."""
    known = {r.holder: r for r in analysed}
    return [known[a] for a, _ in holding if a in known] + fresh

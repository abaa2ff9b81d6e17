"""Real holders selling as themselves: each sells its balance in its own
``eth_simulateV1`` (an EOA call from the holder's address, no override of its token
balance), sent as JSON-RPC batches of independent simulations, several at once."""

from __future__ import annotations

import asyncio

from tokenrisk.errors import CallReverted
from tokenrisk.holders.stats import HolderSell
from tokenrisk.simulate.engine import Outcome, Plan, Simulator, sell_leg

V2_MAX_RESERVE = 2**112 - 1
"""A Uniswap V2 pair stores reserves as uint112: a sell that would lift the pair's token
balance above this reverts (``UniswapV2: OVERFLOW``), whoever the seller is."""
_BATCH = 50  # holder sells per JSON-RPC batch
_BATCHES_IN_FLIGHT = 4  # batches sent at once (the node client folds them into one request)


def pool_sell_limit(sim: Simulator) -> int | None:
    """The largest sell a V2 pair can take (None for V3: no such bound in practice)."""
    if sim.route.v3:
        return None
    pool = sim.route.pool
    reserve = pool.reserves0 if pool.token0 == sim.route.token else pool.reserves1
    return max(0, V2_MAX_RESERVE - reserve)


def capped(people: list[tuple[str, int]], limit: int | None) -> list[tuple[str, int]]:
    """Each balance capped at what the pool can take (``limit``; None: uncapped)."""
    return [(a, min(b, limit)) if limit is not None else (a, b) for a, b in people]


async def sell_all(
    sim: Simulator, people: list[tuple[str, int]], siphoned: set[str]
) -> list[HolderSell]:
    """Each of ``people`` sells ``amount``: batches of ``_BATCH``, a few in flight at once."""
    in_flight = asyncio.Semaphore(_BATCHES_IN_FLIGHT)

    async def chunk_of(start: int) -> list[HolderSell]:
        async with in_flight:
            return await _sell_chunk(sim, people[start : start + _BATCH], siphoned)

    parts = await asyncio.gather(*(chunk_of(i) for i in range(0, len(people), _BATCH)))
    return [result for part in parts for result in part]


async def _sell_chunk(
    sim: Simulator, chunk: list[tuple[str, int]], siphoned: set[str]
) -> list[HolderSell]:
    """Each holder sells everything; who cannot gets a second try with 99.9% of it.

    A person who can exit 99.9% of a position is not trapped (some tokens refuse to
    sell a whole balance; the journey's maxSell reports that quirk).
    """
    outcomes = await sim.run([_sell_plan(sim, a, b) for a, b in chunk])
    results = [
        _holder_result(sim, h, o, h[0] in siphoned) for h, o in zip(chunk, outcomes, strict=True)
    ]
    retry = [i for i, r in enumerate(results) if not r.ok and chunk[i][1] >= 1_000]
    if retry:
        smaller = [(chunk[i][0], chunk[i][1] * 999 // 1_000) for i in retry]
        plans = [_sell_plan(sim, a, b) for a, b in smaller]
        for i, h, outcome in zip(retry, smaller, await sim.run(plans), strict=True):
            results[i] = _holder_result(sim, h, outcome, h[0] in siphoned)
    return results


def _sell_plan(sim: Simulator, holder: str, amount: int) -> Plan:
    plan = sim.plan()
    plan.block(1, {holder: {"balance": hex(10**30)}})
    sim.add_sell(plan, holder, amount, "holder")
    return plan


def _holder_result(
    sim: Simulator, holder: tuple[str, int], outcome: Outcome | CallReverted, siphoned: bool
) -> HolderSell:
    address, amount = holder
    if isinstance(outcome, CallReverted) or not outcome["holder.sell"].ok:
        return HolderSell(address, ok=False, siphoned=siphoned)
    tax, gas = sell_leg(outcome, sim.route, "holder", amount), outcome["holder.sell"].gas
    return HolderSell(
        address,
        ok=True,
        tax=tax.effective,
        gas=gas,
        siphoned=siphoned,
        tax_token_unit=tax.token_unit,
    )

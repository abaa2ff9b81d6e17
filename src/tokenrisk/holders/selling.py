"""How holders sell (IsHoneypot's ``holderAnalysis``): each as itself, an EOA call from
the holder's address, no override of its token balance.

Holders sell in groups of ``GROUP`` per ``eth_simulateV1``, one block each, largest
balance first; every sell is measured against the router's quote read in the same block,
just before it (so its tax is the tax at the state it sold in).  A sell that fails in its
group is simulated again alone from the head state (as are the sells of a group the node
failed as a whole): only a holder who cannot sell on its own is counted as failed, and
one who cannot sell everything alone gets a second try with 99.9% of it.  Largest first,
because a rule that caps a sell by the pool's reserve only loosens as earlier sells fill
the pool: a holder that passes after larger ones would pass alone.  Each group is a
request of its own, several at once.

Two of those later steps go out early (issue #27: a token's first check in three round
trips), each used only where the step-by-step order would have taken it, so the results
are the same; what a miss costs is counted (``tokenrisk_sent_ahead_total``):

- ``holder_alone``: a V2 pair holds at most ``2**112 - 1`` of a token, so in a group
  whose earlier sells already fill it, a later sell must fail (``UniswapV2: OVERFLOW``);
  those holders' lone sells go out with the groups (:func:`overflowing`) and are used
  for each one whose group sell did fail (without their 99.9% tries: alone, the whole
  balance should sell; a try is sent after for one that did not).
- ``holder_retry``: a lone sell goes out with its 99.9% second try, used when the whole
  balance did not sell.
- ``holder_suspect``: the caller's suspects (``checks.holder_sells``: the snipers the
  index names, whom a launch trap blacklists) sell alone, with their 99.9% tries, while
  the groups run; used for each one whose group sell did fail.

One step waits instead: when the people are a guess whose verifying reads are still in
flight (``sell_all``'s ``after``), a group's failures sell alone only once those reads
confirm the guess; a guess they contradict is dropped before its lone sells are sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence, Set
from dataclasses import replace

from tokenrisk import metrics
from tokenrisk.errors import CallReverted, RpcError
from tokenrisk.holders.stats import HolderSell
from tokenrisk.simulate.reserves import token_side_short
from tokenrisk.simulate.simulator import (
    Outcome,
    Plan,
    Simulator,
    block_time,
    sell_leg,
    too_many_blocks,
)

V2_MAX_RESERVE = 2**112 - 1
"""A Uniswap V2 pair stores reserves as uint112: a sell that would lift the pair's token
balance above this reverts (``UniswapV2: OVERFLOW``), whoever the seller is."""
_BATCH = 50  # lone holder sells per JSON-RPC batch
_IN_FLIGHT = 4
"""Groups (or batches of lone sells) sent at once: each group is a request of its own
with a typed reply (``chain.coalesce.LARGE_SIMULATION``), so the node runs them on all its
cores."""
GROUP = 12
"""Most holder sells in one simulation (one block each; fewer when the node's block cap is
smaller, :attr:`Simulator.room`).  Larger groups cost the node less per holder, but the
whole request must stay within the node's RPC gas cap (geth: 50M, see
:mod:`tokenrisk.simulate.gas`): 12 sells leave each ~3M gas and each read ~170k.  A sell
that runs out of gas in its group is tried again alone with the full per-call gas."""
RETRY_MIN = 1_000
"""Smallest balance that gets the 99.9% second try (below it, 99.9% rounds to nothing
new)."""
ALONE, RETRY, PEOPLE, SUSPECT = "holder_alone", "holder_retry", "holders", "holder_suspect"
"""What planned holder sells sent early (``tokenrisk_sent_ahead_total``'s ``planned``):
the overflow prediction, the 99.9% second try, and who sells (the last check's people,
or the index's on first sight: ``checks.holder_sells``)."""


def count(planned: str, used: bool) -> None:
    """Holder sells sent early, used or dropped (``tokenrisk_sent_ahead_total``)."""
    metrics.sent_ahead(planned, used)


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
    sim: Simulator,
    people: list[tuple[str, int]],
    suspects: Set[str] = frozenset(),
    after: asyncio.Future[None] | None = None,
) -> list[HolderSell]:
    """Each of ``people`` sells ``amount`` (results in the order of ``people``): in
    groups first, then alone for whoever failed in a group (module docstring).  No
    result is marked siphoned: the caller knows who was.  ``suspects`` (lowercase
    addresses): holders likely to fail in their group, whose lone sells go out with the
    groups (``holder_suspect``); they change when a sell is simulated, never its result.
    ``after``: ``people`` are a guess checked by reads still in flight (on first sight,
    the index's logged balances: ``checks.holder_sells``); the lone sells of a group's
    failures wait for it (set: the guess holds; cancelled: it is dropped, with these
    sells never sent).  On a reflection token a guess on logged balances fails in its
    groups for most holders, whose lone sells were node work for nothing (issue #27);
    it changes when a lone sell is sent, never a result.

    A node that refuses a group's span (a block cap below the one probed) has taught the
    simulator its cap: the groups are made again, once, within it.
    """
    if not people:
        return []  # nobody to sell: not even the pool's read
    # the same sells at the same head block: the same results (Simulator.remembered)
    key = ("holder sells", tuple(people))
    waits = (suspects, after)
    return list(await sim.remembered(key, lambda: _sell_all_learning(sim, people, waits)))


Waits = tuple[Set[str], asyncio.Future[None] | None]
"""``sell_all``'s ``suspects`` and ``after``."""


async def _sell_all_learning(
    sim: Simulator, people: list[tuple[str, int]], waits: Waits
) -> tuple[HolderSell, ...]:
    try:
        return tuple(await _sell_all(sim, people, waits))
    except RpcError as exc:
        if not too_many_blocks(exc):
            raise
        return tuple(await _sell_all(sim, people, waits))


async def _sell_all(
    sim: Simulator, people: list[tuple[str, int]], waits: Waits
) -> list[HolderSell]:
    """Groups first, then alone; everybody alone when the pool's token side is short.

    A V2 pair holding fewer tokens than its reserve refuses every router sell until one
    sell large enough to fill the gap goes through, and that sell repairs the pool for
    every later one: sells in a group are then not independent, and only selling alone
    says who can get out.  The pool is read alongside the groups, so this costs no round
    trip when the pool is sound.  The lone sells of whoever must overflow the pair in
    their group (:func:`overflowing`) go out with the groups too, as do the suspects'.
    """
    suspects, after = waits
    route = sim.route
    short = asyncio.ensure_future(token_side_short(sim.rpc, route.pool, route.token, sim.base.tag))
    doomed = overflowing(people, groups_of(sim, people), pool_sell_limit(sim))
    suspected = [i for i, (a, _) in enumerate(people) if a.lower() in suspects and i not in doomed]
    # an overflow is the group's doing: alone, the whole balance should sell
    early = [_early(sim, people, doomed, ALONE, False), _early(sim, people, suspected, SUSPECT)]
    taken = {i for todo, _, _ in early for i in todo}
    failed: list[Early] = []  # lone sells of a group's failures, started on its reply
    try:
        results = await _grouped(sim, people, (taken, failed), after)
        if await short is not None:
            results = [None] * len(people)
        return await _alone(sim, people, results, [*early, *failed], after)
    finally:
        short.cancel()  # a no-op once it is done
        for _, sold, _ in [*early, *failed]:
            if sold is not None:  # done or not: one failed with the node's error unread
                sold.cancel()  # a no-op once it is done
                sold.add_done_callback(_seen)


def _early(
    sim: Simulator, people: list[tuple[str, int]], todo: list[int], planned: str, retry: bool = True
) -> Early:
    """The lone sells of ``people[i]`` for ``i`` in ``todo``, started now (none: None)."""
    sold = _lone(sim, [people[i] for i in todo], retry=retry) if todo else None
    return todo, sold, planned


def _seen(future: asyncio.Future[list[HolderSell]]) -> None:
    """A lone sell's error retrieved, so asyncio does not report it (a traceback with
    the node's error text, on stderr) when the check stopped before reading it."""
    if not future.cancelled():
        future.exception()


def groups_of(sim: Simulator, people: Sequence[tuple[str, int]]) -> list[list[int]]:
    """The indexes of ``people`` per group, largest balance first."""
    order = sorted(range(len(people)), key=lambda i: -people[i][1])
    size = max(1, min(GROUP, sim.room))
    return [order[i : i + size] for i in range(0, len(order), size)]


def overflowing(
    people: Sequence[tuple[str, int]], groups: list[list[int]], limit: int | None
) -> list[int]:
    """Who must fail in their group on a V2 pair: a sell after others of the same group
    whose amounts, with its own, exceed what the pair can still take (``limit``, from
    ``pool_sell_limit``; None: no bound).  A prediction (a token that keeps part of a
    sell puts less into the pair), so a lone sell sent on it is used only for a holder
    whose group sell did fail."""
    if limit is None:
        return []
    doomed = []
    for group in groups:
        total = 0
        for k, i in enumerate(group):
            total += people[i][1]
            if k and total > limit:
                doomed.append(i)
    return sorted(doomed)


async def _grouped(
    sim: Simulator,
    people: list[tuple[str, int]],
    alone: tuple[Set[int], list[Early]],
    after: asyncio.Future[None] | None = None,
) -> list[HolderSell | None]:
    """Each holder's result in its group, None where it failed there (or the group did).

    ``alone``: who sells alone already (by index), and where the lone sells of each
    group's other failures are added, started the moment that group's reply is read
    (not once every group is back: the groups past the first ``_IN_FLIGHT`` wait for a
    place, and each reply comes when the node is done with it), or once ``after`` is
    set when it is not yet (:func:`sell_all`)."""
    in_flight = asyncio.Semaphore(_IN_FLIGHT)
    results: list[HolderSell | None] = [None] * len(people)
    taken, failed = alone

    async def grouped(group: list[int]) -> None:
        async with in_flight:
            (outcome,) = await sim.run([_group_plan(sim, [people[i] for i in group])])
        if not isinstance(outcome, CallReverted):  # else the whole group goes alone
            for k, i in enumerate(group):
                found = _holder_result(sim, people[i], outcome, f"h{k}")
                results[i] = found if found.ok else None
        todo = [i for i in group if results[i] is None and i not in taken]
        if todo:
            failed.append((todo, _lone(sim, [people[i] for i in todo], after=after), ""))

    tasks = [asyncio.ensure_future(grouped(group)) for group in groups_of(sim, people)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:  # no group left to start lone sells after the caller is gone
            task.cancel()
        raise
    return results


Early = tuple[list[int], asyncio.Future[list[HolderSell]] | None, str]
"""Indexes of people whose lone sells went out early, those sells' results, and what
planned them (``tokenrisk_sent_ahead_total``)."""


async def _alone(
    sim: Simulator,
    people: list[tuple[str, int]],
    results: list[HolderSell | None],
    early: Sequence[Early] = (),
    after: asyncio.Future[None] | None = None,
) -> list[HolderSell]:
    """Whoever has no result yet sells alone from the head state: from the lone sells
    started already where there are some (``early``: predicted ones, counted by what
    planned them, and a group's failures, planned by nothing: ``""``), the rest now
    (once ``after`` is set: :func:`sell_all`)."""
    ahead = {i for todo, _, _ in early for i in todo}
    alone = [i for i, r in enumerate(results) if r is None and i not in ahead]
    late = _lone(sim, [people[i] for i in alone], after=after)
    for i, result in zip(alone, await late, strict=True):
        results[i] = replace(result, alone=True)
    for todo, sold, planned in early:
        if sold is None:
            continue
        for i, result in zip(todo, await sold, strict=True):
            if planned:
                count(planned, results[i] is None)
            if results[i] is None:
                results[i] = replace(result, alone=True)
    return [r for r in results if r is not None]


def _lone(
    sim: Simulator,
    todo: list[tuple[str, int]],
    retry: bool = True,
    after: asyncio.Future[None] | None = None,
) -> asyncio.Future[list[HolderSell]]:
    """Lone sells of ``todo`` (each from the head state), started now (or once ``after``
    is set, when it is not yet: :func:`sell_all`), ``_BATCH`` holders per request and
    ``_IN_FLIGHT`` requests at once; results in ``todo``'s order.  ``retry``: each with
    its 99.9% second try (else that try follows a failed sell)."""
    in_flight = asyncio.Semaphore(_IN_FLIGHT)

    async def chunk_of(start: int) -> list[HolderSell]:
        async with in_flight:
            return await _sell_chunk(sim, todo[start : start + _BATCH], retry)

    async def every() -> list[HolderSell]:
        if after is not None and todo:
            await asyncio.shield(after)  # cancelled: the guess is dropped, nothing sent
        parts = await asyncio.gather(*(chunk_of(i) for i in range(0, len(todo), _BATCH)))
        return [r for part in parts for r in part]

    return asyncio.ensure_future(every())


def _group_plan(sim: Simulator, group: list[tuple[str, int]]) -> Plan:
    """One block per holder, a second apart (as close to "now" as blocks allow)."""
    plan = sim.plan()
    for k, (holder, amount) in enumerate(group):
        plan.block(1 + k, seconds=block_time(1) + k)
        plan.fund(holder, fresh=False)  # a real holder: its own nonce
        sim.add_sell(plan, holder, amount, f"h{k}", pool=False)
    return plan


async def _sell_chunk(
    sim: Simulator, chunk: list[tuple[str, int]], ahead: bool = True
) -> list[HolderSell]:
    """Each holder sells everything; who cannot gets a second try with 99.9% of it.

    A person who can exit 99.9% of a position is not trapped (some tokens refuse to
    sell a whole balance; the journey's maxSell reports that quirk).  With ``ahead`` the
    second try goes out in the same batch (both from the head state, so neither depends
    on the other) and is used only where the whole balance did not sell; else it goes
    out after, for those only.
    """
    retry = [i for i, (_, amount) in enumerate(chunk) if amount >= RETRY_MIN]
    smaller = [(chunk[i][0], chunk[i][1] * 999 // 1_000) for i in retry]
    plans = [_sell_plan(sim, a, b) for a, b in [*chunk, *(smaller if ahead else [])]]
    outcomes = await sim.run(plans)
    results = [_holder_result(sim, h, o) for h, o in zip(chunk, outcomes, strict=False)]
    if not ahead:
        again = [k for k, i in enumerate(retry) if not results[i].ok]
        tried = await sim.run([_sell_plan(sim, *smaller[k]) for k in again]) if again else []
        for k, outcome in zip(again, tried, strict=True):
            results[retry[k]] = _holder_result(sim, smaller[k], outcome)
        return results
    for i, h, outcome in zip(retry, smaller, outcomes[len(chunk) :], strict=True):
        count(RETRY, not results[i].ok)
        if not results[i].ok:
            results[i] = _holder_result(sim, h, outcome)
    return results


def _sell_plan(sim: Simulator, holder: str, amount: int) -> Plan:
    plan = sim.plan()
    plan.block(1)
    plan.fund(holder, fresh=False)
    sim.add_sell(plan, holder, amount, "holder", pool=False)
    return plan


def _holder_result(
    sim: Simulator,
    holder: tuple[str, int],
    outcome: Outcome | CallReverted,
    tag: str = "holder",
) -> HolderSell:
    address, amount = holder
    if isinstance(outcome, CallReverted) or not outcome[f"{tag}.sell"].ok:
        return HolderSell(address, ok=False)
    tax, gas = sell_leg(outcome, sim.route, tag, amount), outcome[f"{tag}.sell"].gas
    # the effective tax, else the token-unit one; neither: unmeasured (left out of the
    # averages, never counted as 0)
    judged = tax.effective if tax.effective is not None else tax.token_unit
    return HolderSell(address, ok=True, tax=judged, gas=gas, tax_token_unit=tax.token_unit)

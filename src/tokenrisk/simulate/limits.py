"""Search for the largest buy or sell that still succeeds.

A limit exists when a trade fails at some size but succeeds at a smaller one.  Sizes
are tried as batches of independent simulations (one JSON-RPC round trip per batch):
first a coarse ladder, then ``rounds`` refinements with ``points`` evenly spaced sizes
between the largest success and the smallest failure.  The result is a lower bound of
the true limit, within (high - low) / (points + 1) ** rounds.

A ladder whose caller tries one more size when every size fails (the large-sell
search: the buyer's own balance) sends that size beside the smaller ones once the
largest failed (:func:`ladder_with_floor`, issue #27: a node 30 ms away pays every
sequential round); it is used only when every size failed, and counted in
``tokenrisk_sent_ahead_total{planned="ladder"}`` either way.  The refinements still
run one after another: sending every gap's second round beside the first (63
simulations instead of 7 + 7) took a round trip off a limit token's check but cost
0.9 ms of service CPU per recomputed check on average (docs/performance.md).

A token's first journey (nothing remembered of it, so no recomputed check pays) sends
them at once instead (``at_once``, issue #27: a limit token's first check took 5-6
round trips): a ladder's every size in one batch (the caller chooses which ladders:
the journey's larger buys), and both refinements' sizes (7 + 8 x 7 for the default two
rounds of seven points) in one batch, the answer then read from them exactly as the
one-round-at-a-time search reads it (:func:`_narrowed`): the same size for any
outcomes, because each step looks up the sizes the step-by-step search would have sent
and ignores the others.

A later check of a token whose last search needed more than its first request sends
every size that search asked for at once, with the journey's first simulations
(:class:`Recall`, planned by :mod:`tokenrisk.simulate.journey`): the search then runs
step by step as always, each step reading its sizes from that batch when they are
there and sending the others at once (a token that changed costs simulations, never a
round trip), so the answer is the one the step-by-step search gives, in fewer round
trips and with the same simulations when nothing changed (issue #27: a recomputed
check of a limit token took 3-4 round trips).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from tokenrisk.errors import CallReverted
from tokenrisk.simulate.ahead import count, stop
from tokenrisk.simulate.simulator import Outcome, Plan, Simulator

PlanOf = Callable[[int], Plan]
Accept = Callable[[Outcome], bool]
Tried = Mapping[int, Outcome | None]
"""Sizes already simulated, each with its accepted outcome (None: it failed), which a
refinement reads instead of sending them (:func:`ladder_with_grids`, :func:`refine`)."""
POINTS = 7
"""Sizes per refinement round (:func:`refine`)."""
LADDER = "ladder"
"""A ladder's floor sent beside its smaller sizes (:func:`ladder_with_floor`)."""
GRID = "max_buy_grid"
"""A refinement's first round sent beside a ladder whose largest size should pass
(:func:`ladder_and_grid`)."""
RECALLED = "search"
"""A search's sizes sent at once from its last run (:class:`Recall`): counted used for
each step of the search that read them, dropped when no step did."""

Results = dict[int, Outcome | CallReverted]


class Recall:
    """The sizes a search asked for at its last run, simulated at once (``early``) before
    the search asks for them; a search given it as its ``plan_of`` (:func:`recalling`)
    reads each step's sizes from that batch when they are all there and sends the
    others at once.  ``asked``: every size this search asked for, in order (what the
    next check recalls)."""

    def __init__(self, planned: Sequence[int], early: asyncio.Future[Results] | None) -> None:
        self.planned = frozenset(planned)
        self.early = early
        self.asked: list[int] = []
        self.requests = 0
        """How many times the search asked for sizes (its steps)."""
        self.used = 0

    @classmethod
    def start(
        cls,
        sim: Simulator,
        planned: Sequence[int],
        plans: Callable[[], Awaitable[PlanOf | None]],
    ) -> Recall:
        """Send ``planned`` now, with the plans ``plans()`` gives (None: nothing sent)."""

        async def early() -> Results:
            plan_of = await plans()
            if plan_of is None:
                return {}
            sizes = list(dict.fromkeys(planned))
            return dict(zip(sizes, await sim.run([plan_of(s) for s in sizes]), strict=True))

        return cls(planned, asyncio.ensure_future(early()))

    def drop(self) -> None:
        """Stop the early batch if it is still out; counted as dropped when no step of
        the search read it (a search that did not run, or sizes that no longer fit)."""
        if self.early is not None:
            if not self.used:
                count(RECALLED, False)
            stop(self.early)

    async def _known(self) -> Results:
        if self.early is None:
            return {}
        try:
            return await asyncio.shield(self.early)
        except Exception:  # the sizes are sent again the usual way
            return {}

    async def outcomes(
        self, sim: Simulator, sizes: Sequence[int], plan_of: PlanOf
    ) -> list[Outcome | CallReverted]:
        """The outcome of each of ``sizes``: the early batch's where it has them, the
        others simulated now (sent before the early batch is awaited; a size the early
        batch failed to give is sent once it is known)."""
        self.asked.extend(sizes)
        self.requests += 1
        if self.early is None:
            return await sim.run([plan_of(s) for s in sizes])
        missing = [s for s in sizes if s not in self.planned]
        sending = asyncio.ensure_future(sim.run([plan_of(s) for s in missing])) if missing else None
        try:
            known = await self._known() if len(missing) < len(sizes) else {}
            late = [s for s in sizes if s in self.planned and s not in known]
            again = await sim.run([plan_of(s) for s in late]) if late else []
            got = dict(zip(missing, await sending, strict=True)) if sending is not None else {}
        finally:
            if sending is not None:
                stop(sending)
        got.update(zip(late, again, strict=True))
        if len(got) < len(set(sizes)):
            self.used += 1
            count(RECALLED, True)
        return [got[s] if s in got else known[s] for s in sizes]


@dataclass(frozen=True)
class Recalling:
    """A search's ``plan_of`` whose sizes a :class:`Recall` may have simulated already."""

    plan_of: PlanOf
    recall: Recall

    def __call__(self, size: int) -> Plan:
        return self.plan_of(size)


def recalling(plan_of: PlanOf, recall: Recall | None) -> PlanOf:
    """``plan_of``, reading from ``recall`` when there is one."""
    return plan_of if recall is None else Recalling(plan_of, recall)


async def _outcomes(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf
) -> list[Outcome | CallReverted]:
    """``plan_of``'s plan of each size, simulated (or read from its :class:`Recall`)."""
    if isinstance(plan_of, Recalling):
        return await plan_of.recall.outcomes(sim, sizes, plan_of.plan_of)
    return await sim.run([plan_of(size) for size in sizes])


@dataclass(frozen=True)
class Found:
    amount: int
    outcome: Outcome


async def _try(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> list[Outcome | None]:
    """Outcome per size when accepted, else None (failed or simulation error)."""
    outcomes = await _outcomes(sim, sizes, plan_of)
    return [_accepted(o, accept) for o in outcomes]


async def ladder(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> tuple[Found | None, int | None]:
    """(largest accepted size before the first failure, first failing size); ascending sizes."""
    results = await _try(sim, sizes, plan_of, accept)
    return _first_failure(sizes, results)


async def ladder_and_grid(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept, high: int
) -> tuple[Found | None, int | None, Tried]:
    """:func:`ladder` with the first refinement round between its largest size and
    ``high`` (a size known to fail) in the same batch, for a search that refines from
    there when every size passes (the journey's smaller buys after the default one
    failed: a maximum transaction amount lets them all through); :func:`refine` then
    reads that round from the returned sizes (``tried``) and starts at its second.
    Counted in ``tokenrisk_sent_ahead_total{planned="max_buy_grid"}``: used when the
    largest size passed."""
    grid = _grid(sizes[-1], high, POINTS)
    results = await _try(sim, [*sizes, *grid], plan_of, accept)
    found, failed = _first_failure(sizes, results[: len(sizes)])
    if grid:
        count(GRID, found is not None and found.amount == sizes[-1])
    return found, failed, dict(zip(grid, results[len(sizes) :], strict=True))


async def ladder_top_first(
    sim: Simulator,
    sizes: Sequence[int],
    plan_of: PlanOf,
    accept: Accept,
    at_once: bool = False,
    wanted: Callable[[], Awaitable[bool]] | None = None,
) -> tuple[Found | None, int | None]:
    """:func:`ladder` for a search that usually finds no limit: the largest size alone
    first (one simulation); only when it fails, the smaller ones.

    A limit caps sizes from some amount up, so when the largest size passes every
    smaller one does too and the answer is (largest, None) at once; a token with no
    limit costs one simulation instead of one per size, a token with one a round trip
    more.  ``at_once``: every size in one batch, read the same way; ``wanted``: as
    :func:`ladder_with_floor`'s.
    """
    found, failed, _ = await ladder_with_floor(sim, sizes, plan_of, accept, None, at_once, wanted)
    return found, failed


async def ladder_with_floor(
    sim: Simulator,
    sizes: Sequence[int],
    plan_of: PlanOf,
    accept: Accept,
    floor: int | None,
    at_once: bool = False,
    wanted: Callable[[], Awaitable[bool]] | None = None,
) -> tuple[Found | None, int | None, Outcome | CallReverted | None]:
    """:func:`ladder_top_first`, and ``floor`` (a size below the ladder its caller tries
    when every size fails) sent beside the smaller sizes once the largest failed: its
    outcome as the node gave it, None when it was not sent (the largest passed, or
    fewer than two sizes).  Used by the caller only when every size failed; otherwise
    counted as dropped.  ``at_once``: the largest size, the smaller ones and the floor
    in one batch; the smaller ones and the floor are read only when the largest failed.
    ``wanted``: called and awaited once the largest failed, before the smaller sizes
    are sent; False when the caller will not use the answer after all (then (None,
    None, None), nothing more sent)."""
    if len(sizes) < 2:
        found, failed = await ladder(sim, sizes, plan_of, accept)
        return found, failed, None
    if at_once:
        return await _all_rungs(sim, sizes, plan_of, accept, floor)
    (top,) = await _try(sim, sizes[-1:], plan_of, accept)
    if top is not None:
        return Found(sizes[-1], top), None, None
    if wanted is not None and not await wanted():
        return None, None, None
    if floor is None:
        results = await _try(sim, sizes[:-1], plan_of, accept)
        found, failed = _first_failure(sizes, [*results, None])
        return found, failed, None
    *outcomes, below = await _outcomes(sim, [*sizes[:-1], floor], plan_of)
    results = [_accepted(o, accept) for o in outcomes]
    found, failed = _first_failure(sizes, [*results, None])
    count(LADDER, found is None)
    return found, failed, below


async def _all_rungs(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept, floor: int | None
) -> tuple[Found | None, int | None, Outcome | CallReverted | None]:
    """:func:`ladder_with_floor`'s answer from one batch of every size (and the floor)."""
    floors = [] if floor is None else [floor]
    outcomes = await _outcomes(sim, [*sizes, *floors], plan_of)
    results = [_accepted(o, accept) for o in outcomes[: len(sizes)]]
    below = outcomes[-1] if floors else None
    if results[-1] is not None:
        if floors:
            count(LADDER, False)
        return Found(sizes[-1], results[-1]), None, None
    found, failed = _first_failure(sizes, [*results[:-1], None])
    if floors:
        count(LADDER, found is None)
    return found, failed, below


async def ladder_with_grids(
    sim: Simulator,
    sizes: Sequence[int],
    plan_of: PlanOf,
    accept: Accept,
    low: int,
    wanted: Callable[[], Awaitable[bool]] | None = None,
) -> tuple[Found | None, int | None, Tried]:
    """:func:`ladder_top_first` whose smaller sizes go, once the largest failed, with the
    first refinement's sizes of every gap the ladder could leave (``low``, a size known
    to pass, then each size: :func:`_grid`), in one batch; returns the ladder's answer
    and those sizes' outcomes, for :func:`refine`'s ``tried``: its first round then
    sends nothing, its second the seven sizes of the gap the first left.

    Read exactly as the ladder and the step-by-step refinement read their rounds, so
    the same limit for any outcomes; the same round trips as sending both refinements
    at once after the ladder (``at_once``), for 7 x (gaps + 1) simulations instead of
    63, and the refinement's round no longer a burst of them (issue #27: a first check
    of a max-tx token sent two such bursts in one round, more requests than the node's
    connections)."""
    if len(sizes) < 2:
        found, failed = await ladder(sim, sizes, plan_of, accept)
        return found, failed, {}
    (top,) = await _try(sim, sizes[-1:], plan_of, accept)
    if top is not None:
        return Found(sizes[-1], top), None, {}
    if wanted is not None and not await wanted():
        return None, None, {}
    bounds = [low, *sizes]
    grids = [size for a, b in zip(bounds, bounds[1:], strict=False) for size in _grid(a, b, POINTS)]
    rungs = list(sizes[:-1])
    results = await _try(sim, [*rungs, *grids], plan_of, accept)
    found, failed = _first_failure(sizes, [*results[: len(rungs)], None])
    return found, failed, dict(zip(grids, results[len(rungs) :], strict=True))


def _accepted(outcome: Outcome | CallReverted, accept: Accept) -> Outcome | None:
    return outcome if not isinstance(outcome, CallReverted) and accept(outcome) else None


def _first_failure(
    sizes: Sequence[int], results: Sequence[Outcome | None]
) -> tuple[Found | None, int | None]:
    best: Found | None = None
    for size, outcome in zip(sizes, results, strict=True):
        if outcome is None:
            return best, size
        best = Found(size, outcome)
    return best, None


async def refine(
    sim: Simulator,
    low: Found,
    high: int,
    plan_of: PlanOf,
    accept: Accept,
    rounds: int = 2,
    points: int = POINTS,
    at_once: bool = False,
    tried: Tried | None = None,
) -> Found:
    """Narrow the gap between an accepted size and a failing size.  ``at_once``: every
    size any round could try (:func:`_rungs`) in one batch, read round by round;
    ``tried``: sizes simulated already (:func:`ladder_with_grids`,
    :func:`ladder_and_grid`), read, not sent, by a round that tries only those (when
    they hold the first round, the second goes alone: seven sizes, not 56)."""
    known = dict(tried or {})
    if at_once and not all(size in known for size in _grid(low.amount, high, points)):
        sizes = _rungs(low.amount, high, rounds, points)
        if not sizes:
            return low
        known.update(zip(sizes, await _try(sim, sizes, plan_of, accept), strict=True))
    for _ in range(rounds):
        sizes = _grid(low.amount, high, points)
        if not sizes:
            break
        if all(size in known for size in sizes):
            results = [known[size] for size in sizes]
        else:
            results = await _try(sim, sizes, plan_of, accept)
        low, high = _narrowed(low, high, sizes, results)
    return low


def _grid(low: int, high: int, points: int) -> list[int]:
    """The ``points`` evenly spaced sizes strictly between ``low`` and ``high`` one
    refinement tries (none when the gap is too small to hold them)."""
    step = (high - low) // (points + 1)
    return [low + step * (i + 1) for i in range(points)] if step > 0 else []


def _narrowed(
    low: Found, high: int, sizes: Sequence[int], results: Sequence[Outcome | None]
) -> tuple[Found, int]:
    """The gap after one refinement: the largest accepted size before the first
    failure (or ``low``), and that failure (or ``high``)."""
    found, failed = _first_failure(sizes, results)
    return found or low, high if failed is None else failed


def _rungs(low: int, high: int, rounds: int, points: int) -> list[int]:
    """Every size ``rounds`` refinements of the gap (low, high) could try: this round's
    grid, then, for each gap it could leave, the later rounds' (7 + 8 x 7 for two rounds
    of seven points).  Ascending and distinct: each grid lies strictly inside its gap."""
    sizes = _grid(low, high, points)
    if rounds <= 1 or not sizes:
        return sizes
    bounds = [low, *sizes, high]
    out: list[int] = []
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        out += _rungs(a, b, rounds - 1, points)
        if i < len(sizes):
            out.append(sizes[i])
    return out


async def largest_success(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept, at_once: bool = False
) -> Found | None:
    """Largest size in the ascending ``sizes`` that succeeds, refined towards the next failure.

    Returns None when the smallest size already fails; when every size succeeds, the
    largest one is returned unrefined (callers treat a success at the top size as
    "no limit found").  ``at_once``: the refinements' sizes in one batch (:func:`refine`).
    """
    found, failed = await ladder(sim, sizes, plan_of, accept)
    if found is None or failed is None:
        return found
    return await refine(sim, found, failed, plan_of, accept, at_once=at_once)

"""Search for the largest buy or sell that still succeeds.

A limit exists when a trade fails at some size but succeeds at a smaller one.  Sizes
are tried as batches of independent simulations (one JSON-RPC round trip per batch):
first a coarse ladder, then ``rounds`` refinements with ``points`` evenly spaced sizes
between the largest success and the smallest failure.  The result is a lower bound of
the true limit, within (high - low) / (points + 1) ** rounds.

The refinements do not wait for one another (issue #27: a node 30 ms away pays every
sequential round): round one's sizes go out with round two's for each of the
``points + 1`` gaps round one can end in (:func:`refine`), and a ladder whose caller
tries one more size when every size fails sends that size beside it
(:func:`ladder_top_first`'s ``floor``).  Each round's own results pick the gap the next
round refines, exactly as rounds sent one after another pick it, so the limit found is
the same; the gaps not picked are node work spent for nothing, counted in
``tokenrisk_sent_ahead_total{planned="ladder"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tokenrisk.errors import CallReverted
from tokenrisk.simulate.ahead import count
from tokenrisk.simulate.simulator import Outcome, Plan, Simulator

PlanOf = Callable[[int], Plan]
Accept = Callable[[Outcome], bool]
LADDER = "ladder"
"""A refinement's gaps sent side by side (:func:`refine`); a ladder's floor
(:func:`ladder_top_first`)."""
SIDE_BY_SIDE = 64
"""At most this many sizes of one refinement go out in one batch: two rounds of seven
points are 7 + 8 x 7 = 63 simulations in one round trip instead of 7 + 7 in two."""


@dataclass(frozen=True)
class Found:
    amount: int
    outcome: Outcome


async def _try(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> list[Outcome | None]:
    """Outcome per size when accepted, else None (failed or simulation error)."""
    outcomes = await sim.run([plan_of(size) for size in sizes])
    return [_accepted(o, accept) for o in outcomes]


async def ladder(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> tuple[Found | None, int | None]:
    """(largest accepted size before the first failure, first failing size); ascending sizes."""
    results = await _try(sim, sizes, plan_of, accept)
    return _first_failure(sizes, results)


async def ladder_top_first(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> tuple[Found | None, int | None]:
    """:func:`ladder` for a search that usually finds no limit: the largest size alone
    first (one simulation); only when it fails, the smaller ones.

    A limit caps sizes from some amount up, so when the largest size passes every
    smaller one does too and the answer is (largest, None) at once; a token with no
    limit costs one simulation instead of one per size, a token with one a round trip
    more.
    """
    found, failed, _ = await ladder_with_floor(sim, sizes, plan_of, accept, None)
    return found, failed


async def ladder_with_floor(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept, floor: int | None
) -> tuple[Found | None, int | None, Outcome | CallReverted | None]:
    """:func:`ladder_top_first`, and ``floor`` (a size below the ladder its caller tries
    when every size fails) sent beside the smaller sizes once the largest failed: its
    outcome as the node gave it, None when it was not sent (the largest passed, or
    fewer than two sizes).  Used by the caller only when every size failed; otherwise
    counted as dropped."""
    if len(sizes) < 2:
        found, failed = await ladder(sim, sizes, plan_of, accept)
        return found, failed, None
    (top,) = await _try(sim, sizes[-1:], plan_of, accept)
    if top is not None:
        return Found(sizes[-1], top), None, None
    if floor is None:
        results = await _try(sim, sizes[:-1], plan_of, accept)
        found, failed = _first_failure(sizes, [*results, None])
        return found, failed, None
    *outcomes, below = await sim.run([plan_of(size) for size in [*sizes[:-1], floor]])
    results = [_accepted(o, accept) for o in outcomes]
    found, failed = _first_failure(sizes, [*results, None])
    count(LADDER, found is None)
    return found, failed, below


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
    points: int = 7,
) -> Found:
    """Narrow the gap between an accepted size and a failing size: ``rounds`` times,
    ``points`` sizes evenly spaced in the gap, the largest accepted one before the first
    failure and that failure making the next gap.  As many rounds as
    :data:`SIDE_BY_SIDE` sizes allow go out in one batch, every gap's next round beside
    the round that picks the gap (:func:`_needed`); the results are then read round by
    round (:func:`_walk`), so the size found is the one rounds sent one after another
    find."""
    while rounds > 0:
        depth = _depth(points, rounds)
        sizes = list(dict.fromkeys(_needed(low.amount, high, points, depth)))
        if not sizes:
            break
        results = dict(zip(sizes, await _try(sim, sizes, plan_of, accept), strict=True))
        low, high, stopped = _walk(low, high, results, points, depth)
        if stopped:
            break
        rounds -= depth
    return low


def _depth(points: int, rounds: int) -> int:
    """How many rounds of ``points`` sizes fit in one batch of :data:`SIDE_BY_SIDE`
    (every gap's next round beside: (points + 1) ** depth - 1 sizes); at least one."""
    depth = 1
    while depth < rounds and (points + 1) ** (depth + 1) - 1 <= SIDE_BY_SIDE:
        depth += 1
    return depth


def _points(low: int, high: int, points: int) -> list[int]:
    """One round's sizes in the gap (empty when the gap is too narrow to split)."""
    step = (high - low) // (points + 1)
    return [low + step * (i + 1) for i in range(points)] if step > 0 else []


def _needed(low: int, high: int, points: int, depth: int) -> list[int]:
    """Every size ``depth`` rounds may try from the gap (low, high): this round's, then
    each gap it can end in (between two neighbouring sizes) refined ``depth - 1`` more."""
    sizes = _points(low, high, points)
    if depth <= 1 or not sizes:
        return sizes
    edges = [low, *sizes, high]
    out = list(sizes)
    for a, b in zip(edges, edges[1:], strict=False):
        out += _needed(a, b, points, depth - 1)
    return out


def _walk(
    low: Found, high: int, results: dict[int, Outcome | None], points: int, depth: int
) -> tuple[Found, int, bool]:
    """``depth`` rounds read from ``results`` (size -> accepted outcome or None) as they
    would have run one after another: (largest accepted, smallest failing, stopped
    because a gap could not be split).  Each round after the first counts the gap it
    refined as used and the others, sent beside it, as dropped."""
    for level in range(depth):
        sizes = _points(low.amount, high, points)
        if not sizes:
            return low, high, True
        if level:
            count(LADDER, True)
            for _ in range(points):
                count(LADDER, False)
        found, failed = _first_failure(sizes, [results[s] for s in sizes])
        if found is not None:
            low = found
        high = failed if failed is not None else high
    return low, high, False


async def largest_success(
    sim: Simulator, sizes: Sequence[int], plan_of: PlanOf, accept: Accept
) -> Found | None:
    """Largest size in the ascending ``sizes`` that succeeds, refined towards the next failure.

    Returns None when the smallest size already fails; when every size succeeds, the
    largest one is returned unrefined (callers treat a success at the top size as
    "no limit found").
    """
    found, failed = await ladder(sim, sizes, plan_of, accept)
    if found is None or failed is None:
        return found
    return await refine(sim, found, failed, plan_of, accept)

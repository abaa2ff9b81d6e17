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
"""A ladder's floor sent beside its smaller sizes (:func:`ladder_with_floor`)."""


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
    """Narrow the gap between an accepted size and a failing size."""
    for _ in range(rounds):
        step = (high - low.amount) // (points + 1)
        if step <= 0:
            break
        sizes = [low.amount + step * (i + 1) for i in range(points)]
        found, failed = await ladder(sim, sizes, plan_of, accept)
        if found is not None:
            low = found
        high = failed if failed is not None else high
    return low


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

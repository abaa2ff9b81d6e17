"""The limit ladders without a node: a fake simulator accepts sizes up to a cap."""

from __future__ import annotations

from typing import Any

import pytest

from tokenrisk.simulate.limits import (
    SIDE_BY_SIDE,
    Found,
    ladder,
    ladder_top_first,
    ladder_with_floor,
    refine,
)
from tokenrisk.simulate.simulator import CallResult, Outcome


class Capped:
    """Runs "plans" (plain sizes): a size passes when it is at most ``cap``."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.runs: list[list[int]] = []

    async def run(self, plans: list[Any]) -> list[Outcome]:
        self.runs.append(list(plans))
        return [
            Outcome({"t": CallResult(self.cap is None or p <= self.cap, "0x", 0, None)})
            for p in plans
        ]


def accept(outcome: Outcome) -> bool:
    return outcome["t"].ok


SIZES = [10, 20, 50, 100, 250]


@pytest.mark.parametrize("cap", [None, 250, 100, 49, 5])
async def test_top_first_finds_what_the_full_ladder_finds(cap: int | None) -> None:
    full, top = Capped(cap), Capped(cap)
    expected = await ladder(full, SIZES, lambda s: s, accept)  # type: ignore[arg-type]
    found = await ladder_top_first(top, SIZES, lambda s: s, accept)  # type: ignore[arg-type]
    assert (found[0] and found[0].amount, found[1]) == (
        expected[0] and expected[0].amount,
        expected[1],
    )
    if cap is None or cap >= SIZES[-1]:
        assert top.runs == [[250]]  # no limit: one simulation, not five
    else:
        assert top.runs == [[250], SIZES[:-1]]


async def _rounds_one_by_one(sim: Capped, low: Found, high: int) -> Found:
    """The refinement as it ran before (issue #27): two rounds of seven sizes, the second
    sent once the first is back."""
    for _ in range(2):
        step = (high - low.amount) // 8
        if step <= 0:
            break
        sizes = [low.amount + step * (i + 1) for i in range(7)]
        found, failed = await ladder(sim, sizes, lambda s: s, accept)  # type: ignore[arg-type]
        low = found or low
        high = failed if failed is not None else high
    return low


@pytest.mark.parametrize("cap", [*range(1_000, 1_200, 7), 1_000_000, 999_999, 1_000])
@pytest.mark.parametrize("high", [1_100, 1_000_000, 1_013])
async def test_a_refinement_side_by_side_finds_what_its_rounds_find(cap: int, high: int) -> None:
    """Both rounds of the refinement in one batch (every gap's second round beside the
    first): the size found is the one the rounds sent one after another find.  Fails
    when the second round's gap is not the one the first round's results pick."""
    low = Found(1_000, Outcome({"t": CallResult(True, "0x", 0, None)}))
    alone, side = Capped(cap), Capped(cap)
    expected = await _rounds_one_by_one(alone, low, high)
    found = await refine(side, low, high, lambda s: s, accept)  # type: ignore[arg-type]
    assert found.amount == expected.amount
    assert len(side.runs) == 1  # one round trip
    assert len(side.runs[0]) <= SIDE_BY_SIDE
    assert {s for run in alone.runs for s in run} <= set(side.runs[0])


async def test_a_narrow_gap_is_not_split() -> None:
    low = Found(10, Outcome({"t": CallResult(True, "0x", 0, None)}))
    sim = Capped(12)
    assert (await refine(sim, low, 15, lambda s: s, accept)).amount == 10  # type: ignore[arg-type]
    assert sim.runs == []


@pytest.mark.parametrize("cap", [None, 250, 100, 5, 3])
async def test_a_floor_goes_beside_the_smaller_sizes(cap: int | None) -> None:
    """The size a caller tries when every size fails (``floor``) goes with the smaller
    sizes once the largest failed: the ladder's answer is unchanged, and the floor's
    outcome is the one the node gave it (sent alone, it would be a round trip more)."""
    plain, floored = Capped(cap), Capped(cap)
    expected = await ladder_top_first(plain, SIZES, lambda s: s, accept)  # type: ignore[arg-type]
    found, failed, floor = await ladder_with_floor(
        floored,
        SIZES,
        lambda s: s,  # type: ignore[arg-type,return-value]
        accept,
        4,
    )
    assert (found and found.amount, failed) == (expected[0] and expected[0].amount, expected[1])
    if cap is None or cap >= SIZES[-1]:
        assert floor is None and floored.runs == [[250]]
    else:
        assert floored.runs == [[250], [*SIZES[:-1], 4]]
        assert isinstance(floor, Outcome) and floor["t"].ok == (cap >= 4)

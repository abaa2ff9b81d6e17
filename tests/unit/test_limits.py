"""The limit ladders without a node: a fake simulator accepts sizes up to a cap."""

from __future__ import annotations

from typing import Any

import pytest

from tokenrisk.simulate.limits import ladder, ladder_top_first, ladder_with_floor
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

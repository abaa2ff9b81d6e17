"""The limit ladders without a node: a fake simulator accepts sizes up to a cap."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tokenrisk.simulate.limits import (
    Found,
    Recall,
    ladder,
    ladder_and_grid,
    ladder_top_first,
    ladder_with_floor,
    ladder_with_grids,
    recalling,
    refine,
)
from tokenrisk.simulate.simulator import CallResult, Outcome


class Passing:
    """Runs "plans" (plain sizes): a size passes when ``passes(size)`` (any predicate,
    monotone or not)."""

    def __init__(self, passes: Any) -> None:
        self.passes = passes
        self.runs: list[list[int]] = []

    async def run(self, plans: list[Any]) -> list[Outcome]:
        self.runs.append(list(plans))
        return [Outcome({"t": CallResult(bool(self.passes(p)), "0x", 0, None)}) for p in plans]


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


def _predicates() -> list[Any]:
    """Caps across the whole gap (a limit: monotone), and predicates no limit gives
    (pass on even hundreds' parity, one hole): the at-once search must read them the same."""
    caps: list[Any] = [lambda s, c=c: s <= c for c in (1_000, 1_001, 1_100, 1_500, 3_333, 9_999)]
    return [*caps, lambda s: (s // 100) % 2 == 0, lambda s: s != 2_125]


@pytest.mark.parametrize("passes", _predicates())
@pytest.mark.parametrize(("high", "rounds"), [(10_000, 2), (10_000, 1), (1_030, 2), (1_005, 2)])
async def test_refining_at_once_finds_the_step_by_step_size(
    passes: Any, high: int, rounds: int
) -> None:
    """Both refinements' sizes in one batch (a token's first journey): the same size as
    two rounds of seven, whatever the predicate, in one run (63 sizes for two rounds of
    a gap wide enough)."""
    step, wide = Passing(passes), Passing(passes)
    low = Found(1_000, Outcome({}))
    expected = await refine(step, low, high, lambda s: s, accept, rounds)  # type: ignore[arg-type]
    found = await refine(wide, low, high, lambda s: s, accept, rounds, at_once=True)  # type: ignore[arg-type]
    assert found.amount == expected.amount
    assert len(wide.runs) == (1 if step.runs else 0)
    assert {s for run in step.runs for s in run} <= set(wide.runs[0] if wide.runs else [])
    if high == 10_000 and rounds == 2:
        assert len(wide.runs[0]) == 7 + 8 * 7 == len(set(wide.runs[0]))


@pytest.mark.parametrize("passes", _predicates())
async def test_every_rung_at_once_reads_like_the_top_first_ladder(passes: Any) -> None:
    """A first journey's ladder: every size and the floor in one batch, the answer (and
    the floor's outcome, when the largest failed) the top-first ladder's."""
    sizes = [1_500, 2_000, 2_500, 3_000, 4_000]
    step, wide = Passing(passes), Passing(passes)
    expected = await ladder_with_floor(step, sizes, lambda s: s, accept, 1_000)  # type: ignore[arg-type,return-value]
    got = await ladder_with_floor(wide, sizes, lambda s: s, accept, 1_000, True)  # type: ignore[arg-type,return-value]
    assert (got[0] and got[0].amount, got[1]) == (expected[0] and expected[0].amount, expected[1])
    assert (got[2] is None) == (expected[2] is None)
    if got[2] is not None and expected[2] is not None:
        assert isinstance(got[2], Outcome) and isinstance(expected[2], Outcome)
        assert got[2]["t"].ok == expected[2]["t"].ok
    assert wide.runs == [[*sizes, 1_000]]


@pytest.mark.parametrize("wanted", [True, False])
async def test_an_unwanted_answer_sends_no_smaller_size(wanted: bool) -> None:
    """``wanted`` False once the largest size failed (the large-sell search of a token
    whose whole-balance sell failed: its answer is not used): nothing more is sent."""
    sim = Capped(100)
    asked = asyncio.get_running_loop().create_future()
    asked.set_result(wanted)
    found, failed, floor = await ladder_with_floor(
        sim,
        SIZES,
        lambda s: s,  # type: ignore[arg-type,return-value]
        accept,
        4,
        wanted=lambda: asked,
    )
    if wanted:
        assert (found and found.amount, failed) == (100, 250)
        assert sim.runs == [[250], [*SIZES[:-1], 4]]
    else:
        assert (found, failed, floor) == (None, None, None) and sim.runs == [[250]]


@pytest.mark.parametrize("passes", [*_predicates(), lambda s: s <= 1_200, lambda s: s < 1_000])
async def test_a_ladder_with_its_grids_finds_the_step_by_step_limit(passes: Any) -> None:
    """A first journey's larger buys: once the largest failed, the smaller sizes go with
    the first refinement's sizes of every gap they could leave (from ``low``, known to
    pass); the refinement then reads its first round from them and sends only its
    second: the same limit as the ladder and two refinement rounds step by step, in
    the same number of runs as the at-once refinement, with 7 x (gaps + 1) sizes."""
    sizes = [1_500, 2_000, 2_500, 3_000, 4_000]
    step, gridded = Passing(passes), Passing(passes)
    plan_of: Any = lambda s: s  # noqa: E731
    found, failed = await ladder_top_first(step, sizes, plan_of, accept)
    got, got_failed, tried = await ladder_with_grids(gridded, sizes, plan_of, accept, 1_000)
    assert (got and got.amount, got_failed) == (found and found.amount, failed)
    if failed is None:
        assert tried == {} and gridded.runs == [[4_000]]
        return
    low = Found(1_000, Outcome({}))
    expected = await refine(step, found or low, failed, plan_of, accept)
    limit = await refine(gridded, got or low, failed, plan_of, accept, tried=tried)
    assert limit.amount == expected.amount
    assert len(gridded.runs) == 3  # the largest; the ladder with the grids; the second round
    assert len(gridded.runs[1]) == 4 + 5 * 7 and len(gridded.runs[2]) <= 7


@pytest.mark.parametrize("at_once", [False, True])
@pytest.mark.parametrize("passes", [*_predicates(), lambda s: s <= 500, lambda s: s < 50])
async def test_a_ladder_and_its_likely_grid_find_the_step_by_step_limit(
    passes: Any, at_once: bool
) -> None:
    """The journey's smaller buys after the default one (10_000) failed: the first
    refinement round between the largest of them and the default size goes with them;
    when the largest passed, the refinement sends only its second round, otherwise it
    goes as it would have (both rounds at once, or step by step): the same limit."""
    sizes = [1, 10, 100, 1_000]
    step, gridded = Passing(passes), Passing(passes)
    plan_of: Any = lambda s: s  # noqa: E731
    found, _ = await ladder(step, sizes, plan_of, accept)
    got, _, tried = await ladder_and_grid(gridded, sizes, plan_of, accept, 10_000)
    assert (got and got.amount) == (found and found.amount)
    assert gridded.runs == [[*sizes, *(1_000 + 1_125 * i for i in range(1, 8))]]
    if found is None:
        return
    expected = await refine(step, found, 10_000, plan_of, accept)
    assert got is not None
    limit = await refine(gridded, got, 10_000, plan_of, accept, at_once=at_once, tried=tried)
    assert limit.amount == expected.amount
    if got.amount == 1_000:
        assert all(len(run) <= 7 for run in gridded.runs[1:]) and len(gridded.runs) <= 2


async def _recalled_search(sim: Any, recall: Any) -> Found:
    """A max-buy search as the journey runs it: the top-first ladder, then two rounds of
    refinement, every step through ``recall``."""
    sizes = [1_500, 2_000, 2_500, 3_000, 4_000]
    plan_of = recalling(lambda s: s, recall)  # type: ignore[arg-type,return-value]
    found, failed = await ladder_top_first(sim, sizes, plan_of, accept)
    if failed is None:
        return found or Found(1_000, Outcome({}))
    return await refine(sim, found or Found(1_000, Outcome({})), failed, plan_of, accept)


@pytest.mark.parametrize("passes", [*_predicates(), lambda s: s <= 1_200, lambda s: s < 1_000])
async def test_a_recalled_search_finds_the_step_by_step_limit_in_one_run(passes: Any) -> None:
    """A search given the sizes it asked for last time (sent at once, before it runs)
    reads every step from that batch: the same limit as step by step, one run, and
    nothing asked that was not sent early."""
    first, again = Passing(passes), Passing(passes)
    recorded = Recall((), None)
    expected = await _recalled_search(first, recorded)
    assert recorded.asked == [s for run in first.runs for s in run]
    assert recorded.requests == len(first.runs)
    recall = Recall.start(again, recorded.asked, lambda: _now(lambda s: s))
    limit = await _recalled_search(again, recall)
    assert limit.amount == expected.amount
    assert again.runs == [recorded.asked]  # the early batch, and nothing after it
    assert recall.asked == recorded.asked and recall.used == recorded.requests


async def test_a_recalled_search_of_a_changed_token_sends_what_it_misses_at_once() -> None:
    """Remembered sizes that no longer fit (the token's limit moved): each step sends the
    sizes the early batch lacks at once, so the answer is the step-by-step one and no
    step waits longer than it would have."""
    before, after = Passing(lambda s: s <= 2_100), Passing(lambda s: s <= 3_300)
    recorded = Recall((), None)
    await _recalled_search(before, recorded)
    step = Passing(lambda s: s <= 3_300)
    expected = await _recalled_search(step, Recall((), None))
    recall = Recall.start(after, recorded.asked, lambda: _now(lambda s: s))
    limit = await _recalled_search(after, recall)
    assert limit.amount == expected.amount
    early, *later = after.runs
    assert early == recorded.asked
    assert all(s not in recorded.asked for run in later for s in run)
    assert len(later) <= len(step.runs)


async def test_a_failed_early_batch_is_sent_again() -> None:
    """The early batch raised (a node error): its sizes are sent again when asked."""

    class Failing(Passing):
        async def run(self, plans: list[Any]) -> list[Outcome]:
            if len(self.runs) == 0:
                self.runs.append(list(plans))
                raise RuntimeError("the node went away")
            return await super().run(plans)

    sim = Failing(lambda s: s <= 2_100)
    recall = Recall.start(sim, [4_000, 1_500, 2_000], lambda: _now(lambda s: s))
    expected = await _recalled_search(Passing(lambda s: s <= 2_100), Recall((), None))
    limit = await _recalled_search(sim, recall)
    assert limit.amount == expected.amount
    assert sim.runs[1] == [4_000]  # asked again, not read from the failed batch
    recall.drop()


async def _now(value: Any) -> Any:
    return value

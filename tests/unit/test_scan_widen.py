"""A first scan's guess widened by the senders the deployer's reply added
(powers._added_to, _widened, _with_more): the guess is kept only when the deployer
added senders and changed no order, and the merged batch holds both batches' outcomes
by trial, the guess's baseline kept (#27)."""

import asyncio
from typing import Any

from tokenrisk.errors import RpcError
from tokenrisk.simulate import powers


async def _pending() -> None:
    await asyncio.sleep(3600)


def _guess(senders: list[str]) -> tuple[asyncio.Future[powers.Guess], asyncio.Future[None]]:
    ahead: asyncio.Future[None] = asyncio.ensure_future(_pending())
    guess: asyncio.Future[powers.Guess] = asyncio.get_running_loop().create_future()
    guess.set_result((senders, ahead))  # type: ignore[arg-type]
    return guess, ahead


async def test_a_guess_is_widened_only_when_senders_are_added_in_order() -> None:
    guess, ahead = _guess(["0xa", "0xb"])
    for likely in (
        ["0xa", "0xb", "0xdeployer"],
        ["0xdeployer", "0xa", "0xb"],
        ["0xa", "0xd", "0xb"],
    ):
        kept = powers._added_to(guess, likely)
        assert kept is not None and kept[0] == ["0xa", "0xb"] and kept[1] is ahead
    for likely in (["0xa", "0xb"], ["0xb", "0xa", "0xd"], ["0xa", "0xd"], ["0xa"]):
        assert powers._added_to(guess, likely) is None
    assert not ahead.cancelled()  # deciding drops nothing
    ahead.cancel()


async def test_a_guess_not_back_is_not_widened() -> None:
    guess = asyncio.ensure_future(_pending())
    assert powers._added_to(guess, ["0xa"]) is None  # type: ignore[arg-type]
    guess.cancel()


def _tried(by_trial: dict[Any, Any], base: list[Any], pairs: frozenset[Any] = frozenset()) -> Any:
    story: Any = "story"
    return powers.Tried(
        story, base, by_trial, ([None], ()), pairs, {(("0xa", (), None), 1): "dump"}
    )


async def test_the_merged_batch_has_both_outcomes_and_the_guess_baseline() -> None:
    a, d = ("0xa", ("0x01",), None), ("0xd", ("0x01",), None)
    guessed = asyncio.ensure_future(asyncio.sleep(0, _tried({a: "oa"}, ["base"])))
    more = asyncio.ensure_future(asyncio.sleep(0, _tried({d: "od"}, [], frozenset([d]))))
    merged = await powers._with_more(guessed, more)
    assert merged.base == ["base"] and merged.counted == ([None], ())
    assert merged.by_trial == {a: "oa", d: "od"} and merged.pairs == frozenset([d])


def _merge(guessed: asyncio.Future[Any], more: asyncio.Future[Any]) -> asyncio.Future[Any]:
    """As ``powers._joined`` starts the merge."""
    merged = asyncio.ensure_future(powers._with_more(guessed, more))
    merged.add_done_callback(lambda done: powers._stop_both(done, guessed, more))
    return merged


async def test_a_failed_added_batch_fails_the_merge_and_stops_the_guess() -> None:
    async def fails() -> Any:
        raise RpcError("node error")

    guessed: asyncio.Future[Any] = asyncio.ensure_future(_pending())
    more: asyncio.Future[Any] = asyncio.ensure_future(fails())
    merged = _merge(guessed, more)
    try:
        await merged
    except RpcError:
        pass
    else:
        raise AssertionError("the merge hid the added batch's error")
    await asyncio.sleep(0)
    assert guessed.cancelled()  # _fitting then sends the whole batch again


async def test_a_merge_dropped_before_its_first_step_stops_both_batches() -> None:
    guessed: asyncio.Future[Any] = asyncio.ensure_future(_pending())
    more: asyncio.Future[Any] = asyncio.ensure_future(_pending())
    _merge(guessed, more).cancel()  # as _drop_tried does, before the loop ran it
    for _ in range(4):  # the merge's step, its callbacks, the batches' steps
        await asyncio.sleep(0)
    assert guessed.cancelled() and more.cancelled()


async def test_a_widening_dropped_before_its_first_step_stops_the_guess() -> None:
    guessing: asyncio.Future[Any] = asyncio.ensure_future(_pending())
    powers._widening(_pending(), guessing).cancel()  # type: ignore[arg-type]
    for _ in range(4):
        await asyncio.sleep(0)
    assert guessing.cancelled()

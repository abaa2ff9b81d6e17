"""A first scan's screen and trials guessed before the deployer's reply (powers._guessed)
are used only when the deployer leaves the likely senders as guessed (#27)."""

import asyncio
from typing import Any

import pytest

from tokenrisk.simulate import powers


async def _pending() -> None:
    await asyncio.sleep(3600)


async def _awaits(first: powers.Early) -> None:
    """As the guess's ``_ahead`` does: the wallets, then the amounts round."""
    await first[0]
    await first[1]


def _guess(senders: list[str]) -> tuple[asyncio.Future[powers.Guess], asyncio.Future[None]]:
    ahead: asyncio.Future[None] = asyncio.ensure_future(_pending())
    guess: asyncio.Future[powers.Guess] = asyncio.get_running_loop().create_future()
    guess.set_result((senders, ahead))  # type: ignore[arg-type]
    return guess, ahead


async def test_a_guess_is_used_only_with_the_same_senders() -> None:
    guess, ahead = _guess(["0xa", "0xb"])
    assert powers._verified(guess, ["0xa", "0xb"]) is ahead
    assert not ahead.cancelled()
    ahead.cancel()


async def test_a_guess_the_deployer_changes_is_dropped() -> None:
    for senders in (["0xa", "0xb", "0xdeployer"], ["0xb", "0xa"]):
        guess, ahead = _guess(["0xa", "0xb"])
        assert powers._verified(guess, senders) is None
        await asyncio.sleep(0)
        assert ahead.cancelled()


async def test_a_guess_not_back_yet_is_dropped() -> None:
    guess = asyncio.ensure_future(_pending())
    assert powers._verified(guess, ["0xa"]) is None  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert guess.cancelled()


async def test_a_dropped_guess_leaves_the_wallets_and_the_amounts_round_running() -> None:
    # a guess dropped while it waits for the wallets' supply read must not cancel that
    # read (nor the amounts round): the scan awaits them next (a CancelledError then
    # escaped the scan and failed the request)
    targets, bought = asyncio.ensure_future(_pending()), asyncio.ensure_future(_pending())
    waiting = asyncio.ensure_future(_awaits(powers._shielded((targets, bought))))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.sleep(0)
    assert waiting.cancelled()
    assert not targets.cancelled() and not bought.cancelled()
    targets.cancel()
    bought.cancel()


async def test_a_step_stopped_by_another_costs_the_scan_not_the_check(monkeypatch: Any) -> None:
    stopped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def scan(*_: Any) -> None:
        stopped.cancel()  # as a wrong guess once cancelled the wallets' read the scan awaits
        await stopped

    monkeypatch.setattr(powers, "_scan", scan)
    result = await powers.scan(None, 31337, None)  # type: ignore[arg-type]
    assert not result.scanned and result.error and "stopped" in result.error


async def test_a_check_stopped_itself_stops_its_scan(monkeypatch: Any) -> None:
    monkeypatch.setattr(powers, "_scan", lambda *_: _pending())
    task = asyncio.ensure_future(powers.scan(None, 31337, None))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

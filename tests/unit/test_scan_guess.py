"""A first scan's screen and trials guessed before the deployer's reply (powers._guessed)
are used only when the deployer leaves the likely senders as guessed (#27)."""

import asyncio

from tokenrisk.simulate import powers


async def _pending() -> None:
    await asyncio.sleep(3600)


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

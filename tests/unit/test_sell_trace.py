"""The failing sell's explanation asked early (simulate/probe.py, SellTrace): asked of the
node at most once, the early answer is the one its caller reads, an unused one is
cancelled."""

from __future__ import annotations

import asyncio

from tokenrisk.simulate.probe import SellTrace


class Explain:
    def __init__(self) -> None:
        self.asked = 0
        self.release = asyncio.Event()

    async def __call__(self) -> str | None:
        self.asked += 1
        await self.release.wait()
        return "execution reverted: Blacklisted"


async def test_started_early_it_is_asked_once_and_read_by_its_caller() -> None:
    explain = Explain()
    trace = SellTrace(explain)
    trace.start()
    trace.start()  # the journey may report a failed sell once; a second start is harmless
    assert trace.early
    await asyncio.sleep(0)
    explain.release.set()
    assert await trace.result() == "execution reverted: Blacklisted"
    assert explain.asked == 1


async def test_not_started_the_caller_asks_it_then() -> None:
    explain = Explain()
    explain.release.set()
    trace = SellTrace(explain)
    assert not trace.early and explain.asked == 0
    assert await trace.result() == "execution reverted: Blacklisted"
    assert explain.asked == 1


async def test_an_unused_one_is_cancelled() -> None:
    explain = Explain()
    trace = SellTrace(explain)
    trace.start()
    await asyncio.sleep(0)
    trace.drop()
    await asyncio.sleep(0)
    assert trace._task is not None and trace._task.cancelled()
    SellTrace(explain).drop()  # never started: nothing to cancel

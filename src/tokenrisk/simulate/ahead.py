"""The journey's later steps sent with its first, when their amounts are known ahead.

A fresh buyer's journey is three dependent simulations: the buy says how many tokens
arrive, the wallet transfer sends a share of them, the sells sell what is left.  On a
node 30 ms away each is a round trip.  For a token checked before, the amounts the last
journey saw at the same pool and buy size are remembered (:data:`JourneyMemo`, on the
process's ``Trading``); the transfer and the sells are then planned with them and sent
together with the buy.

They are used only when the buy delivered, and the transfer left, exactly the
remembered amounts, and the token's balance layout verified alongside the buy is the
remembered one (the large sells and the delayed sell by block count use it): the plans
are then those the step-by-step journey would have built from what it saw, so the
answer is the same.  Otherwise they are dropped (cancelled, or their replies ignored)
and the journey goes on step by step from the buy, whose result stands: a miss costs
the node some work, never a round trip more than before.  A fresh EOA still sends every
buy, transfer and sell; the memo holds amounts, never a verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tokenrisk.caching import MemoryCache
from tokenrisk.simulate.slots import BalanceSlot

JourneyKey = tuple[str, str, int]
"""(pool address, token address, buy size in base-token wei)."""
Amounts = tuple[int, int, int, BalanceSlot | None]
"""(tokens the buy delivered, tokens the transfer's receiver got, tokens the buyer kept,
the token's verified balance layout): the large sells and the delayed sell by block
count are planned with that layout, used when this check's verification finds it again."""
JourneyMemo = MemoryCache[JourneyKey, Amounts]


@dataclass
class Ahead:
    """The transfer and the sells of one journey, in flight with its buy.

    ``moved`` resolves to the transfer plan's outcome; ``rest`` to what the sells phase
    gathers (sells, the large-sell search's task, the delayed sell by block count).
    """

    amounts: Amounts
    buyer: str
    receiver: str
    moved: asyncio.Task[Any]
    rest: asyncio.Task[Any]
    used: bool = False

    def bought(self, tokens: int) -> bool:
        """The buy delivered what the plans were made for."""
        return tokens == self.amounts[0]

    def kept(self, received: int, remaining: int, slot: BalanceSlot | None) -> bool:
        """The transfer left what the sells were planned with, and the token's balance
        layout verified now is the one they were planned with."""
        return (received, remaining, slot) == self.amounts[1:]

    async def drop(self) -> None:
        """Unless the journey used them: cancel what is still running (a finished sells
        phase's large-sell search too); replies that came back are never read."""
        if self.used:
            return
        tasks = (self.moved, self.rest)
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
        for task in tasks:
            if not task.cancelled() and task.exception() is None:
                result = task.result()
                _cancel_tasks(result if isinstance(result, tuple) else ())


def _cancel_tasks(values: Iterable[Any]) -> None:
    """A finished sells phase may hold the large-sell search's task: stop it too."""
    for value in values:
        if isinstance(value, asyncio.Task) and not value.done():
            value.cancel()


def remember(memo: JourneyMemo | None, key: JourneyKey, amounts: Amounts) -> None:
    if memo is not None:
        memo.put(key, amounts)


def recalled(memo: JourneyMemo | None, key: JourneyKey) -> Amounts | None:
    if memo is None:
        return None
    found, amounts = memo.get(key)
    return amounts if found else None

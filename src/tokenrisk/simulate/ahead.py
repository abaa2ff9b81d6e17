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

A token seen for the first time has no memory; its amounts are predicted instead
(issue #27: first sight in three round trips), and held to the same test:

- ``curve``: on a V2 pool the buy's output is what the router's ``getAmountOut`` gives
  on the reserves read with the pool (:func:`curve_buy`), and a token that takes nothing
  from a wallet transfer leaves the receiver the tenth sent and the buyer the rest
  (:func:`after_buy`); the transfer and the sells go out with the buy, planned with
  those.  A token with a buy tax, a pool whose balances are not its reserves, a router
  with another fee miss: their buy delivers another amount.
- ``after_buy``: when nothing sent with the buy fits, the transfer and the sells go out
  together once the buy is known, the sells planned with what :func:`after_buy`
  expects the transfer to leave; used when the transfer left exactly that (a token
  that taxes wallet transfers, or moves balances without a transfer, misses).

Each is used only when the simulation's own results show the prediction held exactly,
so the plans are those the step-by-step journey would have built; the large-sell
search and the delayed sell by block count wait for the token's balance slot as they
do step by step.  What a miss costs is counted (``tokenrisk_sent_ahead_total``,
docs/performance.md): a curve miss, the transfer and four sell simulations; an
after-buy miss, the four sell simulations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tokenrisk import metrics
from tokenrisk.caching import MemoryCache
from tokenrisk.simulate.slots import BalanceSlot

JourneyKey = tuple[str, str, int]
"""(pool address, token address, buy size in base-token wei)."""
Amounts = tuple[int, int, int, BalanceSlot | None]
"""(tokens the buy delivered, tokens the transfer's receiver got, tokens the buyer kept,
the token's verified balance layout): the large sells and the delayed sell by block
count are planned with that layout, used when this check's verification finds it again."""
JourneyMemo = MemoryCache[JourneyKey, Amounts]
SearchKey = tuple[str, str, int, str]
"""(pool address, token address, buy size in base-token wei, search: ``buys`` (the
larger buys and the max-buy refinement), ``sells`` (the large-sell search), ``partial``
(the partial-sell search))."""
SearchMemo = MemoryCache[SearchKey, tuple[int, ...]]
"""The sizes each limit search asked for at its last run, in order
(:class:`~tokenrisk.simulate.limits.Recall`, planned by the journey)."""

REMEMBERED, CURVE, AFTER_BUY = "remembered", "curve", "after_buy"
"""What planned the steps sent ahead: the memo, the pool's curve, the buy's result."""
SCAN_TRIALS = "scan_trials"
"""The owner-power scan's trials sent with its screen (:mod:`tokenrisk.simulate.powers`)."""
SCAN_PAIRS = "scan_pairs"
"""The scan's two-step trials (a setter, then a switch) sent with its trials, before the
setters were known to change nothing (:func:`tokenrisk.simulate.trials.likely_pairs`)."""
SCAN_DUMPS = "scan_dumps"
"""The scan's mint-and-dump sells sent with its trials, planned as if a candidate minted
(:func:`tokenrisk.simulate.trials.likely_dumps`)."""


def count(planned: str, used: bool) -> None:
    """One batch of steps sent ahead, used or dropped (``tokenrisk_sent_ahead_total``)."""
    metrics.sent_ahead(planned, used)


V2_FEE = (997, 1_000)
"""The Uniswap V2 Router02 library's ``getAmountOut`` fee (0.3 %): the router, not the
pair, computes what a ``...SupportingFeeOnTransferTokens`` buy asks the pair for."""


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
    planned: str = REMEMBERED
    """:data:`REMEMBERED` (the sells' slot-dependent steps used the remembered layout,
    compared by :meth:`kept`), :data:`CURVE` or :data:`AFTER_BUY` (they wait for this
    check's own slot search, nothing to compare)."""
    used: bool = False
    dropped: bool = False
    go: asyncio.Future[bool] | None = None
    """Whether the sells' steps that wait for the balance slot may start (the large
    sells, the delayed sell by block count); planned on the curve while the slot is
    searched, settled by the buy (:meth:`settle`)."""

    def transfer_shift(self, tokens: int, transfer_bps: int) -> tuple[int, int] | None:
        """What this plan's transfer, already back, did that a whole transfer would not,
        when its buy delivered ``tokens`` (the buy a check saw: the plan ran that buy,
        then a transfer of another amount): (received - sent, kept - (tokens - sent)),
        for :func:`after_buy`; None while it runs, when it failed or its buy delivered
        another amount."""
        moved = self.moved
        if not moved.done() or moved.cancelled() or moved.exception() is not None:
            return None
        outcome = moved.result()
        if outcome["bought"].uint != tokens or not outcome["transfer"].ok:
            return None
        sent = self.amounts[0] * transfer_bps // 10_000
        received, kept = outcome["received"].uint, outcome["sender_after_transfer"].uint
        if received is None or kept is None:
            return None
        return received - sent, kept - (tokens - sent)

    def settle(self, stands: bool) -> None:
        """The buy is known: the plans still stand (it delivered what they were made
        for), or not (their slot's steps are not sent)."""
        if self.go is not None and not self.go.done():
            self.go.set_result(stands)

    def bought(self, tokens: int) -> bool:
        """The buy delivered what the plans were made for."""
        return tokens == self.amounts[0]

    @property
    def remembered(self) -> bool:
        """The sells were planned with a remembered balance layout (:meth:`kept` needs
        this check's verified one)."""
        return self.planned == REMEMBERED

    def kept(self, received: int, remaining: int, slot: BalanceSlot | None) -> bool:
        """The transfer left what the sells were planned with, and (when they were planned
        with a remembered layout) the token's balance layout verified now is that one."""
        if not self.remembered:
            return (received, remaining) == self.amounts[1:3]
        return (received, remaining, slot) == self.amounts[1:]

    def use(self) -> None:
        self.used = True
        count(self.planned, True)

    async def drop(self) -> None:
        """Unless the journey used them: cancel what is still running (a finished sells
        phase's large-sell search too); replies that came back are never read."""
        if self.used or self.dropped:
            return
        self.dropped = True
        self.settle(False)
        count(self.planned, False)
        tasks = (self.moved, self.rest)
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
        for task in tasks:
            if not task.cancelled() and task.exception() is None:
                result = task.result()
                _cancel_tasks(result if isinstance(result, tuple) else ())


def _cancel_tasks(values: Iterable[Any]) -> None:
    """A finished sells phase holds the large-sell search's and the delayed sell's
    tasks: stop them too."""
    stop(*(value for value in values if isinstance(value, asyncio.Task)))


def stop(*tasks: asyncio.Future[Any]) -> None:
    """Cancel what is still running; a finished task's error is retrieved (unread)."""
    for task in tasks:
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()


def remember(memo: JourneyMemo | None, key: JourneyKey, amounts: Amounts) -> None:
    if memo is not None:
        memo.put(key, amounts)


def recalled(memo: JourneyMemo | None, key: JourneyKey) -> Amounts | None:
    if memo is None:
        return None
    found, amounts = memo.get(key)
    return amounts if found else None


def curve_buy(v2: bool, base_reserve: int, token_reserve: int, amount_in: int) -> int | None:
    """The tokens a buy of ``amount_in`` should deliver on a V2 pool holding the reserves
    read with it: the router's ``getAmountOut`` (:data:`V2_FEE`).  None for other pools
    (a V3 or V4 output needs the pool's ticks or its quoter: their transfer and sells
    wait for the buy, :func:`after_buy`) and for an empty side."""
    if not v2 or base_reserve <= 0 or token_reserve <= 0 or amount_in <= 0:
        return None
    fee, whole = V2_FEE
    paid = amount_in * fee
    return paid * token_reserve // (base_reserve * whole + paid)


def after_buy(bought: int, transfer_bps: int, shift: tuple[int, int] | None = None) -> Amounts:
    """What the journey's transfer leaves when the token takes nothing from a wallet
    transfer: (bought, the tenth sent arrives whole, the buyer keeps the rest; no
    remembered layout).  ``shift``: what a transfer of another amount after the same
    buy did otherwise (:meth:`Ahead.transfer_shift`: a reflection token's rounding
    keeps back a wei), added to both; a token whose effect scales with the amount
    misses either way."""
    sent = bought * transfer_bps // 10_000
    got, kept = shift or (0, 0)
    return (bought, max(0, sent + got), max(0, bought - sent + kept), None)

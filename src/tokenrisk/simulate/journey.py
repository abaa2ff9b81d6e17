"""The fresh buyer's journey: buy, transfer, sell, and the limits around them.

Composes :mod:`tokenrisk.simulate.simulator` plans into one :class:`SimulationReport`.  Phases:

1. BUY at the default size; if it fails, smaller sizes (a max-buy limit) before giving up.
2. TRANSFER 10% of the bought amount to a second fresh wallet.
3. SELL variants in one batch (main, same block, delayed, half the balance).
4. LIMITS: larger buys (max buy); partial sells when the whole balance cannot be sold,
   or larger sells by a wallet given tokens through a balance override (max sell).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tokenrisk.errors import CallReverted
from tokenrisk.model import Limit, SimulationReport, Unmeasured, evolve
from tokenrisk.simulate.accounting import LegTax, explain
from tokenrisk.simulate.ahead import (
    AFTER_BUY,
    CURVE,
    REMEMBERED,
    Ahead,
    Amounts,
    JourneyKey,
    JourneyMemo,
    SearchKey,
    SearchMemo,
    after_buy,
    curve_buy,
    recalled,
    remember,
    stop,
)
from tokenrisk.simulate.calls import BalanceSlot, balance_of, fresh_address
from tokenrisk.simulate.limits import (
    Accept,
    Found,
    PlanOf,
    Recall,
    Tried,
    ladder,
    ladder_and_grid,
    ladder_top_first,
    ladder_with_floor,
    ladder_with_grids,
    largest_success,
    recalling,
    refine,
)
from tokenrisk.simulate.reserves import token_side_short
from tokenrisk.simulate.simulator import (
    CallResult,
    Outcome,
    Plan,
    Simulator,
    buy_leg,
    sell_leg,
    sells_ahead,
    transfer_leg,
)

_DOWN = (10, 100, 1_000, 10_000)  # divisors tried when the default buy fails
_UP_BPS = (200, 500, 1_000, 2_500, 5_000)  # larger buys, in bps of the base reserve
# shares of the balance tried when selling all of it fails, in parts per million
_SELL_PPM = (10, 100, 1_000, 10_000, 100_000, 500_000, 900_000, 990_000, 999_000)
_BIG_SELL_BPS = (100, 200, 500, 1_000, 2_500)  # large holder sells, bps of the token reserve


@dataclass(frozen=True)
class Bought:
    amount_in: int
    outcome: Outcome

    @property
    def tokens(self) -> int:
        return self.outcome["bought"].uint or 0


def _bought_ok(o: Outcome) -> bool:
    return o["buy"].ok and (o["bought"].uint or 0) > 0


def _sold_ok(tag: str) -> Accept:
    return lambda o: o[f"{tag}.sell"].ok


T = TypeVar("T")
SlotSource = Awaitable[BalanceSlot | None]
"""The token's balance slot, possibly still being found while the journey starts."""


async def simulate(
    sim: Simulator,
    base_reserve: int,
    token_reserve: int,
    token_slot: BalanceSlot | None | SlotSource,
    memo: JourneyMemo | None = None,
    sell_failed: Callable[[], object] | None = None,
    verdicts_only: bool = False,
    searches: SearchMemo | None = None,
) -> SimulationReport:
    """Run the whole journey; raises only transport errors (node down, deadline).

    Independent simulations go out together, so the journey takes three sequential
    round trips when the token has no limits: the default buy with the larger-buy
    ladder; the transfer with the max-buy refinement; the sells with the large-sell
    ladder (``token_slot`` may still be in flight until then).  ``memo``: the amounts
    earlier journeys saw (:mod:`tokenrisk.simulate.ahead`); with it the transfer and the
    sells go out with the buy, planned from the remembered amounts or, for a token not
    remembered, from the pool's curve, and are used when the buy delivers exactly those:
    one round trip; when it does not, the transfer and the sells go out together after
    the buy: two.  Without ``memo`` (an emulated journey) nothing is sent ahead.

    A token's first journey (``memo`` holds nothing for it) sends each limit search's
    two refinements in one batch (:mod:`tokenrisk.simulate.limits`, ``at_once``), and,
    when its largest larger buy failed, every size of the large-sell ladder at once
    (:class:`_Pace`): the same limits, a round trip fewer per refined search and another
    for such a max sell; a remembered token's checks keep the cheaper
    one-round-at-a-time searches.  ``sell_failed`` is called when selling the whole
    balance failed, before the partial-sell search (its caller's trace of the failure
    then goes out beside that search), or at once when the last check's whole sell
    failed (its partial sells are then recalled, below): a honeypot's recomputed check
    sends the trace, the partial sells and the buy in one round trip; a token that sells
    again drops the trace unread.  When the default buy fails, the smaller buys go
    as soon as it is known, with the pool's token-side read beside them
    (:func:`_smaller_buy`), not after the larger buys, whose answer is then unused;
    when the last check's default buy failed (its smaller buys are recalled, below),
    that read goes with the default buy.

    ``verdicts_only`` (GetContractVerification, which reads only whether the buy and
    the sell went through and why not): the same buy, smaller buys, transfer, whole
    sell and partial-sell search, which decide those, without what only sizes the
    limits or finds later failures: no larger buys or max-buy refinement, no large-sell
    search, of the four sells only the whole balance's (:class:`_Pace`).  The report's
    ``success``, ``buy_ok``, ``sell_ok``, ``failure_step``, ``failure_reason`` and
    ``error`` are the full journey's; its limits, delayed and same-block sells are not
    measured.

    ``searches``: the sizes each limit search of this pool, token and buy size asked for
    at its last run, when that was more than its first request (the smaller buys after
    a failed default buy and the partial sells after a failed whole sell: whenever they
    ran, :class:`_Recalls`); they go out with the
    buy (:class:`~tokenrisk.simulate.limits.Recall`) and each search reads them as it
    asks for them, so a limit token's recomputed check needs no round trip per search
    step; updated here with what this journey's searches asked for.
    """
    slot = _slot_source(token_slot)
    # BUY (and, at the same time, larger buys for the max-buy limit; with the transfer
    # and the sells too when their amounts are remembered or predicted: simulate/ahead.py)
    amount = sim.settings.buy_amount(base_reserve)
    at_once = _first_journey(sim, memo, amount)
    recalls = _Recalls.start(sim, searches, amount, slot, verdicts_only)
    if sell_failed is not None and recalls.sold_only_part():
        sell_failed()  # the whole sell failed last time: its trace goes with the buy too
    # the default buy failed last time: the token side's read goes with it too
    short = asyncio.ensure_future(_side_short(sim)) if recalls.bought_smaller() else None
    pace = _Pace(at_once, asyncio.get_running_loop().create_future(), verdicts_only, recalls)
    ahead = _launch(sim, memo, (amount, base_reserve, token_reserve), slot, pace)
    default_bought: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    up = (pace, default_bought)
    larger_buys = asyncio.ensure_future(_larger_buys(sim, base_reserve, amount, up))
    try:
        first = await sim.run_one(sim.buy_only(amount))
        default_bought.set_result(_bought_ok(first))
        if ahead is not None:
            ahead.settle(_bought_ok(first) and ahead.bought(Bought(amount, first).tokens))
        if _bought_ok(first):
            larger, too_large, tried = await larger_buys
            bought = Bought(amount, first)
            start = larger or Found(amount, first)
            max_buy = _max_buy(sim, start, too_large, (at_once, tried), recalls.buys)
        else:
            # the larger buys' answer is not used; the smaller ones go at once
            larger_buys.cancel()
            await _hit(pace.capped)  # a buy failed: a max sell's sizes all at once
            if ahead is not None:  # planned for the default buy, which failed
                await ahead.drop()
                ahead = None
            # the max buy's first round goes with them unless only the verdicts are asked
            smaller, tried = await _smaller_buy(
                sim, amount, at_once and not verdicts_only, recalls.smaller, short
            )
            if not isinstance(smaller, Bought):
                recalls.remember(sim, searches)
                failed = SimulationReport(
                    success=True,
                    failure_step="buy",
                    failure_reason=first["buy"].reason,
                    buy_gas=first["buy"].gas,
                )
                return _short(failed, smaller)
            bought = smaller
            too_large = None if verdicts_only else amount
            max_buy = _max_buy(
                sim, Found(smaller.amount_in, smaller.outcome), too_large, (at_once, tried)
            )
        report, limit = await asyncio.gather(
            _after_buy(sim, bought, token_reserve, slot, (memo, ahead), (pace, sell_failed)),
            max_buy,
        )
        recalls.remember(sim, searches)
    finally:
        recalls.drop()
        if short is not None:
            stop(short)  # read only when every smaller buy failed
        stop(larger_buys)  # a failed default buy left it unread
        if not pace.capped.done():
            pace.capped.set_result(False)
        if ahead is not None:
            await ahead.drop()
    return evolve(report, max_buy=limit)


@dataclass(frozen=True)
class _Pace:
    """How a journey's limit searches send their sizes (:func:`simulate`)."""

    at_once: bool
    """A first journey: each search's two refinements in one batch."""
    capped: asyncio.Future[bool]
    """True once the larger buys' largest failed (set by :func:`_larger_buys`; False
    when the journey ends first)."""
    verdicts_only: bool
    """Only what decides whether the buy and the sell go through (:func:`simulate`):
    no larger buys, no large-sell search or delayed sell by block count, and of the
    four sells only the whole balance's."""
    recalls: _Recalls
    """The searches' sizes from their last run, in flight (:class:`_Recalls`)."""

    def every_sell_size(self) -> bool:
        """The large-sell ladder's sizes all at once: on a first journey whose larger buys
        are known to have hit a limit when it starts (a maximum transaction amount caps
        sells as well; other tokens send their largest sell alone first).  Never waited
        for: the ladder's largest size goes no later."""
        return self.at_once and self.capped.done() and self.capped.result()


async def _hit(capped: asyncio.Future[bool]) -> bool:
    """The larger buys' largest failed: ``capped`` learns it, the smaller ones go on."""
    if not capped.done():
        capped.set_result(True)
    return True


def _first_journey(sim: Simulator, memo: JourneyMemo | None, amount_in: int) -> bool:
    """Nothing remembered of this token's journey at this buy size (its first check in
    this process): its limit searches go at once (:func:`simulate`).  Without a memo (an
    emulated journey) or for a pool that is only simulated, step by step."""
    return memo is not None and not sim.prelude and recalled(memo, _key(sim, amount_in)) is None


def _key(sim: Simulator, amount_in: int) -> JourneyKey:
    return (sim.route.pool.address, sim.route.token, amount_in)


def _launch(
    sim: Simulator,
    memo: JourneyMemo | None,
    sizes: tuple[int, int, int],
    token_slot: asyncio.Future[BalanceSlot | None],
    pace: _Pace,
) -> Ahead | None:
    """The transfer and the sells planned with the amounts remembered for this buy, or
    predicted from the pool's curve for a token not remembered, started now (None
    without a memo, for a pool that is only simulated, or when neither is known).
    ``sizes``: the buy's amount in, the pool's base and token reserves; ``pace``: the
    large-sell search's batches (:func:`simulate`)."""
    amount_in, base_reserve, token_reserve = sizes
    if memo is None or sim.prelude:
        return None
    amounts = recalled(memo, _key(sim, amount_in))
    if amounts is not None:
        planned = (REMEMBERED, token_slot, pace)
        return _sent_ahead(sim, amount_in, amounts, token_reserve, planned)
    route = sim.route
    tokens = curve_buy(not (route.v3 or route.v4), base_reserve, token_reserve, amount_in)
    if tokens is None:
        return None
    predicted = after_buy(tokens, sim.settings.transfer_bps)
    return _sent_ahead(sim, amount_in, predicted, token_reserve, (CURVE, token_slot, pace))


def _sent_ahead(
    sim: Simulator,
    amount_in: int,
    amounts: Amounts,
    token_reserve: int,
    planned: tuple[str, asyncio.Future[BalanceSlot | None], _Pace],
) -> Ahead:
    """Start the transfer and the sells of a buy of ``amount_in`` planned with
    ``amounts``; the large sells and the delayed sell use the remembered layout (checked
    against this check's before use) or, predicted, wait for this check's own."""
    kind, token_slot, pace = planned
    bought, received, remaining, slot = amounts
    sent = bought * sim.settings.transfer_bps // 10_000
    buyer, receiver = fresh_address(), fresh_address()
    moved = asyncio.create_task(sim.run_one(_transfer_plan(sim, buyer, receiver, amount_in, sent)))
    wallets = (buyer, receiver, sent, remaining, received)
    source = _slot_source(slot) if kind == REMEMBERED else token_slot
    # planned on the curve while the slot is searched: the slot's steps wait for the buy
    go = asyncio.get_running_loop().create_future()
    if kind != CURVE or source.done():
        go.set_result(True)
    rest = asyncio.create_task(_sells(sim, amount_in, wallets, source, token_reserve, (pace, go)))
    return Ahead(amounts, buyer, receiver, moved, rest, kind, go=go)


Counted = str | tuple[str, ...] | None
"""The delayed sell by block count's answer (:func:`_counted`)."""
MaxSell = tuple[Limit | None, float | None]
"""The large-sell search's answer (:func:`_big_sells`)."""
NO_LIMIT: MaxSell = (None, None)


async def _sells(
    sim: Simulator,
    amount_in: int,
    wallets: tuple[str, str, int, int, int],
    token_slot: asyncio.Future[BalanceSlot | None],
    token_reserve: int,
    way: tuple[_Pace, asyncio.Future[bool] | None],
) -> tuple[list[Outcome | CallReverted], asyncio.Task[MaxSell], asyncio.Task[Counted]]:
    """The sells phase: the four sell plans, with the large-sell search and the delayed
    sell by block count started beside them as tasks, which the caller reads only when
    the whole balance sold: a failed sell's partial-sell search (and its trace) goes as
    soon as the sells are back, not after the delayed sell's round (issue #27).  ``way``:
    the limit searches' pace and, for sells sent ahead on the curve while the slot is
    searched, whether the buy delivered what they were planned for (:meth:`Ahead.settle`):
    their slot's steps wait for it (known about when the slot is), so a stale plan
    sends none of them."""
    pace, go = way
    buyer, receiver, sent, remaining, received = wallets
    sold = asyncio.get_running_loop().create_future()
    amounts = (amount_in, sent, remaining, received)
    plans = _sell_plans(sim, buyer, receiver, amounts, main_only=pace.verdicts_only)
    if pace.verdicts_only:
        return await _main_sold(sim, plans[0], sold)
    big = asyncio.ensure_future(
        _if(
            go,
            lambda: _big_sells(sim, token_slot, token_reserve, remaining, (pace, sold)),
            NO_LIMIT,
        )
    )
    counted = asyncio.ensure_future(_if(go, lambda: _counted(sim, token_slot, remaining), None))
    try:
        return await _whole_sold(sim, plans, sold), big, counted
    except BaseException:
        stop(big, counted)
        raise


async def _main_sold(
    sim: Simulator, main: Plan, sold: asyncio.Future[bool]
) -> tuple[list[Outcome | CallReverted], asyncio.Task[MaxSell], asyncio.Task[Counted]]:
    """:func:`_sells` for the verdicts alone (:attr:`_Pace.verdicts_only`): the whole
    balance's sell, the other three sells marked not simulated (what reads them takes
    a failed call as "nothing to say"), no large-sell search and no delayed sell."""
    outcomes = await _whole_sold(sim, [main], sold)
    skipped = [CallReverted(_NOT_SIMULATED) for _ in range(3)]
    return [*outcomes, *skipped], _ready(NO_LIMIT), _ready(None)


_NOT_SIMULATED = "not simulated: only the verdicts were asked for"


def _ready(value: T) -> asyncio.Task[T]:
    """A task that has ``value`` at once."""

    async def at_once() -> T:
        return value

    return asyncio.ensure_future(at_once())


async def _if(go: asyncio.Future[bool] | None, step: Callable[[], Awaitable[T]], otherwise: T) -> T:
    """``step()``, once ``go`` (awaited shielded) says the plan still stands; else
    ``otherwise``."""
    if go is not None and not await asyncio.shield(go):
        return otherwise
    return await step()


async def _whole_sold(
    sim: Simulator, plans: list[Plan], sold: asyncio.Future[bool]
) -> list[Outcome | CallReverted]:
    """The four sells' outcomes; ``sold`` says whether the buyer's whole balance sold (False
    when the sells raised or were cancelled): the large-sell search, whose answer is used
    only then, sends its smaller sizes only then."""
    try:
        outcomes = await sim.run(plans)
        main = outcomes[0]
        sold.set_result(not isinstance(main, CallReverted) and main["buyer.sell"].ok)
        return outcomes
    finally:
        if not sold.done():
            sold.set_result(False)


def _short(report: SimulationReport, why: str | None) -> SimulationReport:
    """A failed buy explained by the pool's token side being short of its reserve
    (:mod:`tokenrisk.simulate.reserves`, read by :func:`_smaller_buy`): the reason names
    it, and a note says the holders' sells decide."""
    if why is None:
        return report
    reason = f"{report.failure_reason}; {why}" if report.failure_reason else why
    note = f"buys fail because {why}; the holders' sells decide whether the token can be sold"
    return evolve(report, failure_reason=reason, notes=(*report.notes, note))


async def _side_short(sim: Simulator) -> str | None:
    """Why buys fail when the pool's token side is short of its reserve
    (:func:`~tokenrisk.simulate.reserves.token_side_short`); a pool that exists only in a
    simulation is not read."""
    if sim.prelude:
        return None
    route = sim.route
    return await token_side_short(sim.rpc, route.pool, route.token, sim.base.tag)


def _slot_source(token_slot: BalanceSlot | None | SlotSource) -> asyncio.Future[BalanceSlot | None]:
    """The slot as a future that several phases may await."""
    if isinstance(token_slot, BalanceSlot | None):
        done: asyncio.Future[BalanceSlot | None] = asyncio.get_running_loop().create_future()
        done.set_result(token_slot)
        return done
    return asyncio.ensure_future(token_slot)


async def _after_buy(
    sim: Simulator,
    bought: Bought,
    token_reserve: int,
    token_slot: asyncio.Future[BalanceSlot | None],
    known: tuple[JourneyMemo | None, Ahead | None],
    way: tuple[_Pace, Callable[[], object] | None],
) -> SimulationReport:
    """The transfer and the sells after ``bought``; ``known``: the memo of amounts seen
    (updated here) and the steps started ahead with the remembered ones, if any;
    ``way``: the limit searches' pace and ``sell_failed`` (:func:`simulate`)."""
    memo, ahead = known
    pace = way[0]
    buy = buy_leg(bought.outcome, sim.route)
    # TRANSFER (already in flight when ``ahead`` was planned for this buy; else sent now,
    # with the sells planned with what it should leave: simulate/ahead.py, after_buy)
    sent = bought.tokens * sim.settings.transfer_bps // 10_000
    mine = None  # the steps started here, dropped below unless used
    if ahead is None or not ahead.bought(bought.tokens):
        shift = None
        if ahead is not None:  # planned for another amount: stale, but its transfer ran
            shift = ahead.transfer_shift(bought.tokens, sim.settings.transfer_bps)
            await ahead.drop()
        planned = (token_slot, pace, shift)
        ahead = mine = _after_bought(sim, bought, token_reserve, planned, memo)
    try:
        if ahead is not None:
            buyer, receiver = ahead.buyer, ahead.receiver
            moved = await ahead.moved
        else:
            buyer, receiver = fresh_address(), fresh_address()
            plan = _transfer_plan(sim, buyer, receiver, bought.amount_in, sent)
            moved = await sim.run_one(plan)
        transfer_ok = moved["transfer"].ok
        received = moved["received"].uint or 0
        remaining = moved["sender_after_transfer"].uint or 0
        # SELL (and, at the same time, large sells for the max-sell limit)
        wallets = (buyer, receiver, sent, remaining, received)
        if ahead is not None and await _kept(ahead, received, remaining, token_slot):
            ahead.use()
            sold = await ahead.rest
        else:
            if ahead is not None:  # the transfer left other amounts: stale
                await ahead.drop()
            sold = await _sells(
                sim, bought.amount_in, wallets, token_slot, token_reserve, (pace, None)
            )
    finally:
        if mine is not None:
            await mine.drop()
    (main, same, delayed, half), big_sells, counting = sold
    try:
        moved_tax = LegTax(None, None)
        if transfer_ok and sent:
            moved_tax = transfer_leg(moved, sim.route, sent)
        seen = (bought.tokens, received, remaining, await token_slot)
        remember(memo, _key(sim, bought.amount_in), seen)
        if isinstance(main, CallReverted):
            raise main
        # a later sell matters only when selling works now
        counted = await counting if main["buyer.sell"].ok else None
        report = _bought_report(bought, (moved, sent), buy, moved_tax, counted)
        return await _judge_sells(
            sim,
            report,
            bought,
            (buyer, receiver, sent, remaining, received),
            main,
            same,
            delayed,
            big_sells,
            moved,
            counted if isinstance(counted, str) else None,
            half,
            way,
        )
    finally:  # the sell failed: the partial-sell search decided instead
        stop(big_sells, counting)


def _bought_report(
    bought: Bought,
    transfer: tuple[Outcome, int],
    buy: LegTax,
    moved_tax: LegTax,
    counted: Counted,
) -> SimulationReport:
    """The report's buy and transfer figures (``transfer``: its outcome and the amount
    sent), and the delayed sell by block count's unchecked sentence, if any."""
    moved, sent = transfer
    transfer_ok = moved["transfer"].ok
    report = SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=transfer_ok,
        buy_tax=_round(buy.effective),
        buy_tax_token_unit=_round(buy.token_unit),
        transfer_tax=_round(moved_tax.effective),
        transfer_tax_token_unit=_round(moved_tax.token_unit),
        notes=_explained(("Buy", buy), ("Wallet transfer", moved_tax)),
        buy_gas=bought.outcome["buy"].gas,
        unchecked=counted if isinstance(counted, tuple) else (),
    )
    report = _unmeasured(report, "buy", buy, bought.outcome.get("quote"), bought.outcome["buy"])
    if transfer_ok:
        report = _unmeasured(
            report, "transfer", moved_tax, None, moved["transfer"], sent_nothing=not sent
        )
    return report


def _after_bought(
    sim: Simulator,
    bought: Bought,
    token_reserve: int,
    slot_and_batches: tuple[asyncio.Future[BalanceSlot | None], _Pace, tuple[int, int] | None],
    memo: JourneyMemo | None,
) -> Ahead | None:
    """The transfer after ``bought`` with the sells planned with what it should leave
    (:func:`~tokenrisk.simulate.ahead.after_buy`, shifted by what the stale plan's
    transfer showed, if anything), started together; None without a memo (nothing is
    sent ahead) or for a pool that is only simulated."""
    if memo is None or sim.prelude:
        return None
    token_slot, pace, shift = slot_and_batches
    predicted = after_buy(bought.tokens, sim.settings.transfer_bps, shift)
    planned = (AFTER_BUY, token_slot, pace)
    return _sent_ahead(sim, bought.amount_in, predicted, token_reserve, planned)


async def _kept(
    ahead: Ahead, received: int, remaining: int, token_slot: asyncio.Future[BalanceSlot | None]
) -> bool:
    """The sells sent ahead fit what the transfer left (and, planned with a remembered
    layout, the layout this check verified; only then is the slot search awaited)."""
    if (received, remaining) != ahead.amounts[1:3]:
        return False
    return ahead.kept(received, remaining, await token_slot if ahead.remembered else None)


def _percent(value: float | None) -> str:
    return "an unmeasured amount" if value is None else f"{value:.1f}%"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _explained(*legs: tuple[str, LegTax]) -> tuple[str, ...]:
    """Sentences for the legs whose effective and token-unit figures differ."""
    return tuple(text for leg, tax in legs if (text := explain(leg, tax)) is not None)


def _with_sell(report: SimulationReport, tax: LegTax, sold: Outcome) -> SimulationReport:
    report = evolve(
        report,
        sell_tax=_round(tax.effective),
        sell_tax_token_unit=_round(tax.token_unit),
        notes=report.notes + _explained(("Sell", tax)),
    )
    return _unmeasured(report, "sell", tax, sold.get("buyer.quote"), sold.get("buyer.sell"))


def _unmeasured(
    report: SimulationReport,
    leg: str,
    tax: LegTax,
    quote: CallResult | None,
    trade: CallResult | None,
    sent_nothing: bool = False,
) -> SimulationReport:
    """Record why a figure of ``leg`` (whose step went through) is missing; a missing
    effective figure is also stated as unchecked, with the figure the leg falls back to."""
    missing = _why_missing(leg, tax, quote, sent_nothing, trade)
    if not missing:
        return report
    unchecked = [
        f"{leg} tax (effective): {u.why}"
        + ("; the token-unit figure is reported" if tax.token_unit is not None else "")
        for u in missing
        if u.figure == "effective"
    ]
    return evolve(
        report,
        unmeasured=(*report.unmeasured, *missing),
        unchecked=tuple(dict.fromkeys([*report.unchecked, *unchecked])),
    )


_NO_LOGS = (
    "the node returned no logs for the trade",
    "no log at all was returned for the transfer (the token logged none, or the node "
    "returns no logs)",
)


def _why_missing(
    leg: str,
    tax: LegTax,
    quote: CallResult | None,
    sent_nothing: bool,
    trade: CallResult | None = None,
) -> tuple[Unmeasured, ...]:
    """The figures of one leg that are None, each with the reason.  A trade call that
    returned no log at all (a swap always logs the pool's events) means the node gave
    none (e.g. an ``eth_call`` emulation), not that the token logged nothing."""
    if sent_nothing:
        why = "nothing was sent (the share of the bought amount rounds to zero)"
        return (Unmeasured(leg, "effective", why), Unmeasured(leg, "tokenUnit", why))
    no_quote = None
    if quote is not None and not quote.ok:
        no_quote = f"no quote for the amount ({quote.reason or 'the quote reverted'})"
    elif quote is not None:
        no_quote = "the router's quote for the amount could not be read"
    out: list[Unmeasured] = []
    if tax.effective is None:
        why = no_quote or "a balance read around the trade failed"
        out.append(Unmeasured(leg, "effective", why))
    if tax.token_unit is None:
        why = "the token logged no Transfer event in the trade"
        if trade is not None and not trade.logs:
            why = _NO_LOGS[leg == "transfer"]
        if leg == "buy" and no_quote and tax.effective is None:
            why = no_quote  # the buy's token-unit figure is measured against the quote too
        out.append(Unmeasured(leg, "tokenUnit", why))
    return tuple(out)


def _transfer_plan(sim: Simulator, buyer: str, receiver: str, amount_in: int, sent: int) -> Plan:
    """The buy (its tokens bought: :meth:`Ahead.transfer_shift`) and the transfer."""
    p = sim.plan()
    sim.add_buy(p, buyer, amount_in, reads="bought")
    sim.add_transfer(p, buyer, receiver, sent)
    return p


def _sell_plans(
    sim: Simulator,
    buyer: str,
    receiver: str,
    amounts: tuple[int, int, int, int],
    main_only: bool = False,
) -> list[Plan]:
    """The four sells after the buy and the transfer, which each replays without their
    reads (the transfer plan read them).  A sell whose taxes are measured (the buyer's
    in ``main`` and ``partial``) reads the seller's balances and quote around it; the
    others' success is all that is read (:func:`_judge_sells`), so they are the
    approvals and the trade alone: a third of the calls sent before (issue #27).
    ``amounts``: the buy's amount in, the amount sent, what the buyer and the receiver
    then hold; ``main_only``: the whole balance's sells alone (:attr:`_Pace.verdicts_only`)."""
    amount_in, sent, remaining, received = amounts
    main = _replayed(sim, buyer, receiver, amount_in, sent)
    main.block(3)
    sim.add_sell(main, buyer, remaining, "buyer", pool=False)
    if received:
        main.block(4)
        sim.add_sell(main, receiver, received, "receiver", reads="none")
    if main_only:
        return [main]
    same, delayed, partial = (_replayed(sim, buyer, receiver, amount_in, sent) for _ in range(3))
    if received:
        same.block(3)
        sim.add_sell(same, buyer, remaining, "buyer", reads="none")
        sim.add_sell(same, receiver, received, "receiver", reads="none")
    # reaches the future by time within the node's block cap (blocks: see _counted)
    delayed.block(3, seconds=sim.settings.delayed_seconds)
    sim.add_sell(delayed, buyer, remaining, "buyer", reads="none")
    # half the balance: a token that takes more than the amount sold from what the
    # seller keeps shows only when something is kept
    partial.block(3)
    sim.add_sell(partial, buyer, max(1, remaining // 2), "buyer", pool=False)
    return [main, same, delayed, partial]


def _replayed(sim: Simulator, buyer: str, receiver: str, amount_in: int, sent: int) -> Plan:
    """The transfer plan's buy and transfer, without the reads around them."""
    p = sim.plan()
    sim.add_buy(p, buyer, amount_in, reads="none")
    sim.add_transfer(p, buyer, receiver, sent, reads=False)
    return p


async def _judge_sells(
    sim: Simulator,
    report: SimulationReport,
    bought: Bought,
    wallets: tuple[str, str, int, int, int],
    main: Outcome,
    same: Outcome | CallReverted,
    delayed: Outcome | CallReverted,
    big_sells: asyncio.Task[MaxSell],
    moved: Outcome,
    counted: str | None,
    half: Outcome | CallReverted,
    way: tuple[_Pace, Callable[[], object] | None],
) -> SimulationReport:
    _, _, sent, remaining, received = wallets
    notes: list[str] = list(report.notes)
    if not report.transfer_ok:
        report = evolve(report, failure_step="transfer", failure_reason=moved["transfer"].reason)
    sell = main["buyer.sell"]
    if remaining == 0:
        return evolve(
            report,
            sell_ok=False,
            failure_step="sell",
            failure_reason="the buyer held no tokens after the buy and transfer",
        )
    report = evolve(report, sell_gas=sell.gas)
    max_sell: Limit | None = None
    fraction: float | None = None
    if not sell.ok:
        pace, sell_failed = way
        if sell_failed is not None:
            sell_failed()
        recall = pace.recalls.partial_for(bought.amount_in)
        partial = await _partial_sell(sim, bought.amount_in, remaining, pace.at_once, recall)
        if partial is None:
            return evolve(report, sell_ok=False, failure_step="sell", failure_reason=sell.reason)
        max_sell = _limit_from_sell(partial, "buyer")
        fraction = partial.amount / remaining
        notes.append(
            f"selling the whole balance fails ({sell.reason}); "
            f"at most {fraction * 100:.2f}% of it can be sold"
        )
        report = evolve(report, sell_gas=partial.outcome["buyer.sell"].gas)
        tax = sell_leg(partial.outcome, sim.route, "buyer", partial.amount)
        report = _with_sell(report, tax, partial.outcome)
    else:
        whole = sell_leg(main, sim.route, "buyer", remaining)
        report = _with_sell(report, *_took_more(sim, (whole, main), half, remaining, notes))
        max_sell, fraction = await big_sells
    report = evolve(report, sell_ok=True, max_sell=max_sell, max_sell_fraction=fraction)
    if received and not main.results.get("receiver.sell", sell).ok:
        notes.append(
            f"the receiver of a wallet transfer could not sell: {main['receiver.sell'].reason}"
        )
    one_per_block = (
        received > 0
        and not isinstance(same, CallReverted)
        and main["receiver.sell"].ok
        and same["buyer.sell"].ok
        and not same["receiver.sell"].ok
    )
    if one_per_block and not isinstance(same, CallReverted):
        notes.append(f"a second sell in the same block fails: {same['receiver.sell'].reason}")
    timed = None
    if not isinstance(delayed, CallReverted) and not delayed["buyer.sell"].ok and sell.ok:
        timed = delayed["buyer.sell"].reason or "the sell failed"
    late = timed or (counted if sell.ok else None)
    return evolve(
        report,
        one_sell_per_block=one_per_block,
        delayed_sell_failed=late is not None,
        delayed_sell_reason=late,
        notes=tuple(dict.fromkeys([*notes, *report.notes])),
    )


_EXTRA_PPM = 1_000
"""A partial sell costs the seller more tokens than it sold from this much (0.1%) more:
below it, rounding and reflections."""


def _took_more(
    sim: Simulator,
    sold: tuple[LegTax, Outcome],
    partial: Outcome | CallReverted,
    remaining: int,
    notes: list[str],
) -> tuple[LegTax, Outcome]:
    """The sell's taxes: the whole-balance sell's, or, when a sell of half the balance
    took more tokens from the seller than it sold (a burn or a second transfer from
    what the seller keeps, which a whole-balance sell leaves no room for), that sell's:
    a seller who keeps some tokens pays it.  Returns the taxes and the sell's outcome."""
    whole = sold[0]
    if isinstance(partial, CallReverted) or not partial["buyer.sell"].ok:
        return sold
    amount = max(1, remaining // 2)
    before, after = partial["buyer.seller_before"].uint, partial["buyer.seller_after"].uint
    if (
        before is None
        or after is None
        or (before - after) * 1_000_000 <= amount * (1_000_000 + _EXTRA_PPM)
    ):
        return sold
    extra = (before - after - amount) * 100 / amount
    tax = sell_leg(partial, sim.route, "buyer", amount)
    notes.append(
        f"a sell of half the balance took {extra:.1f}% more tokens from the seller than it "
        f"sold (burned or moved elsewhere); its tax is the sell tax. Selling the whole "
        f"balance, with nothing left to take, cost {_percent(whole.effective)}"
    )
    return tax, partial


_BY_BLOCKS = "delayed sell by block count"


async def _counted(
    sim: Simulator, token_slot: asyncio.Future[BalanceSlot | None], amount: int
) -> str | tuple[str, ...] | None:
    """The delayed sell by block count (:func:`~.simulator.sells_ahead`): why a sell
    ``delayed_blocks`` later fails (a str), None when it goes through, or what left it
    unchecked (a tuple of one sentence for ``SimulationReport.unchecked``)."""
    if not sim.limits.block_overrides:
        return (f"{_BY_BLOCKS}: the node ignores eth_call block overrides",)
    if sim.prelude:
        return (f"{_BY_BLOCKS}: the pool exists only inside the simulation",)
    slot = await asyncio.shield(token_slot)  # a dropped phase never cancels the search
    if slot is None or amount == 0:
        return (f"{_BY_BLOCKS}: the token's balance slot was not found",)
    s = sim.settings
    found = await sells_ahead(sim, slot, amount, [(s.delayed_blocks, s.delayed_seconds)])
    if isinstance(found, str):
        return (f"{_BY_BLOCKS}: {found}",)
    return found[0]


# -- limits -----------------------------------------------------------------------------


async def _smaller_buy(
    sim: Simulator,
    amount: int,
    at_once: bool,
    recall: Recall | None = None,
    short: asyncio.Future[str | None] | None = None,
) -> tuple[Bought | str | None, Tried]:
    """The largest smaller buy that goes through, or, when none does, why the pool's token
    side is short (None when it is not): that read goes beside the smaller buys (issue
    #27: a node 30 ms away paid a round trip for it after them) and is used only when
    every one failed.  On a first journey the max buy's first refinement round between
    the largest smaller size and ``amount`` goes with them too (``tried``; used when
    that size passed: :func:`~tokenrisk.simulate.limits.ladder_and_grid`).  ``recall``:
    the sizes from the last run, sent with the default buy (:class:`_Recalls`), and
    ``short``: the token side's read sent with them (else it goes now)."""
    sizes = sorted({max(1, amount // d) for d in _DOWN})
    short = short if short is not None else asyncio.ensure_future(_side_short(sim))
    plan_of = recalling(sim.buy_only, recall)
    try:
        tried: Tried = {}
        if at_once:
            found, _, tried = await ladder_and_grid(sim, sizes, plan_of, _bought_ok, amount)
        else:
            found, _ = await ladder(sim, sizes, plan_of, _bought_ok)
        if found is not None:
            return Bought(found.amount, found.outcome), tried
        return await short, tried
    finally:
        stop(short)


def _sized_buy(sim: Simulator) -> Callable[[int], Plan]:
    """A larger buy or a max-buy refinement's size: only whether it delivers, and how
    much, is read (:func:`_bought_ok`, :func:`_limit_from_buy`), so no quote is sent;
    a smaller buy keeps it (one may become the journey's buy, whose taxes it measures)."""
    return functools.partial(sim.buy_only, reads="bought")


def _limit_from_buy(found: Found) -> Limit:
    return Limit(token_wei=found.outcome["bought"].uint or 0, with_token_wei=found.amount)


async def _larger_buys(
    sim: Simulator,
    base_reserve: int,
    amount: int,
    way: tuple[_Pace, asyncio.Future[bool]],
) -> tuple[Found | None, int | None, Tried]:
    """The larger-buy ladder: (largest success, first failing size, sizes of the max
    buy's refinement tried already), the largest size alone first; ``pace.capped``
    learns when it failed.  On a first journey the smaller sizes then go with the
    refinement's first round for each gap they could leave
    (:func:`~tokenrisk.simulate.limits.ladder_with_grids`).  (Every size with the
    largest, on a first journey, took a max buy's round trip off but cost every first
    check four buys and an HTTP request in its busiest round: fewer tokens checked in
    three round trips, docs/performance.md.)  ``way``: the searches' pace and whether
    the default buy went through, set by :func:`simulate` when its reply is in (the
    largest larger buy's comes in the same round): when it did not, the journey takes
    the smaller buys' path and reads no larger size, so none more is sent (a token
    whose default buy fails sent its larger-buy ladder and grids for nothing)."""
    pace, default_bought = way
    if pace.verdicts_only:
        return None, None, {}
    sizes = [
        base_reserve * bps // 10_000 for bps in _UP_BPS if base_reserve * bps // 10_000 > amount
    ]

    async def wanted() -> bool:
        if not await default_bought:
            return False  # the smaller buys' path: no larger size is read
        return await _hit(pace.capped)

    plan_of = recalling(_sized_buy(sim), pace.recalls.buys)
    if pace.at_once:
        return await ladder_with_grids(sim, sizes, plan_of, _bought_ok, amount, wanted)
    found, failed = await ladder_top_first(sim, sizes, plan_of, _bought_ok, wanted=wanted)
    return found, failed, {}


async def _max_buy(
    sim: Simulator,
    start: Found,
    failed: int | None,
    pace: tuple[bool, Tried],
    recall: Recall | None = None,
) -> Limit | None:
    """Max buy refined between the largest successful and the first failing size;
    ``pace``: its two rounds at once, and the sizes the ladder tried already; ``recall``:
    the larger buys' sizes from their last run (:class:`_Recalls`)."""
    if failed is None:
        return None
    at_once, tried = pace
    plan_of = recalling(_sized_buy(sim), recall)
    found = await refine(sim, start, failed, plan_of, _bought_ok, at_once=at_once, tried=tried)
    return _limit_from_buy(found)


async def _partial_sell(
    sim: Simulator, amount_in: int, remaining: int, at_once: bool, recall: Recall | None = None
) -> Found | None:
    sizes = sorted({remaining * ppm // 1_000_000 for ppm in _SELL_PPM} - {0})
    plan_of = recalling(_partial_plan(sim, amount_in), recall)
    return await largest_success(sim, sizes, plan_of, _sold_ok("buyer"), at_once)


def _partial_plan(sim: Simulator, amount_in: int) -> PlanOf:
    """A partial sell's plan: a buy of ``amount_in``, then a sell of the size."""
    return functools.partial(sim.buy_then_sell, amount_in)


def _limit_from_sell(found: Found, tag: str) -> Limit:
    o = found.outcome
    got = (o[f"{tag}.base_after"].uint or 0) - (o[f"{tag}.base_before"].uint or 0)
    return Limit(token_wei=found.amount, with_token_wei=max(0, got))


async def _big_sells(
    sim: Simulator,
    token_slot: asyncio.Future[BalanceSlot | None],
    token_reserve: int,
    remaining: int,
    way: tuple[_Pace, asyncio.Future[bool]],
) -> MaxSell:
    """The large-sell search, run beside the sells; no limit without a balance slot.

    The caller reads it only when the whole balance sold (otherwise the partial-sell
    search decides, and this is cancelled); ``way``: the searches' pace and whether the
    whole balance sold (:func:`_whole_sold`).
    """
    slot = await asyncio.shield(token_slot)  # a dropped phase never cancels the search
    if slot is None or remaining == 0:
        return None, None
    return await _max_sell(sim, slot, token_reserve, remaining, way)


async def _max_sell(
    sim: Simulator,
    slot: BalanceSlot,
    token_reserve: int,
    remaining: int,
    way: tuple[_Pace, asyncio.Future[bool]],
) -> tuple[Limit | None, float | None]:
    """Large sells by a wallet handed tokens through a balance override: the largest
    size first (with the sells), the smaller ones only when the buyer's whole balance
    sold (otherwise the answer is not used: a token that refuses sells would burn gas in
    five more simulations), or every size at once (:meth:`_Pace.every_sell_size`); the
    refinement's sizes at once on a first journey."""
    pace, sold = way
    sizes = [token_reserve * bps // 10_000 for bps in _BIG_SELL_BPS]
    sizes = [s for s in sizes if s > remaining]
    plan_of = recalling(_big_sell_plan(sim, slot), pace.recalls.sells)
    # the buyer's own balance, tried when every larger size fails, goes with them
    accept = _sold_ok("big")
    at_once = pace.every_sell_size()
    found, failed, floor = await ladder_with_floor(
        sim, sizes, plan_of, accept, remaining, at_once, wanted=lambda: sold
    )
    if failed is None:
        return None, None
    if found is None:
        if isinstance(floor, CallReverted):
            raise floor
        found = Found(
            remaining, floor if floor is not None else await sim.run_one(plan_of(remaining))
        )
        if not found.outcome["big.sell"].ok:
            return None, None
    best = await refine(sim, found, failed, plan_of, accept, at_once=pace.at_once)
    return _limit_from_sell(best, "big"), None


def _big_sell_plan(sim: Simulator, slot: BalanceSlot) -> PlanOf:
    """A large sell's plan: a fresh wallet handed the size through ``slot``, selling it."""

    def plan_of(size: int) -> Plan:
        p = sim.plan()
        seller = fresh_address()
        token = sim.route.token
        p.block(3, {token: {"stateDiff": slot.override(seller, size)}})
        for call in sim.route.approvals(token, seller):
            p.call(call)
        p.call(balance_of(token, seller, seller))
        sim.add_sell(p, seller, size, "big", reads="received")
        return p

    return plan_of


# -- the searches' sizes from their last run ---------------------------------------------


async def _plans_now(plan_of: PlanOf) -> PlanOf | None:
    return plan_of


async def _big_sell_plans(
    sim: Simulator, token_slot: asyncio.Future[BalanceSlot | None]
) -> PlanOf | None:
    """Large sells' plans once the token's balance slot is known (None without one)."""
    slot = await asyncio.shield(token_slot)
    return None if slot is None else _big_sell_plan(sim, slot)


@dataclass(frozen=True)
class _Recalls:
    """A journey's limit searches, each with the sizes it asked for at its last run sent
    at once with the buy when there were more than its first request (the smaller buys
    and the partial sells: whenever they ran, since they go only after the default buy
    or the whole sell failed: ``_AFTER_A_FAILURE``)
    (:class:`~tokenrisk.simulate.limits.Recall`): a limit token's recomputed check reads
    its searches' steps from that batch instead of a round trip each, and a honeypot's
    reads its partial sells from it (with the failed sell's trace sent beside them:
    :meth:`sold_only_part`).  A search whose
    sizes are not remembered still records what it asks for, for the next check."""

    buys: Recall
    sells: Recall
    partial: Recall
    smaller: Recall
    amount_in: int
    verdicts_only: bool

    @classmethod
    def start(
        cls,
        sim: Simulator,
        searches: SearchMemo | None,
        amount_in: int,
        token_slot: asyncio.Future[BalanceSlot | None],
        verdicts_only: bool,
    ) -> _Recalls:
        def recall(kind: str, plans: Callable[[], Awaitable[PlanOf | None]]) -> Recall:
            sizes = None
            if searches is not None and not sim.prelude:
                sizes = searches.value(_search_key(sim, amount_in, kind))
            if not sizes or (verdicts_only and kind not in _VERDICT_SEARCHES):
                return Recall((), None)  # records what the search asks, if it runs
            return Recall.start(sim, sizes, plans)

        return cls(
            recall("buys", lambda: _plans_now(_sized_buy(sim))),
            recall("sells", lambda: _big_sell_plans(sim, token_slot)),
            recall("partial", lambda: _plans_now(_partial_plan(sim, amount_in))),
            recall("smaller", lambda: _plans_now(sim.buy_only)),
            amount_in,
            verdicts_only,
        )

    def sold_only_part(self) -> bool:
        """The partial-sell search ran at the last check (its whole sell failed) and its
        sizes are in flight now."""
        return self.partial.early is not None

    def bought_smaller(self) -> bool:
        """The smaller buys ran at the last check (its default buy failed) and their
        sizes are in flight now."""
        return self.smaller.early is not None

    def partial_for(self, amount_in: int) -> Recall | None:
        """The partial-sell search's, for a buy of ``amount_in`` (planned for the
        default buy: a smaller buy's search records nothing and reads nothing)."""
        return self.partial if amount_in == self.amount_in else None

    def remember(self, sim: Simulator, searches: SearchMemo | None) -> None:
        """What each search asked for, for the next check: kept when it was more than
        one request's worth (a search after a failure: whenever it ran), forgotten when
        the search asked for one size or did not run (the verdicts alone leave the limit
        searches' as they were)."""
        if searches is None or sim.prelude:
            return
        for kind, recall in self._by_kind():
            if self.verdicts_only and kind not in _VERDICT_SEARCHES:
                continue
            key = _search_key(sim, self.amount_in, kind)
            if recall.requests > (0 if kind in _AFTER_A_FAILURE else 1):
                searches.put(key, tuple(recall.asked))
            else:
                searches.forget(key)

    def drop(self) -> None:
        for _, recall in self._by_kind():
            recall.drop()

    def _by_kind(self) -> tuple[tuple[str, Recall], ...]:
        return (
            ("buys", self.buys),
            ("sells", self.sells),
            ("partial", self.partial),
            ("smaller", self.smaller),
        )


_AFTER_A_FAILURE = ("partial", "smaller")
"""The searches that run only after a step failed (the whole sell, the default buy):
remembered whenever they ran, since their running at all is what the next check would
otherwise learn a round trip late."""

_VERDICT_SEARCHES = ("partial", "smaller")
"""The searches a journey for its verdicts alone runs (they decide whether the buy and
the sell go through)."""


def _search_key(sim: Simulator, amount_in: int, kind: str) -> SearchKey:
    return (sim.route.pool.address, sim.route.token, amount_in, kind)

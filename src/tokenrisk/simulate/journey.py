"""The fresh buyer's journey: buy, transfer, sell, and the limits around them.

Composes :mod:`tokenrisk.simulate.engine` plans into one :class:`SimulationReport`.  Phases:

1. BUY at the default size; if it fails, smaller sizes (a max-buy limit) before giving up.
2. TRANSFER 10% of the bought amount to a second fresh wallet.
3. SELL variants in one batch (main, same block, delayed).
4. LIMITS: larger buys (max buy); partial sells when the whole balance cannot be sold,
   or larger sells by a wallet given tokens through a balance override (max sell).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tokenrisk.errors import CallReverted
from tokenrisk.model import Limit, SimulationReport
from tokenrisk.simulate.accounting import LegTax, explain
from tokenrisk.simulate.calls import BalanceSlot, approve, balance_of, fresh_address
from tokenrisk.simulate.engine import Outcome, Plan, Simulator, buy_leg, sell_leg, transfer_leg
from tokenrisk.simulate.limits import Accept, Found, ladder, largest_success, refine

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


async def simulate(
    sim: Simulator, base_reserve: int, token_reserve: int, token_slot: BalanceSlot | None
) -> SimulationReport:
    """Run the whole journey; raises only transport errors (node down, deadline)."""
    # BUY
    amount = sim.settings.buy_amount(base_reserve)
    first = await sim.run_one(sim.buy_only(amount))
    max_buy: Limit | None = None
    if _bought_ok(first):
        bought = Bought(amount, first)
        max_buy = await _max_buy(sim, base_reserve, amount)
    else:
        smaller = await _smaller_buy(sim, amount)
        if smaller is None:
            return SimulationReport(
                success=True,
                failure_step="buy",
                failure_reason=first["buy"].reason,
                buy_gas=first["buy"].gas,
            )
        bought = smaller
        max_buy = await _max_buy_between(sim, smaller, amount)
    return await _after_buy(sim, bought, token_reserve, token_slot, max_buy)


async def _after_buy(
    sim: Simulator,
    bought: Bought,
    token_reserve: int,
    token_slot: BalanceSlot | None,
    max_buy: Limit | None,
) -> SimulationReport:
    buy = buy_leg(bought.outcome, sim.route)
    # TRANSFER
    sent = bought.tokens * sim.settings.transfer_bps // 10_000
    buyer, receiver = fresh_address(), fresh_address()
    moved = await sim.run_one(_transfer_plan(sim, buyer, receiver, bought.amount_in, sent))
    transfer_ok = moved["transfer"].ok
    received = moved["received"].uint or 0
    remaining = moved["sender_after_transfer"].uint or 0
    moved_tax = transfer_leg(moved, sim.route, sent) if transfer_ok and sent else LegTax(None, None)
    # SELL
    main, same, delayed = await sim.run(
        _sell_plans(sim, buyer, receiver, bought.amount_in, sent, remaining, received)
    )
    if isinstance(main, CallReverted):
        raise main
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
        max_buy=max_buy,
    )
    return await _judge_sells(
        sim,
        report,
        bought,
        (buyer, receiver, sent, remaining, received),
        main,
        same,
        delayed,
        token_reserve,
        token_slot,
        moved,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _explained(*legs: tuple[str, LegTax]) -> tuple[str, ...]:
    """Sentences for the legs whose effective and token-unit figures differ."""
    return tuple(text for leg, tax in legs if (text := explain(leg, tax)) is not None)


def _with_sell(report: SimulationReport, tax: LegTax) -> SimulationReport:
    return replace(
        report,
        sell_tax=_round(tax.effective),
        sell_tax_token_unit=_round(tax.token_unit),
        notes=report.notes + _explained(("Sell", tax)),
    )


def _transfer_plan(sim: Simulator, buyer: str, receiver: str, amount_in: int, sent: int) -> Plan:
    p = sim.plan()
    sim.add_buy(p, buyer, amount_in)
    sim.add_transfer(p, buyer, receiver, sent)
    return p


def _sell_plans(
    sim: Simulator,
    buyer: str,
    receiver: str,
    amount_in: int,
    sent: int,
    remaining: int,
    received: int,
) -> list[Plan]:
    main, same, delayed = (_transfer_plan(sim, buyer, receiver, amount_in, sent) for _ in range(3))
    main.block(3)
    sim.add_sell(main, buyer, remaining, "buyer")
    if received:
        main.block(4)
        sim.add_sell(main, receiver, received, "receiver")
        same.block(3)
        sim.add_sell(same, buyer, remaining, "buyer")
        sim.add_sell(same, receiver, received, "receiver")
    s = sim.settings
    delayed.block(3, number=sim.head.number + s.delayed_blocks, seconds=s.delayed_seconds)
    sim.add_sell(delayed, buyer, remaining, "buyer")
    return [main, same, delayed]


async def _judge_sells(
    sim: Simulator,
    report: SimulationReport,
    bought: Bought,
    wallets: tuple[str, str, int, int, int],
    main: Outcome,
    same: Outcome | CallReverted,
    delayed: Outcome | CallReverted,
    token_reserve: int,
    token_slot: BalanceSlot | None,
    moved: Outcome,
) -> SimulationReport:
    _, _, sent, remaining, received = wallets
    notes: list[str] = list(report.notes)
    if not report.transfer_ok:
        report = replace(report, failure_step="transfer", failure_reason=moved["transfer"].reason)
    sell = main["buyer.sell"]
    if remaining == 0:
        return replace(
            report,
            sell_ok=False,
            failure_step="sell",
            failure_reason="the buyer held no tokens after the buy and transfer",
        )
    report = replace(report, sell_gas=sell.gas)
    max_sell: Limit | None = None
    fraction: float | None = None
    if not sell.ok:
        partial = await _partial_sell(sim, bought.amount_in, remaining)
        if partial is None:
            return replace(report, sell_ok=False, failure_step="sell", failure_reason=sell.reason)
        max_sell = _limit_from_sell(partial, "buyer")
        fraction = partial.amount / remaining
        notes.append(
            f"selling the whole balance fails ({sell.reason}); "
            f"at most {fraction * 100:.2f}% of it can be sold"
        )
        report = replace(report, sell_gas=partial.outcome["buyer.sell"].gas)
        report = _with_sell(report, sell_leg(partial.outcome, sim.route, "buyer", partial.amount))
    else:
        report = _with_sell(report, sell_leg(main, sim.route, "buyer", remaining))
        if token_slot is not None:
            max_sell, fraction = await _max_sell(sim, token_slot, token_reserve, remaining)
    report = replace(report, sell_ok=True, max_sell=max_sell, max_sell_fraction=fraction)
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
    delayed_failed = (
        not isinstance(delayed, CallReverted) and not delayed["buyer.sell"].ok and sell.ok
    )
    return replace(
        report,
        one_sell_per_block=one_per_block,
        delayed_sell_failed=delayed_failed,
        delayed_sell_reason=delayed["buyer.sell"].reason
        if delayed_failed and not isinstance(delayed, CallReverted)
        else None,
        notes=tuple(dict.fromkeys([*notes, *report.notes])),
    )


# -- limits -----------------------------------------------------------------------------


async def _smaller_buy(sim: Simulator, amount: int) -> Bought | None:
    sizes = sorted({max(1, amount // d) for d in _DOWN})
    found, _ = await ladder(sim, sizes, sim.buy_only, _bought_ok)
    return Bought(found.amount, found.outcome) if found else None


def _limit_from_buy(found: Found) -> Limit:
    return Limit(token_wei=found.outcome["bought"].uint or 0, with_token_wei=found.amount)


async def _max_buy(sim: Simulator, base_reserve: int, amount: int) -> Limit | None:
    sizes = [
        base_reserve * bps // 10_000 for bps in _UP_BPS if base_reserve * bps // 10_000 > amount
    ]
    found, failed = await ladder(sim, sizes, sim.buy_only, _bought_ok)
    if failed is None:
        return None
    start = found or Found(amount, (await sim.run_one(sim.buy_only(amount))))
    return _limit_from_buy(await refine(sim, start, failed, sim.buy_only, _bought_ok))


async def _max_buy_between(sim: Simulator, smaller: Bought, failed: int) -> Limit:
    return _limit_from_buy(
        await refine(
            sim, Found(smaller.amount_in, smaller.outcome), failed, sim.buy_only, _bought_ok
        )
    )


async def _partial_sell(sim: Simulator, amount_in: int, remaining: int) -> Found | None:
    sizes = sorted({remaining * ppm // 1_000_000 for ppm in _SELL_PPM} - {0})

    def plan_of(size: int) -> Plan:
        return sim.buy_then_sell(amount_in, size)

    return await largest_success(sim, sizes, plan_of, _sold_ok("buyer"))


def _limit_from_sell(found: Found, tag: str) -> Limit:
    o = found.outcome
    got = (o[f"{tag}.base_after"].uint or 0) - (o[f"{tag}.base_before"].uint or 0)
    return Limit(token_wei=found.amount, with_token_wei=max(0, got))


async def _max_sell(
    sim: Simulator, slot: BalanceSlot, token_reserve: int, remaining: int
) -> tuple[Limit | None, float | None]:
    """Large sells by a wallet handed tokens through a balance override."""
    sizes = [token_reserve * bps // 10_000 for bps in _BIG_SELL_BPS]
    sizes = [s for s in sizes if s > remaining]

    def plan_of(size: int) -> Plan:
        p = sim.plan()
        seller = fresh_address()
        token = sim.route.token
        p.block(
            3, {seller: {"balance": hex(10**30)}, token: {"stateDiff": slot.override(seller, size)}}
        )
        p.call(approve(token, seller, sim.route.dex.router))
        p.call(balance_of(token, seller, seller))
        sim.add_sell(p, seller, size, "big")
        return p

    found, failed = await ladder(sim, sizes, plan_of, _sold_ok("big"))
    if failed is None:
        return None, None
    if found is None:
        found = Found(remaining, (await sim.run_one(plan_of(remaining))))
        if not found.outcome["big.sell"].ok:
            return None, None
    best = await refine(sim, found, failed, plan_of, _sold_ok("big"))
    return _limit_from_sell(best, "big"), None

"""Classify what one owner call did to buyers, from a trial simulation and its baseline.

Both simulations run the same story (see :mod:`tokenrisk.simulate.powers`): wallets A
and B buy in block 1; in block 2 the candidate caller calls the function (the baseline
skips this call); in block 3 A sends 10% to a fresh wallet and sells the rest, and, if
that failed, tries a 0.1% sell; in block 4 B sells everything and a fresh wallet C buys.
Each step is marked, so an effect is a difference between the two outcomes:

=============================  ================================================
trial vs. baseline             effect
=============================  ================================================
supply grew, A diluted         ``owner_can_mint``
A's/pool's balance fell > 1%   ``owner_can_move_balances`` (beyond a proportional rebase)
A's small sell works, full not ``owner_can_limit_transactions``
A and B cannot sell, C no buy  ``owner_can_pause_trading``
A and B cannot sell            ``owner_can_block_sells``
only A cannot sell/transfer    ``owner_can_blacklist``
only C cannot buy              ``owner_can_block_buys`` (informational)
A's transfer fails only        ``owner_can_block_transfers``
A's sell tax rose              ``owner_can_set_sell_tax`` (>= 20%) or ``..._adjust_fees``
C's buy tax rose               ``owner_can_set_buy_tax`` (>= 20%) or ``..._adjust_fees``
owner getter changed           ``ownership_transferable``
=============================  ================================================

Pure: unit tests feed hand-built outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenrisk.findings import TAX_CHANGE_MIN, TAX_POWER_THRESHOLD, Evidence
from tokenrisk.simulate.accounting import shortfall
from tokenrisk.simulate.calls import quoted_amount
from tokenrisk.simulate.engine import Outcome

KEPT_SHARE = 0.99
"""A balance must keep less than this share of its value to count as moved (reflection
and share-based tokens round a few units either way when their bookkeeping changes)."""


@dataclass(frozen=True)
class Effect:
    """One classified change: a FINDINGS id, a sentence, and the before/after evidence."""

    kind: str
    detail: str
    evidence: tuple[Evidence, ...]


def _ok(o: Outcome, mark: str) -> bool:
    result = o.get(mark)
    return result is not None and result.ok


def _uint(o: Outcome, mark: str) -> int | None:
    result = o.get(mark)
    return result.uint if result is not None else None


def _reason(o: Outcome, mark: str) -> str:
    result = o.get(mark)
    return (result.reason or "failed") if result is not None else "not run"


def _state(o: Outcome, mark: str) -> str:
    return "ok" if _ok(o, mark) else _reason(o, mark)


def comparable(base: Outcome) -> bool:
    """A baseline is usable when both buys and both sells went through without the call."""
    return all(_ok(base, m) for m in ("a.buy", "b.buy", "a.sell", "b.sell"))


def classify(base: Outcome, trial: Outcome, *, v3: bool = False) -> list[Effect]:
    """Every effect of the trial's owner call (empty when the call reverted)."""
    if not _ok(trial, "call") or not comparable(base):
        return []
    effects = _supply_and_balances(trial)
    moved = any(e.kind == "owner_can_move_balances" for e in effects)
    if not moved:
        effects += _blocking(base, trial)
    effects += _taxes(base, trial, v3)
    effects += _ownership(base, trial)
    return effects


def _supply_and_balances(trial: Outcome) -> list[Effect]:
    """Mint and balance moves.  A rebase scales every balance with the supply, so new
    supply is a mint only when neither the buyer's nor the pool's balance grew with it."""
    effects: list[Effect] = []
    s0, s1 = _uint(trial, "supply0"), _uint(trial, "supply1")
    scale = s1 / s0 if s0 and s1 is not None else 1.0
    shared = any(
        (after or 0) > (before or 0)
        for before, after in (
            (_uint(trial, "a.bought"), _uint(trial, "a.held")),
            (_uint(trial, "pool0"), _uint(trial, "pool1")),
        )
    )
    if s0 is not None and s1 is not None and s1 > s0 and not shared:
        evidence = (Evidence("totalSupply", str(s0), str(s1)),)
        effects.append(Effect("owner_can_mint", f"total supply grew by {s1 - s0}", evidence))
    for who, before_mark, after_mark in (
        ("buyer", "a.bought", "a.held"),
        ("pool", "pool0", "pool1"),
    ):
        before, after = _uint(trial, before_mark), _uint(trial, after_mark)
        if before and after is not None and after / before < min(1.0, scale) * KEPT_SHARE:
            evidence = (Evidence(f"{who} balance", str(before), str(after)),)
            text = f"the {who}'s balance fell from {before} to {after} without the {who} acting"
            effects.append(Effect("owner_can_move_balances", text, evidence))
            break
    return effects


def _blocking(base: Outcome, trial: Outcome) -> list[Effect]:
    a_fails = not _ok(trial, "a.sell")
    b_fails = not _ok(trial, "b.sell")
    c_fails = _ok(base, "c.buy") and not _ok(trial, "c.buy")
    transfer_fails = _ok(base, "a.transfer") and not _ok(trial, "a.transfer")
    evidence = (
        Evidence("buyer sell", _state(base, "a.sell"), _state(trial, "a.sell")),
        Evidence("other wallet sell", _state(base, "b.sell"), _state(trial, "b.sell")),
        Evidence("new buy", _state(base, "c.buy"), _state(trial, "c.buy")),
        Evidence("buyer transfer", _state(base, "a.transfer"), _state(trial, "a.transfer")),
    )
    if a_fails and _ok(trial, "a_small.sell"):
        text = f"selling the whole balance fails ({_reason(trial, 'a.sell')}), a 0.1% sell works"
        return [Effect("owner_can_limit_transactions", text, evidence)]
    if a_fails and b_fails:
        if c_fails:
            text = f"buys and sells fail for every wallet ({_reason(trial, 'a.sell')})"
            return [Effect("owner_can_pause_trading", text, evidence)]
        return [
            Effect("owner_can_block_sells", f"sells fail: {_reason(trial, 'a.sell')}", evidence)
        ]
    if a_fails:
        text = f"the named buyer cannot sell ({_reason(trial, 'a.sell')}), another wallet can"
        return [Effect("owner_can_blacklist", text, evidence)]
    if c_fails:
        text = f"a new buy fails ({_reason(trial, 'c.buy')}) while holders can still sell"
        return [Effect("owner_can_block_buys", text, evidence)]
    if transfer_fails:
        text = f"a wallet transfer fails ({_reason(trial, 'a.transfer')}) while sells work"
        return [Effect("owner_can_block_transfers", text, evidence)]
    return []


def _taxes(base: Outcome, trial: Outcome, v3: bool) -> list[Effect]:
    effects: list[Effect] = []
    sell = _raised(_sell_tax(base, "a"), _sell_tax(trial, "a"))
    if sell is not None and _ok(trial, "a.sell"):
        effects.append(_tax_effect("sell", *sell, "owner_can_set_sell_tax"))
    buy = _raised(_buy_tax(base, v3), _buy_tax(trial, v3))
    if buy is not None:
        effects.append(_tax_effect("buy", *buy, "owner_can_set_buy_tax"))
    return effects


def _raised(before: float | None, after: float | None) -> tuple[float, float] | None:
    if before is None or after is None or after - before < TAX_CHANGE_MIN:
        return None
    return before, after


def _tax_effect(side: str, before: float, after: float, power: str) -> Effect:
    kind = power if after >= TAX_POWER_THRESHOLD else "owner_can_adjust_fees"
    evidence = (Evidence(f"{side} tax %", f"{before:.2f}", f"{after:.2f}"),)
    return Effect(kind, f"{side} tax raised from {before:.2f}% to {after:.2f}%", evidence)


def _sell_tax(o: Outcome, tag: str) -> float | None:
    """Token-unit sell tax: the seller's balance decrease that did not reach the pool."""
    marks = ("seller_before", "seller_after", "pool_before", "pool_after")
    values = [_uint(o, f"{tag}.{m}") for m in marks]
    if any(v is None for v in values):
        return None
    before, after, p0, p1 = (v or 0 for v in values)
    return shortfall(before - after, p1 - p0)


def _buy_tax(o: Outcome, v3: bool) -> float | None:
    quote, got = o.get("c.quote"), _uint(o, "c.bought")
    if quote is None or not quote.ok or got is None or not _ok(o, "c.buy"):
        return None
    expected = quoted_amount(quote.data, v3)
    return shortfall(expected, got)


def _ownership(base: Outcome, trial: Outcome) -> list[Effect]:
    before, after = base.get("owner1"), trial.get("owner1")
    if before is None or after is None or not (before.ok and after.ok):
        return []
    if before.data.lower() == after.data.lower():
        return []
    was, now = "0x" + before.data[-40:], "0x" + after.data[-40:]
    evidence = (Evidence("owner()", was, now),)
    return [Effect("ownership_transferable", f"the owner getter changed to {now}", evidence)]

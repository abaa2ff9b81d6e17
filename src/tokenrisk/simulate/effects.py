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

ARMED_TAX = 50.0
"""A tax at or above this (percent) that one call takes back is an armed trap."""
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


def holding(o: Outcome) -> bool:
    """A and B hold tokens after block 1 (they bought them, or, when no buy works, were
    given them as existing holders are)."""
    return all((_uint(o, m) or 0) > 0 for m in ("a.bought", "b.bought"))


def comparable(base: Outcome) -> bool:
    """A baseline is usable when A and B hold tokens and both sells went through."""
    return holding(base) and all(_ok(base, m) for m in ("a.sell", "b.sell"))


def classify(
    base: Outcome, trial: Outcome, *, v3: bool = False, armed: bool = False
) -> list[Effect]:
    """Every effect of the trial's owner call (empty when the call reverted).

    With a working baseline, what the call broke; with an armed trap (``armed``: nobody
    could buy, A and B hold given positions, and their sells fail), what the call
    repaired: a caller that can reopen sells holds the switch that closed them.  Sells
    that fail only after a buy (a cooldown a node's simulation cannot wait out) are not
    read as armed.  Balances and supply are compared whenever A and B hold tokens.
    """
    if not _ok(trial, "call") or not holding(base):
        return []
    effects = _supply_and_balances(trial)
    moved = any(e.kind == "owner_can_move_balances" for e in effects)
    if comparable(base):
        effects += [] if moved else _blocking(base, trial)
        effects += _taxes(base, trial, v3)
    elif armed and comparable(trial):
        effects += _released(base, trial)
    effects += _ownership(base, trial)
    return effects


def _supply_and_balances(trial: Outcome) -> list[Effect]:
    """Mint and balance moves, wherever the tokens land (the buyer, the pool, the caller
    itself, a neutral wallet, the token contract).  A rebase scales every balance with
    the supply, so it is neither a mint nor a move."""
    s0, s1 = _uint(trial, "supply0"), _uint(trial, "supply1")
    scale = s1 / s0 if s0 and s1 is not None else 1.0
    if s0 is None or s1 is None or _rebased(trial, scale):
        return _moved(trial, 1.0) if s0 is None or s1 is None else []
    effects: list[Effect] = []
    gained = _gains(trial)
    if s1 > s0:
        evidence = (Evidence("totalSupply", str(s0), str(s1)), *_gain_evidence(trial))
        effects.append(Effect("owner_can_mint", f"total supply grew by {s1 - s0}", evidence))
    elif gained > max(1, s0 // HIDDEN_MINT_SHARE):
        evidence = (Evidence("totalSupply", str(s0), str(s1)), *_gain_evidence(trial))
        text = f"balances grew by {gained} while the total supply did not (a hidden mint)"
        effects.append(Effect("owner_can_mint", text, evidence))
    return effects + _moved(trial, min(1.0, scale))


HIDDEN_MINT_SHARE = 10_000
"""Balances growing by more than 1/this of the supply with no supply growth is a mint."""
_WATCHED = (
    ("buyer", "a.bought", "a.held"),
    ("pool", "pool0", "pool1"),
    ("caller", "caller0", "caller1"),
    ("neutral wallet", "neutral0", "neutral1"),
    ("token contract", "self0", "self1"),
)
"""Balances read before and after the call: who could gain or lose by it."""


def _deltas(trial: Outcome) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for who, before_mark, after_mark in _WATCHED:
        before, after = _uint(trial, before_mark), _uint(trial, after_mark)
        if before is not None and after is not None:
            out.append((who, before, after))
    return out


def _gains(trial: Outcome) -> int:
    """What the watched balances gained beyond what they lost (new tokens, in units)."""
    return sum(after - before for _, before, after in _deltas(trial))


def _gain_evidence(trial: Outcome) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(f"{who} balance", str(before), str(after))
        for who, before, after in _deltas(trial)
        if after > before
    )


def _rebased(trial: Outcome, scale: float) -> bool:
    """The supply changed and both the buyer's and the pool's balances followed it."""
    if scale == 1.0:
        return False
    pairs = [(_uint(trial, "a.bought"), _uint(trial, "a.held"))]
    pairs.append((_uint(trial, "pool0"), _uint(trial, "pool1")))
    return all(b and a is not None and abs(a / b - scale) <= 0.01 * scale for b, a in pairs)


def _moved(trial: Outcome, scale: float) -> list[Effect]:
    for who, before_mark, after_mark in _WATCHED[:2]:
        before, after = _uint(trial, before_mark), _uint(trial, after_mark)
        if before and after is not None and after / before < scale * KEPT_SHARE:
            evidence = (Evidence(f"{who} balance", str(before), str(after)),)
            text = f"the {who}'s balance fell from {before} to {after} without the {who} acting"
            return [Effect("owner_can_move_balances", text, evidence)]
    return []


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


def _released(base: Outcome, trial: Outcome) -> list[Effect]:
    """An armed trap the call undid: sells fail in the baseline and work after it."""
    if _ok(base, "a.sell") or _ok(base, "b.sell"):
        return []
    evidence = (
        Evidence("buyer sell", _state(base, "a.sell"), _state(trial, "a.sell")),
        Evidence("other wallet sell", _state(base, "b.sell"), _state(trial, "b.sell")),
        Evidence("new buy", _state(base, "c.buy"), _state(trial, "c.buy")),
    )
    why = _reason(base, "a.sell")
    if not _ok(base, "c.buy") and _ok(trial, "c.buy"):
        text = (
            f"trading is stopped now ({why}); this caller's call reopened it: it holds the switch"
        )
        return [Effect("owner_can_pause_trading", text, evidence)]
    text = f"sells fail now ({why}); this call made them work: the caller holds the switch"
    return [Effect("owner_can_block_sells", text, evidence)]


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
    """(before, after) when the call raised the tax, or lowered an armed one (a tax of
    :data:`ARMED_TAX` or more that the caller can take back is the caller's to set; a
    lower one brought down, e.g. by unlisting the pool, is no harm); else None."""
    if before is None or after is None or abs(after - before) < TAX_CHANGE_MIN:
        return None
    if after < before and before < ARMED_TAX:
        return None
    return before, after


def _tax_effect(side: str, before: float, after: float, power: str) -> Effect:
    kind = power if max(before, after) >= TAX_POWER_THRESHOLD else "owner_can_adjust_fees"
    evidence = (Evidence(f"{side} tax %", f"{before:.2f}", f"{after:.2f}"),)
    verb = "raised" if after > before else "lowered (it is the caller's to set)"
    return Effect(kind, f"{side} tax {verb} from {before:.2f}% to {after:.2f}%", evidence)


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
    expected = quoted_amount(quote.data, v3, o.quotes.get("c.quote"))
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

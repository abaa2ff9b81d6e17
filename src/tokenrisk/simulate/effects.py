"""What one owner call did to buyers: a trial simulation and its baseline read into
:class:`tokenrisk.findings.Observed`, then every finding's rule run on it.

Both simulations run the same story (see :mod:`tokenrisk.simulate.powers`): wallets A
and B buy in block 1; in block 2 the candidate caller calls the function (the baseline
skips this call); in block 3 A sends 10% to a fresh wallet and sells the rest, and, if
that failed, tries a 0.1% sell; in block 4 B sells everything and a fresh wallet C buys.
Each step is marked, so an effect is a difference between the two outcomes.  Which
difference is which finding is the finding's own ``detect`` rule, defined beside its
meaning in :data:`tokenrisk.findings.FINDINGS`; this module measures what the rules
share: supply and balance moves (rebase-aware), and the sell and buy taxes.

Pure: unit tests feed hand-built outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from tokenrisk.findings import FINDINGS, TAX_CHANGE_MIN, Evidence, Observed, Shown
from tokenrisk.simulate.accounting import shortfall
from tokenrisk.simulate.calls import quoted_amount
from tokenrisk.simulate.simulator import Outcome

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


class _Marks:
    """An :class:`Outcome` as :class:`tokenrisk.findings.Marks` (what detection reads).
    Each mark's ``ok``, ``uint`` and ``reason`` are kept once read: the findings' rules
    read the same marks many times, and one baseline's marks are read for every trial
    (outcomes are immutable).  A first read is told by a membership test, not by a
    ``KeyError``: most reads of a trial's marks are first reads, and raising and
    catching one cost more than the read itself (issue #27: every trial of a first
    scan is classified, the last ones after the check's last reply)."""

    __slots__ = ("outcome", "_oks", "_uints", "_reasons")

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self._oks: dict[str, bool] = {}
        self._uints: dict[str, int | None] = {}
        self._reasons: dict[str, str] = {}

    def ok(self, mark: str) -> bool:
        known = self._oks.get(mark)
        if known is None:
            known = self._oks[mark] = _ok(self.outcome, mark)
        return known

    def reason(self, mark: str) -> str:
        known = self._reasons.get(mark)
        if known is None:
            known = self._reasons[mark] = _reason(self.outcome, mark)
        return known

    def state(self, mark: str) -> str:
        return "ok" if self.ok(mark) else self.reason(mark)

    def uint(self, mark: str) -> int | None:
        uints = self._uints
        if mark in uints:
            return uints[mark]
        known = uints[mark] = _uint(self.outcome, mark)
        return known

    def gas(self, mark: str) -> int | None:
        result = self.outcome.get(mark)
        return result.gas if result is not None and result.ok else None


def observe(
    base: Outcome, trial: Outcome, *, v3: bool = False, armed: bool = False, v4: bool = False
) -> Observed:
    """What the trial's owner call changed, for the findings' rules to read.

    With a working baseline, everything (``path`` "compared"); with an armed trap
    (``armed``: nobody could buy, A and B hold given positions, and their sells fail),
    what the call repaired (``path`` "released"): a caller that can reopen sells holds
    the switch that closed them.  Sells that fail only after a buy (a cooldown a node's
    simulation cannot wait out) are not read as armed.  Balances and supply are compared
    whenever A and B hold tokens.
    """
    return _observed(_Baseline(base, v3, v4), trial, armed)


class _Baseline:
    """What every trial of one scan compares with, read from the baseline once: whether
    it is comparable, and its sell and buy taxes (each trial's classification read them
    again, ~35 times per first scan, after the trials' last reply: issue #27)."""

    def __init__(self, base: Outcome, v3: bool, v4: bool) -> None:
        self.base, self.v3, self.v4 = base, v3, v4
        self.holding, self.comparable = holding(base), comparable(base)
        self.marks = _Marks(base)  # shared by every trial's Observed

    # each read the first time a trial needs it (as before, only for a comparable baseline)
    @cached_property
    def sell_tax(self) -> float | None:
        return _sell_tax(self.marks, "a")

    @cached_property
    def sell_loss(self) -> float | None:
        return _sell_loss(self.marks, "a")

    @cached_property
    def buy_tax(self) -> float | None:
        return _buy_tax(self.marks, self.v3)


def _observed(known: _Baseline, outcome: Outcome, armed: bool) -> Observed:
    trial = _Marks(outcome)  # each mark read once, by these rules and the findings'
    minted, moved = _supply_and_balances(trial)
    path = ""
    if known.comparable:
        path = "compared"
    elif armed and comparable(outcome):
        path = "released"
    taxes = _taxes(known, trial) if path == "compared" else (None, None)
    return Observed(known.marks, trial, path, minted, moved, *taxes)


def classify(
    base: Outcome, trial: Outcome, *, v3: bool = False, armed: bool = False, v4: bool = False
) -> list[Effect]:
    """Every effect of the trial's owner call, in report order (empty when the call
    reverted or A and B hold nothing to compare): each finding's ``detect`` on
    :func:`observe`'s reading."""
    return _classified(_Baseline(base, v3, v4), trial, armed)


def _classified(known: _Baseline, trial: Outcome, armed: bool) -> list[Effect]:
    if not _ok(trial, "call") or not known.holding:
        return []
    seen = _observed(known, trial, armed)
    return [
        Effect(kind, detail, evidence)
        for kind, detect in _RULES
        for detail, evidence in detect(seen)
    ]


_RULES = tuple((k.id, k.detect) for k in FINDINGS.values() if k.detect is not None)
"""Each finding's ``detect`` rule, in report order (every trial runs them all)."""


class Classifier:
    """:func:`classify` against one baseline, each trial's answer kept for as long as
    this object lives (one scan's trials): the scan asks it twice of every trial (is
    the call harmless, to pair it with a switch; then its findings), after the trials'
    last reply, on the check's critical path (issue #27).  Outcomes are immutable, so
    the same trial object always classifies the same; it is kept with its answer, so
    its identity is not reused meanwhile."""

    def __init__(self, base: Outcome, *, v3: bool = False, armed: bool = False, v4: bool = False):
        self.base, self.v3, self.armed, self.v4 = base, v3, armed, v4
        self._known = _Baseline(base, v3, v4)
        self._seen: dict[int, tuple[Outcome, tuple[Effect, ...]]] = {}

    def __call__(self, trial: Outcome) -> list[Effect]:
        known = self._seen.get(id(trial))
        if known is None or known[0] is not trial:
            found = _classified(self._known, trial, self.armed)
            known = self._seen[id(trial)] = (trial, tuple(found))
        return list(known[1])


def _supply_and_balances(trial: _Marks) -> tuple[Shown | None, Shown | None]:
    """Mint and balance moves, wherever the tokens land (the buyer, the pool, the caller
    itself, a neutral wallet, the token contract).  A rebase scales every balance with
    the supply, so it is neither a mint nor a move."""
    s0, s1 = trial.uint("supply0"), trial.uint("supply1")
    scale = s1 / s0 if s0 and s1 is not None else 1.0
    if s0 is None or s1 is None or _rebased(trial, scale):
        return None, _moved(trial, 1.0) if s0 is None or s1 is None else None
    minted: Shown | None = None
    deltas = _deltas(trial)  # read once: the gains, and their evidence when minted
    gained = sum(after - before for _, before, after in deltas)
    if s1 > s0:
        evidence = (Evidence("totalSupply", str(s0), str(s1)), *_gain_evidence(deltas))
        minted = (f"total supply grew by {s1 - s0}", evidence)
    elif gained > max(1, s0 // HIDDEN_MINT_SHARE):
        evidence = (Evidence("totalSupply", str(s0), str(s1)), *_gain_evidence(deltas))
        minted = (
            f"balances grew by {gained} while the total supply did not (a hidden mint)",
            evidence,
        )
    return minted, _moved(trial, min(1.0, scale))


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


def _deltas(trial: _Marks) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for who, before_mark, after_mark in _WATCHED:
        before, after = trial.uint(before_mark), trial.uint(after_mark)
        if before is not None and after is not None:
            out.append((who, before, after))
    return out


def _gain_evidence(deltas: list[tuple[str, int, int]]) -> tuple[Evidence, ...]:
    """The watched balances that grew (``deltas``: :func:`_deltas`), as evidence."""
    return tuple(
        Evidence(f"{who} balance", str(before), str(after))
        for who, before, after in deltas
        if after > before
    )


def _rebased(trial: _Marks, scale: float) -> bool:
    """The supply changed and both the buyer's and the pool's balances followed it."""
    if scale == 1.0:
        return False
    pairs = [(trial.uint("a.bought"), trial.uint("a.held"))]
    pairs.append((trial.uint("pool0"), trial.uint("pool1")))
    return all(b and a is not None and abs(a / b - scale) <= 0.01 * scale for b, a in pairs)


def _moved(trial: _Marks, scale: float) -> Shown | None:
    for who, before_mark, after_mark in _WATCHED[:2]:
        before, after = trial.uint(before_mark), trial.uint(after_mark)
        if before and after is not None and after / before < scale * KEPT_SHARE:
            evidence = (Evidence(f"{who} balance", str(before), str(after)),)
            return (
                f"the {who}'s balance fell from {before} to {after} without the {who} acting",
                evidence,
            )
    return None


def _taxes(
    known: _Baseline, trial: _Marks
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The sell and the buy tax (before, after) when the call changed them; on a V4
    pool, a sell whose token units moved whole is read by what the seller received.
    A side the baseline has no tax for is not read of the trial: :func:`_raised` is
    None for it whatever the trial's (its quote decoding skipped, issue #27)."""
    sell = _changed(known.sell_tax, _sell_tax, trial, "a")
    if sell is None and known.v4:
        sell = _changed(known.sell_loss, _sell_loss, trial, "a")
    buy = _raised(known.buy_tax, _buy_tax(trial, known.v3)) if known.buy_tax is not None else None
    return sell, buy


def _changed(
    before: float | None, read: Callable[[_Marks, str], float | None], trial: _Marks, tag: str
) -> tuple[float, float] | None:
    """:func:`_raised` of the trial's tax ``read``, read only when there is a ``before``."""
    return None if before is None else _raised(before, read(trial, tag))


def _raised(before: float | None, after: float | None) -> tuple[float, float] | None:
    """(before, after) when the call raised the tax, or lowered an armed one (a tax of
    :data:`ARMED_TAX` or more that the caller can take back is the caller's to set; a
    lower one brought down, e.g. by unlisting the pool, is no harm); else None."""
    if before is None or after is None or abs(after - before) < TAX_CHANGE_MIN:
        return None
    if after < before and before < ARMED_TAX:
        return None
    return before, after


def _sell_tax(o: _Marks, tag: str) -> float | None:
    """Token-unit sell tax: the seller's balance decrease that did not reach the pool."""
    marks = ("seller_before", "seller_after", "pool_before", "pool_after")
    values = [o.uint(f"{tag}.{m}") for m in marks]
    if any(v is None for v in values):
        return None
    before, after, p0, p1 = (v or 0 for v in values)
    return shortfall(before - after, p1 - p0)


def _sell_loss(o: _Marks, tag: str) -> float | None:
    """V4: the base token the seller received short of the quote (the pool's own curve
    and LP fee, read right before the sell, without its hook)."""
    quote, before, after = (
        o.outcome.get(f"{tag}.quote"),
        o.uint(f"{tag}.base_before"),
        o.uint(f"{tag}.base_after"),
    )
    if quote is None or not quote.ok or before is None or after is None or not o.ok(f"{tag}.sell"):
        return None
    return shortfall(
        quoted_amount(quote.data, False, o.outcome.quotes.get(f"{tag}.quote")), after - before
    )


def _buy_tax(o: _Marks, v3: bool) -> float | None:
    quote, got = o.outcome.get("c.quote"), o.uint("c.bought")
    if quote is None or not quote.ok or got is None or not o.ok("c.buy"):
        return None
    expected = quoted_amount(quote.data, v3, o.outcome.quotes.get("c.quote"))
    return shortfall(expected, got)

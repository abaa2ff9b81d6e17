"""Owner-power findings, each defined once: id, severity, meaning, advice, how it is
found, the devnet tokens that show it, and its detection rule over a trial.

Like a slither detector, every kind of finding the owner-power scan
(:mod:`tokenrisk.simulate.powers`) can report is one entry of :data:`FINDINGS`: the
scan runs each entry's ``detect`` on what a trial changed (:class:`Observed`, read from
the simulations by :mod:`tokenrisk.simulate.effects`), the risk rubric takes the
severity from here, ``docs/owner-powers.md`` prints the same rows (a unit test compares
them), the page and the CLI report show the title and the advice.  A finding's id is
also its summary flag id.  Pure: no I/O, no project import.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Protocol


class Marks(Protocol):
    """One simulation's marked steps, as detection reads them (the engine's ``Outcome``
    through :mod:`tokenrisk.simulate.effects`): did the step work, why not, its uint
    result, the gas it used."""

    def ok(self, mark: str) -> bool: ...

    def reason(self, mark: str) -> str: ...

    def state(self, mark: str) -> str: ...  # "ok", or why it failed

    def uint(self, mark: str) -> int | None: ...

    def gas(self, mark: str) -> int | None: ...


@dataclass(frozen=True)
class Observed:
    """What one owner call changed for buyers: a trial and its baseline (the same story
    without the call), plus what :mod:`tokenrisk.simulate.effects` measured from both.

    The story (``simulate/story.py``): wallets A and B buy (block 1); the candidate
    caller calls the function (block 2, the trial only); A sends 10% to a fresh wallet
    and sells the rest, then, if that failed, tries a 0.1% sell (``a_small``); B sells
    everything and a fresh wallet C buys (block 4).  ``path`` says what can be compared:
    ``"compared"`` (the baseline's sells worked), ``"released"`` (an armed trap: nobody
    could buy, A and B hold given positions, their sells fail in the baseline and work
    in the trial) or ``""`` (only supply, balances and the owner getter).
    """

    base: Marks
    trial: Marks
    path: str = ""
    minted: Shown | None = None  # supply (or, hidden, the watched balances) grew
    moved: Shown | None = None  # the buyer's or the pool's balance fell without them acting
    sell_tax: tuple[float, float] | None = None  # A's sell tax raised (or an armed one undone)
    buy_tax: tuple[float, float] | None = None  # C's buy tax raised (or an armed one undone)

    def fails(self, mark: str) -> bool:
        """``mark`` worked in the baseline and failed in the trial."""
        return self.base.ok(mark) and not self.trial.ok(mark)

    @property
    def blocking(self) -> bool:
        """Failures can be read as the call's doing: the baseline sold, no balance moved
        (a taken balance makes every later step fail; that is its own finding)."""
        return self.path == "compared" and self.moved is None

    def evidence(self, *marks: tuple[str, str]) -> tuple[Evidence, ...]:
        """``(what, mark)`` pairs as before/after evidence of the step's state."""
        return tuple(Evidence(w, self.base.state(m), self.trial.state(m)) for w, m in marks)


Shown = tuple[str, tuple["Evidence", ...]]
"""What a detection found: one sentence with the measured numbers, and the evidence."""
Detect = Callable[[Observed], list[Shown]]


@dataclass(frozen=True)
class FindingKind:
    """One kind of finding, defined once (slither-style): what it means, what a buyer
    should do, how it is found (``detection``, printed by docs/owner-powers.md), the
    devnet tokens that show it (the catalogue proves them), and ``detect``, the rule over
    one trial (None for kinds found otherwise: bytecode layout, proxy upgrades, later
    sells, renounced ownership; ``detection`` says where)."""

    id: str
    severity: str  # info, low, medium, high, critical (risk.SEVERITY_INDEX)
    title: str
    meaning: str
    advice: str
    detection: str
    devnet: tuple[str, ...] = ()
    confidence: str = "simulated"  # simulated, or "simulated or static" (layout evidence)
    detect: Detect | None = field(default=None, compare=False, repr=False)

    @property
    def anchor(self) -> str:
        """Where the docs explain it: ``docs/owner-powers.md#<id>``."""
        return f"docs/owner-powers.md#{self.id.replace('_', '-')}"


TAX_POWER_THRESHOLD: Final = 20.0
"""A tax an owner can reach at or above this (percent) is a power, below it a fee tweak."""
TAX_CHANGE_MIN: Final = 1.0
"""Tax changes smaller than this (percentage points) are measurement noise."""
SELL_GAS_GROWTH: Final = 3
SELL_GAS_EXTRA: Final = 1_000_000
"""A sell costing this many times its baseline gas, and this much more gas, after an
owner call is a gas trap: wallets estimate from an earlier sell and run out of gas."""


def _if(found: bool, detail: str, evidence: tuple[Evidence, ...]) -> list[Shown]:
    return [(detail, evidence)] if found else []


def _blocked_if(found: bool, detail: str, o: Observed) -> list[Shown]:
    """``_if`` with the blocking evidence, read only when found: every trial runs every
    rule, and most find nothing (issue #27: the scan's last step is on the critical
    path)."""
    return [(detail, _blocking_evidence(o))] if found else []


def _sells(o: Observed) -> tuple[Evidence, ...]:
    return o.evidence(("buyer sell", "a.sell"), ("other wallet sell", "b.sell"))


def _blocking_evidence(o: Observed) -> tuple[Evidence, ...]:
    return _sells(o) + o.evidence(("new buy", "c.buy"), ("buyer transfer", "a.transfer"))


def _sell_blocked(o: Observed, everyone: bool, buys: bool) -> bool:
    """A's full sell fails and no small one works; B's sell fails too (``everyone``) or
    still works; C's buy fails too (``buys``) or still works."""
    t = o.trial
    return (
        o.blocking
        and not t.ok("a.sell")
        and not t.ok("a_small.sell")
        and t.ok("b.sell") != everyone
        and o.fails("c.buy") == buys
    )


def _released(o: Observed, buys: bool) -> list[Shown]:
    """An armed trap the call undid: sells fail in the baseline and work after it; C's
    buy reopened too (``buys``: trading was stopped) or not."""
    base = o.base
    if o.path != "released" or base.ok("a.sell") or base.ok("b.sell"):
        return []
    if (not base.ok("c.buy") and o.trial.ok("c.buy")) != buys:
        return []
    why = base.reason("a.sell")
    evidence = _sells(o) + o.evidence(("new buy", "c.buy"))
    if buys:
        text = (
            f"trading is stopped now ({why}); this caller's call reopened it: it holds the switch"
        )
    else:
        text = f"sells fail now ({why}); this call made them work: the caller holds the switch"
    return [(text, evidence)]


def _block_sells(o: Observed) -> list[Shown]:
    text = f"sells fail: {o.trial.reason('a.sell')}"
    found = _blocked_if(_sell_blocked(o, everyone=True, buys=False), text, o)
    return found + _released(o, buys=False)


def _blacklist(o: Observed) -> list[Shown]:
    found = o.blocking and not o.trial.ok("a.sell") and not o.trial.ok("a_small.sell")
    text = f"the named buyer cannot sell ({o.trial.reason('a.sell')}), another wallet can"
    return _blocked_if(found and o.trial.ok("b.sell"), text, o)


def _pause(o: Observed) -> list[Shown]:
    text = f"buys and sells fail for every wallet ({o.trial.reason('a.sell')})"
    found = _blocked_if(_sell_blocked(o, everyone=True, buys=True), text, o)
    return found + _released(o, buys=True)


def _limit(o: Observed) -> list[Shown]:
    found = o.blocking and not o.trial.ok("a.sell") and o.trial.ok("a_small.sell")
    text = f"selling the whole balance fails ({o.trial.reason('a.sell')}), a 0.1% sell works"
    return _blocked_if(found, text, o)


def _block_buys(o: Observed) -> list[Shown]:
    found = o.blocking and o.trial.ok("a.sell") and o.fails("c.buy")
    text = f"a new buy fails ({o.trial.reason('c.buy')}) while holders can still sell"
    return _blocked_if(found, text, o)


def _block_transfers(o: Observed) -> list[Shown]:
    """A's wallet transfer fails after the call while its sell (and C's buy) still work;
    or, armed, the transfer fails in the baseline and works after the call: the caller
    holds the switch (as :func:`_released` reads a sell block)."""
    t, base = o.trial, o.base
    if not (o.blocking and t.ok("a.sell") and not o.fails("c.buy")):
        return []
    if o.fails("a.transfer"):
        text = f"a wallet transfer fails ({t.reason('a.transfer')}) while sells work"
        return [(text, _blocking_evidence(o))]
    released = not base.ok("a.transfer") and t.ok("a.transfer")
    why = base.reason("a.transfer")
    text = (
        f"wallet transfers fail now ({why}); this call made them work: the caller holds the switch"
    )
    return _blocked_if(released, text, o)


def _tax(side: str, change: tuple[float, float] | None, power: bool) -> list[Shown]:
    """A tax change the call made, when it reaches :data:`TAX_POWER_THRESHOLD`
    (``power``) or stays below it (a fee tweak)."""
    if change is None or (max(change) >= TAX_POWER_THRESHOLD) != power:
        return []
    before, after = change
    verb = "raised" if after > before else "lowered (it is the caller's to set)"
    evidence = (Evidence(f"{side} tax %", f"{before:.2f}", f"{after:.2f}"),)
    return [(f"{side} tax {verb} from {before:.2f}% to {after:.2f}%", evidence)]


def _sell_tax(o: Observed, power: bool) -> list[Shown]:
    return _tax("sell", o.sell_tax if o.trial.ok("a.sell") else None, power)


def _ownership(o: Observed) -> list[Shown]:
    before, after = o.base.uint("owner1"), o.trial.uint("owner1")
    if before is None or after is None or before == after:
        return []
    was, now = f"0x{before % 2**160:040x}", f"0x{after % 2**160:040x}"
    return [(f"the owner getter changed to {now}", (Evidence("owner()", was, now),))]


def _sell_gas(o: Observed) -> list[Shown]:
    """B's sell uses far more gas after the call.  A call that brings an armed gas cost
    down is not read as the power (an owner unlisting the pool lowers any sell's cost);
    an armed trap's gas is today's sell gas, in the journey's answer."""
    before, after = o.base.gas("b.sell"), o.trial.gas("b.sell")
    if not o.blocking or before is None or after is None or not o.trial.ok("b.sell"):
        return []
    found = after >= SELL_GAS_GROWTH * before and after - before >= SELL_GAS_EXTRA
    text = f"a sell now uses {after:,} gas instead of {before:,}"
    return _if(found, text, (Evidence("other wallet sell gas", str(before), str(after)),))


FINDINGS: Final[dict[str, FindingKind]] = {
    k.id: k
    for k in (
        FindingKind(
            "owner_can_block_sells",
            "high",
            "Owner can block all sells",
            "After one owner call, a fresh buyer and a second wallet both failed to sell, "
            "while buying still worked.",
            "Treat it as a honeypot waiting for a trigger; buy only what you can lose.",
            "trial: A's and B's sells fail after the call (or, armed, work only after it)",
            ("max-wallet",),
            detect=_block_sells,
        ),
        FindingKind(
            "owner_can_blacklist",
            "high",
            "Owner can block a chosen wallet",
            "After an owner call naming the buyer, that buyer could not sell (or transfer) "
            "while another wallet still could.",
            "Any holder can be singled out and trapped; avoid holding it.",
            "trial naming A: A cannot sell or transfer, B still sells",
            (
                "latent-botlist",
                "sniper-blacklist",
                "role-freeze-renounced",
                "swap-cap-guard",
                "multisig-blocklist",
            ),
            detect=_blacklist,
        ),
        FindingKind(
            "owner_can_set_sell_tax",
            "high",
            "Owner can raise the sell tax",
            "After an owner call (on the token, or on its pool's V4 hook), the buyer's sell "
            "lost a much larger share (20% or more) than before.",
            "The exit price is the owner's choice; check the tax right before selling.",
            "trial: A's token-unit sell tax (on a V4 pool also what A received against the "
            "pool's curve without its hook) moves by 1 point or more and reaches 20 % (or an "
            "armed tax of 50 % or more is taken back)",
            (
                "latent-fee",
                "latent-hidden-keeper",
                "packed-manager",
                "two-step-fee",
                "timelock-short-fee",
                "shared-cap-fees",
                "v4-hook-owner-fee",
            ),
            detect=lambda o: _sell_tax(o, power=True),
        ),
        FindingKind(
            "owner_can_set_buy_tax",
            "medium",
            "Owner can raise the buy tax",
            "After an owner call, a new buyer received 20% or more fewer tokens than before.",
            "Check the buy tax right before buying.",
            "trial: C's buy gets 20 % or more fewer tokens than quoted",
            ("fee-raise", "latent-fee", "v4-dynamic-fee-raise"),
            detect=lambda o: _tax("buy", o.buy_tax, power=True),
        ),
        FindingKind(
            "owner_can_pause_trading",
            "high",
            "Owner can stop trading",
            "After an owner call, buying and selling both failed for every wallet tried.",
            "Holders can be frozen at any time; buy only what you can lose.",
            "trial: sells and C's buy all fail (or, armed, all work only after the call)",
            ("latent-trading-switch", "latent-pause", "paused"),
            detect=_pause,
        ),
        FindingKind(
            "owner_can_block_transfers",
            "medium",
            "Owner can block wallet transfers",
            "After an owner call, a wallet-to-wallet transfer failed while selling still worked.",
            "Tokens may not be movable to another wallet (or a safer exchange).",
            "trial: A's wallet transfer fails, sells work (or, armed, it works only after the "
            "call)",
            ("latent-hop-guard",),
            detect=_block_transfers,
        ),
        FindingKind(
            "owner_can_mint",
            "high",
            "Owner can mint new tokens",
            "An owner call increased the total supply.",
            "New tokens can be sold into the pool at any time, draining its value.",
            "trial: total supply grows (not a rebase), or watched balances (caller, neutral "
            "wallet, A, pool, token) grow without it (hidden mint); the caller then sells the "
            "new tokens (pool's loss); static: a guarded write of the supply",
            ("latent-mint", "hidden-mint"),
            "simulated or static",
            detect=lambda o: [o.minted] if o.minted else [],
        ),
        FindingKind(
            "owner_can_move_balances",
            "critical",
            "Owner can take or rewrite balances",
            "An owner call lowered the buyer's balance without the buyer doing anything.",
            "Holdings can be taken away; do not hold this token.",
            "trial: A's or the pool's balance falls without them acting (also through "
            "transferFrom/burnFrom without allowance); static: a guarded write of the balance "
            "mapping",
            ("latent-rewrite", "siphon", "transferfrom-backdoor"),
            "simulated or static",
            detect=lambda o: [o.moved] if o.moved else [],
        ),
        FindingKind(
            "owner_can_limit_transactions",
            "medium",
            "Owner can limit transaction sizes",
            "After an owner call, selling the whole balance failed while a small sell "
            "still worked: a max transaction size can be set.",
            "Large positions may have to leave in many small sells.",
            "trial: A's 99 % sell fails, a 0.1 % sell works",
            ("latent-sell-cap",),
            detect=_limit,
        ),
        FindingKind(
            "owner_can_raise_sell_gas",
            "medium",
            "Owner can make sells run out of gas",
            "After an owner call, a wallet's sell still went through but used at least three "
            "times the gas, and a million more, than before.",
            "A wallet that estimates gas from an earlier sell fails; set a high gas limit "
            "and check the cost right before selling.",
            "trial: B's sell uses 3 times its baseline gas and 1,000,000 more",
            ("latent-sell-gas",),
            detect=_sell_gas,
        ),
        FindingKind(
            "owner_can_change_transfer_rules",
            "medium",
            "Owner can change what every transfer checks",
            "Read from the bytecode: a function guarded by a stored address writes a value "
            "every transfer reads (a fee, a limit, a list), and no simulation could call it.",
            "The rules of selling can change; check them right before selling.",
            "static only: a guarded write of a value transfers read (simulate/layout.py)",
            ("deep-keeper",),
            "simulated or static",
        ),
        FindingKind(
            "owner_can_upgrade",
            "medium",
            "Owner can replace the token's code",
            "The token is a proxy whose admin can point it at new code; an upgrade tried "
            "with hostile arguments changed what buyers experience.",
            "Today's simulation says nothing about the code after an upgrade.",
            "trial of the proxy's own function changes what buyers see (its worst finding, "
            "renamed by simulate/powers.py)",
            ("proxy-verified",),
        ),
        FindingKind(
            "sell_fails_in_future",
            "critical",
            "Sells fail later without any owner action",
            "The same buyer's sell works now but fails when simulated 1 hour, 1 day, "
            "7 days or 30 days later.",
            "A time bomb: holders are trapped once the time passes.",
            "A's sell 1 h, 1 d, 7 d, 30 d later, by time and by block count (simulate/powers.py)",
            ("latent-slow-fuse",),
        ),
        FindingKind(
            "owner_can_block_buys",
            "info",
            "Owner can stop new buys",
            "After an owner call, a new buy failed while holders could still sell.",
            "Holders are not trapped by it; new buyers may be kept out.",
            "trial: only C's buy fails",
            ("swap-cap-guard", "latent-botlist"),
            detect=_block_buys,
        ),
        FindingKind(
            "owner_can_adjust_fees",
            "info",
            "Owner can change fees within a small range",
            "An owner call changed a tax, but no argument tried took it to 20%.",
            "Usually a capped fee setter; nothing to do.",
            "trial: a tax moves by 1 point or more but stays below 20 %",
            ("swapback-tax",),
            detect=lambda o: _sell_tax(o, power=False) + _tax("buy", o.buy_tax, power=False),
        ),
        FindingKind(
            "ownership_transferable",
            "info",
            "Ownership can be handed over",
            "An owner call changed the address returned by the owner getter.",
            "Powers may move to someone else; informational.",
            "trial: owner() returns another address after the call",
            ("honest-handover",),
            detect=_ownership,
        ),
        FindingKind(
            "owner_renounced",
            "info",
            "Ownership renounced, no powers left",
            "The owner getter returns the zero address and no candidate caller could use "
            "a privileged function.",
            "Reassuring: nobody can change the rules any more.",
            "owner() is zero or dead and no caller (role, storage, deployer) showed a power",
            ("honest-renounced",),
        ),
    )
}
"""Every finding kind, in report order (worst kinds first, informational last).  Adding
one is one entry here: the scan runs its ``detect`` on every trial, the rubric takes its
severity, docs/owner-powers.md, the page and the CLI print it."""


# WHAT A SCAN REPORTS


@dataclass(frozen=True)
class Caller:
    """A candidate privileged caller and how it was found (e.g. ``owner()``, ``slot 10``).

    ``kind`` says what it is: ``eoa``, ``multisig`` (with its ``threshold`` of
    ``signers``), ``timelock`` (with its ``delay`` in seconds) or ``contract``.  Every
    kind is tried as a sender; a finding's severity respects the control a multisig or a
    timelock puts between the power and its use (:func:`controlled`)."""

    address: str
    found_by: tuple[str, ...]
    is_contract: bool = False
    kind: str = "eoa"
    threshold: int | None = None
    signers: int | None = None
    delay: int | None = None


@dataclass(frozen=True)
class Evidence:
    """One observed quantity before and after the owner call (rendered as text)."""

    what: str
    before: str
    after: str


@dataclass(frozen=True)
class PowerFinding:
    """One finding: which call by whom, with which arguments, and what it changed."""

    kind: str  # a FINDINGS id
    function: str  # signature when known, else the selector
    selector: str  # 0x + 8 hex
    caller: str | None  # None for findings without an owner call (time bombs)
    args: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    detail: str  # one sentence with the measured numbers
    severity: str | None = None  # None: the kind's; lower when a control holds the power
    confidence: str = "simulated"  # simulated (a trial showed it) or static (bytecode only)
    control: str | None = None  # e.g. "timelock, delay 2 days": why the severity is lower


@dataclass(frozen=True)
class FutureSell:
    """The same buyer selling ``seconds`` later with no owner action."""

    label: str  # "1h", "1d", "7d", "30d"
    seconds: int
    ok: bool
    reason: str | None = None


@dataclass(frozen=True)
class OwnerPowers:
    """Result of one owner-power scan; ``scanned`` False means it could not run (``error``)."""

    scanned: bool
    error: str | None = None
    owner: str | None = None  # what the owner getter returned; None without a getter
    renounced: bool = False
    callers: tuple[Caller, ...] = ()
    functions: int = 0  # state-changing functions beyond the ERC-20 surface
    simulations: int = 0  # eth_simulateV1 runs the scan sent
    findings: tuple[PowerFinding, ...] = ()
    future: tuple[FutureSell, ...] = ()
    bounded: bool = False  # a bound (functions, callers, argument sets) cut the scan short
    notes: tuple[str, ...] = ()
    cached: bool = False


def powers_json(powers: OwnerPowers) -> bytes:
    """A scan result as JSON (to share it between workers; :func:`powers_from_json`)."""
    return json.dumps(asdict(powers), separators=(",", ":")).encode()


def powers_from_json(raw: bytes) -> OwnerPowers | None:
    """The scan result :func:`powers_json` wrote; None for anything else (a value from
    another version, a damaged one): the caller then scans again."""
    try:
        data: dict[str, Any] = json.loads(raw)
        return OwnerPowers(
            **{k: v for k, v in data.items() if k not in _NESTED},
            callers=tuple(
                Caller(**{**c, "found_by": tuple(c["found_by"])}) for c in data["callers"]
            ),
            findings=tuple(
                PowerFinding(
                    **{k: v for k, v in f.items() if k not in ("args", "evidence")},
                    args=tuple(f["args"]),
                    evidence=tuple(Evidence(**e) for e in f["evidence"]),
                )
                for f in data["findings"]
            ),
            future=tuple(FutureSell(**f) for f in data["future"]),
            notes=tuple(data["notes"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


_NESTED = frozenset({"callers", "findings", "future", "notes"})


SEVERITIES: Final = ("info", "low", "medium", "high", "critical")
LONG_DELAY: Final = 2 * 86_400
"""A timelock delay at or above this (seconds) announces every owner action days ahead:
holders can leave before it runs, so its powers are informational."""
DAY: Final = 86_400


def controlled(kind: FindingKind, caller: Caller | None) -> tuple[str, str | None]:
    """The severity of a finding made by ``caller``, and the control that lowered it.

    The same power is less severe behind a control a buyer can watch: a timelock with a
    delay of :data:`LONG_DELAY` or more makes it informational, a delay of a day or
    more at most ``low``, a shorter delay one level lower; a multisig needing two or
    more signatures one level lower.  An EOA, a 1-of-n multisig or an unknown contract
    keeps the kind's severity."""
    base = SEVERITIES.index(kind.severity)
    if caller is None or base == 0:
        return kind.severity, None
    if caller.kind == "timelock" and caller.delay is not None:
        text = f"timelock, delay {_duration(caller.delay)}"
        if caller.delay >= LONG_DELAY:
            return "info", text
        level = min(base, 1) if caller.delay >= DAY else max(1, base - 1)
        return SEVERITIES[level], text
    if caller.kind == "multisig" and (caller.threshold or 0) >= 2:
        text = f"multisig, {caller.threshold} of {caller.signers or '?'} signers"
        return SEVERITIES[max(1, base - 1)], text
    return kind.severity, None


def _duration(seconds: int) -> str:
    if seconds >= DAY:
        return f"{seconds / DAY:g} days"
    return f"{seconds / 3600:g} hours" if seconds >= 3600 else f"{seconds} s"


def findings_markdown() -> str:
    """The findings table as printed in docs/owner-powers.md (a test keeps them equal)."""
    lines = [
        "| id | severity | what it means | how it is found | devnet | what a buyer should do |",
        "|---|---|---|---|---|---|",
    ]
    for kind in FINDINGS.values():
        anchor = kind.id.replace("_", "-")
        tokens = ", ".join(f"`{t}`" for t in kind.devnet) or "-"
        lines.append(
            f'| <a id="{anchor}"></a>`{kind.id}` | {kind.severity} | {kind.meaning} '
            f"| {kind.detection} ({kind.confidence}) | {tokens} | {kind.advice} |"
        )
    return "\n".join(lines) + "\n"

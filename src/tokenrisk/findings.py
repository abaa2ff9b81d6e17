"""Owner-power findings, each defined once: id, severity, meaning, advice, docs anchor.

Like a slither detector's metadata, every kind of finding the owner-power scan
(:mod:`tokenrisk.simulate.powers`) can report is one row of :data:`FINDINGS`.  The
risk rubric takes the severity from here, ``docs/risk.md`` and ``docs/owner-powers.md``
print the same rows (a unit test compares them), and the CLI report shows the title and
the advice.  A finding's id is also its summary flag id.  Pure data: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Final


@dataclass(frozen=True)
class FindingKind:
    """What one kind of finding means and what a buyer should do about it."""

    id: str
    severity: str  # info, low, medium, high, critical (risk.SEVERITY_INDEX)
    title: str
    meaning: str
    advice: str
    detection: str = ""  # how the scan finds it (docs/owner-powers.md prints it)
    devnet: tuple[str, ...] = ()  # devnet tokens that show it (the catalogue proves them)
    confidence: str = "simulated"  # simulated, or "simulated or static" (layout evidence)

    @property
    def anchor(self) -> str:
        """Where the docs explain it: ``docs/owner-powers.md#<id>``."""
        return f"docs/owner-powers.md#{self.id.replace('_', '-')}"


def _kind(id_: str, severity: str, title: str, meaning: str, advice: str) -> FindingKind:
    return FindingKind(
        id_,
        severity,
        title,
        meaning,
        advice,
        _DETECTION.get(id_, ""),
        _DEVNET.get(id_, ()),
        "simulated or static" if id_ in _STATIC else "simulated",
    )


_DETECTION: Final[dict[str, str]] = {
    "owner_can_block_sells": "trial: A's and B's sells fail after the call (or, armed, work "
    "only after it)",
    "owner_can_blacklist": "trial naming A: A cannot sell or transfer, B still sells",
    "owner_can_set_sell_tax": "trial: A's token-unit sell tax moves by 1 point or more and "
    "reaches 20 % (or an armed tax of 50 % or more is taken back)",
    "owner_can_set_buy_tax": "trial: C's buy gets 20 % or more fewer tokens than quoted",
    "owner_can_pause_trading": "trial: sells and C's buy all fail (or, armed, all work only "
    "after the call)",
    "owner_can_block_transfers": "trial: A's wallet transfer fails, sells work",
    "owner_can_mint": "trial: total supply grows (not a rebase), or watched balances "
    "(caller, neutral wallet, A, pool, token) grow without it (hidden mint); the caller then "
    "sells the new tokens (pool's loss); static: a guarded write of the supply",
    "owner_can_move_balances": "trial: A's or the pool's balance falls without them acting "
    "(also through transferFrom/burnFrom without allowance); static: a guarded write of the "
    "balance mapping",
    "owner_can_limit_transactions": "trial: A's 99 % sell fails, a 0.1 % sell works",
    "owner_can_change_transfer_rules": "static only: a guarded write of a value transfers read",
    "owner_can_upgrade": "trial of the proxy's own function changes what buyers see",
    "sell_fails_in_future": "A's sell 1 h, 1 d, 7 d, 30 d later, by time and by block count",
    "owner_can_block_buys": "trial: only C's buy fails",
    "owner_can_adjust_fees": "trial: a tax moves by 1 point or more but stays below 20 %",
    "ownership_transferable": "trial: owner() returns another address after the call",
    "owner_renounced": "owner() is zero or dead and no caller (role, storage, deployer) "
    "showed a power",
}
_DEVNET: Final[dict[str, tuple[str, ...]]] = {
    "owner_can_block_sells": ("max-wallet",),
    "owner_can_blacklist": (
        "latent-botlist",
        "sniper-blacklist",
        "role-freeze-renounced",
        "swap-cap-guard",
        "multisig-blocklist",
    ),
    "owner_can_set_sell_tax": (
        "latent-fee",
        "latent-hidden-keeper",
        "packed-manager",
        "two-step-fee",
        "timelock-short-fee",
        "shared-cap-fees",
    ),
    "owner_can_pause_trading": ("latent-trading-switch", "latent-pause", "paused"),
    "owner_can_mint": ("latent-mint", "hidden-mint"),
    "owner_can_move_balances": ("latent-rewrite", "siphon", "transferfrom-backdoor"),
    "owner_can_change_transfer_rules": ("deep-keeper",),
    "owner_can_upgrade": ("proxy-verified",),
    "sell_fails_in_future": ("latent-slow-fuse",),
    "owner_renounced": ("honest-renounced",),
}
_STATIC: Final = frozenset(
    {"owner_can_mint", "owner_can_move_balances", "owner_can_change_transfer_rules"}
)


FINDINGS: Final[dict[str, FindingKind]] = {
    k.id: k
    for k in (
        _kind(
            "owner_can_block_sells",
            "high",
            "Owner can block all sells",
            "After one owner call, a fresh buyer and a second wallet both failed to sell, "
            "while buying still worked.",
            "Treat it as a honeypot waiting for a trigger; buy only what you can lose.",
        ),
        _kind(
            "owner_can_blacklist",
            "high",
            "Owner can block a chosen wallet",
            "After an owner call naming the buyer, that buyer could not sell (or transfer) "
            "while another wallet still could.",
            "Any holder can be singled out and trapped; avoid holding it.",
        ),
        _kind(
            "owner_can_set_sell_tax",
            "high",
            "Owner can raise the sell tax",
            "After an owner call, the buyer's sell lost a much larger share of its tokens "
            "(20% or more) than before.",
            "The exit price is the owner's choice; check the tax right before selling.",
        ),
        _kind(
            "owner_can_set_buy_tax",
            "medium",
            "Owner can raise the buy tax",
            "After an owner call, a new buyer received 20% or more fewer tokens than before.",
            "Check the buy tax right before buying.",
        ),
        _kind(
            "owner_can_pause_trading",
            "high",
            "Owner can stop trading",
            "After an owner call, buying and selling both failed for every wallet tried.",
            "Holders can be frozen at any time; buy only what you can lose.",
        ),
        _kind(
            "owner_can_block_transfers",
            "medium",
            "Owner can block wallet transfers",
            "After an owner call, a wallet-to-wallet transfer failed while selling still worked.",
            "Tokens may not be movable to another wallet (or a safer exchange).",
        ),
        _kind(
            "owner_can_mint",
            "high",
            "Owner can mint new tokens",
            "An owner call increased the total supply.",
            "New tokens can be sold into the pool at any time, draining its value.",
        ),
        _kind(
            "owner_can_move_balances",
            "critical",
            "Owner can take or rewrite balances",
            "An owner call lowered the buyer's balance without the buyer doing anything.",
            "Holdings can be taken away; do not hold this token.",
        ),
        _kind(
            "owner_can_limit_transactions",
            "medium",
            "Owner can limit transaction sizes",
            "After an owner call, selling the whole balance failed while a small sell "
            "still worked: a max transaction size can be set.",
            "Large positions may have to leave in many small sells.",
        ),
        _kind(
            "owner_can_change_transfer_rules",
            "medium",
            "Owner can change what every transfer checks",
            "Read from the bytecode: a function guarded by a stored address writes a value "
            "every transfer reads (a fee, a limit, a list), and no simulation could call it.",
            "The rules of selling can change; check them right before selling.",
        ),
        _kind(
            "owner_can_upgrade",
            "medium",
            "Owner can replace the token's code",
            "The token is a proxy whose admin can point it at new code; an upgrade tried "
            "with hostile arguments changed what buyers experience.",
            "Today's simulation says nothing about the code after an upgrade.",
        ),
        _kind(
            "sell_fails_in_future",
            "critical",
            "Sells fail later without any owner action",
            "The same buyer's sell works now but fails when simulated 1 hour, 1 day, "
            "7 days or 30 days later.",
            "A time bomb: holders are trapped once the time passes.",
        ),
        _kind(
            "owner_can_block_buys",
            "info",
            "Owner can stop new buys",
            "After an owner call, a new buy failed while holders could still sell.",
            "Holders are not trapped by it; new buyers may be kept out.",
        ),
        _kind(
            "owner_can_adjust_fees",
            "info",
            "Owner can change fees within a small range",
            "An owner call changed a tax, but no argument tried took it to 20%.",
            "Usually a capped fee setter; nothing to do.",
        ),
        _kind(
            "ownership_transferable",
            "info",
            "Ownership can be handed over",
            "An owner call changed the address returned by the owner getter.",
            "Powers may move to someone else; informational.",
        ),
        _kind(
            "owner_renounced",
            "info",
            "Ownership renounced, no powers left",
            "The owner getter returns the zero address and no candidate caller could use "
            "a privileged function.",
            "Reassuring: nobody can change the rules any more.",
        ),
    )
}
"""Every finding kind, in report order (worst kinds first, informational last)."""

TAX_POWER_THRESHOLD: Final = 20.0
"""A tax an owner can reach at or above this (percent) is a power, below it a fee tweak."""
TAX_CHANGE_MIN: Final = 1.0
"""Tax changes smaller than this (percentage points) are measurement noise."""


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

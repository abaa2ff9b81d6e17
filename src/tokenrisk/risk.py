"""The risk rubric: one pure function from an ``Analysis`` to a ``Verdict``.

Nothing here touches a node, a clock or a config file; every threshold is a named
constant below and the whole rubric is written down in ``docs/risk.md``.  The rules:

* **Flags** are computed independently, each from its own measurement, so adding a
  bad measurement can only add a flag or raise one to a worse tier.
* **isHoneypot** is true when the fresh buyer cannot get value out (the sell fails,
  the sell tax is >= 90 %, or the max sell is < 1 % of the bought amount) or when at
  least 80 % of >= 10 analysed real holders cannot sell.  It is ``None`` when there is
  nothing to judge by (no usable simulation and fewer than 10 analysed holders, or a
  leg whose tax was not measured at all and too few holders); then ``risk`` is
  "unknown" and ``risk_level`` is ``None``.
* **Unmeasured taxes** are never 0: a leg is judged by its effective tax, else its
  token-unit tax (:func:`leg_tax`); a leg that went through with neither makes the
  verdict "unknown" unless the token is a honeypot anyway or enough real holders sold
  to judge it.
* **riskLevel** lies in the band set by the worst finding; inside it, every flag
  except one of the worst severity adds its severity index (in the "low" band, every
  flag adds), capped at the band's ceiling.  That makes the level monotone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tokenrisk.findings import FINDINGS, OwnerPowers
from tokenrisk.model import (
    Analysis,
    CodeReport,
    Flag,
    HolderStats,
    SimulationReport,
    Verdict,
)

# SEVERITIES

SEVERITY_INDEX: Final[dict[str, int]] = {
    "info": 4,
    "low": 8,
    "medium": 12,
    "high": 16,
    "critical": 20,
}

FLAG_SEVERITY: Final[dict[str, str]] = {
    "high_fail_rate": "critical",
    "medium_fail_rate": "high",
    "low_fail_rate": "medium",
    "high_siphon_rate": "critical",
    "medium_siphon_rate": "high",
    "transfer_blocked": "medium",
    "extremely_high_taxes": "critical",
    "high_tax": "medium",
    "medium_tax": "low",
    "high_gas": "low",
    "medium_gas": "info",
    "effective_honeypot_low_sell_limit": "critical",
    "extremely_low_sell_limit": "critical",
    "low_sell_limit": "critical",
    "one_sell_per_block_limit": "medium",
    "closed_source": "high",
    "sell_blocked_later": "critical",
    "verification_unknown": "info",
    "call_trace_unavailable": "info",
    "all_snipers_honeypot": "medium",
    "some_snipers_honeypot": "low",
} | {kind.id: kind.severity for kind in FINDINGS.values()}
"""Every flag id the rubric can emit (lowercase, as the spec's ``high_fail_rate``); the
owner-power ids and severities come from ``tokenrisk.findings.FINDINGS``.

Severities follow the live service's documented table where it has the flag (WIRE.md;
docs/risk.md "Flags" lists each with its source); the others are tokenrisk's own.
"""

LEGACY_SIMULATION_FLAGS: Final[dict[str, str]] = {
    "extremely_high_taxes": "EXTREMELY_HIGH_TAXES",
    "transfer_blocked": "TRANSFER_BLOCKED",
}
"""Summary flags measured by the simulation, upper case in the legacy ``flags`` array;
every other summary flag appears there under its own lower-case id (as the live API)."""

# THRESHOLDS (percent for taxes, fractions 0..1 for rates and limits)

HONEYPOT_SELL_TAX: Final = 90.0
EXTREMELY_HIGH_TAX: Final = 50.0
HIGH_TAX: Final = 40.0
"""high_tax: a tax *above* this (live API: above 40%)."""
MEDIUM_TAX: Final = 21.0
"""medium_tax: a tax *above* this (live API: above 21%)."""

HIGH_GAS: Final = 3_500_000
"""high_gas from this much gas on the buy or the sell (live API: around 3.5M)."""
MEDIUM_GAS: Final = 2_000_000
"""medium_gas from this much gas (live API: around 2M)."""

EFFECTIVE_HONEYPOT_SELL_FRACTION: Final = 0.01
EXTREMELY_LOW_SELL_FRACTION: Final = 0.10
LOW_SELL_FRACTION: Final = 0.50

MIN_HOLDER_SAMPLE: Final = 5
"""Holder rates (fail, siphon, average tax) are judged only from this many holders."""
HOLDER_VERDICT_SAMPLE: Final = 10
"""Holder analysis decides isHoneypot (and is a basis for a verdict) from this many."""
HOLDER_HONEYPOT_FAIL_RATE: Final = 0.80
HIGH_FAIL_RATE: Final = 0.50
MEDIUM_FAIL_RATE: Final = 0.20
HIGH_SIPHON_RATE: Final = 0.10
NOTHING_MOVED_TAX: Final = 99.99
"""A wallet transfer that delivers less than this share is a transfer that moved nothing."""

TRACE_UNAVAILABLE: Final = (
    "The node cannot trace calls (no debug_traceCall): the contracts the token calls while "
    "buying or selling, and their source verification, were not checked"
)
"""Text of ``call_trace_unavailable``, also the note in the explanation (the check was partial)."""


# BANDS


@dataclass(frozen=True)
class Band:
    """A risk name with its inclusive riskLevel range (SPEC "Risk bands")."""

    name: str
    floor: int
    ceiling: int


VERY_LOW: Final = Band("very_low", 0, 0)
LOW: Final = Band("low", 1, 19)
MEDIUM: Final = Band("medium", 20, 59)
HIGH: Final = Band("high", 60, 79)
VERY_HIGH: Final = Band("very_high", 80, 89)
HONEYPOT: Final = Band("honeypot", 90, 100)

_BAND_OF_SEVERITY: Final[dict[str, Band]] = {
    "info": LOW,
    "low": LOW,
    "medium": MEDIUM,
    "high": HIGH,
    "critical": VERY_HIGH,
}


# VERDICT


def assess(analysis: Analysis) -> Verdict:
    """Judge one analysis: honeypot decision, flags, risk band and level.

    Pure and total: any combination of measured/unmeasured fields gives a verdict.
    """
    flags = collect_flags(analysis)
    legacy = legacy_flags(flags, usable_simulation(analysis.simulation))
    if not has_basis(analysis):
        return Verdict("unknown", None, flags, None, None, legacy)
    reason = honeypot_reason(analysis)
    if reason is None and _unmeasured(analysis) and not _holders_decide(analysis.holders):
        # a tax that could not be measured is not a 0: the risk cannot be determined
        return Verdict("unknown", None, flags, None, None, legacy)
    if reason is not None:
        band = HONEYPOT
    elif analysis.whitelisted and not any(f.severity_index > SEVERITY_INDEX["info"] for f in flags):
        band = VERY_LOW
    else:
        band = worst_band(flags)
    return Verdict(band.name, risk_level(band, flags), flags, reason is not None, reason, legacy)


LEGS: Final = ("buy", "sell", "transfer")
_LEG_TAXES: Final = {leg: (f"{leg}_tax", f"{leg}_tax_token_unit") for leg in LEGS}
"""Each leg's two tax fields of a SimulationReport (named once, not per call: an answer
reads them ~15 times)."""


def leg_tax(sim: SimulationReport, leg: str) -> float | None:
    """The tax the rubric judges ``leg`` by: the effective figure, else the token-unit
    figure, else None (not measured: never read as 0)."""
    effective_field, token_unit_field = _LEG_TAXES[leg]
    effective: float | None = getattr(sim, effective_field)
    return effective if effective is not None else getattr(sim, token_unit_field)


def unmeasured_legs(sim: SimulationReport) -> tuple[str, ...]:
    """Legs whose step went through but whose tax has no figure at all."""
    done = {"buy": sim.buy_ok, "sell": sim.sell_ok, "transfer": sim.transfer_ok}
    return tuple(leg for leg in LEGS if done[leg] and leg_tax(sim, leg) is None)


def rendered_simulation(sim: SimulationReport | None) -> SimulationReport | None:
    """The usable simulation when every leg that went through has a tax figure: what
    the wire may render as ``simulationResult`` (its taxes are numbers, never a 0 that
    stands for "unknown")."""
    usable = usable_simulation(sim)
    return usable if usable is not None and not unmeasured_legs(usable) else None


def usable_simulation(sim: SimulationReport | None) -> SimulationReport | None:
    """The simulation when it can judge the token: it ran and the buy went through.

    A blocked buy cannot trap anyone, but it also tells nothing about selling, so it
    is treated like a failed simulation (the wire reports it as ``simulationError``).
    """
    if sim is not None and sim.success and sim.buy_ok:
        return sim
    return None


def _unmeasured(analysis: Analysis) -> tuple[str, ...]:
    sim = usable_simulation(analysis.simulation)
    return unmeasured_legs(sim) if sim is not None else ()


def _holders_decide(holders: HolderStats | None) -> bool:
    """Enough real holders sold to judge the token without the simulation's taxes."""
    return holders is not None and holders.analysed >= HOLDER_VERDICT_SAMPLE


def has_basis(analysis: Analysis) -> bool:
    """True when there is something to judge by: a usable simulation or enough holders."""
    holders = analysis.holders
    enough_holders = holders is not None and holders.analysed >= HOLDER_VERDICT_SAMPLE
    return usable_simulation(analysis.simulation) is not None or enough_holders


def honeypot_reason(analysis: Analysis) -> str | None:
    """Why the token is a honeypot, or None when it is not (see module docstring)."""
    sim = usable_simulation(analysis.simulation)
    if sim is not None:
        reason = _simulation_honeypot_reason(sim)
        if reason is not None:
            return reason
    return _holder_honeypot_reason(analysis.holders)


def _simulation_honeypot_reason(sim: SimulationReport) -> str | None:
    if not sim.sell_ok:
        step = sim.failure_step if sim.failure_step in ("sell", "transfer") else "sell"
        return f"{step} failed: {sim.failure_reason}" if sim.failure_reason else f"{step} failed"
    sell_tax = leg_tax(sim, "sell")
    if sell_tax is not None and sell_tax >= HONEYPOT_SELL_TAX:
        units = " in token units" if sim.sell_tax is None else ""
        return f"sell tax is {sell_tax:.1f}%{units}"
    fraction = sim.max_sell_fraction
    if fraction is not None and fraction < EFFECTIVE_HONEYPOT_SELL_FRACTION:
        return f"max sell is {_percent(fraction)} of the amount bought"
    return None


def _holder_honeypot_reason(holders: HolderStats | None) -> str | None:
    if holders is None or holders.analysed < HOLDER_VERDICT_SAMPLE:
        return None
    if holders.failed / holders.analysed >= HOLDER_HONEYPOT_FAIL_RATE:
        return (
            f"holders cannot sell: {holders.failed} of {holders.analysed} analysed holders failed"
        )
    if holders.average_tax >= HONEYPOT_SELL_TAX:
        return f"holders pay an average sell tax of {holders.average_tax:.1f}%"
    return None


# LEGACY FLAGS


def legacy_flags(flags: tuple[Flag, ...], sim: SimulationReport | None) -> tuple[str, ...]:
    """The deprecated top-level ``flags``: summary flags in the live API's casing.

    Simulation-measured findings are upper case: EXTREMELY_HIGH_TAXES, TRANSFER_BLOCKED,
    HIGH_BUY_GAS / HIGH_SELL_GAS (a gas flag, named by the leg that used the gas), and
    HIGH_BUY_TAX / HIGH_SELL_TAX (that leg's tax above the high_tax threshold).  Every
    other summary flag keeps its lower-case id (high_fail_rate, medium_tax, ...).
    Informational flags (severity info: medium_gas, verification_unknown,
    call_trace_unavailable) have none.
    """
    out: list[str] = []
    for flag in flags:
        if flag.severity == "info":
            continue
        if flag.flag in LEGACY_SIMULATION_FLAGS:
            out.append(LEGACY_SIMULATION_FLAGS[flag.flag])
        elif flag.flag == "high_gas" and sim is not None:
            out.append(
                "HIGH_SELL_GAS" if (sim.sell_gas or 0) >= (sim.buy_gas or 0) else "HIGH_BUY_GAS"
            )
        else:
            out.append(flag.flag)
    buy_tax = leg_tax(sim, "buy") if sim is not None else None
    sell_tax = leg_tax(sim, "sell") if sim is not None and sim.sell_ok else None
    if buy_tax is not None and buy_tax > HIGH_TAX:
        out.append("HIGH_BUY_TAX")
    if sell_tax is not None and sell_tax > HIGH_TAX:
        out.append("HIGH_SELL_TAX")
    return tuple(out)


# LEVEL


def worst_band(flags: tuple[Flag, ...]) -> Band:
    """The band implied by the worst flag; "low" when there is none (or only low/info)."""
    bands = [_BAND_OF_SEVERITY[f.severity] for f in flags]
    return max(bands, key=lambda b: b.floor, default=LOW)


def risk_level(band: Band, flags: tuple[Flag, ...]) -> int:
    """Band floor plus the severity indexes of the flags, capped at the band ceiling.

    Outside the "low" band, one flag of the worst severity is what put the token in
    its band, so it is not counted again.
    """
    if band is VERY_LOW:
        return 0
    total = sum(f.severity_index for f in flags)
    paid = 0 if band is LOW else max((f.severity_index for f in flags), default=0)
    return min(band.ceiling, band.floor + total - paid)


# FLAGS


def collect_flags(analysis: Analysis) -> tuple[Flag, ...]:
    """Every flag that fires, worst severity first (rubric order within a severity)."""
    sim = usable_simulation(analysis.simulation)
    candidates = (
        _fail_rate_flag(analysis.holders),
        _siphon_rate_flag(analysis.holders),
        _transfer_flag(sim),
        _tax_flag(sim, analysis.holders),
        _gas_flag(sim),
        _sell_limit_flag(sim),
        _one_sell_per_block_flag(sim),
        _closed_source_flag(analysis.code),
        _sell_later_flag(sim),
        _verification_unknown_flag(analysis.code),
        _trace_unavailable_flag(analysis),
        _snipers_flag(analysis.holders),
    )
    found = [f for f in candidates if f is not None]
    found += owner_flags(analysis.owner_powers, already=[f.flag for f in found])
    return tuple(sorted(found, key=lambda f: -f.severity_index))


def make_flag(flag_id: str, description: str) -> Flag:
    """A Flag with the severity and index the rubric assigns to ``flag_id``."""
    severity = FLAG_SEVERITY[flag_id]
    return Flag(flag_id, description, severity, SEVERITY_INDEX[severity])


def _judged_holders(holders: HolderStats | None) -> HolderStats | None:
    if holders is None or holders.analysed < MIN_HOLDER_SAMPLE:
        return None
    return holders


def _fail_rate_flag(holders: HolderStats | None) -> Flag | None:
    judged = _judged_holders(holders)
    if judged is None or judged.failed <= 0:
        return None
    rate = judged.failed / judged.analysed
    text = (
        f"{judged.failed} of {judged.analysed} analysed holders ({_percent(rate)}) could not sell"
    )
    if rate >= HIGH_FAIL_RATE:
        return make_flag("high_fail_rate", text)
    if rate >= MEDIUM_FAIL_RATE:
        return make_flag("medium_fail_rate", text)
    return make_flag("low_fail_rate", text)


def _siphon_rate_flag(holders: HolderStats | None) -> Flag | None:
    judged = _judged_holders(holders)
    if judged is None or judged.siphoned <= 0:
        return None
    rate = judged.siphoned / judged.analysed
    text = (
        f"{judged.siphoned} of {judged.analysed} analysed holders ({_percent(rate)}) "
        "had tokens moved out without their consent"
    )
    flag_id = "high_siphon_rate" if rate >= HIGH_SIPHON_RATE else "medium_siphon_rate"
    return make_flag(flag_id, text)


def _transfer_flag(sim: SimulationReport | None) -> Flag | None:
    if sim is None:
        return None
    if sim.transfer_ok and not _moved_nothing(sim):
        return None
    text = "Transferring the token to another wallet fails"
    if sim.transfer_ok:
        text = "A wallet-to-wallet transfer succeeds but the receiver gets nothing"
    elif sim.failure_step == "transfer" and sim.failure_reason:
        text = f"{text}: {sim.failure_reason}"
    return make_flag("transfer_blocked", text)


def _moved_nothing(sim: SimulationReport) -> bool:
    tax = leg_tax(sim, "transfer")
    return tax is not None and tax >= NOTHING_MOVED_TAX


def _tax_flag(sim: SimulationReport | None, holders: HolderStats | None) -> Flag | None:
    measured = _measured_taxes(sim, holders)
    if not measured:
        return None
    tax, text = max(measured, key=lambda item: item[0])
    if tax >= EXTREMELY_HIGH_TAX:
        return make_flag("extremely_high_taxes", text)
    if tax > HIGH_TAX:
        return make_flag("high_tax", text)
    if tax > MEDIUM_TAX:
        return make_flag("medium_tax", text)
    return None


def _measured_taxes(
    sim: SimulationReport | None, holders: HolderStats | None
) -> list[tuple[float, str]]:
    """(tax, description) for every tax measured.

    Taxes are the user's effective loss (value received against the router's quote),
    or the token-unit figure where the effective one was not measured (never a 0);
    the description adds the token-unit figure when the two differ.  What a wallet
    transfer fails to deliver counts like a tax (one that delivers nothing also raises
    ``transfer_blocked``; keeping the tax keeps the rubric monotone).  Real holders'
    average sell tax counts too (from MIN_HOLDER_SAMPLE holders): a token can spare the
    fresh buyer and tax its holders.
    """
    measured: list[tuple[float, str]] = []
    if sim is not None:
        legs = [
            ("Buy", sim.buy_tax, sim.buy_tax_token_unit),
            ("Sell", sim.sell_tax, sim.sell_tax_token_unit),
            ("Wallet transfer", sim.transfer_tax, sim.transfer_tax_token_unit),
        ]
        measured += [(tax, _tax_text(leg, tax, unit)) for leg, tax, unit in legs if tax is not None]
        measured += [
            (
                unit,
                f"{leg} tax is {unit:.1f}% in token units (its effective figure was not measured)",
            )
            for leg, tax, unit in legs
            if tax is None and unit is not None
        ]
    judged = _judged_holders(holders)
    if judged is not None and judged.taxes_measured != 0:  # 0 measured: unknown, not 0 %
        text = f"Holders pay an average sell tax of {judged.average_tax:.1f}%"
        measured.append((judged.average_tax, text))
    return measured


def _tax_text(leg: str, tax: float, token_unit: float | None) -> str:
    text = f"{leg} tax is {tax:.1f}%"
    if token_unit is not None and abs(token_unit - tax) >= 1.0:
        text += f" of the quoted value ({token_unit:.1f}% in token units)"
    return text


def _gas_flag(sim: SimulationReport | None) -> Flag | None:
    if sim is None:
        return None
    measured = [(g, f"Buy gas is {g:,}") for g in (sim.buy_gas,) if g is not None]
    measured += [(g, f"Sell gas is {g:,}") for g in (sim.sell_gas,) if g is not None]
    if not measured:
        return None
    gas, text = max(measured, key=lambda item: item[0])
    if gas >= HIGH_GAS:
        return make_flag("high_gas", text)
    if gas >= MEDIUM_GAS:
        return make_flag("medium_gas", text)
    return None


def _sell_limit_flag(sim: SimulationReport | None) -> Flag | None:
    if sim is None or sim.max_sell_fraction is None:
        return None
    fraction = sim.max_sell_fraction
    text = f"Max sell is {_percent(fraction)} of the amount bought"
    if fraction < EFFECTIVE_HONEYPOT_SELL_FRACTION:
        return make_flag("effective_honeypot_low_sell_limit", text)
    if fraction < EXTREMELY_LOW_SELL_FRACTION:
        return make_flag("extremely_low_sell_limit", text)
    if fraction < LOW_SELL_FRACTION:
        return make_flag("low_sell_limit", text)
    return None


def _one_sell_per_block_flag(sim: SimulationReport | None) -> Flag | None:
    if sim is None or not sim.one_sell_per_block:
        return None
    text = "Only one sell per block succeeds; another sell in the same block fails"
    return make_flag("one_sell_per_block_limit", text)


def _closed_source_flag(code: CodeReport | None) -> Flag | None:
    """Only a definite "not verified" counts; unknown verification never does."""
    if code is None or code.open_source:
        return None
    if not code.root_open_source and not code.root_unknown:
        return make_flag("closed_source", "The token contract's source code is not verified")
    unverified = len(code.unverified)
    if unverified == 0 and code.contracts_open_source:
        return None  # everything not verified is unknown, not closed
    text = f"{unverified or 'Some'} contract(s) called while buying or selling are not verified"
    return make_flag("closed_source", text)


def _verification_unknown_flag(code: CodeReport | None) -> Flag | None:
    """Informational: says what could not be checked (the token, other contracts)."""
    if code is None or not code.unknown:
        return None
    others = len(code.unknown) - (1 if code.root_unknown else 0)
    what = ["the token contract"] if code.root_unknown else []
    what += [f"{others} contract(s) called while buying or selling"] if others else []
    text = (
        f"Source verification could not be checked for {' and '.join(what)}: no "
        "verification provider could answer; this is not counted as closed source"
    )
    return make_flag("verification_unknown", text)


def _trace_unavailable_flag(analysis: Analysis) -> Flag | None:
    """Informational: the call tree was not checked because the node cannot trace."""
    if not analysis.trace_unavailable:
        return None
    return make_flag("call_trace_unavailable", TRACE_UNAVAILABLE)


def _sell_later_flag(sim: SimulationReport | None) -> Flag | None:
    if sim is None or not sim.delayed_sell_failed:
        return None
    text = "A sell fails once time has advanced, although a sell right after buying works"
    if sim.delayed_sell_reason:
        text = f"{text}: {sim.delayed_sell_reason}"
    return make_flag("sell_blocked_later", text)


def owner_flags(powers: OwnerPowers | None, already: list[str]) -> list[Flag]:
    """One flag per owner-power finding kind (the first finding of a kind describes it).

    ``sell_fails_in_future`` is left out when the journey's ``sell_blocked_later``
    already fired: both say a later sell fails, and one fact must not count twice.
    """
    if powers is None or not powers.scanned:
        return []
    flags: list[Flag] = []
    seen = set(already)
    if "sell_blocked_later" in seen:
        seen.add("sell_fails_in_future")
    for finding in powers.findings:
        if finding.kind in seen:
            continue
        seen.add(finding.kind)
        who = f" by {finding.caller}" if finding.caller else ""
        where = f"{finding.function}{who}: " if finding.selector else ""
        flag = make_flag(finding.kind, f"{where}{finding.detail}")
        if finding.severity and finding.severity != flag.severity:  # a control lowered it
            control = f" ({finding.control})" if finding.control else ""
            severity = finding.severity
            flag = Flag(flag.flag, flag.description + control, severity, SEVERITY_INDEX[severity])
        flags.append(flag)
    return flags


def _snipers_flag(holders: HolderStats | None) -> Flag | None:
    """Snipers (first buyers, ``holders.launch``) that still hold and cannot sell.

    All of them trapped is the anti-bot blacklist pattern that can be turned on anyone;
    some of them is weaker evidence.
    """
    if holders is None or holders.snipers_failed <= 0:
        return None
    total = holders.snipers_failed + holders.snipers_success
    text = f"{holders.snipers_failed} of {total} snipers (first buyers) still holding cannot sell"
    flag_id = "all_snipers_honeypot" if holders.snipers_success == 0 else "some_snipers_honeypot"
    return make_flag(flag_id, text)


def _percent(fraction: float) -> str:
    """A 0..1 fraction as a percentage with two decimals, e.g. 0.005 -> "0.50%"."""
    return f"{fraction * 100:.2f}%"

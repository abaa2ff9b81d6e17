"""The risk rubric (docs/risk.md): thresholds, honeypot decision, bands, monotonicity."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenrisk import risk
from tokenrisk.model import (
    Analysis,
    CodeReport,
    HolderStats,
    SimulationReport,
    TokenInfo,
    Verdict,
)

TOKEN = TokenInfo("0x1111111111111111111111111111111111111111", "Token", "TKN", 18)
WETH = TokenInfo("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "Wrapped Ether", "WETH", 18)

BANDS = {b.name: b for b in (risk.VERY_LOW, risk.LOW, risk.MEDIUM, risk.HIGH, risk.VERY_HIGH)}
BANDS["honeypot"] = risk.HONEYPOT


def clean_sim(**changes: Any) -> SimulationReport:
    """A simulation where buy, transfer and sell work, with no tax and normal gas."""
    base = SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=True,
        sell_ok=True,
        buy_tax=0.0,
        sell_tax=0.0,
        transfer_tax=0.0,
        buy_gas=110_000,
        sell_gas=115_000,
    )
    return replace(base, **changes)


def stats(
    analysed: int, failed: int = 0, siphoned: int = 0, average_tax: float = 0.0
) -> HolderStats:
    return HolderStats(
        analysed=analysed,
        successful=analysed - failed - siphoned,
        failed=failed,
        siphoned=siphoned,
        average_tax=average_tax,
        average_gas=120_000.0,
        highest_tax=average_tax,
        high_tax_wallets=0,
    )


def snipers(success: int, failed: int) -> HolderStats:
    """Holders that all sell, among them snipers of which ``failed`` cannot."""
    return replace(stats(1), snipers_success=success, snipers_failed=failed)


def code(open_source: bool = True, root: bool = True, **extra: bool) -> CodeReport:
    return CodeReport(
        root_open_source=root,
        open_source=open_source,
        is_proxy=extra.get("is_proxy", False),
        has_proxy_calls=extra.get("has_proxy_calls", False),
    )


def unknown_root() -> CodeReport:
    opened = {"0xToken": False, "0xPair": True}
    return replace(
        code(False, False), contracts_open_source=opened, unknown=("0xToken",), root_unknown=True
    )


def mixed() -> CodeReport:
    opened = {"0xToken": True, "0xA": False, "0xB": False}
    return replace(code(False, True), contracts_open_source=opened, unknown=("0xB",))


def analysis(
    sim: SimulationReport | None = None,
    holders: HolderStats | None = None,
    code_report: CodeReport | None = None,
    whitelisted: bool = False,
) -> Analysis:
    return Analysis(TOKEN, WETH, None, sim, holders, code_report, whitelisted)


def flag_ids(verdict: Verdict) -> set[str]:
    return {f.flag for f in verdict.flags}


# FLAG THRESHOLDS

FLAG_CASES: list[tuple[str, Analysis, str | None]] = [
    # taxes: buy or sell, above 21 % and above 40 % (WIRE.md), from 50 % extreme
    ("sell tax 21", analysis(clean_sim(sell_tax=21.0)), None),
    ("sell tax 21.01", analysis(clean_sim(sell_tax=21.01)), "medium_tax"),
    ("buy tax 40", analysis(clean_sim(buy_tax=40.0)), "medium_tax"),
    ("buy tax 40.01", analysis(clean_sim(buy_tax=40.01)), "high_tax"),
    ("sell tax 49.99", analysis(clean_sim(sell_tax=49.99)), "high_tax"),
    ("sell tax 50", analysis(clean_sim(sell_tax=50.0)), "extremely_high_taxes"),
    ("buy tax 50", analysis(clean_sim(buy_tax=50.0)), "extremely_high_taxes"),
    ("transfer tax 21", analysis(clean_sim(transfer_tax=21.0)), None),
    ("transfer tax 60", analysis(clean_sim(transfer_tax=60.0)), "extremely_high_taxes"),
    ("holders avg tax 22", analysis(clean_sim(), stats(5, average_tax=22.0)), "medium_tax"),
    ("holders avg tax, 4 holders", analysis(clean_sim(), stats(4, average_tax=60.0)), None),
    # gas: buy or sell, from about 2M and 3.5M (WIRE.md)
    ("gas 1,999,999", analysis(clean_sim(sell_gas=1_999_999)), None),
    ("gas 2,000,000", analysis(clean_sim(buy_gas=2_000_000)), "medium_gas"),
    ("gas 3,499,999", analysis(clean_sim(sell_gas=3_499_999)), "medium_gas"),
    ("gas 3,500,000", analysis(clean_sim(sell_gas=3_500_000)), "high_gas"),
    ("buy gas 3,500,000", analysis(clean_sim(buy_gas=3_500_000)), "high_gas"),
    # sell limits, as a fraction of the amount bought
    ("max sell 50%", analysis(clean_sim(max_sell_fraction=0.5)), None),
    ("max sell 49.99%", analysis(clean_sim(max_sell_fraction=0.4999)), "low_sell_limit"),
    ("max sell 10%", analysis(clean_sim(max_sell_fraction=0.10)), "low_sell_limit"),
    ("max sell 9.99%", analysis(clean_sim(max_sell_fraction=0.0999)), "extremely_low_sell_limit"),
    ("max sell 1%", analysis(clean_sim(max_sell_fraction=0.01)), "extremely_low_sell_limit"),
    (
        "max sell 0.99%",
        analysis(clean_sim(max_sell_fraction=0.0099)),
        "effective_honeypot_low_sell_limit",
    ),
    (
        "one sell per block",
        analysis(clean_sim(one_sell_per_block=True)),
        "one_sell_per_block_limit",
    ),
    ("transfer blocked", analysis(clean_sim(transfer_ok=False)), "transfer_blocked"),
    ("transfer delivered 0.02%", analysis(clean_sim(transfer_tax=99.98)), "extremely_high_taxes"),
    ("sell blocked later", analysis(clean_sim(delayed_sell_failed=True)), "sell_blocked_later"),
    # source code
    ("open source", analysis(clean_sim(), code_report=code()), None),
    ("closed root", analysis(clean_sim(), code_report=code(False, False)), "closed_source"),
    ("closed callee", analysis(clean_sim(), code_report=code(False, True)), "closed_source"),
    (
        "unknown root, verified callee",
        analysis(clean_sim(), code_report=unknown_root()),
        "verification_unknown",
    ),
    # holder fail rate: failed / analysed, from 5 analysed holders
    ("4 of 4 fail", analysis(clean_sim(), stats(4, failed=4)), None),
    ("0 of 5 fail", analysis(clean_sim(), stats(5)), None),
    ("1 of 100 fail", analysis(clean_sim(), stats(100, failed=1)), "low_fail_rate"),
    ("19 of 100 fail", analysis(clean_sim(), stats(100, failed=19)), "low_fail_rate"),
    ("20 of 100 fail", analysis(clean_sim(), stats(100, failed=20)), "medium_fail_rate"),
    ("1 of 5 fail", analysis(clean_sim(), stats(5, failed=1)), "medium_fail_rate"),
    ("49 of 100 fail", analysis(clean_sim(), stats(100, failed=49)), "medium_fail_rate"),
    ("50 of 100 fail", analysis(clean_sim(), stats(100, failed=50)), "high_fail_rate"),
    # holder siphon rate
    ("4 of 4 siphoned", analysis(clean_sim(), stats(4, siphoned=4)), None),
    ("1 of 100 siphoned", analysis(clean_sim(), stats(100, siphoned=1)), "medium_siphon_rate"),
    ("9 of 100 siphoned", analysis(clean_sim(), stats(100, siphoned=9)), "medium_siphon_rate"),
    ("10 of 100 siphoned", analysis(clean_sim(), stats(100, siphoned=10)), "high_siphon_rate"),
    # snipers still holding: all or some of them cannot sell
    ("no sniper fails", analysis(clean_sim(), snipers(5, 0)), None),
    ("all snipers fail", analysis(clean_sim(), snipers(0, 3)), "all_snipers_honeypot"),
    ("some snipers fail", analysis(clean_sim(), snipers(2, 1)), "some_snipers_honeypot"),
]


@pytest.mark.parametrize(
    ("subject", "expected"),
    [(a, f) for _, a, f in FLAG_CASES],
    ids=[name for name, _, _ in FLAG_CASES],
)
def test_flag_fires_at_threshold_and_not_below(subject: Analysis, expected: str | None) -> None:
    verdict = risk.assess(subject)
    assert flag_ids(verdict) == ({expected} if expected else set())


def test_unknown_verification_is_informational_and_never_closed_source() -> None:
    mixed_verdict = risk.assess(analysis(clean_sim(), code_report=mixed()))
    assert flag_ids(mixed_verdict) == {"closed_source", "verification_unknown"}
    assert "1 contract(s)" in mixed_verdict.flags[0].description
    honest = risk.assess(analysis(clean_sim(), code_report=unknown_root()))
    assert (honest.risk, honest.legacy_flags) == ("low", ())
    assert honest.flags[0].severity == "info"


def test_an_untraced_check_says_so_with_an_informational_flag() -> None:
    """A node without debug_traceCall: the call tree was not checked, and the verdict says
    it (info: a partial check, not a finding about the token)."""
    traced = risk.assess(analysis(clean_sim()))
    untraced = risk.assess(replace(analysis(clean_sim()), trace_unavailable=True))
    assert "call_trace_unavailable" not in flag_ids(traced)
    assert flag_ids(untraced) == {"call_trace_unavailable"}
    (flag,) = untraced.flags
    assert (flag.severity, flag.description) == ("info", risk.TRACE_UNAVAILABLE)
    assert "debug_traceCall" in flag.description
    assert (untraced.risk, untraced.legacy_flags) == ("low", ())
    whitelisted = replace(analysis(clean_sim(), whitelisted=True), trace_unavailable=True)
    assert risk.assess(whitelisted).risk == "very_low"


@pytest.mark.parametrize("flag_id", sorted(risk.FLAG_SEVERITY))
def test_every_flag_has_public_severity_and_legacy_string(flag_id: str) -> None:
    flag = risk.make_flag(flag_id, "text")
    assert (
        flag.severity_index
        == {"info": 4, "low": 8, "medium": 12, "high": 16, "critical": 20}[flag.severity]
    )
    assert flag_id == flag_id.lower()
    if flag.severity == "info":
        return  # informational: no legacy string (test_legacy_flags_use_the_live_casing)
    legacy = risk.LEGACY_SIMULATION_FLAGS.get(flag_id, flag_id)
    assert legacy in (flag_id, flag_id.upper())


# (flag, severity) as WIRE.md documents the live service; the other flags are our own
LIVE_SEVERITIES = {
    "high_tax": "medium",
    "medium_tax": "low",
    "high_gas": "low",
    "medium_gas": "info",
    "low_fail_rate": "medium",
    "transfer_blocked": "medium",
    "medium_siphon_rate": "high",
    "extremely_low_sell_limit": "critical",
    "low_sell_limit": "critical",
    "high_fail_rate": "critical",
    "high_siphon_rate": "critical",
}


@pytest.mark.parametrize(("flag_id", "severity"), sorted(LIVE_SEVERITIES.items()))
def test_severities_match_the_live_service(flag_id: str, severity: str) -> None:
    assert risk.FLAG_SEVERITY[flag_id] == severity


def test_descriptions_carry_the_measured_numbers() -> None:
    verdict = risk.assess(analysis(clean_sim(sell_tax=45.0, sell_gas=3_600_000)))
    texts = {f.flag: f.description for f in verdict.flags}
    assert texts == {"high_tax": "Sell tax is 45.0%", "high_gas": "Sell gas is 3,600,000"}


def test_flags_are_worst_first_with_legacy_strings_in_the_same_order() -> None:
    verdict = risk.assess(
        analysis(clean_sim(sell_tax=25.0, transfer_ok=False), code_report=code(False, False))
    )
    assert [f.flag for f in verdict.flags] == ["closed_source", "transfer_blocked", "medium_tax"]
    assert verdict.legacy_flags == ("closed_source", "TRANSFER_BLOCKED", "medium_tax")


@pytest.mark.parametrize(
    ("sim", "legacy"),
    [
        (clean_sim(sell_tax=45.0), ("high_tax", "HIGH_SELL_TAX")),
        (clean_sim(buy_tax=60.0), ("EXTREMELY_HIGH_TAXES", "HIGH_BUY_TAX")),
        (clean_sim(sell_gas=3_600_000), ("HIGH_SELL_GAS",)),
        (clean_sim(buy_gas=3_600_000), ("HIGH_BUY_GAS",)),
        (clean_sim(buy_gas=2_500_000), ()),  # medium_gas is informational
        (clean_sim(transfer_ok=False), ("TRANSFER_BLOCKED",)),
        (clean_sim(sell_tax=30.0), ("medium_tax",)),
    ],
)
def test_legacy_flags_use_the_live_casing(sim: SimulationReport, legacy: tuple[str, ...]) -> None:
    assert risk.assess(analysis(sim)).legacy_flags == legacy


# HONEYPOT DECISION

BLACKLISTED = "execution reverted: Blacklisted"

HONEYPOT_CASES: list[tuple[str, Analysis, bool | None, str | None]] = [
    ("clean", analysis(clean_sim()), False, None),
    (
        "sell reverts",
        analysis(clean_sim(sell_ok=False, failure_step="sell", failure_reason=BLACKLISTED)),
        True,
        f"sell failed: {BLACKLISTED}",
    ),
    (
        "transfer and sell revert",
        analysis(
            clean_sim(
                transfer_ok=False, sell_ok=False, failure_step="transfer", failure_reason="no"
            )
        ),
        True,
        "transfer failed: no",
    ),
    ("sell fails without reason", analysis(clean_sim(sell_ok=False)), True, "sell failed"),
    ("transfer blocked, sell works", analysis(clean_sim(transfer_ok=False)), False, None),
    ("sell tax 89.99", analysis(clean_sim(sell_tax=89.99)), False, None),
    ("sell tax 90", analysis(clean_sim(sell_tax=90.0)), True, "sell tax is 90.0%"),
    ("buy tax 99", analysis(clean_sim(buy_tax=99.0)), False, None),
    ("max sell 1%", analysis(clean_sim(max_sell_fraction=0.01)), False, None),
    (
        "max sell 0.5%",
        analysis(clean_sim(max_sell_fraction=0.005)),
        True,
        "max sell is 0.50% of the amount bought",
    ),
    (
        "8 of 10 holders fail, buyer sells",
        analysis(clean_sim(), stats(10, failed=8)),
        True,
        "holders cannot sell: 8 of 10 analysed holders failed",
    ),
    ("7 of 10 holders fail", analysis(clean_sim(), stats(10, failed=7)), False, None),
    ("9 of 9 holders fail", analysis(clean_sim(), stats(9, failed=9)), False, None),
    (
        "holders pay 90% tax",
        analysis(clean_sim(), stats(10, average_tax=90.0)),
        True,
        "holders pay an average sell tax of 90.0%",
    ),
    ("no simulation, no holders", analysis(), None, None),
    ("simulation failed", analysis(SimulationReport(False, error="no liquidity")), None, None),
    (
        "buy blocked",
        analysis(SimulationReport(True, failure_step="buy", failure_reason="not enabled")),
        None,
        None,
    ),
    ("buy blocked, 9 holders", analysis(SimulationReport(True), stats(9)), None, None),
    ("buy blocked, 10 holders sell", analysis(SimulationReport(True), stats(10)), False, None),
    (
        "no simulation, 10 holders stuck",
        analysis(None, stats(10, failed=10)),
        True,
        "holders cannot sell: 10 of 10 analysed holders failed",
    ),
]


@pytest.mark.parametrize(
    ("subject", "is_honeypot", "reason"),
    [(a, h, r) for _, a, h, r in HONEYPOT_CASES],
    ids=[name for name, *_ in HONEYPOT_CASES],
)
def test_honeypot_decision(subject: Analysis, is_honeypot: bool | None, reason: str | None) -> None:
    verdict = risk.assess(subject)
    assert (verdict.is_honeypot, verdict.honeypot_reason) == (is_honeypot, reason)


# BANDS AND LEVELS

LEVEL_CASES: list[tuple[str, Analysis, str, int | None]] = [
    ("clean", analysis(clean_sim()), "low", 1),
    ("one info flag", analysis(clean_sim(sell_gas=2_000_000)), "low", 5),
    ("one low flag", analysis(clean_sim(sell_tax=25.0)), "low", 9),
    ("one medium flag", analysis(clean_sim(), stats(100, failed=1)), "medium", 20),
    (
        "two medium flags",
        analysis(clean_sim(transfer_ok=False), stats(100, failed=1)),
        "medium",
        32,
    ),
    ("one high flag", analysis(clean_sim(), code_report=code(False)), "high", 60),
    (
        "high + high",
        analysis(clean_sim(), stats(100, failed=20), code(False)),
        "high",
        76,
    ),
    (
        "high + high + medium, capped",
        analysis(clean_sim(transfer_ok=False), stats(100, failed=20), code(False)),
        "high",
        79,
    ),
    ("one critical flag", analysis(clean_sim(sell_tax=50.0)), "very_high", 80),
    ("honeypot, no flag", analysis(clean_sim(sell_ok=False)), "honeypot", 90),
    (
        "honeypot + closed source",
        analysis(clean_sim(sell_ok=False), code_report=code(False)),
        "honeypot",
        90,
    ),
    (
        "honeypot + closed + 10 holders stuck",
        analysis(clean_sim(sell_ok=False), stats(10, failed=10), code(False)),
        "honeypot",
        100,
    ),
    ("whitelisted clean", analysis(clean_sim(), whitelisted=True), "very_low", 0),
    (
        "whitelisted, info flag",
        analysis(clean_sim(buy_gas=2_000_000), whitelisted=True),
        "very_low",
        0,
    ),
    ("whitelisted, medium tax", analysis(clean_sim(sell_tax=25.0), whitelisted=True), "low", 9),
    ("whitelisted, nothing measured", analysis(whitelisted=True), "unknown", None),
    ("unknown", analysis(), "unknown", None),
    ("unknown keeps its flags", analysis(code_report=code(False)), "unknown", None),
]


@pytest.mark.parametrize(
    ("subject", "band", "level"),
    [(a, b, lv) for _, a, b, lv in LEVEL_CASES],
    ids=[name for name, *_ in LEVEL_CASES],
)
def test_risk_band_and_level(subject: Analysis, band: str, level: int | None) -> None:
    verdict = risk.assess(subject)
    assert (verdict.risk, verdict.risk_level) == (band, level)


def test_unknown_still_lists_what_was_seen() -> None:
    verdict = risk.assess(analysis(code_report=code(False)))
    assert flag_ids(verdict) == {"closed_source"}
    assert verdict.legacy_flags == ("closed_source",)


@pytest.mark.parametrize("flag_id", sorted(risk.FLAG_SEVERITY))
def test_a_single_flag_lands_in_the_band_of_its_severity(flag_id: str) -> None:
    flag = risk.make_flag(flag_id, "text")
    band = risk.worst_band((flag,))
    expected = {
        "info": "low",
        "low": "low",
        "medium": "medium",
        "high": "high",
        "critical": "very_high",
    }
    assert band.name == expected[flag.severity]
    assert risk.risk_level(band, (flag,)) == band.floor + (
        flag.severity_index if band.name == "low" else 0
    )


# PROPERTIES

reasons = st.sampled_from([None, "execution reverted", BLACKLISTED])
# values at and around the rubric's thresholds, so that small examples cross them
taxes = st.one_of(
    st.none(), st.sampled_from([0.0, 21.0, 21.01, 40.0, 40.01, 50.0, 90.0]), st.floats(0, 100)
)
gases = st.one_of(
    st.none(), st.sampled_from([110_000, 2_000_000, 3_500_000]), st.integers(0, 5_000_000)
)
fractions = st.one_of(
    st.none(), st.sampled_from([0.005, 0.01, 0.05, 0.1, 0.5, 1.0]), st.floats(0, 1.5)
)

running_sims = st.builds(
    SimulationReport,
    success=st.just(True),
    buy_ok=st.just(True),
    transfer_ok=st.booleans(),
    sell_ok=st.booleans(),
    failure_step=st.sampled_from([None, "transfer", "sell"]),
    failure_reason=reasons,
    buy_tax=taxes,
    sell_tax=taxes,
    transfer_tax=taxes,
    buy_gas=gases,
    sell_gas=gases,
    max_sell_fraction=fractions,
    one_sell_per_block=st.booleans(),
    delayed_sell_failed=st.booleans(),
    delayed_sell_reason=reasons,
)
not_running_sims = st.sampled_from(
    [
        None,
        SimulationReport(False, error="insufficient liquidity"),
        SimulationReport(True, failure_step="buy", failure_reason="not enabled"),
    ]
)
sims = st.one_of(not_running_sims, running_sims, running_sims)


@st.composite
def holder_stats(draw: st.DrawFn) -> HolderStats:
    analysed = draw(st.one_of(st.sampled_from([5, 10, 20]), st.integers(0, 40)))
    failed = draw(st.integers(0, analysed))
    siphoned = draw(st.integers(0, analysed - failed))
    average_tax = draw(st.one_of(st.sampled_from([0.0, 22.0, 50.0, 90.0]), st.floats(0, 100)))
    sniped = draw(st.tuples(st.integers(0, 3), st.integers(0, 3)))
    base = stats(analysed, failed, siphoned, average_tax)
    return replace(base, snipers_success=sniped[0], snipers_failed=sniped[1])


codes = st.builds(code, open_source=st.booleans(), root=st.booleans())
analyses = st.builds(
    analysis,
    sim=sims,
    holders=st.one_of(st.none(), holder_stats()),
    code_report=st.one_of(st.none(), codes),
    whitelisted=st.booleans(),
)


def worse_sims(
    sim: SimulationReport, tax: float, gas: int, shrink: float
) -> list[SimulationReport]:
    """The simulation with each measurement in turn made worse (or newly measured as bad)."""
    fraction = 1.5 if sim.max_sell_fraction is None else sim.max_sell_fraction
    return [
        replace(sim, buy_tax=min(100.0, (sim.buy_tax or 0.0) + tax)),
        replace(sim, sell_tax=min(100.0, (sim.sell_tax or 0.0) + tax)),
        replace(sim, buy_gas=(sim.buy_gas or 0) + gas),
        replace(sim, sell_gas=(sim.sell_gas or 0) + gas),
        replace(sim, max_sell_fraction=fraction * shrink),
        replace(sim, transfer_ok=False),
        replace(sim, sell_ok=False),
        replace(sim, one_sell_per_block=True),
        replace(sim, delayed_sell_failed=True),
    ]


def worse_holders(holders: HolderStats) -> list[HolderStats]:
    """The holders with one successful seller turned into a failure or a siphon, or more tax."""
    worse = [replace(holders, average_tax=min(100.0, holders.average_tax + 10))]
    if holders.successful > 0:
        fewer = holders.successful - 1
        worse.append(replace(holders, successful=fewer, failed=holders.failed + 1))
        worse.append(replace(holders, successful=fewer, siphoned=holders.siphoned + 1))
    if holders.snipers_success > 0:
        fewer = holders.snipers_success - 1
        worse.append(
            replace(holders, snipers_success=fewer, snipers_failed=holders.snipers_failed + 1)
        )
    return worse


def worsenings(subject: Analysis, tax: float, gas: int, shrink: float) -> list[Analysis]:
    """Every single-step worsening of one analysis: one more bad finding each."""
    variants = [
        replace(subject, whitelisted=False),
        replace(subject, code=code(False, True)),
        replace(subject, code=code(False, False)),
    ]
    if subject.simulation is not None:
        sims = worse_sims(subject.simulation, tax, gas, shrink)
        variants += [replace(subject, simulation=s) for s in sims]
    if subject.holders is not None:
        variants += [replace(subject, holders=h) for h in worse_holders(subject.holders)]
    return variants


BASES = [
    analysis(),
    analysis(clean_sim()),
    analysis(clean_sim(), whitelisted=True),
    analysis(clean_sim(), stats(10), code()),
    analysis(None, stats(10)),
    analysis(SimulationReport(True), stats(12)),
]


@st.composite
def sparse_analyses(draw: st.DrawFn) -> Analysis:
    """A plain analysis with a few bad findings: where a single change shows most."""
    subject = draw(st.sampled_from(BASES))
    for _ in range(draw(st.integers(0, 3))):
        tax, gas, shrink = draw(taxes_up), draw(gas_up), draw(st.floats(0, 1))
        subject = draw(st.sampled_from(worsenings(subject, tax, gas, shrink)))
    return subject


taxes_up = st.one_of(st.sampled_from([21.5, 41.0, 50.0, 90.0]), st.floats(0, 100))
gas_up = st.one_of(st.sampled_from([2_000_000, 3_500_000]), st.integers(0, 4_000_000))


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(sparse_analyses(), analyses),
    taxes_up,
    gas_up,
    st.floats(0, 1),
)
def test_a_worse_finding_never_lowers_the_risk_level(
    subject: Analysis, tax: float, gas: int, shrink: float
) -> None:
    before = risk.assess(subject)
    for worse in worsenings(subject, tax, gas, shrink):
        after = risk.assess(worse)
        level, was = after.risk_level, before.risk_level
        assert was is None or (level is not None and level >= was), (worse, before, after)
        assert after.is_honeypot or not before.is_honeypot, (worse, before, after)


@settings(max_examples=1000, deadline=None)
@given(analyses)
def test_verdict_is_consistent_with_the_spec_bands(subject: Analysis) -> None:
    verdict = risk.assess(subject)
    assert (
        (verdict.risk == "unknown") == (verdict.risk_level is None) == (verdict.is_honeypot is None)
    )
    if verdict.risk_level is not None:
        band = BANDS[verdict.risk]
        assert band.floor <= verdict.risk_level <= band.ceiling
    assert (verdict.risk == "honeypot") == bool(verdict.is_honeypot)
    assert (verdict.honeypot_reason is not None) == bool(verdict.is_honeypot)
    if verdict.risk == "very_low":
        assert subject.whitelisted
    assert len(verdict.legacy_flags) >= len([f for f in verdict.flags if f.severity != "info"])

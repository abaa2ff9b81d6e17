"""Taxes that were not measured: never a 0, on the wire or in the verdict (issue #31).

A leg is judged by its effective tax, else its token-unit tax, else it is unknown; the
wire renders ``simulationResult`` only when every leg that went through has a figure,
and says which figure was not measured and why.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tokenrisk import risk
from tokenrisk.api import wire
from tokenrisk.chain.registry import BaseToken, Chain
from tokenrisk.model import (
    Analysis,
    HolderStats,
    SimulationReport,
    TokenInfo,
    Unmeasured,
)
from tokenrisk.simulate.accounting import LegTax
from tokenrisk.simulate.journey import _why_missing
from tokenrisk.simulate.simulator import CallResult

WETH_ADDRESS = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
CHAIN = Chain(
    id=1,
    name="Ethereum",
    short_name="ETH",
    currency="ETH",
    wrapped_native=BaseToken(WETH_ADDRESS, "WETH", 18),
)
TOKEN = TokenInfo("0x1111111111111111111111111111111111111111", "Token", "TKN", 18)
WETH = TokenInfo(WETH_ADDRESS, "Wrapped Ether", "WETH", 18)
NO_QUOTE = "no quote for the amount (execution reverted: SPL)"


def sim(**changes: Any) -> SimulationReport:
    base = SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=True,
        sell_ok=True,
        buy_tax=0.0,
        sell_tax=0.0,
        transfer_tax=0.0,
        buy_tax_token_unit=0.0,
        sell_tax_token_unit=0.0,
        transfer_tax_token_unit=0.0,
        buy_gas=110_000,
        sell_gas=115_000,
    )
    return replace(base, **changes)


def holders(analysed: int) -> HolderStats:
    return HolderStats(analysed, analysed, 0, 0, 2.0, 120_000.0, 2.0, 0)


def render(report: SimulationReport, stats: HolderStats | None = None) -> dict[str, Any]:
    subject = Analysis(TOKEN, WETH, None, report, stats)
    return wire.dump(wire.honeypot_response(subject, risk.assess(subject), CHAIN))


BUY_UNMEASURED = sim(
    buy_tax=None,
    buy_tax_token_unit=None,
    unmeasured=(Unmeasured("buy", "effective", NO_QUOTE), Unmeasured("buy", "tokenUnit", NO_QUOTE)),
)
BUY_IN_TOKEN_UNITS = sim(
    buy_tax=None, buy_tax_token_unit=5.0, unmeasured=(Unmeasured("buy", "effective", NO_QUOTE),)
)


# VERDICT


def test_a_leg_is_judged_by_its_token_unit_figure_when_the_effective_one_is_missing() -> None:
    report = sim(sell_tax=None, sell_tax_token_unit=95.0)
    assert risk.leg_tax(report, "sell") == 95.0
    verdict = risk.assess(Analysis(TOKEN, WETH, None, report))
    assert verdict.is_honeypot is True
    assert verdict.honeypot_reason == "sell tax is 95.0% in token units"


def test_a_token_unit_tax_raises_the_tax_flags_and_the_legacy_ones() -> None:
    verdict = risk.assess(Analysis(TOKEN, WETH, None, sim(buy_tax=None, buy_tax_token_unit=45.0)))
    flag = next(f for f in verdict.flags if f.flag == "high_tax")
    assert "45.0% in token units" in flag.description
    assert "HIGH_BUY_TAX" in verdict.legacy_flags


def test_a_leg_without_any_figure_makes_the_verdict_unknown_never_zero() -> None:
    verdict = risk.assess(Analysis(TOKEN, WETH, None, BUY_UNMEASURED))
    assert verdict.risk == "unknown" and verdict.is_honeypot is None
    assert risk.unmeasured_legs(BUY_UNMEASURED) == ("buy",)
    assert risk.rendered_simulation(BUY_UNMEASURED) is None


def test_enough_holders_decide_when_a_tax_is_unknown() -> None:
    verdict = risk.assess(Analysis(TOKEN, WETH, None, BUY_UNMEASURED, holders(12)))
    assert verdict.is_honeypot is False and verdict.risk == "low"


def test_a_failed_sell_is_a_honeypot_whatever_else_was_not_measured() -> None:
    report = replace(BUY_UNMEASURED, sell_ok=False, failure_step="sell", sell_tax=None)
    verdict = risk.assess(Analysis(TOKEN, WETH, None, report))
    assert verdict.is_honeypot is True and verdict.risk == "honeypot"


def test_a_failed_step_is_not_an_unmeasured_one() -> None:
    report = sim(transfer_ok=False, transfer_tax=None, transfer_tax_token_unit=None)
    assert risk.unmeasured_legs(report) == ()
    assert risk.assess(Analysis(TOKEN, WETH, None, report)).risk != "unknown"


# WIRE


def test_the_token_unit_figure_is_reported_and_the_missing_one_named() -> None:
    body = render(BUY_IN_TOKEN_UNITS)
    assert body["simulationSuccess"] is True
    assert body["simulationResult"]["buyTax"] == 5
    assert body["taxDetails"]["buy"] == {"tokenUnit": 5, "notMeasured": {"effective": NO_QUOTE}}


def test_a_tax_measured_by_neither_figure_is_no_number_on_the_wire() -> None:
    body = render(BUY_UNMEASURED)
    assert body["simulationSuccess"] is False
    assert "simulationResult" not in body and "honeypotResult" not in body
    assert body["simulationError"] == f"the buy tax could not be measured: {NO_QUOTE}"
    assert body["summary"]["risk"] == "unknown"
    assert body["taxDetails"]["buy"] == {
        "notMeasured": {"effective": NO_QUOTE, "tokenUnit": NO_QUOTE}
    }
    assert body["journey"][0]["outcome"] == "ok" and "tax" not in body["journey"][0]


def test_holders_decide_but_the_unmeasured_tax_stays_off_simulation_result() -> None:
    body = render(BUY_UNMEASURED, holders(12))
    assert body["simulationSuccess"] is False
    assert body["honeypotResult"] == {"isHoneypot": False}  # SPEC rule 4
    assert "simulationResult" not in body


def test_the_simulation_result_refuses_a_leg_without_a_figure() -> None:
    subject = Analysis(TOKEN, WETH, None, BUY_UNMEASURED)
    try:
        wire.simulation_result(BUY_UNMEASURED, subject)
    except ValueError:
        return
    raise AssertionError("an unmeasured tax was rendered as a number")


# WHY A FIGURE IS MISSING


def test_a_reverted_quote_is_the_reason_for_both_buy_figures() -> None:
    quote = CallResult(ok=False, data="0x", gas=30_000, reason="execution reverted: SPL")
    missing = _why_missing("buy", LegTax(None, None), quote, sent_nothing=False)
    assert missing == (
        Unmeasured("buy", "effective", NO_QUOTE),
        Unmeasured("buy", "tokenUnit", NO_QUOTE),
    )


def test_a_sell_without_transfer_logs_misses_only_its_token_unit_figure() -> None:
    quote = CallResult(ok=True, data="0x" + "00" * 31 + "05", gas=30_000, reason=None)
    missing = _why_missing("sell", LegTax(3.0, None), quote, sent_nothing=False)
    assert missing == (
        Unmeasured("sell", "tokenUnit", "the token logged no Transfer event in the trade"),
    )


def test_a_trade_without_any_log_blames_the_node_not_the_token() -> None:
    quote = CallResult(ok=True, data="0x" + "00" * 31 + "05", gas=30_000, reason=None)
    swap = CallResult(ok=True, data="0x", gas=110_000, reason=None)
    missing = _why_missing("sell", LegTax(3.0, None), quote, False, swap)
    assert missing == (Unmeasured("sell", "tokenUnit", "the node returned no logs for the trade"),)


def test_a_transfer_of_nothing_is_not_measured() -> None:
    missing = _why_missing("transfer", LegTax(None, None), None, sent_nothing=True)
    assert {u.figure for u in missing} == {"effective", "tokenUnit"}
    assert all("rounds to zero" in u.why for u in missing)


def test_holders_whose_taxes_were_not_measured_are_no_zero_tax() -> None:
    unmeasured = HolderStats(12, 12, 0, 0, 0.0, 120_000.0, 0.0, 0, taxes_measured=0)
    measured = replace(unmeasured, average_tax=60.0, highest_tax=60.0, taxes_measured=12)
    report = sim()
    assert risk.assess(Analysis(TOKEN, WETH, None, report, measured)).risk != "low"
    quiet = risk.assess(Analysis(TOKEN, WETH, None, report, unmeasured))
    assert not any("average sell tax" in f.description for f in quiet.flags)
    holders_taxes = render(report, unmeasured)["taxDetails"]["holders"]
    assert "averageEffective" not in holders_taxes and holders_taxes["notMeasured"]

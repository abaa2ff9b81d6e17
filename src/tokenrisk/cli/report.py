"""What ``tokenrisk check`` prints: the API's answer (the typed wire model
:class:`~tokenrisk.api.wire.IsHoneypotResponse`) made readable, and its exit code.

Token names, symbols, revert reasons and flag texts come from the token's contract, so
they are untrusted: they only ever reach rich as :class:`rich.text.Text` (never parsed
as markup), so ``[critical]`` shows literally and a name such as ``[/]`` cannot crash
the report.  Addresses are printed in full, never folded or cut; taxes carry ``%`` and
gas ``gas``.

Exit codes (docs/cli.md): 0 very_low/low, 1 medium/high or unknown (not judged), 2
very_high/honeypot, 3 an error (bad input, node down, bad config).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.box import SIMPLE
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tokenrisk.api.wire import IsHoneypotResponse, JourneyStep
from tokenrisk.cli.powers_report import owner_powers_section

EXIT_SAFE = 0
EXIT_RISKY = 1
EXIT_DANGEROUS = 2
EXIT_ERROR = 3

_EXIT_OF_RISK = {
    "very_low": EXIT_SAFE,
    "low": EXIT_SAFE,
    "medium": EXIT_RISKY,
    "high": EXIT_RISKY,
    "unknown": EXIT_RISKY,
    "very_high": EXIT_DANGEROUS,
    "honeypot": EXIT_DANGEROUS,
}
_RISK_STYLE = {
    "very_low": "green",
    "low": "green",
    "medium": "yellow",
    "high": "red",
    "very_high": "bold red",
    "honeypot": "bold red",
}


def exit_code(body: IsHoneypotResponse) -> int:
    """The exit code of one IsHoneypot answer (by its risk band)."""
    return risk_exit_code(body.summary.risk)


def risk_exit_code(risk: str) -> int:
    """The exit code of a risk band (``unknown`` and anything unexpected: 1)."""
    return _EXIT_OF_RISK.get(risk, EXIT_RISKY)


def percent(value: Any) -> str:
    return "not measured" if value is None else f"{float(value):.2f}%"


def gas(value: Any) -> str:
    return "not measured" if value is None else f"{int(value):,} gas"


def usd(value: Any) -> str:
    """USD amount; "unknown" when absent (no USD price path), never shown as $0."""
    return "unknown" if value is None else f"${float(value):,.2f}"


def amount(value: Any, symbol: str) -> str:
    return f"{float(value):,.6g} {symbol}"


def verdict_text(body: IsHoneypotResponse) -> Text:
    """HONEYPOT with its reason, sellable, or unknown: plain text, styled by risk."""
    result = body.honeypotResult
    style = _RISK_STYLE.get(body.summary.risk, "yellow")
    if result is None:
        return Text("unknown: " + str(body.simulationError or "not judged"), style)
    if result.isHoneypot:
        return Text("HONEYPOT: " + str(result.honeypotReason or ""), style)
    return Text("sellable", style)


def short_verdict(body: IsHoneypotResponse) -> Text:
    result = body.honeypotResult
    style = _RISK_STYLE.get(body.summary.risk, "yellow")
    if result is None:
        return Text("unknown", style)
    return Text("HONEYPOT" if result.isHoneypot else "sellable", style)


def honeypot_report(body: IsHoneypotResponse) -> RenderableType:
    """The full report of one token: verdict, risk, reasons, journey, costs, pool."""
    token, summary = body.token, body.summary
    level = summary.riskLevel
    lines: list[RenderableType] = [
        Text.assemble(
            (f"{token.name} ({token.symbol})", "bold"),
            f" {token.address} on {body.chain.name} ({body.chain.id})",
        ),
        Text.assemble("verdict: ", verdict_text(body)),
        Text.assemble(
            "risk: ",
            (summary.risk, _RISK_STYLE.get(summary.risk, "")),
            "" if level is None else f" (level {level} of 100)",
        ),
    ]
    lines += [
        Text.assemble(f"  [{flag.severity}] ", (flag.flag, "bold"), f": {flag.description}")
        for flag in summary.flags or []
    ]
    if body.journey:
        lines.append(journey_table(body.journey))
    if body.simulationResult is not None:
        lines.append(costs_table(body))
    powers = owner_powers_section(body.ownerPowers)
    if powers is not None:
        lines.append(powers)
    if body.pair is not None:
        pair = body.pair
        lines.append(
            Text(
                f"pool: {pair.pair.name} {pair.pair.type} {body.pairAddress} "
                f"liquidity {usd(pair.liquidity)}"
            )
        )
        if pair.pair.hooks:  # a V4 pool's hook runs on every swap
            may = ", ".join(pair.pair.hookPermissions or [])
            lines.append(Text(f"  hook: {pair.pair.hooks}" + (f" ({may})" if may else "")))
    return Group(*lines)


def journey_table(steps: Iterable[JourneyStep]) -> Table:
    table = Table("step", "outcome", "tax", "gas", "revert reason", title="buy -> transfer -> sell")
    for step in steps:
        table.add_row(
            step.step,
            Text(step.outcome, "green" if step.outcome == "ok" else "red"),
            percent(step.tax) if step.tax is not None else "",
            gas(step.gas) if step.gas is not None else "",
            Text(step.reason or ""),
        )
    return table


def costs_table(body: IsHoneypotResponse) -> Table:
    sim = body.simulationResult
    assert sim is not None
    symbol = body.token.symbol
    with_symbol = body.withToken.symbol if body.withToken else ""
    table = Table("measure", "value")
    for tax, label in (
        (sim.buyTax, "buy tax"),
        (sim.sellTax, "sell tax"),
        (sim.transferTax, "transfer tax"),
    ):
        table.add_row(label, percent(tax))
    table.add_row("buy gas", gas(sim.buyGas))
    table.add_row("sell gas", gas(sim.sellGas))
    for limit, label in ((sim.maxBuy, "largest buy"), (sim.maxSell, "largest sell")):
        shown = (
            f"{amount(limit.token, symbol)} (= {amount(limit.withToken, with_symbol)})"
            if limit
            else "no limit found"
        )
        table.add_row(label, Text(shown))
    return table


def summary_table(rows: Iterable[tuple[str, IsHoneypotResponse | None, str | None]]) -> Table:
    """Several tokens, one compact row each: (address, answer or None, error or None)."""
    columns = ("address", "chain", "token", "verdict", "risk", "buy tax", "sell tax", "note")
    table = Table(*columns, box=SIMPLE)
    for column in table.columns:
        column.no_wrap = True
    for address, body, error in rows:
        if body is None:
            table.add_row(address, "", "", Text("error", "red"), "", "", "", Text(str(error)))
            continue
        sim = body.simulationResult
        level = body.summary.riskLevel
        table.add_row(
            body.token.address,
            body.chain.id,
            Text(body.token.symbol),
            short_verdict(body),
            body.summary.risk + ("" if level is None else f" ({level})"),
            percent(sim.buyTax if sim else None),
            percent(sim.sellTax if sim else None),
            "",
        )
    return table

"""CLI commands for people: serve, check, pairs, holders, verify.

Each command opens the same service the API uses (the embedded devnet unless nodes are
configured), runs one check and prints a readable report, or the API's JSON with
``--json``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from tokenrisk.checks import holders as holders_check
from tokenrisk.checks import honeypot as checks
from tokenrisk.config import Settings, load_settings
from tokenrisk.errors import ConfigError, TokenRiskError
from tokenrisk.service import Service, open_service

console = Console()
ConfigOpt = typer.Option(None, "--config", help="TOML config file (else TOKENRISK_CONFIG)")
ChainOpt = typer.Option(None, "--chain-id", help="chain id; all configured chains when omitted")
JsonOpt = typer.Option(False, "--json", help="print the API's JSON instead of a report")


def _settings(config: Path | None) -> Settings:
    """The settings, or one line on stderr and exit code 3 (no traceback)."""
    try:
        return load_settings(config)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=3) from None


def _run(config: Path | None, work: Callable[[Service], Awaitable[Any]]) -> Any:
    settings = _settings(config)
    service = open_service(settings)

    async def main() -> Any:
        try:
            async with asyncio.timeout(settings.deadline * 4):
                return await work(service)
        finally:
            await service.close()

    try:
        return asyncio.run(main())
    except TokenRiskError as exc:
        console.print(f"[red]error {exc.status}:[/red] {exc.public}")
        raise typer.Exit(code=1) from None


def register(app: typer.Typer) -> None:
    """Add the commands to the top-level typer app."""
    app.command()(serve)
    app.command()(check)
    app.command()(pairs)
    app.command()(holders)
    app.command()(verify)


def serve(
    config: Path | None = ConfigOpt,
    host: str | None = typer.Option(None, help="listen address (default 127.0.0.1)"),
    port: int | None = typer.Option(None, help="port (default 8080)"),
    workers: int | None = typer.Option(None, help="worker processes (default 1)"),
) -> None:
    """Serve the HTTP API (on the embedded devnet unless chain nodes are configured)."""
    import os

    from tokenrisk.api import server

    if config is not None:
        os.environ["TOKENRISK_CONFIG"] = str(config)
    settings = _settings(config)
    console.print(
        f"tokenrisk listening on http://{host or settings.host}:{port or settings.port} "
        f"(docs at /docs)"
    )
    server.run(
        settings,
        host=host or settings.host,
        port=port or settings.port,
        workers=workers or settings.workers,
        log_level="info",
    )


def check(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Can this token be sold after buying it? A readable IsHoneypot report."""
    body = _run(config, lambda svc: checks.is_honeypot(svc, address, chain_id, None))
    if as_json:
        print(json.dumps(body, indent=2))
        return
    _print_report(body)


def _print_report(body: dict[str, Any]) -> None:
    token, summary = body["token"], body["summary"]
    level = summary.get("riskLevel", "-")
    console.print(f"[bold]{token['name']} ({token['symbol']})[/bold] {token['address']}")
    console.print(f"risk: [bold]{summary['risk']}[/bold] (level {level})")
    verdict = body.get("honeypotResult")
    if verdict:
        text = (
            "HONEYPOT: " + verdict.get("honeypotReason", "")
            if verdict["isHoneypot"]
            else "sellable"
        )
        console.print(f"verdict: {text}")
    if not body["simulationSuccess"]:
        console.print(f"simulation failed: {body.get('simulationError')}")
    sim = body.get("simulationResult")
    if sim:
        table = Table("measure", "value")
        for key in ("buyTax", "sellTax", "transferTax", "buyGas", "sellGas"):
            table.add_row(key, str(sim.get(key, "-")))
        for key in ("maxBuy", "maxSell"):
            if key in sim:
                table.add_row(key, f"{sim[key]['token']} tokens = {sim[key]['withToken']}")
        console.print(table)
    for flag in summary.get("flags", []):
        console.print(f"- [{flag['severity']}] {flag['flag']}: {flag['description']}")
    if "pair" in body:
        pair = body["pair"]
        console.print(
            f"pair: {pair['pair']['name']} {pair['pair']['type']} {body['pairAddress']} "
            f"liquidity ${pair['liquidity']:,.0f}"
        )


def pairs(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Pairs of a token, deepest first."""
    items = _run(config, lambda svc: checks.get_pairs(svc, address, chain_id))
    if as_json:
        print(json.dumps(items, indent=2))
        return
    table = Table("chain", "pair", "address", "liquidity (USD)", "router")
    for item in items:
        table.add_row(
            str(item["ChainID"]),
            item["Pair"]["Name"],
            item["Pair"]["Address"],
            f"{item['Liquidity']:,.2f}",
            item["Router"],
        )
    console.print(table)


def holders(
    address: str,
    chain_id: int = typer.Option(..., "--chain-id"),
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Top holders from the Transfer-log index."""
    body = _run(config, lambda svc: holders_check.top_holders(svc, address, chain_id))
    if as_json:
        print(json.dumps(body, indent=2))
        return
    table = Table("address", "balance", "contract")
    for row in body["holders"]:
        table.add_row(row["address"], row["balance"], "yes" if row["isContract"] else "")
    console.print(f"total supply {body['totalSupply']}")
    console.print(table)


def verify(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Is the contract, and everything its buy/sell calls, open source?"""
    body = _run(config, lambda svc: checks.contract_verification(svc, address, chain_id))
    if as_json:
        print(json.dumps(body, indent=2))
        return
    console.print(
        f"contract: {body['isContract']}  root open source: {body['isRootOpenSource']}  "
        f"full check: {body['fullCheckPerformed']}"
    )
    for addr, is_open in body.get("contractsOpenSource", {}).items():
        console.print(f"  {addr}: {'open source' if is_open else '[red]closed source[/red]'}")

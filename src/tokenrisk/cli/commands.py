"""CLI commands for people: serve, check, pairs, holders, verify.

Each command opens the same service the API uses (the embedded devnet unless nodes are
configured), runs its check and prints a readable report, or the API's JSON with
``--json``.  stdout carries only results; progress and errors go to stderr, so
``--json`` output stays machine-readable.  Exit codes are in :mod:`tokenrisk.cli.report`
(3 for any error); untrusted text is never parsed as rich markup.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tokenrisk.chain.abi import parse_address
from tokenrisk.checks import holders as holders_check
from tokenrisk.checks import honeypot as checks
from tokenrisk.cli import report
from tokenrisk.cli.serving import require_redis, run_worker, serve_api
from tokenrisk.config import Settings, load_settings
from tokenrisk.devnet.build import ensure_devnet
from tokenrisk.errors import ConfigError, TokenRiskError
from tokenrisk.service import Service, open_service

console = Console()
errors = Console(stderr=True, soft_wrap=True)  # an error is one line, however long
ConfigOpt = typer.Option(None, "--config", help="TOML config file (else TOKENRISK_CONFIG)")
ChainOpt = typer.Option(None, "--chain-id", help="chain id; all configured chains when omitted")
JsonOpt = typer.Option(False, "--json", help="print the API's JSON instead of a report")
AddressesArg = typer.Argument(..., metavar="ADDRESS...", help="one or more token addresses")


class Failed(TokenRiskError):
    """A command cannot go on: one line for stderr, exit code 3."""


@contextmanager
def _failures() -> Iterator[None]:
    """Any expected failure becomes one line on stderr and exit code 3 (no traceback)."""
    try:
        yield
    except (Failed, ConfigError) as exc:
        errors.print(Text(f"error: {exc}"))
        raise typer.Exit(code=report.EXIT_ERROR) from None
    except TokenRiskError as exc:
        errors.print(Text(f"error {exc.status}: {exc.public}"))
        raise typer.Exit(code=report.EXIT_ERROR) from None


class Progress:
    """What the command is doing, on stderr: a spinner on a terminal, else plain lines."""

    def __init__(self) -> None:
        self._status = errors.status("") if errors.is_terminal else None

    def __enter__(self) -> Progress:
        if self._status is not None:
            self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()

    def update(self, text: str) -> None:
        if self._status is not None:
            self._status.update(Text(text))
        else:
            errors.print(Text(f"tokenrisk: {text}"))


def _ready(settings: Settings, progress: Progress | None) -> None:
    """Build the embedded devnet first if it is configured and stale: the service only
    loads a built devnet, it never imports the builder."""
    if settings.devnet and not settings.devnet_url:
        if progress is not None:
            progress.update("checking the devnet build")
        ensure_devnet()


def _run(config: Path | None, work: Callable[[Service, Progress], Awaitable[Any]]) -> Any:
    """Open the service, run ``work`` under 4x the request deadline, close the service."""
    settings = load_settings(config)
    with Progress() as progress:
        _ready(settings, progress)
        progress.update("starting the service" + (" and its devnet" if settings.devnet else ""))
        service = open_service(settings)

        async def main() -> Any:
            try:
                async with asyncio.timeout(settings.deadline * 4):
                    return await work(service, progress)
            except TimeoutError:
                raise Failed(f"no answer within {settings.deadline * 4:g} s") from None
            finally:
                await service.close()

        return asyncio.run(main())


def register(app: typer.Typer) -> None:
    """Add the commands to the top-level typer app."""
    app.command()(serve)
    app.command()(worker)
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
    """Serve the page and the HTTP API (on the embedded devnet unless nodes are configured);
    more than one worker needs redis_url (docs/deployment.md)."""
    import os

    from tokenrisk.api import server

    if config is not None:
        os.environ["TOKENRISK_CONFIG"] = str(config)
    with _failures():
        settings = load_settings(config)
        workers = workers or settings.workers
        if workers > 1:
            require_redis(settings, "serve --workers N > 1")
        _ready(settings, None)
        listening = server.listen(host or settings.host, settings.port if port is None else port)
    errors.print(Text(f"tokenrisk listening on {listening.url} (page at /, API docs at /docs)"))
    if not serve_api(settings, listening, workers):
        raise typer.Exit(code=report.EXIT_ERROR)  # the app did not start (uvicorn said why)


def worker(
    config: Path | None = ConfigOpt,
    burst: bool = typer.Option(False, "--burst", help="exit once the queue is empty"),
) -> None:
    """Run background holder-index jobs from the Redis queue (needs redis_url)."""
    with _failures():
        settings = load_settings(config)
        require_redis(settings, "tokenrisk worker")
    run_worker(settings, burst)


@dataclass(frozen=True)
class Outcome:
    """One address's answer: the IsHoneypot body, or the error status and message."""

    address: str
    body: dict[str, Any] | None = None
    status: int = 200
    error: str | None = None

    def exit_code(self) -> int:
        return report.exit_code(self.body) if self.body is not None else report.EXIT_ERROR

    def json(self) -> dict[str, Any]:
        return self.body if self.body is not None else {"code": self.status, "error": self.error}


async def _check_all(
    svc: Service, addresses: list[str], chain_id: int | None, progress: Progress
) -> list[Outcome]:
    done = 0

    async def one(address: str) -> Outcome:
        nonlocal done
        try:
            body = await checks.is_honeypot(svc, address, chain_id, None)
            return Outcome(address, body)
        except TokenRiskError as exc:
            return Outcome(address, status=exc.status, error=exc.public)
        finally:
            done += 1
            progress.update(f"checked {done} of {len(addresses)}")

    progress.update(f"simulating buy, transfer and sell of {len(addresses)} token(s)")
    return list(await asyncio.gather(*(one(a) for a in addresses)))


def check(
    addresses: list[str] = AddressesArg,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Can these tokens be sold after buying them?  A report for one, a table for several.

    Exit code: 0 very_low/low, 1 medium/high/unknown, 2 very_high/honeypot, 3 error.
    """
    with _failures():
        outcomes = _run(config, lambda svc, p: _check_all(svc, addresses, chain_id, p))
    for outcome in outcomes:
        if outcome.error is not None:
            errors.print(Text(f"error {outcome.status} for {outcome.address}: {outcome.error}"))
    single = len(outcomes) == 1
    if as_json and single and outcomes[0].body is not None:
        print(json.dumps(outcomes[0].body, indent=2))
    elif as_json and not single:
        print(json.dumps([o.json() for o in outcomes], indent=2))
    elif single and outcomes[0].body is not None:
        console.print(report.honeypot_report(outcomes[0].body))
    elif not single:
        table = report.summary_table((o.address, o.body, o.error) for o in outcomes)
        # full addresses: a pipe or file gets the table's natural width, not 80 columns
        (console if console.is_terminal else Console(width=200)).print(table)
    raise typer.Exit(code=max(o.exit_code() for o in outcomes))


def _answer(
    config: Path | None, address: str, as_json: bool, work: Callable[[Service], Awaitable[Any]]
) -> Any:
    """Run one check of ``address``; with ``--json`` print its JSON and return None."""
    with _failures():
        parse_address(address)  # a bad address fails before anything is started
        body = _run(config, lambda svc, _: work(svc))
    if as_json:
        print(json.dumps(body, indent=2))
        return None
    return body


def pairs(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Pairs of a token, deepest first."""
    items = _answer(config, address, as_json, lambda svc: checks.get_pairs(svc, address, chain_id))
    if items is None:
        return
    table = Table("chain", "pair", "address", "liquidity", "router")
    table.columns[2].no_wrap = table.columns[4].no_wrap = True
    for item in items:
        table.add_row(
            str(item["ChainID"]),
            Text(str(item["Pair"]["Name"])),
            item["Pair"]["Address"],
            report.usd(item.get("Liquidity")),
            item["Router"],
        )
    console.print(table)


def holders(
    address: str,
    chain_id: int = typer.Option(..., "--chain-id"),
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Top holders from the Transfer-log index (balances are raw integers)."""
    body = _answer(
        config, address, as_json, lambda svc: holders_check.top_holders(svc, address, chain_id)
    )
    if body is None:
        return
    table = Table("address", "balance (raw units)", "contract")
    table.columns[0].no_wrap = True
    for row in body["holders"]:
        table.add_row(
            row["address"], f"{int(row['balance']):,}", "yes" if row["isContract"] else ""
        )
    console.print(Text(f"total supply {int(body['totalSupply']):,} (raw units)"))
    console.print(table)


def verify(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Is the contract, and everything its buy/sell calls, open source?"""
    body = _answer(
        config, address, as_json, lambda svc: checks.contract_verification(svc, address, chain_id)
    )
    if body is None:
        return
    console.print(
        Text(
            f"contract: {body['isContract']}  root open source: {body['isRootOpenSource']}  "
            f"full check: {body['fullCheckPerformed']}"
            + (f" ({body['fullCheckReason']})" if "fullCheckReason" in body else "")
        )
    )
    for addr, is_open in body.get("contractsOpenSource", {}).items():
        console.print(
            Text.assemble(
                f"  {addr}: ", ("open source", "green") if is_open else ("closed source", "red")
            )
        )

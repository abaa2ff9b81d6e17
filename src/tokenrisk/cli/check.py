"""``tokenrisk check``: can these tokens be sold after buying them?  A report for one
token, a table for several; ``--json`` prints the API's JSON."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from tokenrisk.api import wire
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.cli import report
from tokenrisk.cli.session import (
    AddressesArg,
    ChainOpt,
    ConfigOpt,
    JsonOpt,
    Progress,
    console,
    errors,
    failures,
    run,
)
from tokenrisk.errors import TokenRiskError


@dataclass(frozen=True)
class Outcome:
    """One address's answer: the IsHoneypot body, or the error status and message."""

    address: str
    body: wire.IsHoneypotResponse | None = None
    status: int = 200
    error: str | None = None

    def exit_code(self) -> int:
        return report.exit_code(self.body) if self.body is not None else report.EXIT_ERROR

    def json(self) -> dict[str, Any]:
        if self.body is not None:
            return wire.dump(self.body)
        return {"code": self.status, "error": self.error}


async def _check_all(
    deps: HoneypotDeps, addresses: list[str], chain_id: int | None, progress: Progress
) -> list[Outcome]:
    done = 0

    async def one(address: str) -> Outcome:
        nonlocal done
        try:
            result = await is_honeypot(deps, address, chain_id, None)
            return Outcome(address, wire.honeypot_body(result))
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
    with failures():
        outcomes = run(config, lambda svc, p: _check_all(svc.honeypot, addresses, chain_id, p))
    for outcome in outcomes:
        if outcome.error is not None:
            errors.print(Text(f"error {outcome.status} for {outcome.address}: {outcome.error}"))
    single = len(outcomes) == 1
    if as_json and single and outcomes[0].body is not None:
        print(json.dumps(outcomes[0].json(), indent=2))
    elif as_json and not single:
        print(json.dumps([o.json() for o in outcomes], indent=2))
    elif single and outcomes[0].body is not None:
        console.print(report.honeypot_report(outcomes[0].body))
    elif not single:
        table = report.summary_table((o.address, o.body, o.error) for o in outcomes)
        # full addresses: a pipe or file gets the table's natural width, not 80 columns
        (console if console.is_terminal else Console(width=200)).print(table)
    raise typer.Exit(code=max(o.exit_code() for o in outcomes))

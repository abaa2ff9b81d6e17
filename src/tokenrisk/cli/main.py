"""The ``tokenrisk`` command line.

Commands are grouped in sub-apps; ``tokenrisk devnet`` holds the devnet ones:

- ``tokenrisk devnet build [--force]``: build the devnet if its inputs changed;
- ``tokenrisk devnet [show] [--json]``: build if needed, then list the catalogue;
- ``tokenrisk devnet launch`` / ``arm ID``: act on the running devnet (:mod:`.watch`).

Build progress goes to stderr, so ``--json`` output on stdout stays machine-readable.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tokenrisk.cli.commands import register
from tokenrisk.cli.keys_command import keys_app
from tokenrisk.cli.watch_command import add_devnet_commands, watch_app
from tokenrisk.devnet.build import ensure_devnet
from tokenrisk.devnet.layout import read_manifest
from tokenrisk.errors import SolcError, TokenRiskError

app = typer.Typer(no_args_is_help=True, help="Open-source token risk checker.")
devnet_app = typer.Typer(help="The local devnet: canonical Uniswap, stablecoins, trap tokens.")
app.add_typer(devnet_app, name="devnet")
app.add_typer(keys_app, name="keys")
app.add_typer(watch_app, name="watch")
add_devnet_commands(devnet_app)
register(app)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"tokenrisk {version('tokenrisk')}")
        raise typer.Exit()


@app.callback()
def options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Open-source token risk checker."""


@devnet_app.callback(invoke_without_command=True)
def devnet(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Build the devnet if needed and print its catalogue (same as ``devnet show``)."""
    if ctx.invoked_subcommand is None:
        show(as_json)


@devnet_app.command("build")
def build(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date.")] = False,
) -> None:
    """Build the devnet state (skipped when nothing changed, unless --force)."""
    build_dir = _ensure(force=force)
    typer.echo(str(build_dir))


@devnet_app.command("show")
def show(as_json: JsonOption = False) -> None:
    """Print the scenario catalogue with addresses and expected verdicts."""
    manifest = read_manifest(_ensure(force=False))
    if manifest is None:
        raise typer.Exit(code=1)
    if as_json:
        typer.echo(json.dumps(catalogue_view(manifest), indent=2))
    else:
        Console().print(catalogue_table(manifest))


def _ensure(force: bool) -> Path:
    try:
        return ensure_devnet(force=force)
    except (TokenRiskError, SolcError, OSError) as exc:
        typer.echo(f"devnet build failed: {exc}", err=True)
        raise typer.Exit(code=1) from exc


def catalogue_view(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalogue as printed by ``--json``: one object per token, in catalogue order."""
    return [
        {
            "id": t["id"],
            "name": t.get("name"),
            "symbol": t.get("symbol"),
            "address": t["address"],
            "contract": t.get("contract"),
            "mechanism": t.get("mechanism"),
            "verified": t.get("verified", True),
            "pools": [{k: p[k] for k in ("dex", "base", "fee", "address")} for p in t["pools"]],
            "expected": t.get("expected", {}),
        }
        for t in manifest["tokens"]
    ]


def catalogue_table(manifest: dict[str, Any]) -> Table:
    """A rich table: one row per token with its expected verdict in a few words."""
    table = Table(title=f"tokenrisk devnet (chain {manifest['chainId']})")
    for column in ("id", "name", "symbol", "address", "mechanism", "expected"):
        table.add_column(column, overflow="fold")
    for token in manifest["tokens"]:
        table.add_row(
            token["id"],
            str(token.get("name", "")),
            str(token.get("symbol", "")),
            token["address"],
            str(token.get("mechanism", "")),
            verdict_text(token.get("expected", {})),
        )
    return table


def verdict_text(expected: dict[str, Any]) -> str:
    """A short human verdict: HONEYPOT / sellable, non-trivial taxes, limits, flags, risk."""
    if expected.get("isHoneypot"):
        parts = ["HONEYPOT"]
    else:
        parts = ["sellable" if expected.get("sellable", True) else "not sellable"]
    for side in ("buy", "sell", "transfer"):
        tax = expected.get(f"{side}Tax")
        if isinstance(tax, list) and len(tax) == 2 and float(tax[1]) > 0.5:
            parts.append(f"{side} tax {tax[0]}-{tax[1]}%")
    labels = {
        "maxBuy": "max buy",
        "maxSell": "max sell",
        "holderFailures": "holders fail",
        "siphoned": "holders siphoned",
    }
    parts += [text for key, text in labels.items() if expected.get(key) is True]
    parts += [f"flag {flag}" for flag in expected.get("flags") or []]
    if expected.get("risk"):
        parts.append("risk " + "/".join(str(r) for r in expected["risk"]))
    return ", ".join(parts)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

"""The ``tokenrisk`` command line.

Commands are grouped in sub-apps; ``tokenrisk devnet`` holds the devnet ones:

- ``tokenrisk devnet build [--force]``: build the devnet if its inputs changed;
- ``tokenrisk devnet [show] [--json]``: build if needed, then list the catalogue.

Build progress goes to stderr, so ``--json`` output on stdout stays machine-readable.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tokenrisk.devnet.build import ensure_devnet
from tokenrisk.devnet.manifest import read_manifest
from tokenrisk.errors import TokenRiskError

app = typer.Typer(no_args_is_help=True, help="Open-source token risk checker.")
devnet_app = typer.Typer(help="The local devnet: canonical Uniswap, stablecoins, trap tokens.")
app.add_typer(devnet_app, name="devnet")

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


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


def _ensure(force: bool) -> Any:
    try:
        return ensure_devnet(force=force)
    except (TokenRiskError, OSError) as exc:
        typer.echo(f"devnet build failed: {exc}", err=True)
        raise typer.Exit(code=1) from exc


def catalogue_view(manifest: dict[str, Any]) -> dict[str, Any]:
    """The catalogue as printed by ``--json``: chain facts and one object per token."""
    tokens = [
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
    return {
        "chainId": manifest["chainId"],
        "headBlock": manifest["headBlock"],
        "addresses": manifest["addresses"],
        "tokens": tokens,
    }


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
    """A short human verdict: HONEYPOT / sellable, then the other expectations."""
    honeypot = expected.get("isHoneypot", not expected.get("sellable", True))
    head = "HONEYPOT" if honeypot else "sellable"
    rest = [f"{k}={v}" for k, v in expected.items() if k not in ("isHoneypot", "sellable")]
    return ", ".join([head, *rest])


def main() -> None:
    app()

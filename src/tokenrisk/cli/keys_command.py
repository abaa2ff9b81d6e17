"""``tokenrisk keys``: issue, list, reset and revoke API keys, and read what they used.

The commands work on the configured store (``store_url``, else SQLite in ``data_dir``)
and start no node, so they run next to a live server: a key made, reset or revoked here
holds for that server's next request (every request reads the store).  A new key is
printed once, alone on stdout (scripts can capture it); what happened goes to stderr, and
an error is one line there with exit code 3, like every other command.
Nothing here ever prints a stored key: the store has none to print.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tokenrisk.cli.session import ConfigOpt, Failed, failures
from tokenrisk.config import Settings, load_settings
from tokenrisk.store.engine import create_store
from tokenrisk.store.keys import Keyring, config_key_name, since_day

keys_app = typer.Typer(
    no_args_is_help=True,
    help="API keys in the store: create, list, reset, revoke, usage (see docs/api.md).",
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


@contextmanager
def _keyring(config: Path | None) -> Iterator[tuple[Keyring, Settings]]:
    """The store's keyring; any failure inside is one line on stderr and exit code 3."""
    with failures():
        settings = load_settings(config)
        store = create_store(settings.database_url)
        try:
            yield Keyring(store, settings.key_pepper), settings
        finally:
            store.close()


def _tier(settings: Settings, tier: str | None) -> str:
    name = tier or settings.default_tier
    known = settings.tier_table()
    if name not in known:
        raise Failed(f"no tier named {name!r} (known: {', '.join(known)})")
    return name


@keys_app.command("create")
def create(
    name: Annotated[str, typer.Option("--name", help="who or what the key is for")],
    tier: Annotated[str | None, typer.Option("--tier", help="default: default_tier")] = None,
    config: Path | None = ConfigOpt,
) -> None:
    """Make a key for NAME and print it (the only time it is shown)."""
    with _keyring(config) as (ring, settings):
        chosen = _tier(settings, tier)
        key = ring.create(name, chosen)
    typer.echo(f"created key {name!r} (tier {chosen}); it is shown only this once:", err=True)
    typer.echo(key)


@keys_app.command("reset")
def reset(name: str, config: Path | None = ConfigOpt) -> None:
    """Give NAME a new key (printed once); the old key stops working at once."""
    with _keyring(config) as (ring, _):
        key = ring.reset(name)
    typer.echo(f"reset key {name!r}: the old key is refused from now on; the new one:", err=True)
    typer.echo(key)


@keys_app.command("revoke")
def revoke(name: str, config: Path | None = ConfigOpt) -> None:
    """Stop NAME's key for good (its name and usage stay on record)."""
    with _keyring(config) as (ring, _):
        ring.revoke(name)
    typer.echo(f"revoked key {name!r}", err=True)


@keys_app.command("list")
def list_keys(config: Path | None = ConfigOpt, as_json: JsonOption = False) -> None:
    """Every key: name, tier, status, created, last used (never the key itself)."""
    with _keyring(config) as (ring, settings):
        rows = [k.view() for k in ring.keys()] + _config_rows(settings)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("name", "tier", "status", "created", "last used", "reset")
    for row in rows:
        table.add_row(*(_cell(row[c]) for c in _COLUMNS))
    Console().print(table)


@keys_app.command("usage")
def usage(
    name: Annotated[str | None, typer.Argument(help="one key; all keys when omitted")] = None,
    days: Annotated[int, typer.Option("--days", min=1, help="UTC days back, today included")] = 30,
    config: Path | None = ConfigOpt,
    as_json: JsonOption = False,
) -> None:
    """Requests per key, endpoint and UTC day (rejected keys are not counted)."""
    since = since_day(days, time.time())
    with _keyring(config) as (ring, _):
        rows = [u.view() for u in ring.usage(name, since)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("day", "key", "endpoint", "requests")
    for row in rows:
        table.add_row(row["day"], row["name"], row["endpoint"], str(row["requests"]))
    Console().print(table)


_COLUMNS = ("name", "tier", "status", "created", "lastUsed", "reset")


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _config_rows(settings: Settings) -> list[dict[str, Any]]:
    """Config-file keys by their usage name (a fingerprint, see store.keys)."""
    tier = settings.api_keys_tier or settings.default_tier
    return [
        {
            "name": name,
            "tier": tier,
            "status": "config file",
            "created": None,
            "lastUsed": None,
            "reset": None,
            "revoked": None,
        }
        for name in sorted(config_key_name(k) for k in settings.api_keys)
    ]

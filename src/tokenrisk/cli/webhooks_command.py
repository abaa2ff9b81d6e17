"""``tokenrisk watch webhook add|list|remove``: a key's webhook endpoints, from the
operator's side (no tier limit; private addresses allowed), acting on the store as the
API's ``/v2/watch/webhooks`` does (docs/watch.md)."""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict
from pathlib import Path

import typer

from tokenrisk.api.watch_routes import valid_url
from tokenrisk.cli.session import ConfigOpt, console, failures
from tokenrisk.config import load_settings
from tokenrisk.errors import InputError
from tokenrisk.store.engine import create_store
from tokenrisk.store.watch import WatchStore
from tokenrisk.store.watchhooks import KeyHooks

KeyOpt = typer.Option("", "--key", help="API key name the endpoint belongs to")


def watch_store(config: Path | None) -> WatchStore:
    """The watcher's tables in the configured store."""
    return WatchStore(create_store(load_settings(config).database_url))


webhook_app = typer.Typer(help="A key's webhook endpoints (each gets that key's events).")
SecretOpt = typer.Option(None, "--secret", help="HMAC key (16-128 characters; default: made)")


def _hooks(config: Path | None) -> KeyHooks:
    return KeyHooks(watch_store(config).store)


@webhook_app.command("add")
def webhook_add(
    url: str, key: str = KeyOpt, secret: str | None = SecretOpt, config: Path | None = ConfigOpt
) -> None:
    """Register URL for the key (no tier limit, private addresses allowed: the CLI is
    the operator's); prints the endpoint's name and, when made here, its secret."""
    with failures():
        chosen = secret if secret is not None else secrets.token_hex(32)
        if not 16 <= len(chosen) <= 128:
            raise InputError("--secret must be 16 to 128 characters")
        name = _hooks(config).add(key, valid_url(url, private=True), chosen, limit=1 << 30)
        typer.echo(json.dumps({"endpoint": name, **({} if secret else {"secret": chosen})}))


@webhook_app.command("list")
def webhook_list(key: str = KeyOpt, config: Path | None = ConfigOpt) -> None:
    """The key's endpoints with their delivery status, as JSON (no URL, no secret)."""
    with failures():
        hooks = _hooks(config)
        store = WatchStore(hooks.store)
        rows = []
        for hook in hooks.of(key):
            state = store.delivery(hook.endpoint)
            rows.append({"endpoint": hook.endpoint, **asdict(state)})
        typer.echo(json.dumps(rows))


@webhook_app.command("remove")
def webhook_remove(endpoint: str, key: str = KeyOpt, config: Path | None = ConfigOpt) -> None:
    """Remove one of the key's endpoints (by the name `add` printed)."""
    with failures():
        console.print("removed" if _hooks(config).remove(key, endpoint) else "no such endpoint")

"""``tokenrisk watch`` (the watcher as a process of its own, and the watchlist) and the
devnet commands that give it something to see: ``tokenrisk devnet launch`` and
``tokenrisk devnet arm ID`` (docs/watch.md).

The watchlist commands act on the store directly, as the API does, for the key named by
``--key`` (the anonymous list when omitted).
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import typer

from tokenrisk.cli.session import ConfigOpt, console, failures, ready, valid_address
from tokenrisk.cli.webhooks_command import watch_store, webhook_app
from tokenrisk.config import Settings, load_settings
from tokenrisk.devnet.launch import arm, launch, recorded_url
from tokenrisk.devnet.layout import devnet_dir, read_manifest
from tokenrisk.errors import DevnetBuildError

watch_app = typer.Typer(help="Check new pools as they launch; alert when a watched token turns.")
watch_app.add_typer(webhook_app, name="webhook")
KeyOpt = typer.Option("", "--key", help="API key name whose watchlist this is")
ChainArg = typer.Option(..., "--chain-id", help="the token's chain id")
RpcOpt = typer.Option(None, "--rpc-url", help="devnet node (default: the one serve started)")


@watch_app.callback(invoke_without_command=True)
def watch(ctx: typer.Context, config: Path | None = ConfigOpt) -> None:
    """Follow every configured chain until stopped (Ctrl-C): check new pools, re-check
    watched tokens, deliver events."""
    if ctx.invoked_subcommand is not None:
        return
    with failures():
        settings = load_settings(config)
        ready(settings, None)
        asyncio.run(_follow(settings))


async def _follow(settings: Settings) -> None:
    from tokenrisk.jobs import run_watch

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await run_watch(settings, stop, lambda chains: console.print(f"watching chains {chains}"))


_store = watch_store


@watch_app.command("add")
def add(
    address: str, chain_id: int = ChainArg, key: str = KeyOpt, config: Path | None = ConfigOpt
) -> None:
    """Watch a token (no tier limit from the CLI: it is the operator's)."""
    with failures():
        token = valid_address(address)
        _store(config).add(key, chain_id, token, limit=1 << 30)
        console.print(f"watching {token} on chain {chain_id}")


@watch_app.command("list")
def listed(key: str = KeyOpt, config: Path | None = ConfigOpt) -> None:
    """The tokens a key watches, as JSON."""
    with failures():
        rows = _store(config).listed(key)
        typer.echo(json.dumps([{"address": valid_address(t), "chainID": c} for c, t in rows]))


@watch_app.command("remove")
def remove(
    address: str, chain_id: int = ChainArg, key: str = KeyOpt, config: Path | None = ConfigOpt
) -> None:
    """Stop watching a token."""
    with failures():
        removed = _store(config).remove(key, chain_id, valid_address(address))
        console.print("removed" if removed else "was not watched")


def add_devnet_commands(devnet_app: typer.Typer) -> None:
    devnet_app.command("launch")(devnet_launch)
    devnet_app.command("arm")(devnet_arm)


def _devnet(rpc_url: str | None, config: Path | None) -> tuple[str, dict[str, object], Path]:
    build_dir = devnet_dir()
    manifest = read_manifest(build_dir)
    if manifest is None:
        raise DevnetBuildError(f"no built devnet in {build_dir}")
    url = rpc_url or recorded_url(load_settings(config).data_dir)
    return url, manifest, build_dir


def devnet_launch(rpc_url: str | None = RpcOpt, config: Path | None = ConfigOpt) -> None:
    """Deploy a fresh honest token with a WETH pool on the running devnet; print it."""
    with failures():
        url, manifest, build_dir = _devnet(rpc_url, config)
        launched = asyncio.run(launch(url, manifest, build_dir))
        typer.echo(
            json.dumps({"token": launched.token, "pair": launched.pair, "block": launched.block})
        )


def devnet_arm(
    token_id: str = typer.Argument(..., metavar="ID", help="catalogue token id"),
    rpc_url: str | None = RpcOpt,
    config: Path | None = ConfigOpt,
) -> None:
    """The owner of catalogue token ID arms its trap; print the transaction."""
    with failures():
        url, manifest, _ = _devnet(rpc_url, config)
        typer.echo(asyncio.run(arm(url, manifest, token_id)))

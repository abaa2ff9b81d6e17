"""What every CLI command shares: the consoles (results on stdout, progress and errors on
stderr), one-line failures with exit code 3, and a service opened for one command.

The service is the composition root: a command picks from it the bundle its check is
handed, as the API's handlers do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.text import Text

from tokenrisk.chain.abi import parse_address
from tokenrisk.cli.report import EXIT_ERROR
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


T = TypeVar("T")
ServiceWork = Callable[[Service], Awaitable[T]]
"""A command's work: it picks its check's bundle from the opened service."""


def valid_address(address: str) -> str:
    """``address`` checked (InvalidAddress otherwise) and checksummed: a bad address
    fails before anything is started."""
    return parse_address(address)


class Failed(TokenRiskError):
    """A command cannot go on: one line for stderr, exit code 3."""


@contextmanager
def failures() -> Iterator[None]:
    """Any expected failure becomes one line on stderr and exit code 3 (no traceback)."""
    try:
        yield
    except (Failed, ConfigError) as exc:
        errors.print(Text(f"error: {exc}"))
        raise typer.Exit(code=EXIT_ERROR) from None
    except TokenRiskError as exc:
        errors.print(Text(f"error {exc.status}: {exc.public}"))
        raise typer.Exit(code=EXIT_ERROR) from None


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


def ready(settings: Settings, progress: Progress | None) -> None:
    """Build the embedded devnet first if it is configured and stale: the service only
    loads a built devnet, it never imports the builder."""
    if settings.devnet and not settings.devnet_url:
        if progress is not None:
            progress.update("checking the devnet build")
        ensure_devnet()


def run(config: Path | None, work: Callable[[Service, Progress], Awaitable[T]]) -> T:
    """Open the service, run ``work`` under 4x the request deadline, close the service."""
    settings = load_settings(config)
    with Progress() as progress:
        ready(settings, progress)
        progress.update("starting the service" + (" and its devnet" if settings.devnet else ""))
        service = open_service(settings)

        async def main() -> T:
            try:
                async with asyncio.timeout(settings.deadline * 4):
                    return await work(service, progress)
            except TimeoutError:
                raise Failed(f"no answer within {settings.deadline * 4:g} s") from None
            finally:
                await service.close()

        return asyncio.run(main())

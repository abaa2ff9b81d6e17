"""CLI commands for people: serve, check, pairs, holders, verify; and mcp, for agents.

Each command opens the same service the API uses (the embedded devnet unless nodes are
configured), runs its check and prints a readable report, or the API's JSON with
``--json``.  stdout carries only results; progress and errors go to stderr, so
``--json`` output stays machine-readable.  Exit codes are in :mod:`tokenrisk.cli.report`
(3 for any error); untrusted text is never parsed as rich markup.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from tokenrisk.cli import report
from tokenrisk.cli.check import check
from tokenrisk.cli.lookups import holders, pairs, verify
from tokenrisk.cli.mcp_command import mcp
from tokenrisk.cli.serving import require_redis, run_worker, serve_api
from tokenrisk.cli.session import ConfigOpt, errors, failures, ready
from tokenrisk.config import load_settings


def register(app: typer.Typer) -> None:
    """Add the commands to the top-level typer app."""
    app.command()(serve)
    app.command()(worker)
    app.command()(check)
    app.command()(pairs)
    app.command()(holders)
    app.command()(verify)
    app.command()(mcp)


def serve(
    config: Path | None = ConfigOpt,
    host: str | None = typer.Option(None, help="listen address (default 127.0.0.1)"),
    port: int | None = typer.Option(None, help="port (default 8080)"),
    workers: int | None = typer.Option(None, help="worker processes (default 1)"),
    watch: bool = typer.Option(False, "--watch", help="run the watcher in the server too"),
) -> None:
    """Serve the page and the HTTP API (on the embedded devnet unless nodes are configured);
    more than one worker needs redis_url (docs/deployment.md)."""
    import os

    from tokenrisk.api import server

    if config is not None:
        os.environ["TOKENRISK_CONFIG"] = str(config)
    if watch:  # read by every worker's settings (docs/watch.md)
        os.environ["TOKENRISK_WATCH__EMBEDDED"] = "true"
    with failures():
        settings = load_settings(config)
        workers = workers or settings.workers
        if workers > 1:
            require_redis(settings, "serve --workers N > 1")
        ready(settings, None)
        listening = server.listen(host or settings.host, settings.port if port is None else port)
    errors.print(Text(f"tokenrisk listening on {listening.url} (page at /, API docs at /docs)"))
    if not serve_api(settings, listening, workers):
        raise typer.Exit(code=report.EXIT_ERROR)  # the app did not start (uvicorn said why)


def worker(
    config: Path | None = ConfigOpt,
    burst: bool = typer.Option(False, "--burst", help="exit once the queue is empty"),
) -> None:
    """Run background holder-index jobs from the Redis queue (needs redis_url)."""
    with failures():
        settings = load_settings(config)
        require_redis(settings, "tokenrisk worker")
    run_worker(settings, burst)

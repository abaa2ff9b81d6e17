"""``tokenrisk mcp``: the MCP server (:mod:`tokenrisk.api.compat.mcp`) on stdio, for AI agents.

It opens the same app ``tokenrisk serve`` serves, in this process, and answers each tool
call with one request to it, sent with ``--key`` (or ``TOKENRISK_MCP_KEY``): the API's
auth, rate limits, cache and errors apply unchanged.  stdout carries only the protocol;
everything else goes to stderr.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from tokenrisk.cli.session import ConfigOpt, failures, ready
from tokenrisk.config import load_settings


def mcp(
    config: Path | None = ConfigOpt,
    key: str | None = typer.Option(
        None,
        envvar="TOKENRISK_MCP_KEY",
        help="API key the tools send (none when unset)",
    ),
) -> None:
    """Serve the MCP tools check_token, get_pairs, top_holders and contract_verification
    on stdio (on the embedded devnet unless nodes are configured)."""
    from tokenrisk.api.app import create_app
    from tokenrisk.api.compat.mcp import serve_stdio

    with failures():
        settings = load_settings(config)
        ready(settings, None)
    app = create_app(settings)
    asyncio.run(serve_stdio(app, key or None))

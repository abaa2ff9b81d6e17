"""Drop-in routes for clients of other ecosystems: the legacy v1 shapes older honeypot.is
clients read (:mod:`.legacy_routes`), GoPlus's ``token_security`` (:mod:`.goplus_routes`)
and the MCP tools over streamable HTTP at ``/mcp`` (:mod:`.mcp_http`)."""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api.compat.goplus_routes import add_goplus_route
from tokenrisk.api.compat.legacy_routes import add_legacy_routes
from tokenrisk.api.compat.mcp_http import mount_http
from tokenrisk.api.gate import Gate
from tokenrisk.api.runner import Runner


def add_compat_routes(app: FastAPI, runner: Runner, gate: Gate, mcp_http: bool = True) -> None:
    """``mcp_http`` False (config ``mcp_http``): no ``/mcp`` mount."""
    add_legacy_routes(app, runner, gate)
    add_goplus_route(app, runner, gate)
    if mcp_http:
        mount_http(app)

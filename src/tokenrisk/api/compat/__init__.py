"""Drop-in routes for clients of other ecosystems, each rendered from the same typed
results as the v2 API: the legacy v1 shapes older honeypot.is clients read
(:mod:`.legacy` the shapes, :mod:`.legacy_routes` the routes), GoPlus's
``token_security`` (:mod:`.goplus` the entry and its rendering, :mod:`.goplus_facts`
what it is gathered from, :mod:`.goplus_routes` the route) and the MCP tools for AI
agents (:mod:`.mcp`: on stdio for ``tokenrisk mcp``, over streamable HTTP at ``/mcp``)."""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api.access import Gate
from tokenrisk.api.compat.goplus_routes import add_goplus_route
from tokenrisk.api.compat.legacy_routes import add_legacy_routes
from tokenrisk.api.compat.mcp import mount_http
from tokenrisk.api.runner import Runner


def add_compat_routes(app: FastAPI, runner: Runner, gate: Gate, mcp_http: bool = True) -> None:
    """``mcp_http`` False (config ``mcp_http``): no ``/mcp`` mount."""
    add_legacy_routes(app, runner, gate)
    add_goplus_route(app, runner, gate)
    if mcp_http:
        mount_http(app)

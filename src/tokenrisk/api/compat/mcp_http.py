"""The MCP tools (:mod:`.mcp`) over streamable HTTP at ``/mcp`` inside the API app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tokenrisk.api.compat.mcp import Api, build_server

MOUNT_PATH = "/mcp"


class Mounted:
    """The ``/mcp`` endpoint: hands each request to the MCP session manager of the app's
    running lifespan (a session manager runs once, and an app may start several times,
    e.g. in tests); 503 outside a lifespan."""

    def __init__(self) -> None:
        self.current: StreamableHTTPASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.current is None:
            body = {"code": 503, "error": "the service is starting"}
            await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        await self.current(scope, receive, send)


def mount_http(app: FastAPI) -> None:
    """Serve the tools over streamable HTTP at ``/mcp`` inside ``app`` (stateless, JSON
    answers).  Listing the tools needs no key (like ``/docs``); every tool call is one
    API request with the caller's key and address (see :class:`Api`).  The SDK's
    DNS-rebinding guard is off: the tools can do nothing the public API cannot."""
    mounted = Mounted()
    app.router.routes.append(Route(MOUNT_PATH, endpoint=mounted, methods=["GET", "POST", "DELETE"]))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def with_sessions(scope: Any) -> AsyncIterator[Any]:
        server = build_server(Api(app))
        server.streamable_http_app(  # creates the session manager
            streamable_http_path=MOUNT_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with inner(scope) as state, server.session_manager.run():
            mounted.current = StreamableHTTPASGIApp(server.session_manager)
            try:
                yield state
            finally:
                mounted.current = None

    app.router.lifespan_context = with_sessions

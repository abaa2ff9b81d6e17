"""The Model Context Protocol server: tokenrisk's checks as tools for AI agents, built on
the official ``mcp`` Python SDK (``MCPServer``).

Four tools, each with a JSON schema the SDK derives from the typed signature:
``check_token`` (IsHoneypot), ``get_pairs`` (GetPairs), ``top_holders`` (TopHolders) and
``contract_verification`` (GetContractVerification).  Every tool call is one request to
tokenrisk's own HTTP API, in process through the ASGI app, with the caller's API key: so
the tools have exactly the API's auth, tier limits, rate limits, results cache, deadline
and error bodies.  A refused or failed call becomes a tool error whose text is the API's
``"<status>: <error>"`` (never a node's text or an RPC URL).

``tokenrisk mcp`` serves it on stdio (:func:`serve_stdio`); ``tokenrisk serve`` also
serves it over streamable HTTP at ``/mcp`` (:func:`mount_http`).  docs/mcp.md shows how
an agent is configured.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, Any

import httpx
from fastapi import FastAPI, Request
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

KEY_HEADER = "X-API-KEY"
LOCAL_CLIENT = ("127.0.0.1", 0)
"""The client address of the stdio server's in-process calls (its rate-limit bucket
when it has no key)."""

Address = Annotated[str, Field(description="Token address: 0x + 40 hex digits.")]
ChainId = Annotated[
    int | None, Field(description="Chain id, e.g. 1 or 31337; every configured chain if omitted.")
]
Limit = Annotated[int | None, Field(description="Most rows to return (the tier bounds it).", ge=1)]


class Api:
    """Calls tokenrisk's HTTP API in process (the ASGI app, no socket); answers its JSON
    or raises ToolError.

    ``key`` set (stdio): every call sends it.  ``key`` None (the HTTP mount): each call
    sends the key of the MCP request that made it (``X-API-KEY``, ``Authorization``
    with or without ``Bearer``, or ``apiKey``) and comes from that request's client
    address, so the API's gate sees the real caller.
    """

    def __init__(self, app: FastAPI, key: str | None = None) -> None:
        self.app = app
        self.key = key

    async def get(self, ctx: Context | None, path: str, **params: Any) -> Any:
        key, client = self._caller(ctx)
        query = {k: str(v) for k, v in params.items() if v is not None}
        headers = {KEY_HEADER: key} if key else {}
        transport = httpx.ASGITransport(app=self.app, client=client)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://tokenrisk.local", timeout=None
        ) as http:
            reply = await http.get(path, params=query, headers=headers)
        body = _json(reply)
        if reply.status_code != 200:
            error = body.get("error", "failed") if isinstance(body, dict) else "failed"
            raise ToolError(f"{reply.status_code}: {error}")
        return body

    def _caller(self, ctx: Context | None) -> tuple[str | None, tuple[str, int]]:
        if self.key is not None or ctx is None:
            return self.key, LOCAL_CLIENT
        try:
            request = ctx.request_context.request
        except ValueError:
            request = None
        if not isinstance(request, Request):
            return None, LOCAL_CLIENT
        client = (request.client.host, request.client.port) if request.client else LOCAL_CLIENT
        return request_key(request), client


def request_key(request: Request) -> str | None:
    """The API key an MCP HTTP request carries, as the API's gate would read it."""
    auth = request.headers.get("authorization", "").strip()
    if auth.lower().startswith("bearer "):
        auth = auth[7:].strip()
    return request.headers.get("x-api-key") or auth or request.query_params.get("apiKey")


def _json(reply: httpx.Response) -> Any:
    try:
        return reply.json()
    except ValueError:
        return None


@contextmanager
def logging_untouched() -> Iterator[None]:
    """``MCPServer()`` calls ``logging.basicConfig`` (a rich handler on the root logger at
    INFO), which would print every library's INFO lines, httpx's request URLs among
    them, next to tokenrisk's own logs; a placeholder root handler meanwhile makes that
    call a no-op."""
    root = logging.getLogger()
    placeholder = logging.NullHandler()
    root.addHandler(placeholder)
    try:
        yield
    finally:
        root.removeHandler(placeholder)


def build_server(api: Api) -> MCPServer:
    """The MCP server with the four tools, each one API request through ``api``."""
    with logging_untouched():
        server: MCPServer = MCPServer(
            name="tokenrisk",
            instructions="Token risk (honeypot) checks simulated inside an Ethereum node: "
            "check_token before buying a token; the other tools give its pairs, its largest "
            "holders and whether its code is open source.",
        )

    @server.tool(
        description="Can this token be sold after buying it, and at what cost? "
        "The IsHoneypot answer: verdict, taxes, limits, flags, owner powers."
    )
    async def check_token(
        address: Address, ctx: Context, chain_id: ChainId = None
    ) -> dict[str, Any]:
        result: dict[str, Any] = await api.get(
            ctx, "/v2/IsHoneypot", address=address, chainID=chain_id
        )
        return result

    @server.tool(description="The token's pairs/pools by USD liquidity (GetPairs).")
    async def get_pairs(
        address: Address, ctx: Context, chain_id: ChainId = None, limit: Limit = None
    ) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await api.get(
            ctx, "/v2/GetPairs", address=address, chainID=chain_id, limit=limit
        )
        return result

    @server.tool(description="The token's largest holders by balance (TopHolders).")
    async def top_holders(
        address: Address,
        chain_id: Annotated[int, Field(description="Chain id (required here).")],
        ctx: Context,
        limit: Limit = None,
    ) -> dict[str, Any]:
        result: dict[str, Any] = await api.get(
            ctx, "/v1/TopHolders", address=address, chainID=chain_id, limit=limit
        )
        return result

    @server.tool(
        description="Is the contract, and everything its buy and sell call, "
        "open source? (GetContractVerification)"
    )
    async def contract_verification(
        address: Address, ctx: Context, chain_id: ChainId = None
    ) -> dict[str, Any]:
        result: dict[str, Any] = await api.get(
            ctx, "/v2/GetContractVerification", address=address, chainID=chain_id
        )
        return result

    return server


async def serve_stdio(app: FastAPI, key: str | None) -> None:
    """Serve the tools on stdin/stdout until the client closes them; the app's lifespan
    runs here (the service opens on start and closes at the end)."""
    async with app.router.lifespan_context(app):
        await build_server(Api(app, key)).run_stdio_async()


# STREAMABLE HTTP AT /mcp

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

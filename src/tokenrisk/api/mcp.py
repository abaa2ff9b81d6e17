"""The Model Context Protocol server: tokenrisk's checks as tools for AI agents, built on
the official ``mcp`` Python SDK (``MCPServer``).

Four tools, each with a JSON schema the SDK derives from the typed signature:
``check_token`` (IsHoneypot), ``get_pairs`` (GetPairs), ``top_holders`` (TopHolders) and
``contract_verification`` (GetContractVerification).  Every tool call is one request to
tokenrisk's own HTTP API (in process, through the ASGI app, or over HTTP), sent with the
configured API key: so the tools have exactly the API's auth, tier limits, rate limits,
results cache, deadline and error bodies.  A refused or failed call becomes a tool error
whose text is the API's ``"<status>: <error>"`` (never a node's text or an RPC URL).

``tokenrisk mcp`` serves it on stdio (:func:`serve_stdio`); docs/mcp.md shows how an
agent is configured.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx
from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

KEY_HEADER = "X-API-KEY"

Address = Annotated[str, Field(description="Token address: 0x + 40 hex digits.")]
ChainId = Annotated[
    int | None, Field(description="Chain id, e.g. 1 or 31337; every configured chain if omitted.")
]
Limit = Annotated[int | None, Field(description="Most rows to return (the tier bounds it).", ge=1)]


class Api:
    """Calls tokenrisk's HTTP API with one key; answers its JSON or raises ToolError."""

    def __init__(self, client: httpx.AsyncClient, key: str | None) -> None:
        self.client = client
        self.headers = {KEY_HEADER: key} if key else {}

    async def get(self, path: str, **params: Any) -> Any:
        query = {k: str(v) for k, v in params.items() if v is not None}
        reply = await self.client.get(path, params=query, headers=self.headers)
        body = _json(reply)
        if reply.status_code != 200:
            error = body.get("error", "failed") if isinstance(body, dict) else "failed"
            raise ToolError(f"{reply.status_code}: {error}")
        return body


def _json(reply: httpx.Response) -> Any:
    try:
        return reply.json()
    except ValueError:
        return None


def build_server(api: Api) -> MCPServer:
    """The MCP server with the four tools, each one API request through ``api``."""
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
    async def check_token(address: Address, chain_id: ChainId = None) -> dict[str, Any]:
        result: dict[str, Any] = await api.get("/v2/IsHoneypot", address=address, chainID=chain_id)
        return result

    @server.tool(description="The token's pairs/pools by USD liquidity (GetPairs).")
    async def get_pairs(
        address: Address, chain_id: ChainId = None, limit: Limit = None
    ) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await api.get(
            "/v2/GetPairs", address=address, chainID=chain_id, limit=limit
        )
        return result

    @server.tool(description="The token's largest holders by balance (TopHolders).")
    async def top_holders(
        address: Address,
        chain_id: Annotated[int, Field(description="Chain id (required here).")],
        limit: Limit = None,
    ) -> dict[str, Any]:
        result: dict[str, Any] = await api.get(
            "/v1/TopHolders", address=address, chainID=chain_id, limit=limit
        )
        return result

    @server.tool(
        description="Is the contract, and everything its buy and sell call, "
        "open source? (GetContractVerification)"
    )
    async def contract_verification(address: Address, chain_id: ChainId = None) -> dict[str, Any]:
        result: dict[str, Any] = await api.get(
            "/v2/GetContractVerification", address=address, chainID=chain_id
        )
        return result

    return server


@asynccontextmanager
async def in_process(app: FastAPI, key: str | None) -> AsyncIterator[Api]:
    """An :class:`Api` that calls ``app`` in this process (its lifespan started here:
    the service opens on entry and closes on exit)."""
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(
            transport=transport, base_url="http://tokenrisk.local", timeout=None
        ) as client:
            yield Api(client, key)


async def serve_stdio(app: FastAPI, key: str | None) -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    async with in_process(app, key) as api:
        await build_server(api).run_stdio_async()

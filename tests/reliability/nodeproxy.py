"""A loopback HTTP server in front of a node that delays, garbles or refuses JSON-RPC.

:class:`NodeProxy` reads HTTP/1.1 requests (``Content-Length`` bodies, keep-alive) and
answers each with whatever its ``answer`` function returns for the request body.  The
answers below are the node misbehaviours the reliability tests need; ``forward`` passes
the request on to the real node (after ``delay`` seconds).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

Reply = tuple[int, bytes]
Answer = Callable[["NodeProxy", bytes], Awaitable[Reply]]
TRUNCATE = -1
"""A status that makes the proxy promise a body, send half of it and hang up."""


class NodeProxy:
    """Use as ``async with NodeProxy(upstream, answer) as proxy: ... proxy.url``."""

    def __init__(self, upstream: str, answer: Answer | None = None, delay: float = 0.0) -> None:
        self.upstream = upstream
        self.answer: Answer = answer or forward
        self.delay = delay
        self.requests = 0
        self._server: asyncio.Server | None = None
        self._http = httpx.AsyncClient(timeout=30.0)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> NodeProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        await self._http.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (body := await _read_request(reader)) is not None:
                self.requests += 1
                status, payload = await self.answer(self, body)
                if status == TRUNCATE:
                    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(payload)}\r\n\r\n"
                    writer.write(head.encode() + payload[: len(payload) // 2])
                    await writer.drain()
                    return
                head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                head += f"Content-Length: {len(payload)}\r\n\r\n"
                writer.write(head.encode() + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client gave up (deadline) or the proxy is closing: nothing to answer
        finally:
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    """The body of the next request on the connection; None when the client hung up."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return await reader.readexactly(length)


# ANSWERS


async def forward(proxy: NodeProxy, body: bytes) -> Reply:
    """The node's own answer, ``proxy.delay`` seconds late."""
    if proxy.delay:
        await asyncio.sleep(proxy.delay)
    response = await proxy._http.post(
        proxy.upstream, content=body, headers={"content-type": "application/json"}
    )
    return response.status_code, response.content


async def not_json(proxy: NodeProxy, body: bytes) -> Reply:
    return 200, b"<html><body>502 Bad Gateway</body></html>"


async def not_jsonrpc(proxy: NodeProxy, body: bytes) -> Reply:
    return 200, b'{"hello": "world"}'


async def wrong_ids(proxy: NodeProxy, body: bytes) -> Reply:
    """Batches come back with ids nobody asked for (single calls pass unchanged)."""
    status, payload = await forward(proxy, body)
    replies = json.loads(payload)
    if isinstance(replies, list):
        replies = [{**r, "id": 10**9 + i} for i, r in enumerate(replies)]
    return status, json.dumps(replies).encode()


def _garble(reply: Any) -> Any:
    if isinstance(reply, dict) and "result" in reply:
        return {**reply, "result": {"garbage": True}}
    return reply


async def garbage_results(proxy: NodeProxy, body: bytes) -> Reply:
    """Well-formed JSON-RPC whose every ``result`` is an object no method returns."""
    status, payload = await forward(proxy, body)
    replies = json.loads(payload)
    garbled = [_garble(r) for r in replies] if isinstance(replies, list) else _garble(replies)
    return status, json.dumps(garbled).encode()


async def http_500(proxy: NodeProxy, body: bytes) -> Reply:
    return 500, b"internal server error"


async def truncated(proxy: NodeProxy, body: bytes) -> Reply:
    _, payload = await forward(proxy, body)
    return TRUNCATE, payload

"""Small helpers shared by the reliability tests: addresses, error shapes, ASGI clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from tokenrisk.api.app import create_app
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import Service

CHAIN = 31337


def token_address(devnet: RunningDevnet, token_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == token_id))


def assert_error_shape(response: httpx.Response) -> None:
    """A typed error: exactly ``{"code": <status>, "error": <non-empty str>}`` (a 404 "No
    pairs found" may add its documented ``reason`` and ``token``)."""
    body = response.json()
    extensions = {"reason", "token"} if body.get("error") == "No pairs found" else set()
    assert {"code", "error"} <= set(body) <= {"code", "error"} | extensions, body
    assert body["code"] == response.status_code, body
    assert isinstance(body["error"], str) and body["error"], body


@asynccontextmanager
async def asgi_client(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    """HTTP requests into the app in this process; crashes come back as 500 responses."""
    transport = httpx.ASGITransport(
        app=create_app(service.settings, service), raise_app_exceptions=False
    )
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http

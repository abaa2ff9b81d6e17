"""The API's edge without a node: who the client is, wrong keys, /health, redirects,
and an OpenAPI document that says what the handlers enforce."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

import httpx
import pytest
from test_api_unit import FakeNode, FakeService

from tokenrisk.api import check_routes
from tokenrisk.api.access import Networks, client_address
from tokenrisk.api.app import create_app
from tokenrisk.api.server import FloodFilter
from tokenrisk.config import ServerConfig, Settings

TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
KEY = "right-key-0123456789"


def client_for(app: Any, peer: str = "203.0.113.7") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False, client=(peer, 4000))
    return httpx.AsyncClient(transport=transport, base_url="http://t")


def app_with(**settings: Any) -> Any:
    nodes = {1: FakeNode()}
    return create_app(Settings(devnet=False, **settings), FakeService(nodes))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def no_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    async def get_pairs(runner: Any, address: str, chain_id: int | None, limit: int) -> list[Any]:
        return []

    monkeypatch.setattr(check_routes, "pairs_json", get_pairs)


# WHO IS ASKING


class _Req:
    def __init__(self, peer: str, forwarded: str | None) -> None:
        self.client = type("C", (), {"host": peer})()
        self.headers = {"x-forwarded-for": forwarded} if forwarded is not None else {}


PROXIES: Networks = (ipaddress.ip_network("10.0.0.0/8"),)


@pytest.mark.parametrize(
    ("peer", "forwarded", "who"),
    [
        ("203.0.113.7", "1.2.3.4", "203.0.113.7"),  # not a proxy: the header is ignored
        ("10.0.0.2", "1.2.3.4", "1.2.3.4"),
        ("10.0.0.2", "6.6.6.6, 1.2.3.4", "1.2.3.4"),  # the left end is the client's claim
        ("10.0.0.2", "1.2.3.4, 10.0.0.9", "1.2.3.4"),  # a chain of trusted proxies
        ("10.0.0.2", "not-an-ip", "10.0.0.2"),
        ("10.0.0.2", None, "10.0.0.2"),
    ],
)
def test_forwarded_for_only_from_trusted_proxies(peer: str, forwarded: str, who: str) -> None:
    assert client_address(_Req(peer, forwarded), PROXIES) == who  # type: ignore[arg-type]


async def test_spoofed_forwarded_for_does_not_bypass_the_rate_limit() -> None:
    app = app_with(rate_limit_per_minute=2)
    async with client_for(app) as http:
        statuses = [
            (
                await http.get(
                    "/v1/GetPairs",
                    params={"address": TOKEN},
                    headers={"X-Forwarded-For": f"1.2.3.{i}"},
                )
            ).status_code
            for i in range(3)
        ]
    assert statuses == [200, 200, 429]


async def test_forwarded_for_from_a_trusted_proxy_separates_clients() -> None:
    app = app_with(rate_limit_per_minute=1, server=ServerConfig(trusted_proxies=("10.0.0.0/8",)))
    async with client_for(app, peer="10.0.0.2") as http:
        statuses = [
            (
                await http.get(
                    "/v1/GetPairs", params={"address": TOKEN}, headers={"X-Forwarded-For": ip}
                )
            ).status_code
            for ip in ("1.1.1.1", "2.2.2.2", "1.1.1.1")
        ]
    assert statuses == [200, 200, 429]


# WRONG KEYS


async def test_wrong_keys_are_throttled_per_client() -> None:
    app = app_with(api_keys=frozenset({KEY}), server=ServerConfig(auth_failures_per_minute=3))
    async with client_for(app) as http, client_for(app, peer="198.51.100.1") as other:
        wrong = [
            (
                await http.get(
                    "/v1/GetPairs", params={"address": TOKEN}, headers={"X-API-KEY": f"guess-{i}"}
                )
            ).status_code
            for i in range(5)
        ]
        assert wrong == [401, 401, 401, 429, 429]
        throttled = await http.get(
            "/v1/GetPairs", params={"address": TOKEN}, headers={"X-API-KEY": KEY}
        )
        assert throttled.status_code == 429 and "Retry-After" in throttled.headers
        fine = await other.get(
            "/v1/GetPairs", params={"address": TOKEN}, headers={"X-API-KEY": KEY}
        )
        assert fine.status_code == 200  # another client is not locked out


# HEALTH


async def test_health_detail_needs_the_key_when_keys_are_on() -> None:
    app = app_with(api_keys=frozenset({KEY}))
    async with client_for(app) as http:
        anonymous = await http.get("/health")
        assert anonymous.status_code == 200 and anonymous.json() == {"status": "ok"}
        detailed = await http.get("/health", headers={"X-API-KEY": KEY})
        assert [c["chainId"] for c in detailed.json()["chains"]] == [1]


async def test_health_is_cached_for_a_second() -> None:
    node = FakeNode()
    app = create_app(Settings(devnet=False), FakeService({1: node}))  # type: ignore[arg-type]
    async with client_for(app) as http:
        for _ in range(20):
            assert (await http.get("/health")).status_code == 200
    assert node.calls == 1


# REDIRECTS


async def test_trailing_slash_redirect_is_relative_whatever_the_host() -> None:
    async with client_for(app_with()) as http:
        response = await http.get(
            "/v1/GetPairs/", params={"address": TOKEN}, headers={"Host": "evil.example"}
        )
        assert response.status_code == 307
        assert response.headers["location"] == f"/v1/GetPairs?address={TOKEN}"
        assert (await http.get("http://t//v1/GetPairs/")).status_code == 404  # no //host
        assert (await http.get("/nothing/")).status_code == 404


# OPENAPI


async def openapi(app: Any) -> dict[str, Any]:
    async with client_for(app) as http:
        document: dict[str, Any] = (await http.get("/openapi.json")).json()
        return document


def params(document: dict[str, Any], path: str) -> dict[str, Any]:
    return {p["name"]: p for p in document["paths"][path]["get"]["parameters"]}


async def test_openapi_states_the_real_parameter_contract() -> None:
    document = await openapi(app_with())
    for path in ("/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders", "/v2/GetContractVerification"):
        found = params(document, path)
        assert found["address"]["required"] is True
        assert found["address"]["schema"]["pattern"] == "^0x[0-9a-fA-F]{40}$"
        assert found["chainID"]["schema"]["type"] == "integer"
        assert found["chainID"]["required"] is (path == "/v1/TopHolders")
        assert "422" not in document["paths"][path]["get"]["responses"]
    assert "HTTPValidationError" not in document["components"]["schemas"]


async def test_security_schemes_only_when_keys_are_on() -> None:
    off = await openapi(app_with())
    assert "securitySchemes" not in off.get("components", {})
    operations = [op for ops in off["paths"].values() for op in ops.values()]
    assert operations and all("security" not in op for op in operations)
    assert "apiKey" not in params(off, "/v1/GetPairs")
    on = await openapi(app_with(api_keys=frozenset({KEY})))
    assert set(on["components"]["securitySchemes"]) == {"APIKeyHeader", "APIKeyQuery"}
    assert "401" in on["paths"]["/v1/GetPairs"]["get"]["responses"]


# LOG FLOODS


def test_flood_filter_lets_one_line_per_template_per_interval() -> None:
    now = [0.0]
    flood = FloodFilter(interval=60.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.WARNING, __file__, 1, msg, None, None)

    passed = [flood.filter(record("Invalid HTTP request received.")) for _ in range(1000)]
    assert passed.count(True) == 1
    assert flood.filter(record("socket.accept() out of system resource\nsocket: fd=7"))
    assert not flood.filter(record("socket.accept() out of system resource\nsocket: fd=8"))
    now[0] = 61.0
    later = record("Invalid HTTP request received.")
    assert flood.filter(later) and "999 similar lines suppressed" in str(later.msg)


async def test_served_connections_send_small_writes_at_once() -> None:
    """The listening socket ``serve`` binds makes asyncio turn Nagle's algorithm off on
    every accepted connection (a response goes out as headers, then body: with Nagle on,
    the body waited for the client's delayed ACK, ~40 ms a request)."""
    import asyncio
    import socket

    from tokenrisk.api.server import listen

    listening = listen("127.0.0.1", 0)
    seen: list[int] = []

    async def handle(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(handle, sock=listening.sock)
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", listening.sock.getsockname()[1])
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
    assert seen and seen[0] != 0

"""Hand-written hostile and odd input, through real HTTP (uvicorn on loopback).

Every answer is a success shape or a typed 4xx error; nothing is a 5xx, and the server
keeps serving afterwards.  Odd-but-valid targets (EOAs, contracts that are not tokens,
tokens whose getters revert or burn all gas) get an answer, not a crash.
"""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest
from harness import CHAIN, assert_error_shape, token_address
from liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

PATHS = ("/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders", "/v2/GetContractVerification")
PLAIN_LOWER = "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0"
NOT_ADDRESSES = [
    "",
    "0x",
    "0x1234",
    "9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
    "0X9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
    "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0\n",
    " 0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
    "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0\x00",
    "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e00",
    "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6E0",  # wrong EIP-55 checksum
    "0x" + "g" * 40,
    "0x" + "\u0663" * 40,  # ARABIC-INDIC DIGIT THREE: int() would take it
    "\uff10x" + "a" * 40,  # FULLWIDTH DIGIT ZERO
    "0x" + "a" * 15_000,
    "'; DROP TABLE balances; --",
    "%00%ff",
]
NOT_CHAIN_IDS = [
    "1",
    "-1",
    "0",
    "0x7a69",
    "31337.0",
    "31337 ",
    "\u0663\u0661\u0663\u0663\u0667",
    "9" * 40,
]


@pytest.fixture
async def http(live: LiveServer) -> Any:
    async with httpx.AsyncClient(base_url=live.url, timeout=90.0) as client:
        yield client


def assert_sane(response: httpx.Response, *forbidden: str) -> None:
    assert response.status_code < 500, (response.status_code, response.text)
    if response.status_code >= 400:
        assert_error_shape(response)
    assert "Traceback" not in response.text
    assert not any(text in response.text for text in forbidden), response.text


async def get(http: httpx.AsyncClient, path: str, **params: Any) -> httpx.Response:
    return await http.get(path, params={"chainID": CHAIN, **params})


# MALFORMED PARAMETERS


@pytest.mark.parametrize("path", PATHS)
async def test_non_addresses_are_400(
    http: httpx.AsyncClient, devnet: RunningDevnet, path: str
) -> None:
    failures = []
    for value in NOT_ADDRESSES:
        response = await get(http, path, address=value)
        if response.status_code != 400:
            failures.append((value[:60], response.status_code, response.text[:120]))
        else:
            assert_error_shape(response)
    assert not failures


@pytest.mark.parametrize("path", PATHS)
async def test_bad_chain_ids_are_400(
    http: httpx.AsyncClient, devnet: RunningDevnet, path: str
) -> None:
    for value in NOT_CHAIN_IDS:
        response = await http.get(path, params={"address": PLAIN_LOWER, "chainID": value})
        assert response.status_code == 400, (value, response.text)
        assert_error_shape(response)


async def test_bad_flags_and_pairs(http: httpx.AsyncClient, devnet: RunningDevnet) -> None:
    other = token_address(devnet, "fot-3")
    cases = [
        ({"simulateLiquidity": "maybe"}, 400),
        ({"forceSimulateLiquidity": "2"}, 400),
        ({"pair": "0x1234"}, 400),
        ({"pair": other}, 404),  # a contract, but not a pool of this token
    ]
    for extra, status in cases:
        response = await get(http, "/v2/IsHoneypot", address=PLAIN_LOWER, **extra)
        assert response.status_code == status, (extra, response.text)
        assert_error_shape(response)
    response = await http.get("/v2/IsHoneypot", params={"address": PLAIN_LOWER, "pair": other})
    assert response.status_code in (400, 404), response.text


async def test_repeated_and_unknown_parameters(http: httpx.AsyncClient) -> None:
    same = [("address", PLAIN_LOWER)] * 1_000 + [("chainID", str(CHAIN))]
    response = await http.get("/v2/IsHoneypot", params=tuple(same))
    assert response.status_code == 200, response.text
    mixed = [("address", PLAIN_LOWER), ("address", "0xbad"), ("chainID", str(CHAIN))]
    for params in (mixed, mixed[::-1], [*mixed, ("chainID", "1")]):
        response = await http.get("/v1/GetPairs", params=tuple(params))
        assert_sane(response)
        assert response.status_code in (200, 400)
    noise = [(f"p{i}", "x" * 20) for i in range(500)] + [("address", PLAIN_LOWER)]
    response = await http.get("/v1/GetPairs", params=tuple(noise))
    assert response.status_code == 200, response.text


def raw_request_line(url: str, target: bytes) -> bytes:
    """Status line of the answer to ``GET <target>`` sent on a raw socket."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: tokenrisk\r\n\r\n")
        return sock.recv(64).split(b"\r\n")[0]


async def test_huge_query_strings(http: httpx.AsyncClient, live: LiveServer) -> None:
    response = await http.get("/v2/IsHoneypot", params={"address": "0x" + "a" * 60_000})
    assert response.status_code == 400
    assert_error_shape(response)
    for size in (200_000, 2_000_000):
        line = raw_request_line(live.url, b"/v2/IsHoneypot?address=0x" + b"a" * size)
        assert line.split()[1] in (b"400", b"413", b"414", b"431"), line
    assert (await get(http, "/v1/GetPairs", address=PLAIN_LOWER)).status_code == 200


async def test_unknown_routes_and_methods_are_typed(http: httpx.AsyncClient) -> None:
    for method, path, status in [
        ("GET", "/v3/IsHoneypot", 404),
        ("GET", "/v2/IsHoneypot/../../etc/passwd", 404),
        ("POST", "/v2/IsHoneypot", 405),
        ("DELETE", "/v1/TopHolders", 405),
    ]:
        response = await http.request(method, path)
        assert response.status_code == status, (method, path, response.text)
        assert_error_shape(response)


# ODD TARGETS


async def test_eoa_and_empty_addresses(http: httpx.AsyncClient, devnet: RunningDevnet) -> None:
    for address in (devnet.manifest["addresses"]["OWNER"], "0x" + "0" * 40):
        honeypot = await get(http, "/v2/IsHoneypot", address=address)
        assert honeypot.status_code == 404, honeypot.text
        assert_error_shape(honeypot)
        assert (await get(http, "/v1/GetPairs", address=address)).json() == []
        holders = await get(http, "/v1/TopHolders", address=address)
        assert holders.status_code == 404, holders.text
        verification = await get(http, "/v2/GetContractVerification", address=address)
        assert verification.json()["isContract"] is False


@pytest.mark.parametrize("name", ["V2_FACTORY", "V2_ROUTER", "NPM"])
async def test_contracts_that_are_not_fungible_tokens(
    http: httpx.AsyncClient, devnet: RunningDevnet, name: str
) -> None:
    address = devnet.manifest["addresses"][name]
    for path in PATHS:
        response = await get(http, path, address=address)
        assert_sane(response, devnet.url)
        assert response.status_code in (200, 400, 404), (path, response.text)
    response = await get(http, "/v2/IsHoneypot", address=address)
    if name == "NPM":  # an ERC-721 answers totalSupply()/balanceOf(): no pool to trade in
        assert response.status_code == 404, response.text
        assert_error_shape(response)
        assert response.json()["error"] == "No pairs found"
    else:  # a router or a factory is not a token: a clear error saying so
        assert response.status_code == 400, response.text
        assert_error_shape(response)
        assert "not an ERC-20 token" in response.json()["error"]


@pytest.mark.parametrize(
    ("token_id", "is_honeypot"),
    [
        ("revert-name", False),
        ("bytes32-name", False),
        ("gas-infinite", True),
        ("gas-heavy-sell", False),
    ],
)
async def test_tokens_with_hostile_getters_and_gas_burners(
    http: httpx.AsyncClient, devnet: RunningDevnet, token_id: str, is_honeypot: bool
) -> None:
    address = token_address(devnet, token_id)
    for path in PATHS:
        response = await get(http, path, address=address)
        assert response.status_code == 200, (path, response.text)
    body = (await get(http, "/v2/IsHoneypot", address=address)).json()
    assert body["honeypotResult"]["isHoneypot"] is is_honeypot, body
    assert isinstance(body["token"]["name"], str)

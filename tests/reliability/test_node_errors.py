"""A failing node call is an error end to end: never a wrong 200, never cached, no leak.

Each scenario puts a fake node between the service and the devnet (an injected RPC
transport that forwards to anvil and replaces chosen answers): a provider's JSON-RPC
error on one kind of call, garbage, corrupt gzip, hostile nesting, a 200 MB reply.
Before the fix these read as "not a contract", ``GetPairs: []``, ``totalSupply: "0"``
or "no pair" and were cached; now the request gets a typed 502/503 with our own
message, and the same request after the fault answers correctly (nothing was cached).

The secret grep: the service is configured with an RPC URL holding a provider key and
with an API key sent as ``apiKey``; the faults quote the provider key the way real
providers echo URLs.  No response body and no log line of any scenario (or of the
access log of a real server) may contain either secret.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import fakenode
import httpx
import pytest
from fakenode import Fault, FaultyNode
from harness import CHAIN, assert_error_shape
from liveserver import LiveServer

from tokenrisk.api.app import create_app
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

PROVIDER_KEY = "pk7Hq2Zr9Xw4Lm8Nc3Vb6Td1"
API_KEY = "ak-5Fj8Kd2Lq9Wm4Xr7Zt3Yp6"
RPC_URL = f"https://eth.provider.test/v3/{PROVIDER_KEY}"
SECRETS = (PROVIDER_KEY, API_KEY, RPC_URL)

LEAKY = Fault(-32000, f"upstream {RPC_URL} failed: connection reset")
THROTTLED = Fault(-32005, f"daily request count exceeded for {PROVIDER_KEY}, rate limited")
INTERNAL = Fault(-32603, f"internal error (key {PROVIDER_KEY})")

SELECTORS = {
    "getPair": "0xe6a43905",
    "totalSupply": "0x18160ddd",
    "balanceOf": "0x70a08231",
}


def on(method: str, fault: Fault, selector: str | None = None) -> Callable[[Any], Fault | None]:
    """A chooser: ``fault`` for every call of ``method`` (with ``selector`` in its data)."""

    def choose(call: dict[str, Any]) -> Fault | None:
        if call["method"] != method:
            return None
        if selector is not None:
            data = str((call["params"] or [{}])[0].get("data", ""))
            if not data.startswith(selector):
                return None
        return fault

    return choose


def huge(body: Any) -> httpx.Response:
    return fakenode.endless(200 * 1024 * 1024)(body)


Scenario = tuple[str, str, Callable[[Any], Fault | None] | None, Any, set[int]]
SCENARIOS: list[Scenario] = [
    # (name, endpoint, chooser, whole-response fault, statuses)
    ("code-throttled", "/v2/IsHoneypot", on("eth_getCode", THROTTLED), None, {503}),
    ("code-error", "/v2/GetContractVerification", on("eth_getCode", LEAKY), None, {502}),
    (
        "pair-lookup-error",
        "/v1/GetPairs",
        on("eth_call", INTERNAL, SELECTORS["getPair"]),
        None,
        {502},
    ),
    (
        "pair-lookup-throttled",
        "/v2/IsHoneypot",
        on("eth_call", THROTTLED, SELECTORS["getPair"]),
        None,
        {503},
    ),
    (
        "supply-error",
        "/v2/IsHoneypot",
        on("eth_call", LEAKY, SELECTORS["totalSupply"]),
        None,
        {502},
    ),
    (
        "reserves-error",
        "/v1/GetPairs",
        on("eth_call", INTERNAL, SELECTORS["balanceOf"]),
        None,
        {502},
    ),
    ("logs-error", "/v1/TopHolders", on("eth_getLogs", THROTTLED), None, {503}),
    ("simulation-error", "/v2/IsHoneypot", on("eth_simulateV1", LEAKY), None, {502}),
    ("garbage", "/v2/IsHoneypot", None, fakenode.garbage, {502}),
    ("corrupt-gzip", "/v1/GetPairs", None, fakenode.corrupt_gzip, {502}),
    ("deep-nesting", "/v1/TopHolders", None, fakenode.deeply_nested(100_000), {502}),
    ("200-mb", "/v1/GetPairs", None, huge, {502}),
]


def pooled_token(devnet: RunningDevnet) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["pools"]))


def assert_correct(path: str, body: Any) -> None:
    """What the fault-free answer must look like for the pooled token."""
    if path == "/v1/GetPairs":
        assert body and body[0]["Pair"]["Address"]
    elif path == "/v1/TopHolders":
        assert body["holders"] and int(body["totalSupply"]) > 0
    elif path == "/v2/GetContractVerification":
        assert body["isContract"] is True
    else:
        assert body["simulationSuccess"] is True and body["token"]["name"]
        assert "pair" in body and "honeypotResult" in body


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
async def test_a_node_failure_is_an_error_not_an_answer(
    scenario: Scenario,
    make_service: Any,
    devnet: RunningDevnet,
    caplog: pytest.LogCaptureFixture,
) -> None:
    name, path, choose, whole, statuses = scenario
    caplog.set_level(logging.DEBUG)
    node = ChainNode(id=CHAIN, rpc_url=RPC_URL)
    service = make_service(
        devnet.url, cache_ttl=60.0, deadline=60.0, api_keys=frozenset({API_KEY}), nodes=(node,)
    )
    faulty = FaultyNode(devnet.url, choose, whole)
    await service.nodes[CHAIN].rpc.aclose()
    rpc_settings = RpcSettings(timeout=20.0, max_reply_bytes=4 * 1024 * 1024)
    service.nodes[CHAIN].rpc = RpcClient(RPC_URL, rpc_settings, "devnet node", transport=faulty)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    params = {"address": pooled_token(devnet), "chainID": CHAIN, "apiKey": API_KEY}
    texts: list[str] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        failed = await http.get(path, params=params)
        texts.append(failed.text)
        assert failed.status_code in statuses, (name, failed.status_code, failed.text)
        assert_error_shape(failed)
        assert faulty.faulted > 0  # the fault was really served

        faulty.choose, faulty.whole = (lambda call: None), None
        recovered = await http.get(path, params=params)
        texts.append(recovered.text)
        assert recovered.status_code == 200, recovered.text  # nothing wrong was cached
        assert_correct(path, recovered.json())
        health = await http.get("/health", params={"apiKey": API_KEY})
        texts.append(health.text)
    await faulty.aclose()
    assert_no_secret(texts + [caplog.text] + [r.getMessage() for r in caplog.records])


def assert_no_secret(texts: list[str]) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text[:2000])


async def test_health_of_a_failing_node_quotes_no_node_text(
    make_service: Any, devnet: RunningDevnet, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    service = make_service(devnet.url, nodes=(ChainNode(id=CHAIN, rpc_url=RPC_URL),))
    faulty = FaultyNode(devnet.url, on("eth_getBlockByNumber", LEAKY))
    await service.nodes[CHAIN].rpc.aclose()
    service.nodes[CHAIN].rpc = RpcClient(RPC_URL, RpcSettings(), "devnet node", transport=faulty)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        health = await http.get("/health")
    assert health.status_code == 503
    line = health.json()["chains"][0]
    assert line["reachable"] is False and line["error"] == "the node answered with an error"
    await faulty.aclose()
    assert_no_secret([health.text, caplog.text])


def test_access_log_never_shows_api_keys(
    devnet: RunningDevnet,
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    settings = Settings(
        devnet=False,
        data_dir=tmp_path_factory.mktemp("access"),
        api_keys=frozenset({API_KEY}),
        nodes=(ChainNode(id=CHAIN, rpc_url=RPC_URL),),
    )
    server = LiveServer(settings, devnet, access_log=True, log_level="info", log_config=None)
    server.start()
    try:
        for key in (API_KEY, "a-wrong-key-someone-typed"):
            httpx.get(f"{server.url}/openapi.json", params={"apiKey": key}, timeout=10)
    finally:
        server.stop()
    access = [r for r in caplog.records if r.name == "uvicorn.access"]
    assert len(access) >= 2
    lines = [r.getMessage() for r in access]
    assert all("apiKey=***" in line for line in lines), lines
    assert_no_secret(lines + [caplog.text])
    assert not any("a-wrong-key-someone-typed" in line for line in lines)

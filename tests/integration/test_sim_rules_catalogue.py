"""The whole IsHoneypot catalogue on anvil, with every simulation checked against a real
node's rules (tests/simrules.py, from go-ethereum's simulate.go) on the way out, and a
provider's 16-block cap: the verdicts are the catalogue's, and not one request breaks a
rule (anvil would accept it; geth, erigon, reth or a provider would not)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from simrules import Base, call_violations, simulate_violations

from tokenrisk.api.app import create_app
from tokenrisk.config import OwnerPowersConfig, Settings
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration

CAP = 16
NODES: list[Any] = []
VIOLATIONS: list[str] = []
CHECKED: list[str] = []


def _watch(rpc: Any) -> None:
    """Check every eth_simulateV1 (and every eth_call tokenrisk prices: a simulated
    trade's) against the rules before it is sent."""
    bases: dict[str, Base] = {}
    call, batch, typed = rpc.call, rpc.batch, rpc.call_typed

    async def base_of(tag: str) -> Base | None:
        if not tag.startswith("0x"):
            return None
        if tag not in bases:
            b = await call("eth_getBlockByNumber", [tag, False])
            bases[tag] = Base(
                int(b["number"], 16),
                int(b["timestamp"], 16),
                int(b["gasLimit"], 16),
                int(b.get("baseFeePerGas") or "0x0", 16),
            )
        return bases[tag]

    async def check(method: str, params: Sequence[Any]) -> None:
        if method == "eth_simulateV1":
            base = await base_of(params[1])
            found = ["not pinned"] if base is None else simulate_violations(list(params), base, CAP)
        elif method == "eth_call" and "gasPrice" in params[0]:
            base = await base_of(params[1])
            found = ["not pinned"] if base is None else call_violations(list(params), base)
        else:
            return
        CHECKED.append(method)
        VIOLATIONS.extend(f"{method}: {v}" for v in found)

    def checked(send: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def wrapper(method: str, params: Sequence[Any] = (), *a: Any, **k: Any) -> Any:
            await check(method, params)
            return await send(method, params, *a, **k)

        return wrapper

    async def batched(calls: Sequence[tuple[str, Sequence[Any]]], **k: Any) -> Any:
        for method, params in calls:
            await check(method, params)
        return await batch(calls, **k)

    rpc.call, rpc.call_typed, rpc.batch = checked(call), checked(typed), batched


@pytest.fixture(scope="module")
async def client(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    settings = Settings(  # no reuse of answers: each test sees what the node did for it
        devnet=False,
        data_dir=tmp_path_factory.mktemp("rules"),
        deadline=60.0,
        cache_ttl=0.0,
        owner_powers=OwnerPowersConfig(cache_ttl=0.0),
    )
    svc: Service = connect_devnet(
        settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent
    )
    node = svc.nodes[31337]
    node._capabilities = replace(await node.capabilities(), simulate_max_blocks=CAP)
    _watch(node.rpc)
    NODES.append(node)
    app = create_app(settings, svc)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http
    await svc.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "entry_id" in metafunc.fixturenames:
        catalogue = json.loads(Path("src/tokenrisk/devnet/catalogue.json").read_text())
        ids = [t["id"] for t in catalogue["tokens"] if t.get("pools")]
        metafunc.parametrize("entry_id", ids)


async def test_same_verdicts_with_a_16_block_cap_and_no_rule_broken(
    client: httpx.AsyncClient, devnet: Any, entry_id: str
) -> None:
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    expected = entry["expected"]
    VIOLATIONS.clear()
    CHECKED.clear()
    response = await client.get(
        "/v2/IsHoneypot", params={"address": entry["address"], "chainID": 31337}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["summary"]["risk"] in expected["risk"], body.get("honeypotResult")
    assert body["honeypotResult"]["isHoneypot"] is expected["isHoneypot"]
    flags = {f["flag"] for f in body["summary"].get("flags", [])}
    assert set(expected.get("flags", [])) <= flags
    if expected.get("holderFailures"):
        assert int(body["holderAnalysis"]["failed"]) > 0
    assert "eth_simulateV1" in CHECKED and "eth_call" in CHECKED
    assert sorted(set(VIOLATIONS)) == []


async def _check(client: httpx.AsyncClient, devnet: Any, entry_id: str) -> dict[str, Any]:
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    response = await client.get("/v2/IsHoneypot", params={"address": entry["address"]})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_block_counting_time_bomb_is_found_by_eth_call_with_block_overrides(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    """Sells close 5,000 blocks after launch: inside the 16-block cap only the eth_call
    with block overrides (50,400 blocks ahead) can see it."""
    body = await _check(client, devnet, "time-bomb")
    flags = {f["flag"]: f["description"] for f in body["summary"]["flags"]}
    assert "Sells are closed" in flags["sell_blocked_later"], flags
    assert "unchecked" not in body


async def test_what_a_node_cannot_do_is_stated_not_guessed(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    node = NODES[-1]
    caps = await node.capabilities()
    node._capabilities = replace(caps, call_block_overrides=False)
    try:
        body = await _check(client, devnet, "plain")
    finally:
        node._capabilities = caps
    assert body["honeypotResult"]["isHoneypot"] is False
    assert body["unchecked"] == [
        "delayed sell by block count: the node ignores eth_call block overrides",
        "future sells by block count: the node ignores eth_call block overrides",
    ]
    explanation = body["taxDetails"]["explanation"]
    assert f"not checked: {body['unchecked'][0]}" in explanation

"""simulateLiquidity / forceSimulateLiquidity: a pool made inside the simulation only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def client(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("liq"), deadline=60.0)
    svc: Service = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    transport = httpx.ASGITransport(app=create_app(settings, svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http
    await svc.close()


def _address(devnet: Any, entry_id: str) -> str:
    return str(next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)["address"])


async def _check(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/v2/IsHoneypot", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_unlisted_token_is_404_no_pairs_without_simulated_liquidity(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    params = {"address": _address(devnet, "no-pair"), "chainID": 31337}
    response = await client.get("/v2/IsHoneypot", params=params)
    assert response.status_code == 404
    body = response.json()
    assert (body["code"], body["error"]) == (404, "No pairs found")
    assert "no pool of this token" in body["reason"]
    assert body["token"]["address"] == params["address"]


async def test_simulated_liquidity_makes_an_unlisted_token_checkable(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await _check(
        client, address=_address(devnet, "no-pair"), chainID=31337, simulateLiquidity="true"
    )
    assert body["simulationSuccess"] is True
    assert body["honeypotResult"]["isHoneypot"] is False
    assert body["pair"]["pair"]["type"] == "UniswapV2"
    # the pool exists only in the simulation, so the chain still has no code there
    code = await client.get("/v1/GetPairs", params={"address": _address(devnet, "no-pair")})
    assert code.json() == []


async def test_simulate_liquidity_uses_an_existing_pair(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = next(t for t in devnet.manifest["tokens"] if t["id"] == "fot-3")
    body = await _check(client, address=token["address"], chainID=31337, simulateLiquidity="true")
    assert body["pairAddress"] in {p["address"] for p in token["pools"]}
    assert "contractCode" in body  # a real pool can be traced


async def test_forced_liquidity_still_finds_the_trap(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await _check(
        client,
        address=_address(devnet, "sell-whitelist"),
        chainID=31337,
        forceSimulateLiquidity="true",
    )
    assert body["honeypotResult"]["isHoneypot"] is True
    assert body["summary"]["risk"] == "honeypot"


async def test_forced_liquidity_measures_taxes(client: httpx.AsyncClient, devnet: Any) -> None:
    body = await _check(
        client, address=_address(devnet, "high-tax"), chainID=31337, forceSimulateLiquidity="true"
    )
    assert abs(body["simulationResult"]["buyTax"] - 25) < 0.5
    assert abs(body["simulationResult"]["sellTax"] - 35) < 0.5


async def test_simulated_liquidity_requires_chain_id(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    response = await client.get(
        "/v2/IsHoneypot",
        params={"address": _address(devnet, "no-pair"), "simulateLiquidity": "true"},
    )
    assert response.status_code == 400
    assert response.json()["code"] == 400

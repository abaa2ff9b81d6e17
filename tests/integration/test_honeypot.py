"""IsHoneypot through HTTP against the devnet: every catalogue token gets the verdict,
taxes, limits and flags its catalogue entry expects, in the exact wire shape.

The catalogue is only the expectation here; the service never sees it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from expectations import assert_details

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration

RISK_FIELDS = {"risk", "riskLevel", "flags"}


@pytest.fixture(scope="session")
async def service(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    data_dir = tmp_path_factory.mktemp("svc")
    settings = Settings(devnet=False, data_dir=data_dir, deadline=60.0)
    build_dir = (
        Path(devnet.manifest_path).parent
        if hasattr(devnet, "manifest_path")
        else Path("build/devnet")
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, build_dir)
    yield svc
    await svc.close()


@pytest.fixture(scope="session")
async def client(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http


def _tokens(devnet: Any) -> list[dict[str, Any]]:
    return list(devnet.manifest["tokens"])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "entry_id" in metafunc.fixturenames:
        import json

        catalogue = json.loads(Path("src/tokenrisk/devnet/catalogue.json").read_text())
        metafunc.parametrize("entry_id", [t["id"] for t in catalogue["tokens"]])


def _entry(devnet: Any, entry_id: str) -> dict[str, Any]:
    return next(t for t in _tokens(devnet) if t["id"] == entry_id)


def _no_nulls(value: Any, path: str = "$") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert item is not None, f"{path}.{key} is null"
            _no_nulls(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_nulls(item, f"{path}[{i}]")


def _check_shape(body: dict[str, Any]) -> None:
    _no_nulls(body)
    assert set(body["summary"]) <= RISK_FIELDS and "risk" in body["summary"]
    assert isinstance(body["simulationSuccess"], bool)
    assert isinstance(body["token"]["decimals"], int)
    if body["simulationSuccess"]:
        sim = body["simulationResult"]
        assert isinstance(sim["buyGas"], str) and sim["buyGas"].isdigit()
        assert isinstance(sim["buyTax"], float | int)
        assert "honeypotResult" in body
    else:
        assert isinstance(body["simulationError"], str)
    if "pair" in body:
        pair = body["pair"]
        assert isinstance(pair["reserves0"], str) and pair["reserves0"].isdigit()
        assert pair["pair"]["type"] in ("UniswapV2", "UniswapV3", "PancakeSwapV3", "DevSwapV2")
        assert isinstance(pair["liquidity"], float | int)
    assert body["chain"]["id"] == "31337"


async def test_catalogue_verdicts(client: httpx.AsyncClient, devnet: Any, entry_id: str) -> None:
    entry = _entry(devnet, entry_id)
    expected = entry["expected"]
    response = await client.get(
        "/v2/IsHoneypot", params={"address": entry["address"], "chainID": 31337}
    )
    if not entry["pools"]:  # the live API's answer for a token without pairs
        assert response.status_code == 404, response.text
        assert response.json()["error"] == "No pairs found"
        return
    assert response.status_code == 200, response.text
    body = response.json()
    _check_shape(body)
    assert body["honeypotResult"]["isHoneypot"] is expected["isHoneypot"], body["honeypotResult"]
    assert_details(body, expected)


async def test_pair_address_resolves_to_token(client: httpx.AsyncClient, devnet: Any) -> None:
    entry = next(t for t in _tokens(devnet) if t["pools"] and t["expected"]["sellable"])
    pool = entry["pools"][0]["address"]
    body = (await client.get("/v2/IsHoneypot", params={"address": pool.lower()})).json()
    assert body["token"]["address"] == entry["address"]
    assert body["pairAddress"] == pool


async def test_invalid_address_is_400(client: httpx.AsyncClient) -> None:
    response = await client.get("/v2/IsHoneypot", params={"address": "0x1234"})
    assert response.status_code == 400
    assert response.json() == {"code": 400, "error": response.json()["error"]}


async def test_honeypot_reason_names_the_step_and_the_tokens_own_reason(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    entry = _entry(devnet, "sell-whitelist")
    body = (await client.get("/v2/IsHoneypot", params={"address": entry["address"]})).json()
    reason = body["honeypotResult"]["honeypotReason"]
    assert reason.startswith("sell failed: execution reverted: Seller not whitelisted (router: ")
    assert "TRANSFER_FROM_FAILED" in reason


async def test_a_gas_price_rule_is_named_at_a_real_gas_price(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    """The failure is explained by a transfer priced like the sell itself: at gas price 0
    the token's anti-bot rule would pass and only the router's wrapper would be named."""
    entry = _entry(devnet, "gas-price-cap")
    body = (await client.get("/v2/IsHoneypot", params={"address": entry["address"]})).json()
    reason = body["honeypotResult"]["honeypotReason"]
    assert reason.startswith("sell failed: execution reverted: Gas price above"), reason
    assert "(router: " in reason


async def test_out_of_gas_is_named_with_the_innermost_frame(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    entry = _entry(devnet, "gas-infinite")
    body = (await client.get("/v2/IsHoneypot", params={"address": entry["address"]})).json()
    reason = body["honeypotResult"]["honeypotReason"]
    assert reason.startswith("sell failed: out of gas"), reason
    assert "(router: " in reason


async def test_non_token_addresses_get_a_clear_error(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    addresses = devnet.manifest["addresses"]
    cases = {
        addresses["OWNER"]: (404, "externally owned account"),
        addresses["V2_ROUTER"]: (400, "not an ERC-20 token"),
        devnet.manifest["stablePools"][0]["address"]: (400, "pool of two base tokens"),
    }
    for address, (status, words) in cases.items():
        response = await client.get("/v2/IsHoneypot", params={"address": address})
        assert response.status_code == status, response.text
        body = response.json()
        assert body["code"] == status and words in body["error"], body

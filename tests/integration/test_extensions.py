"""The documented extensions of the API on the devnet: the IsHoneypot batch, the
``journey`` of IsHoneypot and GetContractVerification's ``fullCheckReason``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration
BATCH = "/v2/IsHoneypot/batch"
NOTHING = "0x" + "00" * 19 + "07"


@pytest.fixture(scope="module")
async def client(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("ext"), deadline=60.0)
    service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    transport = httpx.ASGITransport(app=create_app(settings, service))
    async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=120) as http:
        yield http
    await service.close()


def address(devnet: RunningDevnet, token_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == token_id))


async def test_batch_answers_in_order_each_with_its_own_status(
    client: httpx.AsyncClient, devnet: RunningDevnet
) -> None:
    plain, trap = address(devnet, "plain"), address(devnet, "sell-whitelist")
    tokens: list[dict[str, Any]] = [
        {"address": trap, "chainID": 31337},
        {"address": "0x1234"},
        {"address": plain},
        {"address": NOTHING, "chainID": "31337"},
        {"address": plain, "chainID": "999"},
        {"address": trap, "chainID": 31337},
    ]
    reply = await client.post(BATCH, json={"tokens": tokens})
    assert reply.status_code == 200
    results = reply.json()["results"]
    assert [r["address"] for r in results] == [t["address"] for t in tokens]
    assert [r["status"] for r in results] == [200, 400, 200, 404, 400, 200]
    assert results[0] == results[5]  # the same token twice: checked once, answered twice
    assert results[0]["chainID"] == "31337" and "chainID" not in results[1]
    single = await client.get("/v2/IsHoneypot", params={"address": trap, "chainID": "31337"})
    assert results[0]["result"] == single.json()
    assert results[0]["result"]["honeypotResult"]["isHoneypot"] is True
    assert results[2]["result"]["honeypotResult"]["isHoneypot"] is False
    assert results[1]["error"] == {"code": 400, "error": results[1]["error"]["error"]}
    assert "result" not in results[3] and results[3]["error"]["code"] == 404


@pytest.mark.parametrize("count", [0, 51])
async def test_batch_size_is_bounded(client: httpx.AsyncClient, count: int) -> None:
    reply = await client.post(BATCH, json={"tokens": [{"address": NOTHING}] * count})
    assert reply.status_code == 400
    assert "1 to 50 tokens" in reply.json()["error"]


async def test_batch_rejects_a_malformed_body(client: httpx.AsyncClient) -> None:
    for body in ({"addresses": [NOTHING]}, {"tokens": [{"adress": NOTHING}]}, [NOTHING]):
        reply = await client.post(BATCH, json=body)
        assert reply.status_code == 400
        assert set(reply.json()) == {"code", "error"}


async def test_every_address_of_a_batch_counts_against_the_rate_limit(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, rate_limit_per_minute=3)
    service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            two = await http.post(BATCH, json={"tokens": [{"address": "0x12"}] * 2})
            assert two.status_code == 200  # 2 of 3 spent
            again = await http.post(BATCH, json={"tokens": [{"address": "0x12"}] * 2})
            assert again.status_code == 429  # 1 left: refused as a whole
            single = await http.get("/v2/IsHoneypot", params={"address": "0x12"})
            assert single.status_code == 429  # and what it counted stays counted
    finally:
        await service.close()


async def test_journey_names_the_failing_step_and_its_reason(
    client: httpx.AsyncClient, devnet: RunningDevnet
) -> None:
    body = (
        await client.get("/v2/IsHoneypot", params={"address": address(devnet, "paused")})
    ).json()
    assert [s["step"] for s in body["journey"]] == ["buy", "transfer", "sell"]
    assert [s["outcome"] for s in body["journey"]] == ["failed", "not reached", "not reached"]
    assert "reverted" in body["journey"][0]["reason"]  # the node's revert text for the buy
    ok = (
        await client.get("/v2/IsHoneypot", params={"address": address(devnet, "high-tax")})
    ).json()
    sell = ok["journey"][2]
    assert sell["outcome"] == "ok" and sell["tax"] == ok["simulationResult"]["sellTax"]
    assert sell["gas"] == ok["simulationResult"]["sellGas"]


@pytest.mark.parametrize(
    ("token_id", "reason"),
    [
        ("no-pair", "no pool of the token was found"),
        ("sell-whitelist", "the simulated sell failed"),
        ("paused", "the simulated buy failed"),
    ],
)
async def test_a_check_that_is_not_full_says_why(
    client: httpx.AsyncClient, devnet: RunningDevnet, token_id: str, reason: str
) -> None:
    params = {"address": address(devnet, token_id), "chainID": "31337"}
    body = (await client.get("/v2/GetContractVerification", params=params)).json()
    assert body["fullCheckPerformed"] is False
    assert body["fullCheckReason"].startswith(reason)


async def test_a_full_check_has_no_reason(client: httpx.AsyncClient, devnet: RunningDevnet) -> None:
    params = {"address": address(devnet, "plain"), "chainID": "31337"}
    body = (await client.get("/v2/GetContractVerification", params=params)).json()
    assert body["fullCheckPerformed"] is True and "fullCheckReason" not in body
    nothing = await client.get("/v2/GetContractVerification", params={"address": NOTHING})
    assert nothing.json()["fullCheckReason"].startswith("there is no contract")

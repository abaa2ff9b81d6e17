"""The probe contract on Uniswap V4 pools: Permit2 approvals and the Universal Router's
V4 swap from inside one call.

Two uses, both checked here: the call tree of a buy and a sell (``debug_traceCall`` over
one probe call), which must reach the PoolManager and the pool's hook so their source is
checked like any contract on the path; and the last-resort simulation for a node that
refuses ``eth_simulateV1`` and the ``eth_call`` runner (a FaultyNode refuses both), which
must still give the V4 verdicts and the hook's buy fee.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakenode import Fault, FaultyNode

from tokenrisk.api.app import create_app
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration

DEVNET_ID = 31337
NO_SIMULATE = Fault(-32601, "the method eth_simulateV1 does not exist/is not available")
NO_RUNNER = Fault(-32602, "state override of an account with a balance is not supported")


def _refuse_simulate_and_runner(call: dict[str, Any]) -> Fault | None:
    """No eth_simulateV1, and no eth_call from an account to itself with overrides (the
    runner's shape); the probe's own call (from a caller to the probe) passes."""
    if call["method"] == "eth_simulateV1":
        return NO_SIMULATE
    if call["method"] == "eth_call" and len(call["params"]) > 2:
        tx = call["params"][0]
        if str(tx.get("from", "")).lower() == str(tx.get("to", "")).lower():
            return NO_RUNNER
    return None


async def _client(service: Service) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(service.settings, service))
    return httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test")


@pytest.fixture(scope="module")
async def services(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient, FaultyNode]]:
    """(a client of a service on the devnet, one whose node refuses the simulations)."""
    made = []
    for name in ("direct", "probe-only"):
        data = tmp_path_factory.mktemp(name)
        settings = Settings(devnet=False, data_dir=data, deadline=120.0)
        made.append(connect_devnet(settings, devnet.url, devnet.manifest, Path("build/devnet")))
    faulty = FaultyNode(devnet.url, _refuse_simulate_and_runner)
    rpc = RpcClient(devnet.url, RpcSettings(retries=0), "devnet node", transport=faulty)
    made[1].nodes[DEVNET_ID].rpc = rpc
    direct, probe_only = await _client(made[0]), await _client(made[1])
    yield direct, probe_only, faulty
    for http in (direct, probe_only):
        await http.aclose()
    for service in made:
        await service.close()
    await faulty.aclose()


def _token(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


@pytest.mark.parametrize("token_id", ["v4-hook-fee-1", "v4-erc20-weth"])
async def test_the_call_tree_reaches_the_pool_manager_and_the_hook(
    services: tuple[httpx.AsyncClient, httpx.AsyncClient, FaultyNode], devnet: Any, token_id: str
) -> None:
    direct, _, _ = services
    token = _token(devnet, token_id)
    hook = token["pools"][0]["key"][4]
    manager = devnet.manifest["addresses"]["POOL_MANAGER"]
    params = {"address": token["address"], "chainID": DEVNET_ID}
    body = (await direct.get("/v2/GetContractVerification", params=params)).json()
    assert body["fullCheckPerformed"] is True, body
    called = {c["to"] for c in body["contractCalls"]}
    assert {hook, manager, token["address"]} <= called, body["contractCalls"]
    assert hook in body["contractsOpenSource"]


@pytest.mark.parametrize(
    ("token_id", "buy_fee"),
    [
        ("v4-plain", 0.0),
        ("v4-hook-fee-1", 1.0),
        ("v4-erc20-weth", 2.0),
        ("v4-hook-sell-block", 0.0),
    ],
)
async def test_the_probe_alone_trades_v4_pools(
    services: tuple[httpx.AsyncClient, httpx.AsyncClient, FaultyNode],
    devnet: Any,
    token_id: str,
    buy_fee: float,
) -> None:
    _, probe_only, faulty = services
    token = _token(devnet, token_id)
    before = faulty.faulted
    params = {"address": token["address"], "chainID": DEVNET_ID}
    response = await probe_only.get("/v2/IsHoneypot", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert faulty.faulted > before  # the simulations were refused: the probe answered
    assert any("probe contract" in n for n in body["taxDetails"]["explanation"]), body
    assert body["honeypotResult"]["isHoneypot"] is token["expected"]["isHoneypot"], body
    if not token["expected"]["isHoneypot"]:
        assert body["simulationResult"]["buyTax"] == pytest.approx(buy_fee, abs=0.5)

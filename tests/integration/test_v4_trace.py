"""A V4 swap's call trace passes through the PoolManager into the pool's hook, so the
hook's source is checked like any contract on the path (#25); a hook whose source no
registry holds makes the path closed-source.  Real anvil, real trace; the source
registry is the devnet's own with one hook's entry turned into "not verified"."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_utils.crypto import keccak
from receipts import node_call

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.processes import SOURCES_FILE
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

CHAIN = "31337"
AFTER_SWAP = (
    "0x"
    + keccak(
        text="afterSwap(address,(address,address,uint24,int24,address),"
        "(bool,int256,uint160),int256,bytes)"
    )[:4].hex()
)
HIDDEN = "v4-hook-fee-1"  # its hook's registry entry says "not verified"


def _entry(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


def _hook(devnet: Any, token_id: str) -> str:
    return str(_entry(devnet, token_id)["pools"][0]["key"][4])


@pytest.fixture(scope="module")
async def http(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    build = tmp_path_factory.mktemp("sources")
    real = Path(devnet.manifest_path).parent / SOURCES_FILE
    sources = json.loads(real.read_text(encoding="utf-8"))
    hidden = _hook(devnet, HIDDEN).lower()
    sources = {a: ({"verified": False} if a.lower() == hidden else v) for a, v in sources.items()}
    (build / SOURCES_FILE).write_text(json.dumps(sources), encoding="utf-8")
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("data"), cache_ttl=0)
    service = connect_devnet(settings, devnet.url, devnet.manifest, build)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as client:
        yield client
    await service.close()


async def _get(http: httpx.AsyncClient, path: str, address: str) -> dict[str, Any]:
    response = await http.get(path, params={"address": address, "chainID": CHAIN})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_the_hook_is_on_the_traced_path(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, "v4-hook-owner-fee")
    hook, manager = _hook(devnet, entry["id"]), entry["pools"][0]["address"]
    body = await _get(http, "/v2/GetContractVerification", entry["address"])
    assert body["fullCheckPerformed"] is True, body
    assert body["contractsOpenSource"][hook] is True
    assert body["contractsOpenSource"][manager] is True
    assert body["contractsOpenSource"][entry["address"]] is True
    edges = {(c["from"], c["to"], c.get("selector")) for c in body["contractCalls"]}
    assert (manager, hook, AFTER_SWAP) in edges, body["contractCalls"]
    assert any(to == entry["address"] for _, to, _ in edges)  # the token paid out


async def test_a_first_v4_trace_calls_only_what_its_route_predicts(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    """A first trace's code reads go out with the trace, on what every swap on the route
    calls (checks/traced_code.py ``route_contracts``); on V4 that is also Permit2 and
    the pool's hook, so a V4 trace's contracts need no read after it (issue #27)."""
    entry = _entry(devnet, "v4-hook-fee-1")
    addresses = devnet.manifest["addresses"]
    route = {
        entry["address"],
        entry["pools"][0]["address"],
        _hook(devnet, entry["id"]),
        addresses["UNIVERSAL_ROUTER"],
        addresses["PERMIT2"],
        addresses["WETH"],
    }
    body = await _get(http, "/v2/GetContractVerification", entry["address"])
    called = set(body["contractsOpenSource"])
    assert _hook(devnet, entry["id"]) in called
    assert {a.lower() for a in called} <= {a.lower() for a in route}, called - route


async def test_an_unverified_hook_is_reported(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, HIDDEN)
    hook = _hook(devnet, HIDDEN)
    body = await _get(http, "/v2/GetContractVerification", entry["address"])
    assert body["isRootOpenSource"] is True  # the token itself is verified
    assert body["summary"]["isOpenSource"] is False
    assert body["contractsOpenSource"][hook] is False
    honeypot = await _get(http, "/v2/IsHoneypot", entry["address"])
    assert honeypot["contractCode"]["openSource"] is False
    assert honeypot["contractCode"]["rootOpenSource"] is True


# THE HOOK'S BYTECODE READ STATICALLY

DEEP_HOOK = """// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {PoolKey, SwapParams} from "./V4Types.sol";

/// afterSwap closes swaps once its keeper, kept past every slot the caller search reads,
/// sets the share at 100%: no trial finds the keeper, the bytecode still shows the setter
contract DeepKeptHook {
    uint256[40] private pad;
    address private keeper;
    uint256 private sellBps;

    function adjust(uint256 bps) external {
        require(msg.sender == keeper, "no");
        sellBps = bps;
    }

    function afterSwap(address, PoolKey calldata, SwapParams calldata, int256, bytes calldata)
        external view returns (bytes4, int128)
    {
        require(sellBps < 10_000, "closed");
        return (this.afterSwap.selector, 0);
    }
}
"""
KEEPER_SLOT = "0x" + f"{40:064x}"


async def _rpc(devnet: Any, method: str, params: list[Any]) -> Any:
    return await node_call(devnet.url, method, params)


def _deep_hook_runtime(root: Path) -> str:
    from tokenrisk.devnet import solc

    repo = Path(__file__).resolve().parents[2]
    (root / "contracts").mkdir()
    (root / "tools").symlink_to(repo / "tools")
    (root / "node_modules").symlink_to(repo / "node_modules")
    (root / "contracts" / "V4Types.sol").write_text(
        (repo / "contracts" / "v4" / "V4Types.sol").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (root / "contracts" / "DeepKeptHook.sol").write_text(DEEP_HOOK, encoding="utf-8")
    artifacts = solc.load_artifacts(solc.compile_contracts(root, root / "out"))
    return str(artifacts["contracts"]["DeepKeptHook"]["deployedBytecode"])


async def test_a_hook_setter_no_trial_reaches_is_read_from_its_bytecode(
    http: httpx.AsyncClient, devnet: Any, tmp_path: Path
) -> None:
    """The pool's hook (same address, same permission bits) replaced by one whose keeper
    sits in slot 40, in a snapshot: the scan reports the hook's setter as static evidence
    named as the hook's, with the keeper as the caller."""
    entry = _entry(devnet, "v4-hook-owner-fee")
    hook = _hook(devnet, entry["id"])
    keeper = devnet.manifest["addresses"]["KEEPER"]
    runtime = _deep_hook_runtime(tmp_path)
    snapshot = await _rpc(devnet, "evm_snapshot", [])
    try:
        await _rpc(devnet, "anvil_setCode", [hook, runtime])
        word = "0x" + keeper[2:].lower().rjust(64, "0")
        await _rpc(devnet, "anvil_setStorageAt", [hook, KEEPER_SLOT, word])
        await _rpc(devnet, "evm_mine", [])  # a new head: nothing remembered applies
        body = await _get(http, "/v2/IsHoneypot", entry["address"])
    finally:
        assert await _rpc(devnet, "evm_revert", [snapshot]) is True
    powers = body["ownerPowers"]
    assert keeper not in {c["address"] for c in powers["callers"]}, powers["callers"]
    rule = next(f for f in powers["findings"] if f["id"] == "owner_can_change_transfer_rules")
    assert rule["confidence"] == "static" and rule["caller"] == keeper, rule
    assert rule["selector"] == "0x" + keccak(text="adjust(uint256)")[:4].hex()
    assert rule["detail"].startswith(f"through the pool's hook {hook}: "), rule
    assert {"what": "hook contract", "before": "-", "after": hook} in rule["evidence"]
    assert powers["renounced"] is False

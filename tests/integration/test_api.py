"""The HTTP API against the devnet: every endpoint's exact wire shape, every error path,
auth on and off, the rate limit, the results cache, /health and the OpenAPI document.

Failing nodes are real loopback servers: a closed port (unreachable), a server that
answers too late (deadline) and one that answers with something that is not JSON-RPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_utils import to_checksum_address
from receipts import mined, node_call

from tokenrisk.api.app import create_app
from tokenrisk.chain.abi import ZERO_ADDRESS, encode_call
from tokenrisk.chain.coalesce import CLOSE_GRACE
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.v4 import PoolKey, hook_permissions
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet
from tokenrisk.tiers import Tier

pytestmark = pytest.mark.integration

CHAIN = 31337
ENDPOINTS = ["/v2/IsHoneypot", "/v2/GetContractVerification", "/v1/GetPairs", "/v1/TopHolders"]
PAIR_KEYS = {
    "ChainID",
    "Pair",
    "Reserves",
    "Liquidity",
    "Router",
    "CreatedAtTimestamp",
    "CreationTxHash",
}
CALL_TYPES = {"CALL", "STATICCALL", "DELEGATECALL", "CALLCODE", "CREATE", "CREATE2"}
SELECTOR = re.compile(r"^0x[0-9a-f]{8}$")
PLAIN_ADDRESS_LOWER = "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0"


# FIXTURES


@pytest.fixture(scope="module")
async def service(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("api"), deadline=60.0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    yield svc
    await svc.close()


@pytest.fixture(scope="module")
async def client(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(service.settings, service) as http:
        yield http


@contextlib.asynccontextmanager
async def _client(settings: Settings, svc: Service) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(settings, svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http


def _token(devnet: Any, entry_id: str) -> dict[str, Any]:
    return dict(next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id))


def _address(devnet: Any, entry_id: str) -> str:
    return str(_token(devnet, entry_id)["address"])


async def _rpc(devnet: Any, method: str, params: list[Any]) -> Any:
    return await node_call(devnet.url, method, params)


async def _balance_of(devnet: Any, token: str, holder: str) -> int:
    data = "0x70a08231" + holder[2:].lower().rjust(64, "0")
    return int(await _rpc(devnet, "eth_call", [{"to": token, "data": data}, "latest"]), 16)


async def _ok(client: httpx.AsyncClient, path: str, **params: Any) -> Any:
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _assert_error(response: httpx.Response, status: int) -> str:
    """The one error shape, exactly; returns the message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "error"}, body
    assert body["code"] == status and isinstance(body["error"], str) and body["error"]
    assert "Traceback" not in body["error"]
    return str(body["error"])


def _is_checksummed(address: str) -> bool:
    return bool(re.fullmatch(r"0x[0-9a-fA-F]{40}", address)) and (
        to_checksum_address(address) == address
    )


# GETPAIRS


async def test_get_pairs_wire_shape_and_order(client: httpx.AsyncClient, devnet: Any) -> None:
    entry = _token(devnet, "multi-pair")
    pairs = await _ok(client, "/v1/GetPairs", address=entry["address"], chainID=CHAIN)
    assert isinstance(pairs, list) and len(pairs) == 3
    assert {p["Pair"]["Address"] for p in pairs} == {p["address"].lower() for p in entry["pools"]}
    for item in pairs:
        v3 = "V3" in item["Pair"]["Name"]  # a V3 pool names its fee tier (extension)
        assert set(item) == PAIR_KEYS | ({"Fee"} if v3 else set()), item
        assert not v3 or item["Fee"] in (100, 500, 3000, 10000), item
        assert type(item["ChainID"]) is int and item["ChainID"] == CHAIN
        assert set(item["Pair"]) == {"Name", "Tokens", "Address"}
        assert re.fullmatch(r"Uniswap V[23]: \w+-\w+", item["Pair"]["Name"]), item["Pair"]
        tokens = item["Pair"]["Tokens"]
        assert len(tokens) == 2 and entry["address"].lower() in tokens
        assert all(a == a.lower() for a in [*tokens, item["Pair"]["Address"], item["Router"]])
        assert len(item["Reserves"]) == 2
        assert all(type(r) in (int, float) and r > 0 for r in item["Reserves"])
        assert type(item["Liquidity"]) in (int, float) and item["Liquidity"] > 0
        assert type(item["CreatedAtTimestamp"]) is int
        assert re.fullmatch(r"0x[0-9a-f]{64}", item["CreationTxHash"])
    liquidity = [p["Liquidity"] for p in pairs]
    assert liquidity == sorted(liquidity, reverse=True)


async def test_get_pairs_reserves_are_the_pool_balances(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    pairs = await _ok(client, "/v1/GetPairs", address=_address(devnet, "multi-pair"))
    for item in pairs:
        pool, tokens = item["Pair"]["Address"], item["Pair"]["Tokens"]
        # JSON numbers with float64 precision, as the live API sends them
        assert item["Reserves"] == [float(await _balance_of(devnet, t, pool)) for t in tokens]


async def test_get_pairs_all_chains_when_chain_omitted(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    address = _address(devnet, "multi-pair")
    everywhere = await _ok(client, "/v1/GetPairs", address=address)
    assert everywhere == await _ok(client, "/v1/GetPairs", address=address, chainID=CHAIN)


@pytest.mark.parametrize("entry_id", ["plain", "v3-only", "no-pair", "fot-3"])
async def test_get_pairs_lists_every_pool(
    client: httpx.AsyncClient, devnet: Any, entry_id: str
) -> None:
    entry = _token(devnet, entry_id)
    pairs = await _ok(client, "/v1/GetPairs", address=entry["address"].lower())
    assert len(pairs) <= 10
    assert sorted(p["Pair"]["Address"] for p in pairs) == sorted(
        p["address"].lower() for p in entry["pools"]
    )


@pytest.mark.parametrize(
    "entry_id", ["v4-plain", "v4-hook-sell-99", "v4-dynamic-fee-raise", "v4-erc20-weth"]
)
async def test_get_pairs_lists_a_v4_pool_with_its_id_and_hook(
    client: httpx.AsyncClient, devnet: Any, entry_id: str
) -> None:
    """A V4 pool: the PoolManager as its address, the pool id (keccak of the key), the
    hook and what its address bits allow, native ETH, the key's fee."""
    entry = _token(devnet, entry_id)
    (pool,) = entry["pools"]
    key = PoolKey(*pool["key"])
    (pair,) = await _ok(client, "/v1/GetPairs", address=entry["address"].lower())
    assert pair["Pair"]["Address"] == devnet.manifest["addresses"]["POOL_MANAGER"].lower()
    native = ZERO_ADDRESS in (key.currency0, key.currency1)  # else an ERC-20 (WETH) pool
    assert pair["Pair"]["PoolId"] == key.id and pair["Pair"].get("NativeEth", False) is native
    assert sorted(pair["Pair"]["Tokens"]) == sorted(
        (c if c != ZERO_ADDRESS else devnet.manifest["addresses"]["WETH"]).lower()
        for c in (key.currency0, key.currency1)
    )
    assert pair["Pair"]["Name"].startswith("Uniswap V4: ")
    assert pair["Fee"] == key.fee and pair["Liquidity"] > 0
    if int(key.hooks, 16):
        assert pair["Pair"]["Hooks"] == key.hooks.lower()
        assert pair["Pair"]["HookPermissions"] == list(hook_permissions(key.hooks))
    else:
        assert "Hooks" not in pair["Pair"]


V2_ROUTER = "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"


async def test_get_pairs_lists_a_pool_against_a_non_base_token_last(
    devnet: Any, tmp_path: Path
) -> None:
    """The owner adds liquidity for PLAIN against another catalogue token through the real
    Router02 (which creates the pair): GetPairs lists it after PLAIN's WETH pool, with its
    creation transaction, lower-case addresses and a USD value from PLAIN's price."""
    token, other = _address(devnet, "plain"), _address(devnet, "v3-only")
    owner, amount = devnet.manifest["addresses"]["OWNER"], 10**24
    snapshot = await _rpc(devnet, "evm_snapshot", [])
    rpc = RpcClient(devnet.url)
    try:
        await _rpc(devnet, "anvil_impersonateAccount", [owner])
        for address in (token, other):
            approve = encode_call("approve(address,uint256)", [V2_ROUTER, amount])
            await mined(rpc, {"from": owner, "to": address, "data": approve})
        signature = "addLiquidity(address,address,uint256,uint256,uint256,uint256,address,uint256)"
        data = encode_call(signature, [token, other, amount, amount, 0, 0, owner, 2**40])
        added = await mined(rpc, {"from": owner, "to": V2_ROUTER, "data": data})
        settings = Settings(devnet=False, data_dir=tmp_path)
        svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
        try:
            async with _client(settings, svc) as http:
                pairs = await _ok(http, "/v1/GetPairs", address=token, chainID=CHAIN)
        finally:
            await svc.close()
    finally:
        await rpc.aclose()
        await _rpc(devnet, "anvil_stopImpersonatingAccount", [owner])
        assert await _rpc(devnet, "evm_revert", [snapshot]) is True
    bases = {p["address"].lower() for p in _token(devnet, "plain")["pools"]}
    assert [p["Pair"]["Address"] in bases for p in pairs] == [True] * len(bases) + [False]
    last = pairs[-1]
    assert sorted(last["Pair"]["Tokens"]) == sorted([token.lower(), other.lower()])
    assert last["Pair"]["Name"].startswith("Uniswap V2: ")
    assert last["CreationTxHash"] == added["transactionHash"]
    assert type(last["CreatedAtTimestamp"]) is int
    assert last["Router"] == V2_ROUTER.lower()
    assert last["Liquidity"] > 0 and last["Reserves"] == [float(amount), float(amount)]


# TOPHOLDERS


@pytest.mark.parametrize("entry_id", ["plain", "reflection", "siphon", "decimals-0"])
async def test_top_holders_match_the_chain(
    client: httpx.AsyncClient, devnet: Any, entry_id: str
) -> None:
    token = _address(devnet, entry_id)
    body = await _ok(client, "/v1/TopHolders", address=token, chainID=CHAIN)
    assert set(body) == {"totalSupply", "holders"}
    supply = int(
        await _rpc(devnet, "eth_call", [{"to": token, "data": "0x18160ddd"}, "latest"]), 16
    )
    assert isinstance(body["totalSupply"], str) and body["totalSupply"] == str(supply)
    holders = body["holders"]
    assert 0 < len(holders) <= 50
    for holder in holders:
        assert set(holder) == {"address", "balance", "alias", "isContract"}
        assert _is_checksummed(holder["address"]) and holder["alias"] == ""
        assert isinstance(holder["balance"], str) and holder["balance"].isdigit()
        assert holder["balance"] == str(await _balance_of(devnet, token, holder["address"]))
        code = await _rpc(devnet, "eth_getCode", [holder["address"], "latest"])
        assert holder["isContract"] is (code not in ("0x", "0x0"))
    order = [(-int(h["balance"]), h["address"].lower()) for h in holders]
    assert order == sorted(order)


async def test_top_holders_caps_at_fifty_with_ties_by_address(devnet: Any, tmp_path: Path) -> None:
    """60 new holders with one equal balance, above every existing holder but the owner
    and the pool: the answer is those two plus the 48 lowest addresses of the 60.  A tier
    whose allowance is 100 sees all of them with ``limit=100``, the first 50 unchanged."""
    token, owner = _address(devnet, "plain"), devnet.manifest["addresses"]["OWNER"]
    amount = 5 * 10**24
    new = [to_checksum_address(hashlib.sha256(bytes([i])).hexdigest()[:40]) for i in range(60)]
    snapshot = await _rpc(devnet, "evm_snapshot", [])
    try:
        await _rpc(devnet, "anvil_impersonateAccount", [owner])
        for holder in new:
            data = "0xa9059cbb" + holder[2:].lower().rjust(64, "0") + f"{amount:064x}"
            await _rpc(devnet, "eth_sendTransaction", [{"from": owner, "to": token, "data": data}])
        settings = Settings(devnet=False, data_dir=tmp_path)
        svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
        wide = Settings(
            devnet=False, data_dir=tmp_path, tiers={"default": Tier(max_top_holders=100)}
        )
        try:
            async with _client(settings, svc) as http:
                body = await _ok(http, "/v1/TopHolders", address=token, chainID=CHAIN)
            async with _client(wide, svc) as http:
                more = await _ok(http, "/v1/TopHolders", address=token, chainID=CHAIN, limit=100)
        finally:
            await svc.close()
    finally:
        await _rpc(devnet, "anvil_stopImpersonatingAccount", [owner])
        assert await _rpc(devnet, "evm_revert", [snapshot]) is True
    holders = body["holders"]
    assert len(holders) == 50
    tied = [h["address"] for h in holders if h["balance"] == str(amount)]
    assert tied == sorted(new, key=str.lower)[:48]
    assert {h["address"] for h in holders} - set(tied) == {
        owner,
        _token(devnet, "plain")["pools"][0]["address"],
    }
    assert more["holders"][:50] == holders and more["totalSupply"] == body["totalSupply"]
    assert set(new) <= {h["address"] for h in more["holders"]}
    assert 62 <= len(more["holders"]) <= 100


async def test_top_holders_requires_chain_id(client: httpx.AsyncClient, devnet: Any) -> None:
    response = await client.get("/v1/TopHolders", params={"address": _address(devnet, "plain")})
    assert "chainID" in _assert_error(response, 400)


# GETCONTRACTVERIFICATION


def _assert_full_check(body: dict[str, Any]) -> None:
    assert set(body) == {
        "isContract",
        "isRootOpenSource",
        "fullCheckPerformed",
        "summary",
        "contractsOpenSource",
        "contractCalls",
    }
    assert body["isContract"] is True and body["fullCheckPerformed"] is True
    assert set(body["summary"]) == {"isOpenSource", "hasProxyCalls"}
    assert all(isinstance(v, bool) for v in body["summary"].values())
    assert body["contractsOpenSource"]
    for address, open_source in body["contractsOpenSource"].items():
        assert _is_checksummed(address) and isinstance(open_source, bool)
    calls = body["contractCalls"]
    assert calls and len({tuple(sorted(c.items())) for c in calls}) == len(calls)
    for call in calls:
        assert {"from", "to", "type"} <= set(call) <= {"from", "to", "type", "selector"}
        assert _is_checksummed(call["from"]) and _is_checksummed(call["to"])
        assert call["type"] in CALL_TYPES
        assert "selector" not in call or SELECTOR.match(call["selector"])


async def _verify(client: httpx.AsyncClient, address: str) -> dict[str, Any]:
    body = await _ok(client, "/v2/GetContractVerification", address=address, chainID=CHAIN)
    return dict(body)


async def test_verification_of_an_honest_verified_token(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = _address(devnet, "plain")
    body = await _verify(client, token)
    _assert_full_check(body)
    assert body["isRootOpenSource"] is True
    assert body["summary"] == {"isOpenSource": True, "hasProxyCalls": False}
    assert body["contractsOpenSource"][token] is True
    assert all(body["contractsOpenSource"].values())
    assert any(c["to"] == token for c in body["contractCalls"])


async def test_verification_of_a_verified_proxy(client: httpx.AsyncClient, devnet: Any) -> None:
    body = await _verify(client, _address(devnet, "proxy-verified"))
    _assert_full_check(body)
    assert body["summary"] == {"isOpenSource": True, "hasProxyCalls": True}
    assert any(c["type"] == "DELEGATECALL" for c in body["contractCalls"])


async def test_verification_of_a_proxy_to_hidden_code(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    hidden = next(c for c in devnet.manifest["contracts"] if not c["verified"])["address"]
    body = await _verify(client, _address(devnet, "proxy-unverified"))
    _assert_full_check(body)
    assert body["isRootOpenSource"] is True
    assert body["summary"] == {"isOpenSource": False, "hasProxyCalls": True}
    assert body["contractsOpenSource"][hidden] is False


async def test_verification_of_closed_source(client: httpx.AsyncClient, devnet: Any) -> None:
    token = _address(devnet, "closed-source")
    body = await _verify(client, token)
    _assert_full_check(body)
    assert body["isRootOpenSource"] is False and body["summary"]["isOpenSource"] is False
    assert body["contractsOpenSource"][token] is False


async def test_verification_of_an_eoa(client: httpx.AsyncClient, devnet: Any) -> None:
    body = await _verify(client, devnet.manifest["addresses"]["OWNER"])
    reason = body.pop("fullCheckReason")  # extension: why the check is not full
    assert body == {"isContract": False, "isRootOpenSource": False, "fullCheckPerformed": False}
    assert reason.startswith("there is no contract")


async def test_verification_of_a_honeypot_is_partial(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await _verify(client, _address(devnet, "sell-whitelist"))
    reason = body.pop("fullCheckReason")
    assert body == {"isContract": True, "isRootOpenSource": True, "fullCheckPerformed": False}
    assert reason.startswith("the simulated sell failed")


async def test_verification_without_chain_id(client: httpx.AsyncClient, devnet: Any) -> None:
    address = _address(devnet, "plain")
    body = await _ok(client, "/v2/GetContractVerification", address=address)
    _assert_full_check(body)


# ISHONEYPOT (the verdicts themselves are in test_honeypot.py)


async def test_is_honeypot_answers_with_the_token(client: httpx.AsyncClient, devnet: Any) -> None:
    body = await _ok(client, "/v2/IsHoneypot", address=PLAIN_ADDRESS_LOWER, chainID=CHAIN)
    assert body["token"]["address"] == _address(devnet, "plain")
    assert body["chain"]["id"] == str(CHAIN) and "risk" in body["summary"]


# INPUT ERRORS

BAD_ADDRESSES = [
    "0xZZe46736679d2d9a65f0992f2272de9f3c7fa6e0",  # not hex
    "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6",  # too short
    "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e000",  # too long
    "9fe46736679d2d9a65f0992f2272de9f3c7fa6e0aa",  # no 0x
    "0x9Fe46736679d2D9a65F0992F2272dE9f3c7fa6e0",  # mixed case, bad EIP-55 checksum
]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("address", BAD_ADDRESSES)
async def test_invalid_address_is_400(client: httpx.AsyncClient, path: str, address: str) -> None:
    response = await client.get(path, params={"address": address, "chainID": CHAIN})
    assert "address" in _assert_error(response, 400)


@pytest.mark.parametrize("path", ENDPOINTS)
async def test_missing_address_is_400(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path, params={"chainID": CHAIN})
    assert "address is required" in _assert_error(response, 400)


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("chain", ["abc", "-1", "1.5", "0x7a69", "99999"])
async def test_bad_or_unknown_chain_is_400(
    client: httpx.AsyncClient, path: str, chain: str
) -> None:
    response = await client.get(path, params={"address": PLAIN_ADDRESS_LOWER, "chainID": chain})
    assert "chain" in _assert_error(response, 400)


@pytest.mark.parametrize("name", ["simulateLiquidity", "forceSimulateLiquidity"])
async def test_bad_boolean_is_400(client: httpx.AsyncClient, name: str) -> None:
    params = {"address": PLAIN_ADDRESS_LOWER, "chainID": CHAIN, name: "maybe"}
    response = await client.get("/v2/IsHoneypot", params=params)
    assert name in _assert_error(response, 400)


async def test_simulated_liquidity_needs_a_chain(client: httpx.AsyncClient) -> None:
    params = {"address": PLAIN_ADDRESS_LOWER, "simulateLiquidity": "true"}
    response = await client.get("/v2/IsHoneypot", params=params)
    assert "chainID" in _assert_error(response, 400)


async def test_invalid_pair_is_400(client: httpx.AsyncClient) -> None:
    params = {"address": PLAIN_ADDRESS_LOWER, "chainID": CHAIN, "pair": "0x1234"}
    _assert_error(await client.get("/v2/IsHoneypot", params=params), 400)


async def test_unknown_route_is_404_json(client: httpx.AsyncClient) -> None:
    assert _assert_error(await client.get("/v3/IsHoneypot"), 404) == "not found"


async def test_wrong_method_is_405_json(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/GetPairs", params={"address": PLAIN_ADDRESS_LOWER})
    _assert_error(response, 405)


@pytest.mark.parametrize("path", ["/v2/IsHoneypot", "/v1/TopHolders"])
async def test_address_without_contract_is_404(
    client: httpx.AsyncClient, devnet: Any, path: str
) -> None:
    params = {"address": devnet.manifest["addresses"]["OWNER"], "chainID": CHAIN}
    _assert_error(await client.get(path, params=params), 404)


# AUTH AND RATE LIMIT


async def test_keys_required_when_configured(service: Service, devnet: Any, tmp_path: Path) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, api_keys=frozenset({"k1"}))
    params = {"address": _address(devnet, "plain"), "chainID": CHAIN}
    async with _client(settings, service) as http:
        _assert_error(await http.get("/v1/GetPairs", params=params), 401)
        _assert_error(
            await http.get("/v1/GetPairs", params=params, headers={"X-API-KEY": "k2"}), 401
        )
        _assert_error(await http.get("/v1/GetPairs", params={**params, "apiKey": "k"}), 401)
        good = await http.get("/v1/GetPairs", params=params, headers={"X-API-KEY": "k1"})
        assert good.status_code == 200 and len(good.json()) == 1
        query = await http.get("/v1/GetPairs", params={**params, "apiKey": "k1"})
        assert query.status_code == 200 and query.json() == good.json()
        # the key is checked before the parameters, and the open routes stay open
        _assert_error(await http.get("/v1/GetPairs", params={"address": "0x12"}), 401)
        assert (await http.get("/health")).status_code == 200
        assert (await http.get("/openapi.json")).status_code == 200


@pytest.mark.parametrize("path", ENDPOINTS)
async def test_every_endpoint_is_guarded(service: Service, tmp_path: Path, path: str) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, api_keys=frozenset({"k1"}))
    async with _client(settings, service) as http:
        params = {"address": PLAIN_ADDRESS_LOWER, "chainID": CHAIN}
        _assert_error(await http.get(path, params=params), 401)


async def test_keys_optional_by_default(client: httpx.AsyncClient) -> None:
    params = {"address": PLAIN_ADDRESS_LOWER}
    assert (await client.get("/v1/GetPairs", params=params)).status_code == 200
    response = await client.get("/v1/GetPairs", params=params, headers={"X-API-KEY": "any"})
    assert response.status_code == 200


async def test_rate_limit_is_429_with_retry_after(service: Service, tmp_path: Path) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, rate_limit_per_minute=2)
    params = {"address": PLAIN_ADDRESS_LOWER}
    async with _client(settings, service) as http:
        for _ in range(2):
            assert (await http.get("/v1/GetPairs", params=params)).status_code == 200
        limited = await http.get("/v1/GetPairs", params=params)
        assert _assert_error(limited, 429) == "rate limit exceeded"
        assert 1 <= int(limited.headers["Retry-After"]) <= 60


async def test_rate_limit_is_per_key(service: Service, tmp_path: Path) -> None:
    keys = frozenset({"k1", "k2"})
    settings = Settings(devnet=False, data_dir=tmp_path, api_keys=keys, rate_limit_per_minute=1)
    params = {"address": PLAIN_ADDRESS_LOWER}
    async with _client(settings, service) as http:
        first = await http.get("/v1/GetPairs", params=params, headers={"X-API-KEY": "k1"})
        assert first.status_code == 200
        again = await http.get("/v1/GetPairs", params={**params, "apiKey": "k1"})
        _assert_error(again, 429)
        other = await http.get("/v1/GetPairs", params=params, headers={"X-API-KEY": "k2"})
        assert other.status_code == 200


# CACHE


async def test_results_are_cached_per_head(service: Service, devnet: Any, tmp_path: Path) -> None:
    # every lookup reads the head (the reuse window is tests/unit/test_api_unit.py's)
    settings = Settings(devnet=False, data_dir=tmp_path, cache_ttl=60, head_reuse=0)
    app = create_app(settings, service)
    stats = app.state.cache.stats
    params = {"address": _address(devnet, "multi-pair"), "chainID": CHAIN}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        first = (await http.get("/v1/GetPairs", params=params)).json()
        lower = {**params, "address": params["address"].lower()}
        assert (await http.get("/v1/GetPairs", params=lower)).json() == first
        assert (stats.hits, stats.misses) == (1, 1)
        snapshot = await _rpc(devnet, "evm_snapshot", [])
        try:
            await _rpc(devnet, "evm_mine", [])
            assert (await http.get("/v1/GetPairs", params=params)).json() == first
            assert (stats.hits, stats.misses) == (1, 2)  # a new head is a new key
        finally:
            assert await _rpc(devnet, "evm_revert", [snapshot]) is True
        await http.get("/v1/GetPairs", params=params)
        assert (stats.hits, stats.misses) == (2, 2)  # the old head again


async def test_verification_is_cached_per_head(
    service: Service, devnet: Any, tmp_path: Path
) -> None:
    """A repeat at the same head is served from the results cache (issue #27), the
    same body; the legacy v1 shape has its own entry."""
    app = create_app(Settings(devnet=False, data_dir=tmp_path, cache_ttl=60), service)
    params = {"address": _address(devnet, "plain"), "chainID": CHAIN}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        first = await http.get("/v2/GetContractVerification", params=params)
        again = await http.get("/v2/GetContractVerification", params=params)
        legacy = await http.get("/v1/GetContractVerification", params=params)
    assert (first.status_code, again.status_code, legacy.status_code) == (200, 200, 200)
    assert (first.headers["X-Cache"], again.headers["X-Cache"]) == ("miss", "hit")
    assert again.content == first.content and legacy.content != first.content
    stats = app.state.cache.stats
    assert (stats.hits, stats.misses) == (1, 2)


# HEALTH AND DOCS


async def test_health_reports_the_devnet(client: httpx.AsyncClient, devnet: Any) -> None:
    response = await client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and len(body["chains"]) == 1
    chain = body["chains"][0]
    assert set(chain) == {
        "chainId",
        "name",
        "reachable",
        "headBlock",
        "headTimestamp",
        "headAgeSeconds",
    }
    block = await _rpc(devnet, "eth_getBlockByNumber", ["latest", False])
    assert chain["chainId"] == CHAIN and chain["reachable"] is True
    assert chain["headBlock"] == int(block["number"], 16)
    assert chain["headTimestamp"] == int(block["timestamp"], 16)
    assert abs(chain["headAgeSeconds"] - (time.time() - chain["headTimestamp"])) < 60
    assert devnet.url.rsplit(":", 1)[-1].strip("/") not in response.text


async def test_openapi_describes_every_endpoint(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    for path in [*ENDPOINTS, "/health"]:
        operation = spec["paths"][path]["get"]
        assert operation["summary"] and "200" in operation["responses"]
    for path in ENDPOINTS:
        operation = spec["paths"][path]["get"]
        names = {p["name"] for p in operation.get("parameters", [])}
        assert {"address", "chainID"} <= names
        assert all(p.get("description") for p in operation["parameters"])
        assert {"400", "404", "429", "502", "503", "504"} <= set(operation["responses"])
        assert "401" not in operation["responses"]  # keys are off here (test_edge: on)
        assert "security" not in operation  # nor any scheme to offer
    names = {p["name"] for p in spec["paths"]["/v2/IsHoneypot"]["get"]["parameters"]}
    assert {"pair", "simulateLiquidity", "forceSimulateLiquidity"} <= names
    schemas = spec["components"]["schemas"]
    assert {"PairItem", "TopHoldersResponse", "ContractVerificationResponse"} <= set(schemas)
    assert {"IsHoneypotResponse", "ErrorBody", "HealthReport", "ContractCallItem"} <= set(schemas)
    assert {"from", "to", "type", "selector"} == set(schemas["ContractCallItem"]["properties"])
    assert "securitySchemes" not in spec["components"]  # keys off: no scheme offered


async def test_docs_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/docs")
    assert response.status_code == 200 and "swagger" in response.text.lower()


# FAILING NODES


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Reply = Callable[[bytes], Awaitable[bytes]]


class FakeNode:
    """A loopback HTTP server whose reply to every POST is decided by ``reply``."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length:\s*(\d+)", head)
            body = await reader.readexactly(int(length.group(1))) if length else b""
            payload = await self.reply(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(payload)
                + payload
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:  # stopped before replying: the task ends here
            # (a cancelled handler task makes asyncio's server log a traceback)
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


@contextlib.asynccontextmanager
async def _failing(
    devnet: Any, tmp_path: Path, url: str, **settings: Any
) -> AsyncIterator[httpx.AsyncClient]:
    config = Settings(devnet=False, data_dir=tmp_path, **settings)
    svc = connect_devnet(config, url, devnet.manifest, devnet.build_dir)
    try:
        async with _client(config, svc) as http:
            yield http
    finally:
        await svc.close()


async def _every_endpoint(http: httpx.AsyncClient, status: int, port: int) -> None:
    for path in ENDPOINTS:
        response = await http.get(path, params={"address": PLAIN_ADDRESS_LOWER, "chainID": CHAIN})
        _assert_error(response, status)
        assert str(port) not in response.text and "127.0.0.1" not in response.text


async def test_unreachable_node_is_503(
    devnet: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = _free_port()
    async with _failing(devnet, tmp_path, f"http://127.0.0.1:{port}", rpc_timeout=2) as http:
        await _every_endpoint(http, 503, port)
        health = await http.get("/health")
        assert health.status_code == 503
        line = health.json()["chains"][0]
        assert line["reachable"] is False and line["error"] and "headBlock" not in line
        assert str(port) not in health.text
    assert str(port) not in caplog.text


async def _sleepy(body: bytes) -> bytes:
    await asyncio.sleep(30)
    return b'{"jsonrpc":"2.0","id":1,"result":"0x1"}'


@pytest.mark.parametrize(
    ("deadline", "rpc_timeout"),
    [(1.0, 20.0), (20.0, 0.5)],
    ids=["request-deadline", "rpc-timeout"],
)
async def test_slow_node_is_504_within_the_deadline(
    devnet: Any, tmp_path: Path, deadline: float, rpc_timeout: float
) -> None:
    node = FakeNode(_sleepy)
    await node.start()
    try:
        settings = {"deadline": deadline, "rpc_timeout": rpc_timeout}
        async with _failing(devnet, tmp_path, node.url, **settings) as http:
            for path in ENDPOINTS:
                started = time.monotonic()
                response = await http.get(
                    path, params={"address": PLAIN_ADDRESS_LOWER, "chainID": CHAIN}
                )
                assert time.monotonic() - started < min(deadline, rpc_timeout) + 1.5
                _assert_error(response, 504)
                assert str(node.port) not in response.text
            closing = time.monotonic()
        # the requests the checks left in flight are cancelled after a grace, not
        # waited for through their timeouts and retries (76 s at a 20 s rpc_timeout)
        assert time.monotonic() - closing < CLOSE_GRACE + 5
    finally:
        await node.stop()


async def _not_json(body: bytes) -> bytes:
    return b"<html>bad gateway</html>"


async def _not_json_rpc(body: bytes) -> bytes:
    return b'{"hello": "world"}'


async def _error_object(body: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}'


@pytest.mark.parametrize("reply", [_not_json, _not_json_rpc, _error_object])
async def test_malformed_node_reply_is_502(
    devnet: Any, tmp_path: Path, reply: Reply, caplog: pytest.LogCaptureFixture
) -> None:
    node = FakeNode(reply)
    await node.start()
    try:
        async with _failing(devnet, tmp_path, node.url) as http:
            await _every_endpoint(http, 502, node.port)
            assert (await http.get("/health")).status_code == 503
    finally:
        await node.stop()
    assert str(node.port) not in caplog.text

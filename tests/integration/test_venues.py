"""PancakeSwap V3 and a second V2 factory on the devnet: found, named and traded.

The devnet places PancakeSwap V3 (its factory, pool, SwapRouter, QuoterV2 and position
manager from the npm artifacts, pools made by its own deployer) and a second V2
factory with its own router.  The catalogue's tokens that trade only there go through
the catalogue tests (verdict and taxes); here: their pools sit where the registry's
CREATE2 (factory or deployer, init code hash) says, GetPairs and IsHoneypot name them
by the DEX's display name, and the trade goes through that DEX's router.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.chain.abi import encode_call, to_bytes, word_address
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet
from tokenrisk.wiring import devnet_chain

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def client(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("venues"), deadline=60.0)
    service: Service = connect_devnet(settings, devnet.url, devnet.manifest, Path("build/devnet"))
    transport = httpx.ASGITransport(app=create_app(service.settings, service))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http
    await service.close()


def _token(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


VENUE_NAMES = {None: "Uniswap", "pancakeswap": "PancakeSwap", "fork": "DevSwap"}


async def test_every_devnet_pool_sits_where_its_dexs_create2_puts_it(devnet: Any) -> None:
    chain = devnet_chain(devnet.manifest)
    addresses = devnet.manifest["addresses"]
    every = [(t["address"], p) for t in devnet.manifest["tokens"] for p in t["pools"]]
    pools = [(t, p) for t, p in every if p["dex"] != "v4"]  # V4: one PoolManager, no CREATE2
    pools += [(addresses[p["token"]], p) for p in devnet.manifest["stablePools"]]
    seen = set()
    lookups: list[tuple[str, list[Any]]] = []
    expected: list[str] = []
    for token, pool in pools:
        version = pool["dex"].upper()
        name = VENUE_NAMES[pool.get("venue")]
        dex = next(d for d in chain.dexes if (d.name, d.version) == (name, version))
        base = addresses[pool["base"]]
        assert dex.pool_address(token, base, pool["fee"]) == pool["address"], pool
        seen.add((name, version))
        if version == "V2":
            data = encode_call("getPair(address,address)", [token, base])
        else:
            data = encode_call("getPool(address,address,uint24)", [token, base, pool["fee"]])
        lookups.append(("eth_call", [{"to": dex.factory, "data": data}, "latest"]))
        expected.append(pool["address"])
    rpc = RpcClient(devnet.url)
    try:
        replies = await rpc.batch(lookups)
    finally:
        await rpc.aclose()
    assert [word_address(to_bytes(r)) for r in replies] == expected  # the factories agree
    assert seen == {("Uniswap", "V2"), ("Uniswap", "V3"), ("PancakeSwap", "V3"), ("DevSwap", "V2")}


@pytest.mark.parametrize(
    ("token_id", "name", "router_key", "fee"),
    [
        ("pancake-v3-only", "PancakeSwap V3", "PANCAKE_SWAP_ROUTER", 2500),
        ("fork-v2-only", "DevSwap V2", "FORK_V2_ROUTER", None),
    ],
)
async def test_pools_are_found_named_and_traded_on_their_dex(
    client: httpx.AsyncClient,
    devnet: Any,
    token_id: str,
    name: str,
    router_key: str,
    fee: int | None,
) -> None:
    token = _token(devnet, token_id)
    pool, router = token["pools"][0]["address"], devnet.manifest["addresses"][router_key]
    params = {"address": token["address"], "chainID": 31337}
    pairs = (await client.get("/v1/GetPairs", params=params)).json()
    assert [p["Pair"]["Address"] for p in pairs] == [pool.lower()]
    assert pairs[0]["Pair"]["Name"].startswith(f"{name}: ")
    assert pairs[0]["Router"] == router.lower()
    assert pairs[0].get("Fee") == fee
    assert pairs[0]["CreatedAtTimestamp"] > 0  # the factory's creation event was read
    body = (await client.get("/v2/IsHoneypot", params=params)).json()
    assert body["pairAddress"] == pool
    assert body["pair"]["pair"]["name"].startswith(f"{name}: ")
    assert body["pair"]["router"] == router
    assert body["simulationSuccess"] is True
    assert body["honeypotResult"]["isHoneypot"] is False


async def test_a_pancakeswap_v3_pool_address_resolves_to_its_token(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = _token(devnet, "pancake-v3-only")
    pool = token["pools"][0]["address"]
    body = (await client.get("/v2/IsHoneypot", params={"address": pool.lower()})).json()
    assert body["token"]["address"] == token["address"]
    assert body["pairAddress"] == pool


async def test_pools_of_every_dex_are_ranked_together_by_liquidity(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = _token(devnet, "multi-venue")
    by_depth = sorted(token["pools"], key=lambda p: -int(p["baseAmount"]))
    params = {"address": token["address"], "chainID": 31337}
    pairs = (await client.get("/v1/GetPairs", params=params)).json()
    assert [p["Pair"]["Address"] for p in pairs] == [p["address"].lower() for p in by_depth]
    names = [p["Pair"]["Name"].split(":")[0] for p in pairs]
    assert names == ["PancakeSwap V3", "DevSwap V2", "Uniswap V2"]
    body = (await client.get("/v2/IsHoneypot", params=params)).json()
    assert body["pairAddress"] == by_depth[0]["address"]  # the deepest: PancakeSwap's
    assert body["honeypotResult"]["isHoneypot"] is False


async def test_the_v2_fork_has_its_own_pair_code_and_init_code_hash(devnet: Any) -> None:
    """The fork's pairs are PancakePair (@pancakeswap-libs/pancake-swap-core), not
    Uniswap's: another init code hash, which its factory reports itself, so only the
    fork's own hash finds them (Uniswap's would put the pair elsewhere)."""
    chain = devnet_chain(devnet.manifest)
    fork = next(d for d in chain.dexes if d.name == "DevSwap")
    uniswap = next(d for d in chain.dexes if (d.name, d.version) == ("Uniswap", "V2"))
    assert fork.init_code_hash != uniswap.init_code_hash
    token = _token(devnet, "fork-v2-only")
    pool = token["pools"][0]
    weth = devnet.manifest["addresses"]["WETH"]
    rpc = RpcClient(devnet.url)
    try:
        reported, code = await rpc.batch(
            [
                (
                    "eth_call",
                    [
                        {"to": fork.factory, "data": encode_call("INIT_CODE_PAIR_HASH()", [])},
                        "latest",
                    ],
                ),
                ("eth_getCode", [pool["address"], "latest"]),
            ]
        )
    finally:
        await rpc.aclose()
    assert reported == fork.init_code_hash
    assert len(to_bytes(code)) > 0
    elsewhere = replace(fork, init_code_hash=uniswap.init_code_hash)
    assert elsewhere.pool_address(token["address"], weth, None) != pool["address"]

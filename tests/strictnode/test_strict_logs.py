"""Uniswap V4 pools behind a provider's ``eth_getLogs`` range cap.

A provider that caps log ranges (here 100 blocks, so the devnet's few hundred blocks
need several windows) refuses the full-range ``Initialize`` search.  The V4 search then
reads bounded windows from the head down to the PoolManager's deployment block; with
the budget (``uniswap_v4.log_windows``) cut so the windows stop above a token's pool,
the pool is unknown and the answer must say so: IsHoneypot's 404 reason, GetPairs'
``X-Unsearched-Blocks`` header.  Never a bare "No pairs found".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest
from nodeprofiles import PROVIDER, Profile
from strictnode import StrictNode

from tokenrisk.api.app import create_app
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import INITIALIZE_TOPIC
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

NARROW = replace(PROVIDER, name="provider-narrow-logs", logs_range=100)
"""The provider profile with a 100-block log cap (hosted plans go as low as that)."""
TOKEN_ID = "v4-plain"


@asynccontextmanager
async def _client(
    node: StrictNode, windows: int | None, tmp: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """An app on ``node``; ``windows`` (when set) cuts the V4 search's window budget."""
    assert node.devnet is not None
    settings = Settings(devnet=False, data_dir=tmp, deadline=60.0)
    service = connect_devnet(settings, node.url, node.devnet.manifest, node.devnet.build_dir)
    chain_node = service.nodes.node(31337)
    v4 = chain_node.chain.uniswap_v4
    assert v4 is not None
    if windows is not None:
        chain_node.chain = replace(chain_node.chain, uniswap_v4=replace(v4, log_windows=windows))
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
            yield http
    finally:
        await service.close()


async def _pool_block(node: StrictNode, devnet: Any, token: str) -> tuple[int, int]:
    """(the block the token's V4 pool was initialized in, the head), read on the strict
    node's own anvil behind its rules (not the session's devnet, whose head other tests
    may have moved)."""
    rpc = RpcClient(node.upstream)
    try:
        manager = devnet.manifest["addresses"]["POOL_MANAGER"]
        word = "0x" + "00" * 12 + token[2:].lower()
        logs = await rpc.call(
            "eth_getLogs",
            [
                {
                    "address": manager,
                    "topics": [INITIALIZE_TOPIC, None, None, word],
                    "fromBlock": "0x0",
                }
            ],
        )
        head = int(await rpc.call("eth_blockNumber"), 16)
    finally:
        await rpc.aclose()
    assert len(logs) == 1
    return int(logs[0]["blockNumber"], 16), head


async def test_v4_pools_are_found_through_windows_and_missed_ones_are_stated(
    devnet: Any,
    strict_nodes: Callable[[Profile], StrictNode],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    node = strict_nodes(NARROW)
    token = next(t for t in devnet.manifest["tokens"] if t["id"] == TOKEN_ID)["address"]
    initialized_at, head = await _pool_block(node, devnet, token)
    assert head - initialized_at >= 100, "the devnet's V4 pool must be a window below the head"
    before = node.refusals.copy()
    params = {"address": token, "chainID": 31337}
    async with _client(node, None, tmp_path_factory.mktemp("wide")) as http:
        found = await http.get("/v2/IsHoneypot", params=params)
        pairs = await http.get("/v1/GetPairs", params=params)
    assert found.status_code == 200, found.text
    assert found.json()["pair"]["pair"]["type"] == "UniswapV4"
    assert not [u for u in found.json().get("unchecked", []) if "Uniswap V4" in u]
    assert pairs.status_code == 200 and "X-Unsearched-Blocks" not in pairs.headers
    assert any(p["Pair"].get("PoolId") for p in pairs.json())
    assert (node.refusals - before)[("eth_getLogs", -32005)] > 0  # the cap did bite

    budget = (head - initialized_at) // 100  # the windows stop above the pool's block
    plain = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")["address"]
    async with _client(node, budget, tmp_path_factory.mktemp("narrow")) as http:
        missed = await http.get("/v2/IsHoneypot", params=params)
        pairs = await http.get("/v1/GetPairs", params=params)
        v2 = await http.get("/v2/IsHoneypot", params={"address": plain, "chainID": 31337})
        again = await http.get("/v1/GetPairs", params=params)  # from the results cache
    assert again.headers.get("X-Cache") == "hit", again.headers
    assert again.headers["X-Unsearched-Blocks"] == pairs.headers["X-Unsearched-Blocks"]
    assert v2.status_code == 200, v2.text  # a V2 pool is answered, never as if it were all
    assert any(
        u.startswith("Uniswap V4 pools created in blocks 0-") for u in v2.json()["unchecked"]
    )
    assert missed.status_code == 404, missed.text
    reason = missed.json()["reason"]
    assert "not checked: Uniswap V4 pools created in blocks 0-" in reason, reason
    assert pairs.status_code == 200
    assert not any(p["Pair"].get("PoolId") for p in pairs.json())
    stated = pairs.headers["X-Unsearched-Blocks"]
    assert stated.startswith("31337:0-") and int(stated.split("-")[1]) >= initialized_at

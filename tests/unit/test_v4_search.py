"""The V4 pool search on nodes that cap ``eth_getLogs``: bounded windows from the head
down to the PoolManager's deployment block, and what they could not reach is stated
(never a silent "no V4 pool").  A fake node with a provider's range cap, no node."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import encode_args
from tokenrisk.chain.registry import UniswapV4, load_registry
from tokenrisk.chain.signatures import INITIALIZE_TOPIC
from tokenrisk.chain.v4 import Search, initialized, unsearched, windows
from tokenrisk.errors import RpcError
from tokenrisk.model import Unsearched

MANAGER = "0x000000000004444c5dc75cB358380D2e3dE08A90"
TOKEN = "0x00000000000000000000000000000000000000aa"
ETH = "0x0000000000000000000000000000000000000000"
HEAD = 1_000
POOL_BLOCK = 150
RANGE_CAP = Fault(-32005, "query exceeds max block range")


def _v4(deployed: int = 100, budget: int = 256) -> UniswapV4:
    return UniswapV4(MANAGER, MANAGER, MANAGER, deployed_block=deployed, log_windows=budget)


def _log() -> dict[str, Any]:
    word = "0x" + "00" * 12
    data = encode_args(
        ["uint24", "int24", "address", "uint160", "int24"], [3000, 60, ETH, 2**96, 0]
    )
    return {
        "topics": [INITIALIZE_TOPIC, "0x" + "11" * 32, word + ETH[2:], word + TOKEN[2:]],
        "data": "0x" + data.hex(),
        "blockNumber": hex(POOL_BLOCK),
        "transactionHash": "0x" + "22" * 32,
    }


def _node(cap: int | None, refusal: Fault = RANGE_CAP) -> FakeNode:
    """A node whose head is HEAD and whose only pool was initialized at POOL_BLOCK."""

    def logs(params: list[Any]) -> Any:
        query = params[0]
        low = int(query["fromBlock"], 16)
        high = HEAD if query["toBlock"] == "latest" else int(query["toBlock"], 16)
        if cap is not None and high - low + 1 > cap:
            return refusal
        currency1 = len(query["topics"]) == 4  # the token as currency1
        return [_log()] if currency1 and low <= POOL_BLOCK <= high else []

    return FakeNode({"eth_blockNumber": hex(HEAD), "eth_getLogs": logs})


def test_windows_run_from_the_head_down_within_the_budget() -> None:
    assert windows(100, 1_000, 400, 10) == [(601, 1_000), (201, 600), (100, 200)]
    assert windows(100, 1_000, 400, 2) == [(601, 1_000), (201, 600)]
    assert windows(0, 0, 10, 1) == [(0, 0)]


async def test_a_capped_node_is_searched_in_windows_back_to_the_deployment() -> None:
    node = _node(cap=100)
    search = await initialized(node.client(), _v4(), TOKEN, "latest", span=100)
    assert [f.block for f in search.found] == [POOL_BLOCK]
    assert search.floor == 100 and unsearched(_chain(), search) is None
    assert node.methods.count("eth_getLogs") == 2 * 10  # blocks 100-1000: 10 windows, 2 queries


async def test_a_refused_full_range_falls_back_to_windows() -> None:
    node = _node(cap=5_000, refusal=Fault(-32000, "query returned more than 10000 results"))
    search = await initialized(node.client(), _v4(deployed=0), TOKEN, "latest", span=None)
    assert [f.block for f in search.found] == [POOL_BLOCK] and search.floor == 0


async def test_what_the_budget_cannot_reach_is_stated() -> None:
    node = _node(cap=100)
    search = await initialized(node.client(), _v4(budget=3), TOKEN, "latest", span=100)
    assert search.found == [] and search.floor == 701
    missed = unsearched(_chain(budget=3), search)
    assert missed == Unsearched(1, 100, 700)
    assert "blocks 100-700" in missed.sentence and missed.label == "1:100-700"


async def test_a_node_without_logs_leaves_everything_unsearched() -> None:
    node = FakeNode({"eth_blockNumber": hex(HEAD)})  # eth_getLogs: method not found
    search = await initialized(node.client(), _v4(), TOKEN, "latest", span=None)
    assert search.found == [] and unsearched(_chain(), search) == Unsearched(1, 100, HEAD)


async def test_a_node_failure_is_no_missing_history() -> None:
    node = _node(cap=100, refusal=Fault(-32603, "internal error"))
    with pytest.raises(RpcError):  # raised, not taken for a range the node would not read
        await initialized(node.client(), _v4(), TOKEN, "latest", span=None)


async def test_a_partial_search_is_remembered_with_its_floor() -> None:
    node = _node(cap=100)
    memo: MemoryCache[str, list[Any]] = MemoryCache(8)
    first = await initialized(node.client(), _v4(budget=3), TOKEN, "latest", memo, span=100)
    again = await initialized(node.client(), _v4(budget=3), TOKEN, "latest", memo, span=100)
    assert first.floor == again.floor == 701  # still stated, without reading it all again
    assert node.methods.count("eth_getLogs") == 2 * 3 + 2


def _chain(budget: int = 256) -> Any:
    chain = load_registry()[1]
    return replace(chain, uniswap_v4=_v4(budget=budget))


def test_the_registry_names_the_pool_managers_deployment_block() -> None:
    v4 = load_registry()[1].uniswap_v4
    assert v4 is not None and v4.deployed_block == 21_688_329 and v4.log_windows == 256
    assert unsearched(load_registry()[1], Search([], 21_688_329, None)) is None

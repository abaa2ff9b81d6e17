"""The strict node's own rules, tested so the test bed is itself tested.

The first part runs :mod:`gethsim` alone on cases shaped like ethereum/execution-apis'
``tests/eth_simulateV1`` (block order -38020, timestamps -38021, too many blocks -38026,
gap filling, block gas -38015, the RPC gas cap); the second sends real requests to strict
nodes in front of anvil and checks what comes back, including what anvil alone would
have got wrong (gap blocks, base fee 0, a call's default gas).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from gethsim import (
    Base,
    RuleError,
    anvil_validation,
    gas_limits,
    plan_gas,
    revert_reason,
    sanitize,
)
from nodeprofiles import ARCHIVE, GETH_FULL, LOAD_BALANCED, MOVING_HEAD, PROVIDER, Profile
from strictnode import StrictNode

pytestmark = pytest.mark.integration

BASE = Base(number=100, time=1_000, gas_limit=30_000_000)
SENDER = "0xc000000000000000000000000000000000000000"
TARGET = "0xc200000000000000000000000000000000000000"
BURNER = "0x5b600056"  # JUMPDEST PUSH1 0 JUMP: burns whatever gas it gets
RETURNS_BASEFEE = "0x4860005260206000f3"  # BASEFEE, return it
RETURNS_GAS_LEFT = "0x5a60005260206000f3"  # GAS, return it
RETURNS_PREVRANDAO = "0x4460005260206000f3"  # PREVRANDAO, return it


def _call(**extra: Any) -> dict[str, Any]:
    return {"from": SENDER, "to": TARGET, "input": "0x", **extra}


def _numbers(blocks: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(b["blockOverrides"]["number"], b["blockOverrides"]["time"]) for b in blocks]


# SIMRULES ALONE


def test_defaults_count_up_from_the_base() -> None:
    blocks = sanitize([{}, {}, {}], BASE, 256)
    assert _numbers(blocks) == [(101, 1_012), (102, 1_024), (103, 1_036)]


def test_a_number_not_above_the_previous_is_refused() -> None:
    with pytest.raises(RuleError) as first:
        sanitize([{"blockOverrides": {"number": "0x64"}}], BASE, 256)  # 100 = the base
    assert (first.value.code, first.value.message) == (
        -38020,
        "block numbers must be in order: 100 <= 100",
    )
    blocks = [{"blockOverrides": {"number": hex(120)}}, {"blockOverrides": {"number": hex(110)}}]
    with pytest.raises(RuleError) as later:
        sanitize(blocks, BASE, 256)
    assert later.value.message == "block numbers must be in order: 110 <= 120"


def test_a_time_not_above_the_previous_is_refused() -> None:
    blocks = [{"blockOverrides": {"time": hex(1_100)}}, {"blockOverrides": {"time": hex(1_100)}}]
    with pytest.raises(RuleError) as caught:
        sanitize(blocks, BASE, 256)
    assert caught.value.code == -38021
    assert caught.value.message == "block timestamps must be in order: 1100 <= 1100"


def test_past_the_cap_is_too_many_blocks() -> None:
    assert _numbers(sanitize([{"blockOverrides": {"number": 356}}], BASE, 256))[-1][0] == 356
    for blocks, cap in (
        ([{"blockOverrides": {"number": 357}}], 256),
        ([{"blockOverrides": {"number": 117}}], 16),
        ([{}] * 17, 16),
    ):
        with pytest.raises(RuleError) as caught:
            sanitize(blocks, BASE, cap)
        assert (caught.value.code, caught.value.message) == (-38026, "too many blocks")
    with pytest.raises(RuleError) as empty:
        sanitize([], BASE, 256)
    assert empty.value.code == -32602


def test_gaps_are_filled_with_empty_blocks_twelve_seconds_apart() -> None:
    blocks = sanitize([{"blockOverrides": {"number": 104}, "calls": [_call()]}], BASE, 256)
    assert _numbers(blocks) == [(101, 1_012), (102, 1_024), (103, 1_036), (104, 1_048)]
    assert [len(b["calls"]) for b in blocks] == [0, 0, 0, 1]
    explicit = sanitize([{"blockOverrides": {"number": 103, "time": 5_000}}], BASE, 256)
    assert _numbers(explicit) == [(101, 1_012), (102, 1_024), (103, 5_000)]


def test_a_gas_limit_override_carries_to_later_blocks() -> None:
    blocks = sanitize([{"blockOverrides": {"gasLimit": "0x16e360"}}, {}, {}], BASE, 256)
    assert gas_limits(blocks, BASE) == [1_500_000, 1_500_000, 1_500_000]
    assert gas_limits(sanitize([{}], BASE, 256), BASE) == [30_000_000]


def test_a_call_without_gas_gets_what_its_block_has_left() -> None:
    blocks = sanitize([{"calls": [_call(gas="0xf4240"), _call()]}], BASE, 256)
    limits = [1_500_000]
    first = plan_gas(blocks, limits, 50_000_000)
    assert first == [[1_000_000, 1_500_000]]  # before a run: nothing used yet
    settled = plan_gas(blocks, limits, 50_000_000, used=[[1_000_000, 500_000]], sent=first)
    assert settled == [[1_000_000, 500_000]]


def test_declared_gas_past_the_block_is_refused() -> None:
    blocks = sanitize([{"calls": [_call(gas=hex(31_000_000))]}], BASE, 256)
    with pytest.raises(RuleError) as caught:
        plan_gas(blocks, [30_000_000], 50_000_000)
    assert caught.value.code == -38015
    two = sanitize([{"calls": [_call(gas=hex(20_000_000)), _call(gas=hex(20_000_000))]}], BASE, 256)
    sent = plan_gas(two, [30_000_000], 50_000_000)
    with pytest.raises(RuleError) as second:
        plan_gas(two, [30_000_000], 50_000_000, used=[[20_000_000, 21_000]], sent=sent)
    assert second.value.message == "block gas limit reached: 20000000 >= 30000000"


def test_the_rpc_gas_cap_is_shared_by_the_whole_request() -> None:
    blocks = sanitize(
        [{"calls": [_call(gas=hex(80_000))]}, {"calls": [_call(gas=hex(80_000))]}], BASE, 256
    )
    sent = plan_gas(blocks, [30_000_000] * 2, 100_000)
    assert sent == [[80_000], [80_000]]
    again = plan_gas(blocks, [30_000_000] * 2, 100_000, used=[[70_000], [30_000]], sent=sent)
    assert again == [[80_000], [30_000]]  # the second call gets what the cap has left
    with pytest.raises(RuleError) as caught:
        plan_gas(blocks, [30_000_000] * 2, 70_000, used=[[70_000], [0]], sent=[[70_000], [0]])
    assert (caught.value.code, caught.value.message) == (-32603, "gas limit reached")


def test_an_overridden_base_fee_is_run_with_validation_only_when_nothing_else_changes() -> None:
    fee = {"blockOverrides": {"baseFeePerGas": "0x7"}}
    assert anvil_validation([{**fee, "calls": [_call(gasPrice="0x9")]}], False) is True
    assert anvil_validation([{**fee, "calls": [_call(gasPrice="0x6")]}], False) is False
    assert (
        anvil_validation([{**fee, "calls": [_call(gasPrice="0x9", nonce="0x3")]}], False) is False
    )
    assert anvil_validation([{"calls": [_call(gasPrice="0x9")]}], False) is False
    assert anvil_validation([{"calls": [_call()]}], True) is True


def test_revert_reasons_decode_only_error_strings() -> None:
    data = "0x08c379a0" + (32).to_bytes(32, "big").hex() + (4).to_bytes(32, "big").hex()
    assert revert_reason(data + b"nope".hex().ljust(64, "0")) == "nope"
    assert revert_reason("0x") is None and revert_reason("0x4e487b71") is None


# A REAL STRICT NODE


def _rpc(url: str, method: str, params: list[Any]) -> Any:
    return httpx.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    ).json()


@pytest.fixture(scope="module")
def geth(strict_nodes: Callable[[Profile], StrictNode]) -> StrictNode:
    return strict_nodes(GETH_FULL)


def test_the_node_returns_gap_blocks_and_runs_at_base_fee_zero(geth: StrictNode) -> None:
    head = int(_rpc(geth.url, "eth_blockNumber", [])["result"], 16)
    code = {TARGET: {"code": RETURNS_BASEFEE}, SENDER: {"balance": hex(10**18)}}
    request = {
        "blockStateCalls": [
            {"stateOverrides": code, "calls": [_call()]},
            {"blockOverrides": {"number": hex(head + 4)}, "calls": [_call()]},
            {"blockOverrides": {"baseFeePerGas": "0x7"}, "calls": [_call(gasPrice="0x9")]},
        ]
    }
    reply = _rpc(geth.url, "eth_simulateV1", [request, "latest"])["result"]
    numbers = [int(b["number"], 16) - head for b in reply]
    assert numbers == [1, 2, 3, 4, 5]  # anvil alone returns 3 blocks, the first at the base
    times = [int(b["timestamp"], 16) for b in reply]
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [12] * 4
    fees = [int(b["calls"][0]["returnData"], 16) for b in reply if b["calls"]]
    assert fees == [0, 0, 7]


def test_a_block_reads_prevrandao_zero_unless_overridden_as_in_geth(geth: StrictNode) -> None:
    """geth builds each simulated header afresh: its mix digest is zero unless the block
    overrides ``prevRandao`` (anvil alone keeps the base block's, or the last override's)."""
    mix = "0x" + "5a" * 32
    code = {TARGET: {"code": RETURNS_PREVRANDAO}, SENDER: {"balance": hex(10**18)}}
    request = {
        "blockStateCalls": [
            {"stateOverrides": code, "calls": [_call()]},
            {"blockOverrides": {"prevRandao": mix}, "calls": [_call()]},
            {"calls": [_call()]},
        ]
    }
    reply = _rpc(geth.url, "eth_simulateV1", [request, "latest"])["result"]
    read = [block["calls"][0]["returnData"] for block in reply]
    assert read == ["0x" + "00" * 32, mix, "0x" + "00" * 32]
    head = _rpc(geth.url, "eth_getBlockByNumber", ["latest", False])["result"]
    assert int(head["mixHash"], 16) != 0  # what a real block reads


def test_the_node_gives_a_call_its_blocks_remaining_gas(geth: StrictNode) -> None:
    request = {
        "blockStateCalls": [
            {
                "blockOverrides": {"gasLimit": hex(1_500_000)},
                "stateOverrides": {TARGET: {"code": BURNER}},
                "calls": [_call(gas=hex(1_000_000)), _call()],
            }
        ]
    }
    (block,) = _rpc(geth.url, "eth_simulateV1", [request, "latest"])["result"]
    used = [int(c["gasUsed"], 16) for c in block["calls"]]
    assert used == [1_000_000, 500_000]  # anvil alone gives the second call 1.5M
    assert block["calls"][1]["error"] == {"message": "out of gas", "code": -32015}
    too_much = {
        "blockStateCalls": [{**request["blockStateCalls"][0], "calls": [_call(gas=hex(2_000_000))]}]
    }
    error = _rpc(geth.url, "eth_simulateV1", [too_much, "latest"])["error"]
    assert error["code"] == -38015


def test_the_base_is_the_tag_resolved_when_the_node_handles_the_call(geth: StrictNode) -> None:
    head = int(_rpc(geth.url, "eth_blockNumber", [])["result"], 16)
    stale = {"blockStateCalls": [{"blockOverrides": {"number": hex(head)}, "calls": []}]}
    error = _rpc(geth.url, "eth_simulateV1", [stale, "latest"])["error"]
    assert error == {"code": -38020, "message": f"block numbers must be in order: {head} <= {head}"}
    following = {"blockStateCalls": [{"blockOverrides": {"number": hex(head + 1)}, "calls": []}]}
    pinned = _rpc(geth.url, "eth_simulateV1", [following, hex(head)])["result"]
    assert int(pinned[0]["number"], 16) == head + 1


def test_state_older_than_the_archive_depth_is_missing(geth: StrictNode) -> None:
    head = int(_rpc(geth.url, "eth_blockNumber", [])["result"], 16)
    for method, params in (
        ("eth_getBalance", [SENDER, hex(head - 128)]),
        ("eth_getCode", [TARGET, hex(head - 200)]),
        ("eth_call", [_call(), hex(head - 128)]),
        ("eth_getStorageAt", [TARGET, "0x0", hex(head - 300)]),
        ("debug_traceCall", [_call(), hex(head - 128), {"tracer": "callTracer"}]),
        ("eth_simulateV1", [{"blockStateCalls": [{}]}, hex(head - 128)]),
    ):
        error = _rpc(geth.url, method, params)["error"]
        assert "missing trie node" in error["message"], (method, error)
        assert "is not available" in error["message"]
    assert "result" in _rpc(geth.url, "eth_getBalance", [SENDER, "latest"])
    assert "result" in _rpc(
        geth.url, "debug_traceCall", [_call(), "latest", {"tracer": "callTracer"}]
    )


@pytest.mark.parametrize(
    ("profile", "refused", "served"),
    [
        (
            GETH_FULL,
            ["ots_getApiLevel", "trace_block", "anvil_mine", "evm_snapshot"],
            ["debug_traceCall"],
        ),
        (
            ARCHIVE,
            ["anvil_mine", "hardhat_mine", "evm_mine"],
            ["ots_getApiLevel", "debug_traceCall"],
        ),
        (
            PROVIDER,
            ["debug_traceCall", "ots_getApiLevel", "trace_call", "evm_mine"],
            ["eth_simulateV1"],
        ),
    ],
    ids=lambda v: v.name if isinstance(v, Profile) else None,
)
def test_each_profile_serves_only_its_namespaces(
    strict_nodes: Callable[[Profile], StrictNode],
    profile: Profile,
    refused: list[str],
    served: list[str],
) -> None:
    node = strict_nodes(profile)
    for method in refused:
        error = _rpc(node.url, method, [])["error"]
        assert error == {
            "code": -32601,
            "message": f"the method {method} does not exist/is not available",
        }
    for method in served:
        assert profile.serves(method)


def test_batches_past_the_limit_are_refused_as_each_node_does(
    strict_nodes: Callable[[Profile], StrictNode],
) -> None:
    def batch(url: str, n: int) -> Any:
        calls = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_chainId", "params": []} for i in range(n)
        ]
        return httpx.post(url, json=calls).json()

    provider = strict_nodes(PROVIDER)
    assert len(batch(provider.url, 100)) == 100
    refused = batch(provider.url, 101)
    assert isinstance(refused, dict) and refused["error"]["code"] == -32600
    geth = strict_nodes(GETH_FULL)
    assert len(batch(geth.url, 1000)) == 1000
    assert batch(geth.url, 1001) == [
        {"jsonrpc": "2.0", "id": 0, "error": {"code": -32600, "message": "batch too large"}}
    ]


def test_the_provider_caps_the_log_range_and_the_simulation(
    strict_nodes: Callable[[Profile], StrictNode],
) -> None:
    provider = strict_nodes(PROVIDER)
    head = int(_rpc(provider.url, "eth_blockNumber", [])["result"], 16)
    wide = {"fromBlock": "0x0", "toBlock": hex(10_000), "address": TARGET}
    assert _rpc(provider.url, "eth_getLogs", [wide])["error"]["code"] == -32005
    assert _rpc(provider.url, "eth_getLogs", [{**wide, "toBlock": hex(head)}])["result"] == []
    far = {"blockStateCalls": [{"blockOverrides": {"number": hex(head + 17)}}]}
    assert _rpc(provider.url, "eth_simulateV1", [far, "latest"])["error"]["code"] == -38026
    near = {"blockStateCalls": [{"blockOverrides": {"number": hex(head + 16)}}]}
    assert len(_rpc(provider.url, "eth_simulateV1", [near, hex(head)])["result"]) == 16


def test_the_moving_head_moves(strict_nodes: Callable[[Profile], StrictNode]) -> None:
    node = strict_nodes(MOVING_HEAD)
    first = int(_rpc(node.url, "eth_blockNumber", [])["result"], 16)
    for _ in range(40):  # bounded: 4 s at most
        time.sleep(0.1)
        if int(_rpc(node.url, "eth_blockNumber", [])["result"], 16) > first:
            return
    pytest.fail("the moving-head node mined no block in 4 s")


def test_load_balanced_backends_answer_a_block_apart(
    strict_nodes: Callable[[Profile], StrictNode],
) -> None:
    node = strict_nodes(LOAD_BALANCED)
    for _ in range(40):  # bounded: wait until the chain has moved past its loaded head
        heads = [int(_rpc(node.url, "eth_blockNumber", [])["result"], 16) for _ in range(2)]
        blocks = [
            _rpc(node.url, "eth_getBlockByNumber", [hex(max(heads)), False]) for _ in range(2)
        ]
        if abs(heads[0] - heads[1]) == 1 and None in [b["result"] for b in blocks]:
            return  # one backend is a block behind, and does not know the newer block yet
        time.sleep(0.05)
    pytest.fail(f"no lag seen: heads {heads}")


def test_logs_past_the_head_are_refused_as_execution_apis_shows(geth: StrictNode) -> None:
    """ethereum/execution-apis tests/eth_getLogs/filter-error-*: a numbered toBlock above
    the head, and a range reversed once "latest" is resolved, are -32602."""
    head = int(_rpc(geth.url, "eth_blockNumber", [])["result"], 16)
    beyond = _rpc(geth.url, "eth_getLogs", [{"fromBlock": hex(head), "toBlock": hex(head + 2)}])
    assert beyond["error"] == {
        "code": -32602,
        "message": "block range extends beyond current head block",
    }
    reversed_ = _rpc(geth.url, "eth_getLogs", [{"fromBlock": hex(head + 2), "toBlock": "latest"}])
    assert reversed_["error"] == {"code": -32602, "message": "invalid block range params"}
    at_head = {"fromBlock": hex(head), "toBlock": hex(head), "address": TARGET}
    assert _rpc(geth.url, "eth_getLogs", [at_head])["result"] == []


def test_calls_run_with_the_rpc_gas_cap(geth: StrictNode) -> None:
    """geth gives an eth_call without gas the 50M cap, and caps more (anvil: 30M, or any)."""
    code = {TARGET: {"code": RETURNS_GAS_LEFT}}
    left = [
        int(_rpc(geth.url, "eth_call", [_call(**gas), "latest", code])["result"], 16)
        for gas in ({}, {"gas": hex(60_000_000)}, {"gas": hex(100_000)})
    ]
    assert [round(g, -6) for g in left[:2]] == [50_000_000, 50_000_000]
    assert left[2] < 100_000

"""The eth_simulateV1 emulation over eth_call (simulate/emulation.py), without a node:
how a simulation becomes eth_call runs and how the runner's answer maps back."""

from __future__ import annotations

from typing import Any

import pytest
from eth_abi import encode

from tokenrisk.errors import MalformedResponse
from tokenrisk.simulate.emulation import emulation, merged_overrides, runner_code

A, B, C = ("0x" + c * 40 for c in "abc")
TOKEN = "0x" + "7" * 40


def _call(sender: str, data: str = "0x") -> dict[str, Any]:
    return {"from": sender, "to": TOKEN, "data": data, "gas": hex(100_000)}


def _block(*calls: dict[str, Any], overrides: Any = None, n: int = 1) -> dict[str, Any]:
    block: dict[str, Any] = {"calls": list(calls), "blockOverrides": {"number": hex(n)}}
    block["blockOverrides"]["time"] = hex(1000 + n)
    block["blockOverrides"]["gasLimit"] = hex(30_000_000)
    if overrides:
        block["stateOverrides"] = overrides
    return block


def _answer(*results: tuple[bool, int, bytes]) -> str:
    return "0x" + encode(["(bool,uint256,bytes)[]"], [list(results)]).hex()


def test_overrides_of_every_block_are_merged() -> None:
    blocks = [
        {"stateOverrides": {A: {"balance": "0x1"}, TOKEN: {"stateDiff": {"0x1": "0x2"}}}},
        {"stateOverrides": {A.upper().replace("0X", "0x"): {"balance": "0x5"}}},
        {"stateOverrides": {TOKEN: {"stateDiff": {"0x3": "0x4"}}}},
    ]
    merged = merged_overrides(blocks)
    assert merged[A] == {"balance": "0x5"}
    assert merged[TOKEN] == {"stateDiff": {"0x1": "0x2", "0x3": "0x4"}}


def test_a_journey_is_one_run_from_its_first_sender_with_the_runner_at_each_sender() -> None:
    params = [{"blockStateCalls": [_block(_call(A)), _block(_call(A), _call(B), n=2)]}, "latest"]
    plan = emulation(params)
    assert len(plan.runs) == 1
    (method, (call, tag, overrides)), indices = plan.runs[0]
    assert (method, tag, indices) == ("eth_call", "latest", [0, 1])
    assert call["from"] == call["to"] == A
    assert overrides[A]["code"] == overrides[B]["code"] == runner_code()
    answer = _answer((True, 100, b""), (False, 5, b"\x08"), (True, 7, b"\x01"))
    blocks = plan.reply([answer])
    assert [len(b["calls"]) for b in blocks] == [1, 2]
    failed = blocks[1]["calls"][0]
    assert failed["status"] == "0x0" and failed["returnData"] == "0x08"
    assert blocks[0]["calls"][0]["gasUsed"] == hex(100 + 21_000)


def test_holders_in_blocks_of_their_own_each_get_a_run_as_origin() -> None:
    blocks = [_block(_call(s), _call(s), n=i + 1) for i, s in enumerate((A, B, C))]
    plan = emulation([{"blockStateCalls": blocks}, "latest"])
    assert [r[0][1][0]["from"] for r in plan.runs] == [A, B, C]
    assert [r[1] for r in plan.runs] == [[0], [1], [2]]
    replies = [_answer((True, 1, b""), (i == 1, 2, b"")) for i in range(3)]
    statuses = [c["status"] for b in plan.reply(replies) for c in b["calls"]]
    assert statuses == ["0x1", "0x0", "0x1", "0x1", "0x1", "0x0"]


def test_block_overrides_go_as_the_fourth_parameter_only_when_asked() -> None:
    params = [{"blockStateCalls": [_block(_call(A), n=1), _block(_call(A), n=9)]}, "latest"]
    assert len(emulation(params).requests[0][1]) == 3
    with_blocks = emulation(params, block_overrides=True).requests[0][1]
    assert with_blocks[3] == {"number": hex(9), "time": hex(1009)}  # the last block's


def test_an_answer_that_is_not_the_runners_is_malformed() -> None:
    plan = emulation([{"blockStateCalls": [_block(_call(A), _call(A))]}, "latest"])
    with pytest.raises(MalformedResponse):
        plan.reply([_answer((True, 1, b""))])  # one result for two calls
    with pytest.raises(MalformedResponse):
        plan.reply(["0x1234"])
    with pytest.raises(MalformedResponse):
        emulation([{"blockStateCalls": [{"calls": []}]}, "latest"])


async def test_block_overrides_the_node_refuses_are_dropped_for_good() -> None:
    import json

    import httpx

    from tokenrisk.chain.rpc import RpcClient
    from tokenrisk.simulate.emulation import EmulatedSimulate

    seen: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        payload = json.loads(request.content)
        items = payload if isinstance(payload, list) else [payload]
        replies = []
        for item in items:
            seen.append(len(item["params"]))
            if len(item["params"]) == 4:  # as Hardhat's node: invalid params
                error = {"code": -32602, "message": "trailing characters"}
                replies.append({"jsonrpc": "2.0", "id": item["id"], "error": error})
            else:
                result = _answer((True, 1, b"\x2a"))
                replies.append({"jsonrpc": "2.0", "id": item["id"], "result": result})
        return httpx.Response(200, json=replies if isinstance(payload, list) else replies[0])

    inner = RpcClient("http://node.test", transport=httpx.MockTransport(handle))
    rpc = EmulatedSimulate(inner, block_overrides=True)
    params = [{"blockStateCalls": [_block(_call(A))]}, "latest"]
    try:
        (block,) = await rpc.call("eth_simulateV1", params)
        assert block["calls"][0]["returnData"] == "0x2a"
        assert rpc.block_overrides is False
        await rpc.call("eth_simulateV1", params)
    finally:
        await inner.aclose()
    assert seen == [4, 3, 3]  # refused once, then never sent again

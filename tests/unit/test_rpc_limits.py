"""The RPC client against fake nodes with real nodes' limits: batches split at the size
a node accepts (learnt from its refusal), a node serving another chain refused (and
asked again after it was unreachable), old-state reads mapped to StateUnavailable."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fakenode import FakeNode

from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.rpc import RpcClient, RpcSettings, batch_refusal, error_from_object
from tokenrisk.errors import (
    BatchTooLarge,
    CallReverted,
    ChainMismatch,
    MethodUnsupported,
    NodeUnavailable,
    RpcError,
    StateUnavailable,
)

Refusal = Callable[[list[dict[str, Any]]], httpx.Response]


def _error(message: str, code: int = -32600, id_: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def geth_style(batch: list[dict[str, Any]]) -> httpx.Response:
    """geth: a one-element array holding "batch too large" with the first call's id."""
    return httpx.Response(200, json=[_error("batch too large", id_=batch[0]["id"])])


def provider_413(batch: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(413, text="Request Entity Too Large")


def provider_400(batch: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(400, json=_error("Batch size exceeds the limit of 10 requests"))


def single_object(batch: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(200, json=_error("batch limit 10 exceeded", -32005))


def every_slot(batch: list[dict[str, Any]]) -> httpx.Response:
    return httpx.Response(200, json=[_error("Batch size too large", id_=c["id"]) for c in batch])


class CappedNode(FakeNode):
    """Answers eth_getBalance with the block asked; refuses batches over ``cap``."""

    def __init__(self, cap: int, refuse: Refusal) -> None:
        super().__init__({"eth_getBalance": lambda params: params[1], "eth_chainId": "0x1"})
        self.cap = cap
        self.refuse = refuse
        self.sizes: list[int] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if isinstance(body, list):
            self.sizes.append(len(body))
            if len(body) > self.cap:
                self.requests += 1
                return self.refuse(body)
        return super().handle(request)


def reads(n: int) -> list[tuple[str, list[Any]]]:
    return [("eth_getBalance", ["0x" + "11" * 20, hex(i)]) for i in range(n)]


@pytest.mark.parametrize(
    "refuse", [geth_style, provider_413, provider_400, single_object, every_slot]
)
async def test_a_refused_batch_is_sent_again_split(refuse: Refusal) -> None:
    node = CappedNode(10, refuse)
    rpc = node.client()
    replies = await rpc.batch(reads(25))
    assert replies == [hex(i) for i in range(25)]  # every answer, in order
    assert rpc.batch_limit is not None and rpc.batch_limit <= 10
    node.sizes.clear()
    await rpc.batch(reads(25))  # learnt: no refusal the second time
    assert max(node.sizes) <= 10
    await rpc.aclose()


async def test_a_named_limit_is_taken_at_once() -> None:
    node = CappedNode(10, provider_400)
    rpc = node.client()
    await rpc.batch(reads(40))
    assert rpc.batch_limit == 10
    assert node.sizes == [40, 10, 10, 10, 10]
    await rpc.aclose()


async def test_a_configured_limit_splits_before_any_refusal() -> None:
    node = CappedNode(100, geth_style)
    rpc = node.client(max_batch=100)
    assert await rpc.batch(reads(250)) == [hex(i) for i in range(250)]
    assert sorted(node.sizes) == [50, 100, 100]
    await rpc.aclose()


async def test_the_coalescing_client_learns_and_splits_too() -> None:
    node = CappedNode(16, geth_style)
    transport = httpx.MockTransport(node.handle)
    rpc = CoalescingRpc("http://fake.node.test", RpcSettings(retries=0), transport=transport)
    assert await rpc.batch(reads(60)) == [hex(i) for i in range(60)]
    assert rpc.batch_limit is not None and rpc.batch_limit <= 16
    await rpc.aclose()


async def test_a_one_call_batch_refused_raises_typed() -> None:
    node = CappedNode(0, geth_style)
    rpc = node.client()
    with pytest.raises(BatchTooLarge):
        await rpc.batch(reads(1))
    await rpc.aclose()


@pytest.mark.parametrize(
    ("message", "limit"),
    [
        ("batch too large", None),
        ("Batch size exceeds the limit of 100 requests", 100),
        ("batch limit 10 exceeded", 10),
        ("Maximum batch size is 50", 50),
        ("execution reverted", None),
    ],
)
def test_batch_refusal_texts(message: str, limit: int | None) -> None:
    refused = batch_refusal(message)
    if message == "execution reverted":
        assert refused is None
    else:
        assert isinstance(refused, BatchTooLarge) and refused.limit == limit


# OLD STATE


@pytest.mark.parametrize(
    "message",
    [
        "missing trie node 1a2b3c (path ) <nil>",
        "historical state 0xabc is not available",
        "World state unavailable for block 0x10",
        "state at block #12 is pruned",
        "required historical state unavailable (reexec=128)",
    ],
)
def test_old_state_reads_are_state_unavailable(message: str) -> None:
    assert isinstance(error_from_object({"code": -32000, "message": message}), StateUnavailable)


@pytest.mark.parametrize(
    "error",
    [
        {"code": -32603, "message": "EVM error ReentrancySentryOOG"},  # anvil: SSTORE, <= 2300 gas
        {"code": -32000, "message": "out of gas"},  # geth
    ],
)
def test_a_halted_call_is_the_contract_s_answer(error: dict[str, object]) -> None:
    """A halt (EIP-2200's SSTORE sentry, out of gas) is a failed call, never a node error."""
    assert isinstance(error_from_object(error), CallReverted)


def test_a_missing_method_is_still_unsupported() -> None:
    error = {"code": -32601, "message": "the method ots_x does not exist/is not available"}
    assert isinstance(error_from_object(error), MethodUnsupported)


# CHAIN IDENTITY


class SwitchingNode(FakeNode):
    """Serves ``chain``; ``down`` makes every request fail to connect."""

    def __init__(self, chain: int) -> None:
        super().__init__({"eth_blockNumber": "0x10"})
        self.chain = chain
        self.down = False
        self.results["eth_chainId"] = lambda params: hex(self.chain)

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("refused")
        return super().handle(request)


def identity_client(node: FakeNode, expected: int) -> RpcClient:
    transport = httpx.MockTransport(node.handle)
    settings = RpcSettings(retries=0)
    return RpcClient(
        "http://fake.node.test", settings, transport=transport, expect_chain_id=expected
    )


async def test_the_chain_id_is_asked_once_before_the_first_request() -> None:
    node = SwitchingNode(1)
    rpc = identity_client(node, 1)
    await rpc.call("eth_blockNumber")
    await rpc.call("eth_blockNumber")
    assert node.methods == ["eth_chainId", "eth_blockNumber", "eth_blockNumber"]
    await rpc.aclose()


async def test_a_node_of_another_chain_answers_nothing() -> None:
    node = SwitchingNode(5)
    rpc = identity_client(node, 1)
    with pytest.raises(ChainMismatch) as raised:
        await rpc.call("eth_blockNumber")
    assert raised.value.status == 503
    assert "chain 1" in raised.value.public and "chain 5" in raised.value.public
    assert "fake.node" not in raised.value.public
    with pytest.raises(ChainMismatch):
        await rpc.batch(reads(2))
    assert "eth_blockNumber" not in node.methods and "eth_getBalance" not in node.methods
    await rpc.aclose()


async def test_verify_chain_raises_at_start() -> None:
    rpc = identity_client(SwitchingNode(56), 1)
    with pytest.raises(ChainMismatch):
        await rpc.verify_chain()
    await rpc.aclose()


async def test_the_chain_is_checked_again_after_the_node_was_unreachable() -> None:
    node = SwitchingNode(1)
    rpc = identity_client(node, 1)
    await rpc.call("eth_blockNumber")
    node.down = True
    with pytest.raises(NodeUnavailable):
        await rpc.call("eth_blockNumber")
    node.down, node.chain = False, 10  # it came back as another chain's node
    with pytest.raises(ChainMismatch):
        await rpc.call("eth_blockNumber")
    rpc.identity.recheck = 0.0
    node.chain = 1  # repaired: served again without a restart
    assert await rpc.call("eth_blockNumber") == "0x10"
    await rpc.aclose()


async def test_no_expected_chain_means_no_check() -> None:
    node = SwitchingNode(5)
    rpc = node.client()
    assert await rpc.call("eth_blockNumber") == "0x10"
    assert node.methods == ["eth_blockNumber"]
    await rpc.aclose()


def test_errors_stay_in_the_tree() -> None:
    assert issubclass(StateUnavailable, RpcError) and issubclass(BatchTooLarge, RpcError)
    assert issubclass(ChainMismatch, NodeUnavailable)

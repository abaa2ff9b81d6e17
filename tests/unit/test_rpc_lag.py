"""The RPC client behind a load balancer whose backends lag (tokenrisk.chain.lag).

A fake provider routes every other HTTP request to a backend one block behind, as
tests/strictnode's ``provider-load-balanced`` profile does against a real anvil: that
backend's head is older, it answers ``null`` for a block above it and ``-32000 "header
not found"`` for state at one.  A read at a recent block it does not have is sent again
(bounded) and answered by the other backend; every other error is sent once; a lag that
never ends becomes NodeBehind (503) without the node's words.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tokenrisk.chain.head import one_head_per_request, read_head
from tokenrisk.chain.lag import Lag, block_of, waits
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.errors import CallReverted, NodeBehind, NodeUnavailable, RpcError

HEAD = 1000
HEAD_HASH = "0x" + "ab" * 32
TOKEN = "0x" + "11" * 20
HEADER_NOT_FOUND = {"code": -32000, "message": "header not found"}


class Provider:
    """Two backends behind one URL: HTTP requests alternate between them (the first goes
    to the one at ``HEAD``); the other trails it by ``lag`` blocks (``lag=None``: every
    request goes to the trailing one, a lag that never ends).  ``sent`` lists every
    JSON-RPC call as (backend head, method)."""

    def __init__(self, lag: int = 1, always_behind: bool = False, reverts: bool = False) -> None:
        self.lag = lag
        self.always_behind = always_behind
        self.reverts = reverts
        self.requests = 0
        self.sent: list[tuple[int, str]] = []

    def client(self, **settings: Any) -> RpcClient:
        rpc_settings = RpcSettings(**{"retries": 0, "lag_backoff": 0.0, **settings})
        transport = httpx.MockTransport(self.handle)
        return RpcClient("http://lb.test", rpc_settings, "provider", transport=transport)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        behind = self.always_behind or self.requests % 2 == 0
        head = HEAD - self.lag if behind else HEAD
        body = json.loads(request.content)
        calls = body if isinstance(body, list) else [body]
        replies = [self.answer(head, call) for call in calls]
        out = replies if isinstance(body, list) else replies[0]
        return httpx.Response(200, content=json.dumps(out).encode())

    def answer(self, head: int, call: dict[str, Any]) -> dict[str, Any]:
        method, params = call["method"], call["params"]
        self.sent.append((head, method))
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": call["id"]}
        try:
            reply["result"] = self.result(head, method, params)
        except LookupError:
            reply["error"] = HEADER_NOT_FOUND
        except ArithmeticError:
            reply["error"] = {"code": 3, "message": "execution reverted: header not found"}
        return reply

    def result(self, head: int, method: str, params: list[Any]) -> Any:
        if method == "eth_blockNumber":
            return hex(head)
        tag = params[0] if method == "eth_getBlockByNumber" else params[-1]
        number = head if tag == "latest" else _number(tag, head)
        if method == "eth_getBlockByNumber":
            return None if number > head else _block(number)
        if number > head:
            raise LookupError(tag)
        if self.reverts:
            raise ArithmeticError(tag)
        return hex(number)  # the answer names the block it was read at


def _number(tag: Any, head: int) -> int:
    if isinstance(tag, dict):
        return HEAD if tag.get("blockHash") == HEAD_HASH else head + 100
    return int(tag, 16)


def _block(number: int) -> dict[str, Any]:
    block_hash = HEAD_HASH if number == HEAD else "0x" + f"{number:064x}"
    return {"number": hex(number), "hash": block_hash, "timestamp": "0x1"}


async def _pinned(rpc: RpcClient) -> int:
    """Read the head (from the leading backend, the first request) as a check does."""
    block = await rpc.call("eth_getBlockByNumber", ["latest", False])
    return int(block["number"], 16)


async def test_a_read_at_the_pinned_head_is_answered_by_a_backend_that_has_it() -> None:
    provider = Provider()
    rpc = provider.client()
    head = await _pinned(rpc)
    assert await rpc.call("eth_getCode", [TOKEN, hex(head)]) == hex(HEAD)
    assert provider.sent[1:] == [(HEAD - 1, "eth_getCode"), (HEAD, "eth_getCode")]
    assert rpc.lag.retried == 1
    await rpc.aclose()


async def test_a_null_block_at_the_pinned_head_is_read_again() -> None:
    provider = Provider()
    rpc = provider.client()
    head = await _pinned(rpc)
    block = await rpc.call("eth_getBlockByNumber", [hex(head), False])
    assert block["number"] == hex(HEAD)
    await rpc.aclose()


async def test_a_typed_read_is_read_again_too() -> None:
    provider = Provider()
    rpc = provider.client()
    head = await _pinned(rpc)
    assert await rpc.call_typed("eth_call", [{"to": TOKEN}, hex(head)], str) == hex(HEAD)
    await rpc.aclose()


async def test_a_lag_that_never_ends_is_a_503_after_a_bounded_number_of_tries() -> None:
    provider = Provider()
    rpc = provider.client(lag_retries=3)
    head = await _pinned(rpc)
    provider.always_behind = True
    with pytest.raises(NodeBehind) as caught:
        await rpc.call("eth_call", [{"to": TOKEN}, hex(head)])
    assert [m for _, m in provider.sent].count("eth_call") == 4  # the first try + 3 retries
    assert isinstance(caught.value, NodeUnavailable) and caught.value.status == 503
    assert "header" not in caught.value.public  # our words, never the node's
    await rpc.aclose()


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        (hex(HEAD - 20), "an old block: the node's answer, not a lag"),
        (hex(HEAD + 50), "far above any head seen"),
        ({"blockHash": "0x" + "cd" * 32}, "a hash that was never a head"),
    ],
)
async def test_reads_outside_the_recent_blocks_are_sent_once(tag: Any, why: str) -> None:
    provider = Provider(lag=30, always_behind=False)
    rpc = provider.client()
    await _pinned(rpc)
    provider.always_behind = True
    with pytest.raises(RpcError) as caught:
        await rpc.call("eth_call", [{"to": TOKEN}, tag])
    assert type(caught.value) is RpcError, why
    assert [m for _, m in provider.sent].count("eth_call") == 1, why
    await rpc.aclose()


async def test_a_method_that_is_not_a_read_at_a_block_is_sent_once() -> None:
    provider = Provider()
    rpc = provider.client()
    await _pinned(rpc)
    provider.always_behind = True
    with pytest.raises(RpcError):  # "header not found": its last parameter reads as block H
        await rpc.call("eth_sendRawTransaction", [hex(HEAD)])
    assert [m for _, m in provider.sent].count("eth_sendRawTransaction") == 1
    await rpc.aclose()


async def test_nothing_is_read_again_before_a_head_was_seen() -> None:
    provider = Provider(always_behind=True)
    rpc = provider.client()
    with pytest.raises(RpcError):
        await rpc.call("eth_getCode", [TOKEN, hex(HEAD)])
    assert len(provider.sent) == 1
    await rpc.aclose()


async def test_a_revert_reading_header_not_found_is_an_answer_not_a_lag() -> None:
    """A token chooses its revert reason: it must not buy retries (or a 503)."""
    provider = Provider(reverts=True)
    rpc = provider.client()
    head = await _pinned(rpc)
    provider.always_behind = False
    provider.requests = 0  # the next request goes to the leading backend
    with pytest.raises(CallReverted):
        await rpc.call("eth_call", [{"to": TOKEN}, hex(head)])
    assert [m for _, m in provider.sent].count("eth_call") == 1
    await rpc.aclose()


async def test_a_read_pinned_by_the_heads_hash_is_read_again() -> None:
    provider = Provider()
    rpc = provider.client()
    await _pinned(rpc)
    assert await rpc.call("eth_call", [{"to": TOKEN}, {"blockHash": HEAD_HASH}]) == hex(HEAD)
    assert rpc.lag.retried == 1
    await rpc.aclose()


async def test_a_batch_sends_again_only_its_members_the_backend_lacked() -> None:
    provider = Provider()
    rpc = provider.client()
    head = await _pinned(rpc)
    calls = [
        ("eth_getCode", [TOKEN, hex(head)]),
        ("eth_getCode", [TOKEN, hex(head - 1)]),  # the trailing backend has this one
        ("eth_getBlockByNumber", [hex(head), False]),
    ]
    out = await rpc.batch(calls)
    assert out[:2] == [hex(HEAD), hex(HEAD - 1)] and out[2]["number"] == hex(HEAD)
    assert provider.sent[1:4] == [(HEAD - 1, m) for m, _ in calls]
    assert provider.sent[4:] == [(HEAD, "eth_getCode"), (HEAD, "eth_getBlockByNumber")]
    await rpc.aclose()


async def test_a_batch_behind_for_good_raises_node_behind_whatever_it_tolerates() -> None:
    provider = Provider()
    rpc = provider.client(lag_retries=2)
    head = await _pinned(rpc)
    provider.always_behind = True
    with pytest.raises(NodeBehind):
        await rpc.batch([("eth_getCode", [TOKEN, hex(head)])], tolerate=RpcError)
    assert [m for _, m in provider.sent].count("eth_getCode") == 3
    await rpc.aclose()


async def test_one_request_reads_one_head_whichever_backend_answers_next() -> None:
    """The lag never moves a request's head: it is read once per request (chain/head.py),
    while reads outside a request see each backend's own."""
    provider = Provider()
    rpc = provider.client()
    with one_head_per_request():
        first, again = await read_head(rpc), await read_head(rpc)
    assert first == again and first.number == HEAD
    assert provider.requests == 1
    assert (await read_head(rpc)).number == HEAD - 1  # the next request: the other backend
    await rpc.aclose()


def test_the_waits_are_bounded_and_start_at_once() -> None:
    assert waits(0, 0.05) == (0.0,)
    assert waits(1, 0.05) == (0.0, 0.0)
    assert waits(5, 0.05) == (0.0, 0.0, 0.05, 0.1, 0.2, 0.4)
    assert sum(waits(5, 0.05)) == pytest.approx(0.75)


def test_the_heads_seen_only_move_forward() -> None:
    lag = Lag()
    lag.saw("eth_blockNumber", [], hex(HEAD))
    lag.saw("eth_getBlockByNumber", ["latest", False], _block(HEAD - 1))
    assert lag.highest == HEAD
    lag.saw("eth_getBlockByNumber", [hex(HEAD + 5), False], _block(HEAD + 5))  # not a head
    assert lag.highest == HEAD


@pytest.mark.parametrize(
    ("method", "params", "block"),
    [
        ("eth_call", [{}, "0x10"], 16),
        ("eth_call", [{}, "latest"], None),
        ("eth_getStorageAt", [TOKEN, "0x0", "0x10"], 16),
        ("eth_simulateV1", [{}, "0x10"], 16),
        ("eth_getCode", [TOKEN, {"blockNumber": "0x10"}], 16),
        ("eth_getCode", [TOKEN, {"blockHash": HEAD_HASH}], HEAD_HASH),
        ("eth_getLogs", [{"fromBlock": "0x1", "toBlock": "0x10"}], 16),
        ("eth_getLogs", [{"blockHash": HEAD_HASH}], HEAD_HASH),
        ("eth_getLogs", [{"fromBlock": "0x10", "toBlock": "latest"}], 16),
        ("eth_getLogs", [{"fromBlock": "earliest"}], None),
        ("eth_sendRawTransaction", ["0x10"], None),
        ("eth_call", [{}], None),
    ],
)
def test_the_block_a_read_names(method: str, params: list[Any], block: Any) -> None:
    assert block_of(method, params) == block

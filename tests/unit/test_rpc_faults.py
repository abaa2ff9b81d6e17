"""The RPC client against a fake node: every failing reply becomes a typed error.

No reply a node can send (JSON-RPC error, garbage, corrupt gzip, hostile nesting, a
reply of 200 MB) escapes as anything but an exception of the tokenrisk tree, and only
an EVM failure (CallReverted) is ever handed back to a caller as a per-call answer.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from fakenode import (
    INTERNAL,
    RATE_LIMITED,
    REVERTED,
    FakeNode,
    Fault,
    corrupt_gzip,
    deeply_nested,
    endless,
    garbage,
)

from tokenrisk.chain.rpc import LONG_REPLY, _shallow, decode_reply, error_from_object, too_deep
from tokenrisk.errors import (
    CallReverted,
    MalformedResponse,
    MethodUnsupported,
    NodeThrottled,
    ReplyTooDeep,
    ReplyTooLarge,
    RpcError,
    TokenRiskError,
)

CALL = ("eth_call", [{"to": "0x" + "11" * 20, "data": "0x"}, "latest"])


# ERROR OBJECTS


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"code": 3, "message": "execution reverted", "data": "0x08c379a0"}, CallReverted),
        ({"code": -32000, "message": "execution reverted"}, CallReverted),
        ({"code": -32015, "message": "VM execution error."}, CallReverted),
        ({"code": -32000, "message": "invalid opcode: INVALID"}, CallReverted),
        ({"code": -32601, "message": "the method x does not exist"}, MethodUnsupported),
        ({"code": -32005, "message": "daily request count exceeded, rate limited"}, NodeThrottled),
        ({"code": 429, "message": "Too Many Requests"}, NodeThrottled),
        ({"code": -32603, "message": "internal error"}, RpcError),
        ({"code": -32000, "message": "header not found"}, RpcError),
        ("a string, not an object", RpcError),
    ],
)
def test_error_objects_are_classified(error: object, kind: type[TokenRiskError]) -> None:
    exc = error_from_object(error)
    assert type(exc) is kind


def test_node_text_never_becomes_the_public_message() -> None:
    leaky = {"code": -32000, "message": "backend https://rpc.example/v3/SECRET failed"}
    exc = error_from_object(leaky)
    assert "SECRET" in exc.message  # kept for internal logic (revert reasons) ...
    assert "SECRET" not in exc.public  # ... never shown outside
    reverted = error_from_object({"code": 3, "message": "execution reverted: SECRET"})
    assert "SECRET" not in reverted.public


async def test_a_throttled_call_raises() -> None:
    node = FakeNode({"eth_getCode": RATE_LIMITED})
    rpc = node.client()
    with pytest.raises(NodeThrottled):
        await rpc.call("eth_getCode", ["0x" + "11" * 20, "latest"])
    await rpc.aclose()


@pytest.mark.parametrize("fault", [RATE_LIMITED, INTERNAL, Fault(-32000, "missing trie node")])
async def test_a_batch_with_one_node_error_raises_instead_of_answering(fault: Fault) -> None:
    """The bug: the error was returned in place and read as "no pair"/"not a contract"."""
    answers = iter([REVERTED, fault])
    node = FakeNode({"eth_call": lambda params: next(answers)})
    rpc = node.client()
    with pytest.raises(TokenRiskError) as caught:
        await rpc.batch([CALL, CALL])
    assert not isinstance(caught.value, CallReverted)
    await rpc.aclose()


async def test_reverts_are_answers_in_a_batch() -> None:
    answers = iter([REVERTED, "0x" + "00" * 32])
    node = FakeNode({"eth_call": lambda params: next(answers)})
    rpc = node.client()
    reverted, ok = await rpc.batch([CALL, CALL])
    assert isinstance(reverted, CallReverted) and ok == "0x" + "00" * 32
    await rpc.aclose()


async def test_probes_may_tolerate_every_rpc_error_but_never_throttling() -> None:
    node = FakeNode({"eth_call": INTERNAL, "eth_blockNumber": "0x1"})
    rpc = node.client()
    failed, head = await rpc.batch([CALL, ("eth_blockNumber", [])], tolerate=RpcError)
    assert type(failed) is RpcError and head == "0x1"
    node.results["eth_call"] = RATE_LIMITED
    with pytest.raises(NodeThrottled):
        await rpc.batch([CALL, ("eth_blockNumber", [])], tolerate=RpcError)
    await rpc.aclose()


async def test_a_missing_batch_reply_raises() -> None:
    def drop_second(body: object) -> object:
        import httpx

        assert isinstance(body, list)
        reply = [{"jsonrpc": "2.0", "id": body[0]["id"], "result": "0x"}]
        return httpx.Response(200, content=json.dumps(reply).encode())

    rpc = FakeNode(whole=drop_second).client()  # type: ignore[arg-type]
    with pytest.raises(MalformedResponse):
        await rpc.batch([CALL, CALL])
    await rpc.aclose()


# REPLIES THAT ARE NOT JSON-RPC


async def test_garbage_is_malformed() -> None:
    rpc = FakeNode(whole=garbage).client()
    with pytest.raises(MalformedResponse):
        await rpc.call("eth_blockNumber")
    await rpc.aclose()


async def test_corrupt_gzip_is_malformed_not_a_crash() -> None:
    rpc = FakeNode(whole=corrupt_gzip).client()
    with pytest.raises(MalformedResponse):
        await rpc.call("eth_blockNumber")
    await rpc.aclose()


async def test_deep_nesting_is_refused_before_parsing() -> None:
    rpc = FakeNode(whole=deeply_nested(200_000)).client()
    with pytest.raises(ReplyTooDeep):
        await rpc.call("eth_getBlockByNumber", ["latest", False])
    await rpc.aclose()


async def test_moderate_nesting_is_fine() -> None:
    rpc = FakeNode(whole=deeply_nested(100)).client()
    nested = await rpc.call("eth_getBlockByNumber", ["latest", False])
    for _ in range(99):
        nested = nested[0]
    assert nested == []
    await rpc.aclose()


async def test_a_200_mb_reply_is_cut_off_at_the_cap_without_reading_it_all() -> None:
    cap = 4 * 1024 * 1024
    stream = endless(200 * 1024 * 1024)
    rpc = FakeNode(whole=stream).client(max_reply_bytes=cap)
    with pytest.raises(ReplyTooLarge):
        await rpc.call("eth_getLogs", [{}])
    assert stream.sent <= cap + (1 << 20)  # stopped one chunk past the cap
    await rpc.aclose()


async def test_an_announced_200_mb_reply_is_refused_before_reading() -> None:
    stream = endless(200 * 1024 * 1024, declare_length=True)
    rpc = FakeNode(whole=stream).client()
    with pytest.raises(ReplyTooLarge):
        await rpc.call("eth_getLogs", [{}])
    assert stream.sent <= 1 << 20
    await rpc.aclose()


# THE DEPTH SCAN


@pytest.mark.parametrize(
    ("text", "limit", "deep"),
    [
        (b"[[[]]]", 3, False),
        (b"[[[[]]]]", 3, True),
        (b'{"a":{"b":[1,2,{"c":[]}]}}', 5, False),
        (b'{"a":{"b":[1,2,{"c":[]}]}}', 4, True),
        (b"[[],[[]],[[[]]]]", 4, False),
        (b"[[],[[]],[[[]]]]", 3, True),
        (b'["[[[[[[[[[[", "\\"[[[[[[[["]', 2, False),  # brackets in strings do not count
        (b"[]" * 1000, 1, False),
        (b"[" * 100_000 + b"]" * 100_000, 256, True),
    ],
)
def test_depth_scan(text: bytes, limit: int, deep: bool) -> None:
    assert too_deep(text, limit) is deep


_PLAIN: list[Any] = ["", "0x12", "abc", 7, None]
_HOSTILE: list[Any] = [*_PLAIN, "[[", "]}", '"{"', "a\\[", "\\"]


def _nested(rng: random.Random, depth: int, leaves: list[Any]) -> Any:
    """A random JSON value nesting at most ``depth`` deep, with strings from ``leaves``
    (keys too): brackets, quotes and backslashes in strings must not count."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(leaves)
    if rng.random() < 0.5:
        return [_nested(rng, depth - 1, leaves) for _ in range(rng.randint(0, 3))]
    keys = [str(k) for k in leaves]
    return {rng.choice(keys): _nested(rng, depth - 1, leaves) for _ in range(3)}


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def test_depth_scan_agrees_with_the_parsed_depth() -> None:
    """The quick proof (:func:`_shallow`) and the exact scan together give the depth of
    the parsed value, whatever the strings hold."""
    rng = random.Random(17)
    proved = 0
    for i in range(400):
        leaves = _PLAIN if i % 2 else _HOSTILE
        value = [_nested(rng, rng.randint(1, 12), leaves) for _ in range(3)]
        body, depth = json.dumps(value).encode(), _depth(value)
        for limit in (depth - 1, depth, depth + 2, 2 * depth):
            assert too_deep(body, limit) is (depth > limit), (body, limit)
            proved += _shallow(body, limit)
    assert proved > 100  # the quick proof took part


@pytest.mark.parametrize(
    ("text", "limit", "shallow"),
    [
        (b'[{"a":[1,{"b":"0x"}]}]' * 50, 8, True),
        (b'[{"a":[1,{"b":"0x"}]}]' * 50, 3, False),  # depth 4: left to the exact scan
        (b'["[[", "]]"]' * 50, 64, False),  # brackets in strings: not proved here
        (b'["a\\"b"]' * 50, 64, False),  # a backslash: not proved here
        (b"[}" * 50, 64, False),  # unmatched: the exact scan and the parser decide
    ],
)
def test_quick_shallow_proof(text: bytes, limit: int, shallow: bool) -> None:
    assert _shallow(text, limit) is shallow


def test_decode_never_leaks_a_parser_error() -> None:
    with pytest.raises(MalformedResponse):
        decode_reply(b"[" * 5000, 10_000)  # unbalanced and deep: parser's limit, typed
    with pytest.raises(MalformedResponse):
        decode_reply(b"\xff\xfe", 10)


async def test_only_a_long_reply_runs_the_hook_before_its_decoding() -> None:
    """``_before_long_reply`` (the coalescing client's turn for the other replies) runs
    for a reply of ``LONG_REPLY`` bytes or more, before it is decoded, and not for a
    short one; the result is the same either way."""
    long_value = "0x" + "ab" * LONG_REPLY
    rpc = FakeNode({"eth_getCode": long_value, "eth_chainId": "0x1"}).client()
    ran: list[str] = []

    async def hook() -> None:
        ran.append("hook")

    rpc._before_long_reply = hook  # type: ignore[method-assign]
    try:
        assert await rpc.call("eth_chainId") == "0x1"
        assert ran == []
        assert await rpc.call("eth_getCode", ["0x" + "11" * 20, "latest"]) == long_value
        assert ran == ["hook"]
    finally:
        await rpc.aclose()

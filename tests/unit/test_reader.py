"""The reader's calldata and answer formats, and what the node client folds (pure logic).

The reader against a real node (folded answers equal direct ones, for every catalogue
token) is tests/integration/test_reader_node.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_utils.crypto import keccak
from hypothesis import given
from hypothesis import strategies as st

from tokenrisk.chain import reader
from tokenrisk.chain.abi import selector
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.errors import CallReverted, MalformedResponse, RpcError

TOKEN = "0x" + "11" * 20
OTHER = "0x" + "22" * 20


def test_calldata_is_the_abi_encoding_of_read() -> None:
    reads = [
        reader.Read(TOKEN, "0x06fdde03", 5_000_000),
        reader.Read(OTHER, "0x70a08231" + "00" * 32, 1_000, link=1),
        reader.Read(TOKEN, "0x", 7),
    ]
    data = bytes.fromhex(reader.read_calldata(reads, [OTHER], [TOKEN, OTHER])[2:])
    signature = "read((address[],uint256[],bytes[],uint256[]),address[],address[],uint256)"
    assert data[:4] == keccak(text=signature)[:4]
    types = ["(address[],uint256[],bytes[],uint256[])", "address[]", "address[]", "uint256"]
    batch, accounts, heads, max_return = abi_decode(types, data[4:])
    assert [a.lower() for a in batch[0]] == [TOKEN, OTHER, TOKEN]
    assert list(batch[1]) == [5_000_000, 1_000, 7]
    assert [b.hex() for b in batch[2]] == ["06fdde03", "70a08231" + "00" * 32, ""]
    assert list(batch[3]) == [0, 1, 0]
    assert [a.lower() for a in accounts] == [OTHER]
    assert [a.lower() for a in heads] == [TOKEN, OTHER]
    assert max_return == reader.MAX_RETURN
    expected = abi_encode(types, [batch, accounts, heads, max_return])
    assert data[4:] == expected


_hex_address = st.binary(min_size=20, max_size=20).map(lambda b: "0x" + b.hex())
_read = st.builds(
    reader.Read,
    _hex_address,
    st.binary(max_size=80).map(lambda b: "0x" + b.hex()),
    st.integers(1, reader.MAX_CALL_GAS),
    st.integers(0, 300),
)


@given(st.lists(_read, max_size=12), st.lists(_hex_address, max_size=3), st.booleans())
def test_hex_calldata_is_eth_abis_encoding(
    reads: list[reader.Read], heads: list[str], up: bool
) -> None:
    if up:  # upper-case hex is read as bytes would read it: the calldata is lowercase
        reads = [r._replace(data="0x" + r.data[2:].upper()) for r in reads]
    types = ["(address[],uint256[],bytes[],uint256[])", "address[]", "address[]", "uint256"]
    batch = (
        [r.to for r in reads],
        [r.gas for r in reads],
        [bytes.fromhex(r.data[2:]) for r in reads],
        [r.link for r in reads],
    )
    expected = selector(reader.READ_SIGNATURE) + abi_encode(
        types, [batch, heads[:1], heads, reader.MAX_RETURN]
    )
    assert reader.read_calldata(reads, heads[:1], heads) == "0x" + expected.hex()


@pytest.mark.parametrize("data", ["0x123", "0xzz"])
def test_calldata_that_is_not_hex_is_refused(data: str) -> None:
    with pytest.raises(ValueError):
        reader.read_calldata([reader.Read(TOKEN, data, 1)])


def _answer(packed: bytes) -> str:
    return "0x" + abi_encode(["bytes"], [packed]).hex()


def test_answers_are_split_into_outcomes_and_codes() -> None:
    packed = (
        b"\x01\x00\x00\x20" + (42).to_bytes(32, "big")
        + b"\x00\x00\x00\x00"
        + b"\x02\x00\x00\x00"
        + b"\x04\x00\x00\x00"
        + b"\x00\x00\x00\x02" + b"\x60\x80"
        + b"\x00\x00\x00\x00" + b"\x00\x00\x00"
        + b"\x00\x00\x01\x00" + b"\xef\x01\x00"
    )  # fmt: skip
    outcomes, codes = reader.decode_output(_answer(packed), 4, 1, 2)
    assert [o.status for o in outcomes] == [reader.RETURNED, reader.REVERTED, 2, reader.SKIPPED]
    assert outcomes[0].word == 42 and outcomes[1].word is None
    assert reader.as_call_result(outcomes[0]) == "0x" + (42).to_bytes(32, "big").hex()
    assert reader.as_call_result(outcomes[1]) is None
    assert codes == ["0x6080", "0x", "0xef0100"]


@pytest.mark.parametrize(
    "answer",
    [
        "0x",  # a node that ignored the code override
        "0xzz",
        _answer(b"\x01\x00\x00\x20" + b"\x00" * 8),  # cut short
        _answer(b"\x07\x00\x00\x00"),  # unknown status
        _answer(b"\x00\x00\x00\x05" + b"\x00" * 5),  # a revert with data
        _answer(b"\x01\x00\x00\x00" + b"\x00"),  # a byte too many
        "0x" + "00" * 64,  # offset 0
    ],
)
def test_anything_else_is_malformed(answer: str) -> None:
    with pytest.raises(MalformedResponse):
        reader.decode_output(answer, 1)


@pytest.mark.parametrize(
    ("method", "params", "folds"),
    [
        ("eth_call", [{"to": TOKEN, "data": "0x06fdde03", "gas": "0x4c4b40"}, "latest"], True),
        ("eth_call", [{"to": TOKEN, "data": "0x06fdde03"}, "latest"], False),  # node's gas
        ("eth_call", [{"to": TOKEN, "data": "0x", "gas": hex(10**9)}, "latest"], False),
        (
            "eth_call",
            [{"from": OTHER, "to": TOKEN, "data": "0x", "gas": "0x1"}, "latest"],
            False,
        ),
        ("eth_call", [{"to": TOKEN, "data": "0x", "gas": "0x1"}, "latest", {}], False),
        ("eth_call", [{"to": "0x12", "data": "0x", "gas": "0x1"}, "latest"], False),
        ("eth_call", [{"to": TOKEN, "data": "0x0", "gas": "0x1"}, "latest"], False),
        ("eth_simulateV1", [{}, "latest"], False),
    ],
)
def test_only_plain_calls_with_their_own_gas_fold(
    method: str, params: list[Any], folds: bool
) -> None:
    assert (reader.foldable(method, params) is not None) is folds


class ReaderWire(CoalescingRpc):
    """Answers reader calls like the contract would (from ``table``), or not at all."""

    def __init__(self, table: dict[str, str | None], ignore_override: bool = False) -> None:
        super().__init__("http://127.0.0.1:9", label="fake")
        self.table = table
        self.ignore_override = ignore_override
        self.sent: list[list[tuple[str, Sequence[Any]]]] = []

    async def _post_batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        self.sent.append(list(calls))
        await asyncio.sleep(0)
        return [self._answer(m, p) for m, p in calls]

    def _answer(self, method: str, params: Sequence[Any]) -> Any:
        if method == "eth_getCode":
            return "0x6080"
        call = params[0]
        if len(params) == 3:  # the reader
            if self.ignore_override:
                return "0x"
            data = bytes.fromhex(call["data"][2:])
            types = ["(address[],uint256[],bytes[],uint256[])", "address[]", "address[]", "uint256"]
            batch, accounts, heads, _ = abi_decode(types, data[4:])
            packed = b""
            for payload in batch[2]:
                answer = self.table.get("0x" + payload.hex())
                if answer is None:
                    packed += b"\x00\x00\x00\x00"
                else:
                    raw = bytes.fromhex(answer[2:])
                    packed += b"\x01" + len(raw).to_bytes(3, "big") + raw
            packed += b"".join(b"\x00\x00\x00\x02\x60\x80" for _ in accounts)
            packed += b"".join(b"\x00\x00\x00\x02\x60\x80\x00" for _ in heads)
            return _answer(packed)
        answer = self.table.get(call["data"])
        return CallReverted("execution reverted") if answer is None else answer


def _call(data: str) -> tuple[str, list[Any]]:
    return ("eth_call", [{"to": TOKEN, "data": data, "gas": "0x4c4b40"}, "latest"])


async def test_concurrent_plain_calls_become_one_reader_call_with_the_same_answers() -> None:
    word = "0x" + (7).to_bytes(32, "big").hex()
    wire = ReaderWire({"0x01": word, "0x02": "0x"})
    try:
        one, two, bad, code = await asyncio.gather(
            wire.call(*_call("0x01")),
            wire.batch([_call("0x02")]),
            wire.batch([_call("0x03")]),
            wire.call("eth_getCode", [OTHER, "latest"]),
        )
    finally:
        await wire.aclose()
    assert one == word and two == ["0x"] and isinstance(bad[0], CallReverted)
    assert code == "0x6080"
    assert len(wire.sent) == 1 and len(wire.sent[0]) == 1  # one request, one reader call
    assert len(wire.sent[0][0][1]) == 3  # with its code override
    with pytest.raises(RpcError):
        await wire.call(*_call("0x03"))  # a lone call goes direct, reverts alike


async def test_a_node_ignoring_the_override_gets_direct_calls_from_then_on() -> None:
    word = "0x" + (7).to_bytes(32, "big").hex()
    wire = ReaderWire({"0x01": word}, ignore_override=True)
    try:
        first = await asyncio.gather(wire.call(*_call("0x01")), wire.call(*_call("0x01")))
        second = await asyncio.gather(wire.call(*_call("0x01")), wire.call(*_call("0x01")))
    finally:
        await wire.aclose()
    assert list(first) == list(second) == [word, word]
    assert wire.fold is False
    assert [len(batch) for batch in wire.sent] == [1, 2, 2]  # reader, direct again, direct


async def test_code_heads_fold_or_come_from_the_whole_code() -> None:
    head = ("tokenrisk_codeHead", [OTHER, "latest"])
    folding = ReaderWire({})
    direct = ReaderWire({})
    direct.fold = False
    try:
        folded = await asyncio.gather(folding.call(*head), folding.call(*head))
        plain = await direct.call(*head)
    finally:
        await folding.aclose()
        await direct.aclose()
    assert list(folded) == ["0x6080", "0x6080"]  # up to three bytes, from the reader
    assert [(m, len(p)) for m, p in folding.sent[0]] == [("eth_call", 3)]
    assert plain == "0x6080"  # the start of eth_getCode's code
    assert [m for m, _ in direct.sent[0]] == ["eth_getCode"]

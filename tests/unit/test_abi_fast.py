"""The hot-path ABI codec gives eth_abi's bytes for every shape it takes on, and reads
back exactly what eth_abi reads (or leaves the bytes to it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from Crypto.Hash import keccak
from eth_abi.abi import decode as eth_abi_decode
from eth_abi.abi import encode as eth_abi_encode
from eth_utils.address import to_checksum_address
from hypothesis import given
from hypothesis import strategies as st

from tokenrisk.chain import abicodec, universal
from tokenrisk.chain.abi import (
    ZERO_ADDRESS,
    _eip55,
    _fast_encode,
    _object_keccak,
    decode,
    decode_uint,
    encode_args,
    encode_call,
    keccak256,
    parse_address,
    selector,
)
from tokenrisk.chain.registry import Dex
from tokenrisk.errors import AbiDecodeError, InvalidAddress
from tokenrisk.model import Pool
from tokenrisk.simulate.calls import DEADLINE, Route, balance_of, filled, v4_trade

addresses = st.binary(min_size=20, max_size=20).map(lambda b: "0x" + b.hex())
uint256 = st.integers(min_value=0, max_value=2**256 - 1)


@given(addresses, uint256)
def test_static_words_match_eth_abi(address: str, amount: int) -> None:
    types = ["address", "uint256"]
    assert _fast_encode(types, [address, amount]) == eth_abi_encode(types, [address, amount])


@given(uint256, uint256, st.lists(addresses, max_size=4), addresses, uint256)
def test_router_swap_with_address_array_matches(
    a: int, b: int, path: list[str], to: str, deadline: int
) -> None:
    types = ["uint256", "uint256", "address[]", "address", "uint256"]
    args: list[Any] = [a, b, path, to, deadline]
    assert _fast_encode(types, args) == eth_abi_encode(types, args)


@given(addresses, addresses, st.integers(0, 2**24 - 1), uint256, st.booleans())
def test_static_tuple_matches(t0: str, t1: str, fee: int, amount: int, flag: bool) -> None:
    types = ["(address,address,uint24,uint256,bool)"]
    args = [(t0, t1, fee, amount, flag)]
    assert _fast_encode(types, args) == eth_abi_encode(types, args)


@pytest.mark.parametrize(
    ("types", "args"),
    [
        (["uint8"], [256]),  # out of range: eth_abi raises its own error
        (["uint256"], [-1]),
        (["address"], ["0x1234"]),
        (["string"], ["text"]),
        (["bytes"], [bytearray(b"x")]),  # eth_abi takes it; not bytes here
        (["bytes4"], [b"abcd"]),
        (["uint256[2]"], [[1, 2]]),
        (["(string,uint256)[]"], [[("a", 1)]]),
        (["(bool,bytes)"], [(1, b"")]),  # 1 is not a bool here
        (["uint256[]"], ["12"]),
        (["bytes32"], [b"short"]),  # eth_abi pads it; not a word here
        (["int24"], [2**23]),
        (["int24"], [True]),
        (["bytes32[]"], [[b"\0" * 31]]),
    ],
)
def test_other_shapes_are_left_to_eth_abi(types: list[str], args: list[Any]) -> None:
    assert _fast_encode(types, args) is None


@given(
    st.integers(-(2**23), 2**23 - 1),
    st.integers(-(2**255), 2**255 - 1),
    st.lists(st.binary(min_size=32, max_size=32), max_size=4),
    st.lists(uint256, max_size=3),
)
def test_signed_words_and_word_arrays_match_eth_abi(
    tick: int, big: int, words: list[bytes], amounts: list[int]
) -> None:
    types = ["int24", "bytes32[]", "int256", "uint256[]"]
    args: list[Any] = [tick, words, big, amounts]
    assert _fast_encode(types, args) == eth_abi_encode(types, args)


STEPS = ["(address,address,uint256,uint256,bytes)[]"]
RESULTS = ["(bool,uint256,bytes)[]"]
steps = st.lists(st.tuples(addresses, addresses, uint256, uint256, st.binary(max_size=100)))
results = st.lists(st.tuples(st.booleans(), uint256, st.binary(max_size=100)), max_size=6)


@given(steps, st.lists(st.binary(max_size=40), max_size=3), st.integers(-(2**255), 2**255 - 1))
def test_dynamic_tuples_bytes_and_nested_arrays_match_eth_abi(
    calls: list[Any], blobs: list[bytes], signed: int
) -> None:
    types = [*STEPS, "bytes[]", "int256", "(uint8,(bytes,address[]))"]
    args: list[Any] = [calls, blobs, signed, (7, (b"\1" * 33, [c[0] for c in calls]))]
    assert _fast_encode(types, args) == eth_abi_encode(types, args)
    assert _fast_encode(STEPS, [calls]) == eth_abi_encode(STEPS, [calls])


@given(results, st.lists(addresses, max_size=3))
def test_canonical_replies_decode_as_eth_abi_decodes_them(rows: list[Any], who: list[str]) -> None:
    types = [*RESULTS, "address[]", "int24", "bytes32"]
    args: list[Any] = [rows, who, -5, b"\2" * 32]
    data = eth_abi_encode(types, args)
    assert abicodec.decode(types, data) is not None  # taken by the fast reader
    assert decode(types, data) == eth_abi_decode(types, data)
    assert decode(types, "0x" + data.hex()) == eth_abi_decode(types, data)


def _eth_abi_or_error(types: list[str], data: bytes) -> Any:
    try:
        return eth_abi_decode(types, data)
    except Exception:  # noqa: BLE001 - any of eth_abi's errors
        return AbiDecodeError


@given(results, st.binary(max_size=64), st.integers(0, 400), st.integers(0, 255))
def test_any_other_bytes_are_eth_abis_to_decide(
    rows: list[Any], noise: bytes, at: int, value: int
) -> None:
    """Dirty padding, moved offsets, trailing bytes, truncation, garbage: the answer (or
    the refusal) is eth_abi's."""
    data = bytearray(eth_abi_encode(RESULTS, [rows]))
    if data:
        data[at % len(data)] = value
    for variant in (bytes(data), bytes(data) + noise, bytes(data[: at % (len(data) + 1)]), noise):
        expected = _eth_abi_or_error(RESULTS, variant)
        if expected is AbiDecodeError:
            with pytest.raises(AbiDecodeError):
                decode(RESULTS, variant)
        else:
            assert decode(RESULTS, variant) == expected
    for kind, word in (("bool", 2), ("uint8", 256), ("address", 1 << 160), ("int8", 128)):
        dirty = word.to_bytes(32, "big")
        assert abicodec.decode([kind], dirty) is None
        with pytest.raises(AbiDecodeError):
            decode([kind], dirty)


def test_a_hostile_length_is_refused_without_building_it() -> None:
    huge = (32).to_bytes(32, "big") + (2**255).to_bytes(32, "big")
    assert abicodec.decode(RESULTS, huge) is None
    with pytest.raises(AbiDecodeError):
        decode(RESULTS, huge)


def test_keccak_is_pycryptodomes() -> None:
    for size in (0, 1, 31, 32, 64, 135, 136, 137, 1000):
        data = bytes(range(256)) * 4
        expected = keccak.new(digest_bits=256, data=data[:size]).digest()
        assert keccak256(data[:size]) == expected == _object_keccak(data[:size])


def test_encode_call_and_args_fall_back_for_strings_and_reject_bad_values() -> None:
    assert encode_args(["string"], ["hi"]) == eth_abi_encode(["string"], ["hi"])
    with pytest.raises(Exception):  # noqa: B017 - eth_abi's own error type
        encode_args(["uint8"], [256])
    data = encode_call("balanceOf(address)", ["0x" + "ab" * 20])
    assert data == "0x" + (selector("balanceOf(address)") + b"\0" * 12 + b"\xab" * 20).hex()


def test_decode_uint_reads_the_first_word() -> None:
    assert decode_uint("0x" + "00" * 31 + "2a" + "ff" * 32) == 42
    assert decode_uint("0x" + "00" * 31) is None
    assert decode_uint("0x" + "zz" * 32) is None
    assert decode_uint(None) is None


# CALLDATA FROM TEMPLATES (simulate/calls.py): a quote, swap or balance read written into
# a remembered encoding must be exactly what encode_call gives.

V2 = Dex("Uniswap", "V2", "0x" + "11" * 20, "0x" + "22" * 20)
V3 = Dex("Uniswap", "V3", "0x" + "33" * 20, "0x" + "44" * 20, quoter="0x" + "55" * 20)
SWAP_V2 = (
    "swapExactTokensForTokensSupportingFeeOnTransferTokens"
    "(uint256,uint256,address[],address,uint256)"
)
SWAP_V3 = "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
QUOTE_V3 = "quoteExactInputSingle((address,address,uint256,uint24,uint160))"


def _route(dex: Dex, token: str, base: str, fee: int) -> Route:
    pool = Pool("0x" + "66" * 20, "Uniswap", dex.version, token, base, base, dex.router, 1, 1, 1.0)
    return Route(replace(pool, fee=fee if dex.version == "V3" else None), dex, token, base)


@given(addresses, addresses, addresses, uint256, st.integers(0, 2**24 - 1), st.booleans())
def test_trade_calldata_from_templates_matches_encode_call(
    token: str, base: str, wallet: str, amount: int, fee: int, selling: bool
) -> None:
    wallet = wallet.upper().replace("0X", "0x") if amount % 2 else wallet  # either case
    t_in, t_out = (token, base) if selling else (base, token)
    v2, v3 = _route(V2, token, base, fee), _route(V3, token, base, fee)
    assert v2.quote(amount, selling)["data"] == encode_call(
        "getAmountsOut(uint256,address[])", [amount, [t_in, t_out]]
    )
    assert v2.swap(wallet, amount, selling)["data"] == encode_call(
        SWAP_V2, [amount, 0, [t_in, t_out], wallet, DEADLINE]
    )
    assert v3.quote(amount, selling)["data"] == encode_call(
        QUOTE_V3, [(t_in, t_out, amount, fee, 0)]
    )
    assert v3.swap(wallet, amount, selling)["data"] == encode_call(
        SWAP_V3, [(t_in, t_out, fee, wallet, DEADLINE, amount, 0, 0)]
    )
    assert balance_of(token, wallet, wallet)["data"] == encode_call("balanceOf(address)", [wallet])


@pytest.mark.parametrize("amount", [-1, 2**256])
def test_a_value_the_template_cannot_hold_raises_as_encode_call_does(amount: int) -> None:
    route = _route(V2, "0x" + "77" * 20, "0x" + "88" * 20, 0)
    with pytest.raises(Exception):  # noqa: B017 - eth_abi's own error type
        route.quote(amount)
    with pytest.raises(Exception):  # noqa: B017
        _route(V3, "0x" + "77" * 20, "0x" + "88" * 20, 500).swap("0x" + "99" * 20, amount)


def test_a_malformed_address_goes_to_the_full_encoder() -> None:
    with pytest.raises(Exception):  # noqa: B017 - eth_abi refuses it as encode_call does
        filled("balanceOf(address)", (ZERO_ADDRESS,), {0: "0x12"})


@given(
    addresses,
    addresses,
    st.integers(0, 2**128 - 1),
    st.booleans(),
    st.booleans(),
    st.integers(-(2**23), 2**23 - 1),
)
def test_v4_trade_from_a_template_matches_the_universal_router_encoding(
    token: str, other: str, amount: int, selling: bool, native: bool, spacing: int
) -> None:
    c0 = ZERO_ADDRESS if native else min(token, other)
    key = (c0, token if native else max(token, other), 3000, spacing, "0x" + "ab" * 20)
    expected = universal.trade(key, token, other, native, amount, selling)
    assert v4_trade(key, token, other, native, amount, selling) == expected


@pytest.mark.parametrize("amount", [-1, 2**128])
def test_a_v4_amount_the_swap_cannot_hold_raises_as_before(amount: int) -> None:
    key = (ZERO_ADDRESS, "0x" + "77" * 20, 3000, 60, ZERO_ADDRESS)
    with pytest.raises(Exception):  # noqa: B017 - eth_abi's own error type
        universal.trade(key, "0x" + "77" * 20, "0x" + "88" * 20, True, amount, False)
    with pytest.raises(Exception):  # noqa: B017
        v4_trade(key, "0x" + "77" * 20, "0x" + "88" * 20, True, amount, False)


@given(st.binary(min_size=20, max_size=20), st.sampled_from([str.lower, str.upper]))
def test_checksums_are_eth_utils_checksums(raw: bytes, case: Any) -> None:
    value = "0x" + case(raw.hex())
    assert _eip55(value) == to_checksum_address(value)
    assert parse_address(value) == to_checksum_address(value)


def test_checksum_vectors_and_other_shapes() -> None:
    # EIP-55's own examples, and a shape the fast path leaves to eth-utils
    for value in (
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    ):
        assert _eip55(value.lower()) == value
    assert _eip55("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed") == to_checksum_address(
        "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
    )
    assert selector("transfer(address,uint256)").hex() == "a9059cbb"
    with pytest.raises(InvalidAddress):
        parse_address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD")  # one letter's case off

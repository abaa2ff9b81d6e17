"""The hot-path ABI encoder gives eth_abi's bytes for every shape it takes on."""

from __future__ import annotations

from typing import Any

import pytest
from eth_abi.abi import encode as eth_abi_encode
from hypothesis import given
from hypothesis import strategies as st

from tokenrisk.chain.abi import _fast_encode, encode_args, encode_call, selector
from tokenrisk.chain.tokens import decode_uint

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
        (["bytes"], [b"x"]),
        (["uint256[]"], [[1, 2]]),
    ],
)
def test_other_shapes_are_left_to_eth_abi(types: list[str], args: list[Any]) -> None:
    assert _fast_encode(types, args) is None


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

"""Uniswap V4 pure pieces: pool ids, hook permission bits, the pool's own curve, the
Universal Router calldata (no node)."""

from __future__ import annotations

import pytest
from eth_abi.abi import encode as eth_abi_encode
from eth_abi.exceptions import EncodingError
from eth_utils.crypto import keccak

from tokenrisk.chain import universal
from tokenrisk.chain.abi import decode
from tokenrisk.chain.v4 import (
    DYNAMIC_FEE,
    PoolKey,
    PoolState,
    decode_state,
    encode_key,
    expected_out,
    hook_permissions,
    state_slot,
    static_fee,
)

ETH = "0x0000000000000000000000000000000000000000"
TOKEN = "0x00000000000000000000000000000000000000aa"
WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"


def test_hook_permissions_come_from_the_low_bits() -> None:
    assert hook_permissions(ETH) == ()
    assert hook_permissions("0x" + "ab" * 18 + "0080") == ("beforeSwap",)
    assert hook_permissions("0x" + "ab" * 18 + "0044") == ("afterSwap", "afterSwapReturnsDelta")
    assert hook_permissions("0x" + "ab" * 18 + "2000") == ("beforeInitialize",)


def test_pool_id_is_the_keccak_of_the_key() -> None:
    # v4-core's own test vector would need its deployed hooks; the id only has to be a
    # stable 32-byte digest that changes with every field of the key
    key = PoolKey(ETH, TOKEN, 3000, 60, ETH)
    assert len(key.id) == 66 and key.id == PoolKey(ETH, TOKEN, 3000, 60, ETH).id
    assert key.id != PoolKey(ETH, TOKEN, 500, 60, ETH).id
    assert static_fee(PoolKey(ETH, TOKEN, 0x800000, 60, ETH)) == 0


def test_expected_out_is_the_constant_product_with_the_lp_fee() -> None:
    # price 1 (sqrtP = 2**96), L = 1000: virtual reserves 1000 / 1000
    state = PoolState(2**96, 1000, 3000)
    assert state.reserves == (1000, 1000)
    assert expected_out(state, 100, True, 0) == 1000 * 100 // 1100
    assert expected_out(state, 100, False, 10_000) == 1000 * 99 // 1099


def test_state_words_decode() -> None:
    slot0 = (3000 << 208) | (5 << 160) | 2**96
    data = "0x" + (32).to_bytes(32, "big").hex() + (2).to_bytes(32, "big").hex()
    data += slot0.to_bytes(32, "big").hex() + (77).to_bytes(32, "big").hex()
    assert decode_state(data) == PoolState(2**96, 77, 3000)
    assert decode_state("0x") is None


def test_weth_buy_pulls_unwraps_and_swaps() -> None:
    key = (ETH, TOKEN, 3000, 60, ETH)
    data = universal.trade(key, TOKEN, WETH, True, 10**18, selling=False)
    commands, inputs, _ = decode(["bytes", "bytes[]", "uint256"], "0x" + data[10:])
    assert commands == bytes([0x02, 0x0C, 0x10])
    actions, params = decode(["bytes", "bytes[]"], inputs[2])
    assert actions == bytes([0x06, 0x0C, 0x0F])
    settle = decode(["address", "uint256"], params[1])
    assert settle == (ETH, 10**18)


def test_weth_sell_swaps_takes_to_the_router_and_wraps() -> None:
    key = (ETH, TOKEN, 3000, 60, ETH)
    data = universal.trade(key, TOKEN, WETH, True, 5, selling=True)
    commands, inputs, _ = decode(["bytes", "bytes[]", "uint256"], "0x" + data[10:])
    assert commands == bytes([0x10, 0x0B])
    actions, params = decode(["bytes", "bytes[]"], inputs[0])
    assert actions == bytes([0x06, 0x0C, 0x0E])
    swap = decode(
        ["((address,address,uint24,int24,address),bool,uint128,uint128,bytes)"], params[0]
    )
    assert swap[0][1] is False and swap[0][2] == 5  # token (currency1) in: not zeroForOne
    assert decode(["address", "uint256"], inputs[1])[0].lower() == universal.MSG_SENDER


def test_a_hooks_revert_is_unwrapped_to_its_own_reason() -> None:
    from tokenrisk.chain.abi import WRAPPED_ERROR_SELECTOR, decode_revert, encode_args

    hook = "0x4CDdED37c88c222EE003D96066d3933B89c18080"
    inner = bytes.fromhex("08c379a0") + encode_args(["string"], ["sells are closed"])
    args = encode_args(
        ["address", "bytes4", "bytes", "bytes"], [hook, b"\x57\x5e\x24\xb4", inner, b""]
    )
    text = decode_revert(WRAPPED_ERROR_SELECTOR + args)
    assert text == f"sells are closed (in {hook}, wrapped by the V4 PoolManager)"


def test_a_uint24_is_also_tried_as_a_99_percent_fee_in_pips() -> None:
    from tokenrisk.simulate.hostile import Targets, argument_sets

    targets = Targets(buyer="0x" + "11" * 20, pair="0x" + "22" * 20)
    assert (990_000,) in argument_sets(["uint24"], targets, 40)
    assert (990_000,) not in argument_sets(["uint16"], targets, 40)


@pytest.mark.parametrize(
    "key",
    [
        (ETH, TOKEN, 3000, 60, ETH),
        (ETH, WETH, DYNAMIC_FEE, -1, "0x" + "ff" * 20),  # dynamic fee flag, negative spacing
        (TOKEN, WETH, 2**24 - 1, -(2**23), ETH),  # the ranges' ends
        (TOKEN, WETH.lower(), 0, 2**23 - 1, WETH.upper().replace("0X", "0x")),
    ],
)
def test_pool_keys_are_encoded_and_hashed_as_eth_abi_and_eth_utils_do(
    key: tuple[str, str, int, int, str],
) -> None:
    types = ["address", "address", "uint24", "int24", "address"]
    assert encode_key(key) == eth_abi_encode(types, list(key))
    assert PoolKey(*key).id == "0x" + keccak(eth_abi_encode(types, list(key))).hex()
    pool_id = PoolKey(*key).id
    word = keccak(bytes.fromhex(pool_id[2:]) + (6).to_bytes(32, "big"))
    assert state_slot(pool_id) == int.from_bytes(word, "big")


@pytest.mark.parametrize(
    "key",
    [(ETH, TOKEN, 2**24, 60, ETH), (ETH, TOKEN, 3000, 2**23, ETH), (ETH, TOKEN, True, 60, ETH)],
)
def test_a_key_eth_abi_refuses_is_still_refused(key: tuple[str, str, int, int, str]) -> None:
    with pytest.raises(EncodingError):
        encode_key(key)

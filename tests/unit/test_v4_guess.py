"""A first V4 search's read of the likely hookless pools' state, beside the events (no
node): the keys read, the one ``extsload`` split back into each pool's answer, and the
guess used only when it read every pool found and each event carried its block's time."""

from __future__ import annotations

from typing import Any

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import decode
from tokenrisk.chain.registry import UniswapV4, load_registry
from tokenrisk.chain.v4 import (
    GUESSED_TIERS,
    Found,
    PoolKey,
    PoolState,
    _first,
    _from_guess,
    decode_state,
    guessed_keys,
    read_initialize,
    split_states,
    state_slot,
    states_call,
)

ETH = "0x0000000000000000000000000000000000000000"
TOKEN = "0x00000000000000000000000000000000000000aa"


def _words(*values: int) -> str:
    return "".join(v.to_bytes(32, "big").hex() for v in values)


def test_the_keys_are_each_base_and_eth_in_every_tier_without_hook() -> None:
    chain = load_registry()[1]
    keys = guessed_keys(chain, TOKEN)
    assert len(keys) == len(GUESSED_TIERS) * (1 + len(chain.base_tokens))
    assert keys[0] == PoolKey(ETH, "0x00000000000000000000000000000000000000AA", 100, 1, ETH)
    assert all(int(k.currency0, 16) < int(k.currency1, 16) and k.hooks == ETH for k in keys)


def test_one_extsload_answers_every_pool_in_order() -> None:
    ids = [PoolKey(ETH, TOKEN, fee, spacing, ETH).id for fee, spacing in GUESSED_TIERS[:2]]
    call = states_call("0x" + "44" * 20, ids)
    (slots,) = decode(["bytes32[]"], bytes.fromhex(call["data"][10:]))
    assert [int.from_bytes(s, "big") for s in slots] == [
        state_slot(ids[0]),
        state_slot(ids[0]) + 3,
        state_slot(ids[1]),
        state_slot(ids[1]) + 3,
    ]
    slot0 = (3000 << 208) | 2**96
    reply = "0x" + _words(32, 4, slot0, 77, 0, 0)
    first, second = split_states(reply, 2) or []
    assert decode_state(first) == PoolState(2**96, 77, 3000)
    assert decode_state(second) == PoolState(0, 0, 0)  # no such pool: not initialized
    assert split_states(reply, 3) is None and split_states("0x" + _words(32, 2), 2) is None


def test_the_guess_is_used_only_for_pools_it_read_with_their_time() -> None:
    plain = Found(PoolKey(ETH, TOKEN, 3000, 60, ETH), 7, "0x01", stamp=1_700)
    hooked = Found(PoolKey(ETH, TOKEN, 3000, 60, "0x" + "0c" * 20), 8, "0x02", stamp=1_800)
    live = "0x" + _words(32, 2, (3000 << 208) | 2**96, 77)
    guess = ({plain.key.id: live}, 2_000.0)
    state = _from_guess([plain], guess)
    assert state is not None and state.replies == [live] and state.native_usd == 2_000.0
    assert state.stamps[7][0] == 1_700
    assert _from_guess([plain, hooked], guess) is None  # a pool the guess did not read
    assert _from_guess([Found(plain.key, 7, "0x01")], guess) is None  # no time in the log
    assert _from_guess([plain], None) is None  # the guessed read failed
    unborn = ({plain.key.id: "0x" + _words(32, 2, 0, 0)}, 2_000.0)
    assert _from_guess([plain], unborn) is None  # read where the pool was not there yet


def test_an_events_block_time_is_kept_when_the_node_gives_it() -> None:
    word = "0x" + "00" * 12
    log = {
        "topics": [
            "0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438",
            "0x" + "11" * 32,
            word + ETH[2:],
            word + TOKEN[2:],
        ],
        "data": "0x" + _words(3000, 60, 0, 2**96, 0),
        "blockNumber": "0x96",
        "transactionHash": "0x" + "22" * 32,
    }
    assert read_initialize(log) == Found(
        PoolKey(ETH, TOKEN[:-2] + "AA", 3000, 60, ETH), 150, log["transactionHash"]
    )
    found = read_initialize(log | {"blockTimestamp": "0x6556"})
    assert found is not None and found.stamp == 0x6556
    odd = read_initialize(log | {"blockTimestamp": "soon"})
    assert odd is not None and odd.stamp is None  # the pool kept, its time read after


def test_only_a_first_search_at_the_head_guesses() -> None:
    v4 = UniswapV4("0x" + "44" * 20, "0x" + "55" * 20, "0x" + "66" * 20)
    memo: MemoryCache[str, list[Any]] = MemoryCache(8)
    assert _first(v4, TOKEN, "latest", memo) and not _first(v4, TOKEN, "0x10", memo)
    assert not _first(v4, TOKEN, "latest", None)
    memo.put(f"v4-initialize:{v4.pool_manager}:{TOKEN}", [100, 1])  # searched: no pool
    assert not _first(v4, TOKEN, "latest", memo)

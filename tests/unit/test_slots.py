"""Balance-slot matching from an access list (pure parts of tokenrisk.slots)."""

from __future__ import annotations

from eth_abi.abi import encode as eth_abi_encode
from eth_utils.crypto import keccak

from tokenrisk.simulate.slots import ERC7201_ERC20, BalanceSlot, SlotCache, keys_read, match_layouts

HOLDER = "0x" + "12" * 20
TOKEN = "0x" + "34" * 20


def test_slot_key_is_keccak_of_abi_words() -> None:
    solidity = keccak(eth_abi_encode(["address", "uint256"], [HOLDER, 3]))
    vyper = keccak(eth_abi_encode(["uint256", "address"], [3, HOLDER]))
    assert BalanceSlot(3, False).key(HOLDER) == "0x" + solidity.hex()
    assert BalanceSlot(3, True).key(HOLDER) == "0x" + vyper.hex()


def test_layouts_are_matched_from_the_tokens_own_keys_only() -> None:
    read = BalanceSlot(5, False).key(HOLDER)
    namespaced = BalanceSlot(ERC7201_ERC20, False).key(HOLDER)
    access = {
        "accessList": [
            {"address": TOKEN.upper().replace("0X", "0x"), "storageKeys": [read, "0x" + "00" * 32]},
            {"address": "0x" + "56" * 20, "storageKeys": [namespaced]},  # another contract
        ]
    }
    keys = keys_read(access, TOKEN)
    assert match_layouts(keys, HOLDER) == [BalanceSlot(5, False)]
    assert match_layouts(set(), HOLDER) == []
    assert keys_read({"error": "x"}, TOKEN) == set() and keys_read(None, TOKEN) == set()
    access["accessList"][1]["address"] = TOKEN
    assert BalanceSlot(ERC7201_ERC20, False) in match_layouts(keys_read(access, TOKEN), HOLDER)


def test_slot_cache_is_bounded_lru() -> None:
    cache = SlotCache(max_entries=2)
    cache.put(b"a", BalanceSlot(0, False))
    cache.put(b"b", BalanceSlot(1, False))
    assert cache.value(b"a") == BalanceSlot(0, False)  # "a" is now the most recent
    cache.put(b"c", BalanceSlot(2, False))
    assert cache.value(b"b") is None and cache.value(b"a") is not None

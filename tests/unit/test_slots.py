"""Balance-slot matching from an access list (pure parts of tokenrisk.slots)."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode as eth_abi_encode
from eth_utils.crypto import keccak

from tokenrisk.simulate.slots import (
    ERC7201_ERC20,
    BalanceSlot,
    SlotCache,
    find_balance_slot,
    keys_read,
    match_layouts,
    token_key,
)

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


class LayoutNode:
    """A node whose token keeps balances at ``BalanceSlot(slot, False)``: it answers the
    access list and the verifying overrides as a real node would; counts round trips."""

    def __init__(self, slot: int) -> None:
        self.layout = BalanceSlot(slot, False)
        self.batches = 0

    async def batch(self, calls: list[tuple[str, list[Any]]], **_: Any) -> list[Any]:
        self.batches += 1
        return [self._answer(method, params) for method, params in calls]

    def _answer(self, method: str, params: list[Any]) -> Any:
        probe = params[0]["from"] if method != "eth_getCode" else ""
        if method == "eth_getCode":
            return "0x6001600101"
        if method == "eth_createAccessList":
            return {"accessList": [{"address": TOKEN, "storageKeys": [self.layout.key(probe)]}]}
        diff = params[2][TOKEN]["stateDiff"]
        value = int(diff[self.layout.key(probe)], 16) if self.layout.key(probe) in diff else 0
        return "0x" + value.to_bytes(32, "big").hex()


async def test_a_likely_layout_is_verified_with_the_access_list() -> None:
    """Slot 3 is among the likely layouts: found in one round trip; slot 20 is not:
    matched from the access list, then verified in a second."""
    for slot, batches in ((3, 1), (20, 2)):
        node = LayoutNode(slot)
        assert await find_balance_slot(node, TOKEN) == BalanceSlot(slot, False)  # type: ignore[arg-type]
        assert node.batches == batches


async def test_a_remembered_layout_is_verified_in_the_first_round_trip() -> None:
    node, cache = LayoutNode(20), SlotCache()
    assert await find_balance_slot(node, TOKEN, cache=cache) == BalanceSlot(20, False)  # type: ignore[arg-type]
    assert node.batches == 2  # access list, then the verifying call
    assert await find_balance_slot(node, TOKEN, cache=cache) == BalanceSlot(20, False)  # type: ignore[arg-type]
    assert node.batches == 3  # the remembered layout verified with the first batch
    cache.put(token_key(TOKEN), BalanceSlot(9, False))  # a layout that no longer holds
    assert await find_balance_slot(node, TOKEN, cache=cache) == BalanceSlot(20, False)  # type: ignore[arg-type]
    assert node.batches == 5  # not trusted: matched from the access list and verified

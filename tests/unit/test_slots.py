"""Balance-slot matching from an access list (pure parts of tokenrisk.slots)."""

from __future__ import annotations

from typing import Any

import pytest
from eth_abi.abi import encode as eth_abi_encode
from eth_utils.crypto import keccak

from tokenrisk.errors import RpcError
from tokenrisk.simulate.slots import (
    ERC7201_ERC20,
    LAYOUTS,
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


class ManyKeysNode(LayoutNode):
    """A token whose ``balanceOf`` reads the keys of several candidate layouts (``read``)
    and keeps balances at the one of ``slot``; records each batch's verified layouts."""

    def __init__(self, slot: int, read: list[BalanceSlot], fail: BalanceSlot | None = None):
        super().__init__(slot)
        self.read, self.fail = read, fail
        self.verified: list[list[BalanceSlot]] = []

    async def batch(self, calls: list[tuple[str, list[Any]]], **_: Any) -> list[Any]:
        self.verified.append([self._layout(p) for m, p in calls if m == "eth_call"])
        return await super().batch(calls)

    def _layout(self, params: list[Any]) -> BalanceSlot:
        key = next(iter(params[2][TOKEN]["stateDiff"]))
        return next(x for x in LAYOUTS if x.key(params[0]["from"]) == key)

    def _answer(self, method: str, params: list[Any]) -> Any:
        if method == "eth_createAccessList":
            keys = [layout.key(params[0]["from"]) for layout in self.read]
            return {"accessList": [{"address": TOKEN, "storageKeys": keys}]}
        if method == "eth_call" and self.fail is not None and self._layout(params) == self.fail:
            return RpcError("node busy")
        return super()._answer(method, params)


async def test_every_matched_layout_is_weighed_in_order_as_before() -> None:
    likely, far = [BalanceSlot(3, False), BalanceSlot(5, False)], BalanceSlot(20, True)
    node = ManyKeysNode(5, [*likely, far])
    assert await find_balance_slot(node, TOKEN) == BalanceSlot(5, False)  # type: ignore[arg-type]
    assert node.batches == 1  # slot 3 does not verify, slot 5 does with the access list
    node = ManyKeysNode(21, [BalanceSlot(3, False), far, BalanceSlot(21, False)])
    assert await find_balance_slot(node, TOKEN) == BalanceSlot(21, False)  # type: ignore[arg-type]
    assert node.verified[1] == [far, BalanceSlot(21, False)]  # every match after slot 3


async def test_a_node_error_for_any_matched_layout_raises_as_before() -> None:
    node = ManyKeysNode(3, [BalanceSlot(3, False), BalanceSlot(7, False)], BalanceSlot(7, False))
    with pytest.raises(RpcError):
        await find_balance_slot(node, TOKEN)  # type: ignore[arg-type]
    node = ManyKeysNode(3, [BalanceSlot(3, False)], BalanceSlot(7, False))  # 7 not read
    assert await find_balance_slot(node, TOKEN) == BalanceSlot(3, False)  # type: ignore[arg-type]

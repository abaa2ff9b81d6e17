"""Where a token keeps balances: the storage slot of its ``balanceOf`` mapping, found in
one node call and verified by one override, remembered per contract code.

Funding a simulated wallet means writing its balance straight into the token's storage
(a state override), so the key of ``balances[wallet]`` must be known.  For the usual
layouts that key is ``keccak(wallet . slot)`` (Solidity) or ``keccak(slot . wallet)``
(Vyper) for a small ``slot``, or the first field of OpenZeppelin's ERC-7201 namespaced
``ERC20Storage``.  Rather than trying every candidate with its own ``eth_call`` (64
calls), :func:`find_balance_slot`:

1. asks the node which storage keys ``balanceOf(probe)`` reads
   (``eth_createAccessList``) and reads the token's code in the same JSON-RPC batch;
2. matches the keys read from the token's storage against the keys every candidate
   layout would give for ``probe`` (local keccak, no node work);
3. verifies the match with ONE ``eth_call`` of ``balanceOf(probe)`` with that key
   overridden to a marker value: only a layout the token really reads is accepted.

Steps 1 and 3 go out together for the most common layouts (:data:`LIKELY`: Solidity
mappings in the first 16 slots, OpenZeppelin's namespaced one): each is verified with
the access list, and the first match that verified is the answer, as when verified
after it; only a match outside them is verified in a second round trip (issue #27: a
token's first check waits one round trip less before the steps that need its layout).

A verified layout is remembered per keccak of the contract's code (:class:`SlotCache`),
so a second check of the same code verifies only that layout, and per token, so a second
check of the same token sends that verification with step 1 (ONE round trip when it
holds); the verification is always made, because identical code can keep balances
elsewhere (a proxy's code is the same for every implementation behind it).  A token
whose reads match no candidate has no plain mapping (a layout can only verify if
``balanceOf`` reads its key, so the access list is complete).  Nodes without
``eth_createAccessList`` fall back to probing every candidate in one batch (66 calls),
or only the cached layout when the code is known.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeGuard

from eth_utils.crypto import keccak

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import decode_uint, encode_call, keccak256
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import CallReverted, RpcError

MARKER = 0x7E57_BA1A_9CE5_1075
SMALL_SLOTS = range(32)
# OpenZeppelin Contracts 5 upgradeable ERC20: keccak(abi.encode(uint256(keccak(
# "openzeppelin.storage.ERC20")) - 1)) & ~0xff; ``_balances`` is the struct's first field.
ERC7201_ERC20 = 0x52C63247E1F47DB19D5CE0460030C497F067CA4CEBF71BA98EEADABE20BACE00
CANDIDATE_SLOTS = (*SMALL_SLOTS, ERC7201_ERC20)
_CALL_GAS = hex(1_000_000)
_MARKER_WORD = "0x" + MARKER.to_bytes(32, "big").hex()


@dataclass(frozen=True)
class BalanceSlot:
    """A ``mapping(address => uint256)`` at ``slot``; ``vyper``: key hashed slot-first."""

    slot: int
    vyper: bool

    def key(self, holder: str) -> str:
        """Storage key of ``balances[holder]``."""
        return slot_key(holder, self.slot, self.vyper)

    def override(self, holder: str, amount: int) -> dict[str, str]:
        return {self.key(holder): "0x" + amount.to_bytes(32, "big").hex()}


@lru_cache(maxsize=8192)
def slot_key(holder: str, slot: int, vyper: bool = False) -> str:
    """Storage key of ``balances[holder]`` for a mapping at ``slot`` (static words, so
    the ABI encoding is two left-padded 32-byte words).  Remembered: a recomputed check
    funds the same holders and routers again, and each keccak costs tens of microseconds."""
    a = bytes.fromhex(holder[2:]).rjust(32, b"\0")
    s = slot.to_bytes(32, "big")
    # pycryptodome's keccak directly (eth-hash's backend, abi.keccak256): a third of the
    # cost of eth_utils' wrapper, and a first check hashes its likely keys between two
    # rounds (issue #27)
    return "0x" + keccak256(s + a if vyper else a + s).hex()


LAYOUTS = tuple(BalanceSlot(slot, vyper) for slot in CANDIDATE_SLOTS for vyper in (False, True))
"""Every candidate layout, in the order a match is taken (the first that verifies)."""


LIKELY = (*(BalanceSlot(slot, False) for slot in range(16)), BalanceSlot(ERC7201_ERC20, False))
"""Layouts verified with the access list, before it says which keys ``balanceOf`` reads."""


class SlotCache(MemoryCache[bytes, BalanceSlot]):
    """Verified layouts by keccak of contract code (32 bytes) and by token address
    (:func:`token_key`); bounded, least recently used out, never expiring: a remembered
    layout is only ever a candidate, verified again by override before it is used."""

    def __init__(self, max_entries: int = 4096) -> None:
        super().__init__(max_entries)

    def last_of(self, token: str) -> BalanceSlot | None:
        """``token``'s layout as its last search verified it (a candidate anywhere else)."""
        return self.value(token_key(token))


def token_key(token: str) -> bytes:
    """The :class:`SlotCache` key of a token's own last layout (never 32 bytes long,
    so never a code hash)."""
    return b"token:" + bytes.fromhex(token[2:].lower())


def _balance_call(token: str, holder: str) -> dict[str, str]:
    data = encode_call("balanceOf(address)", [holder])
    return {"from": holder, "to": token, "data": data, "gas": _CALL_GAS}


def keys_read(access_list: object, token: str) -> set[str]:
    """Storage keys of ``token`` in an ``eth_createAccessList`` result (lowercase)."""
    if not isinstance(access_list, dict):
        return set()
    entries = access_list.get("accessList")
    wanted = token.lower()
    keys: set[str] = set()
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("address", "")).lower() == wanted:
            keys.update(str(k).lower() for k in entry.get("storageKeys") or [])
    return keys


def match_layouts(keys: set[str], probe: str) -> list[BalanceSlot]:
    """Candidate layouts whose key for ``probe`` is among the storage keys read."""
    if not keys:
        return []
    return list(_matching(keys, probe))


def _matching(keys: set[str], probe: str) -> Iterator[BalanceSlot]:
    """:func:`match_layouts`, hashing each candidate's key only when it is reached: the
    walk in :func:`_first_verified` mostly stops at the first (a likely layout, its key
    already hashed for its verifying call), not after 66 keccaks (issue #27)."""
    return (layout for layout in LAYOUTS if keys and layout.key(probe) in keys)


async def _verified(
    rpc: RpcClient, token: str, probe: str, layouts: Iterable[BalanceSlot], block: str
) -> BalanceSlot | None:
    """The first layout whose overridden key ``balanceOf(probe)`` returns (one batch)."""
    layouts = list(layouts)
    if not layouts:
        return None
    calls = [_verify_call(token, probe, layout, block) for layout in layouts]
    results = await rpc.batch(calls)
    for layout, result in zip(layouts, results, strict=True):
        if _is_marker(result):
            return layout
    return None


async def _first_verified(
    rpc: RpcClient,
    at: tuple[str, str, str],
    layouts: Iterable[BalanceSlot],
    verified: dict[BalanceSlot, object],
) -> BalanceSlot | None:
    """The first of ``layouts`` that verifies: by the replies in ``verified`` (sent with
    the access list) as far as they go, then the rest in one batch (:func:`_verified`).
    A node error in a reply of any of ``layouts`` raises, as in that batch.  ``at``: the
    token, the probe holder and the block.  ``layouts`` is walked only as far as needed
    (:func:`_matching`) unless some reply is such an error."""
    if any(_node_error(reply) for reply in verified.values()):
        layouts = list(layouts)
        for layout in layouts:
            if _node_error(reply := verified.get(layout)):
                raise reply
    walk = iter(layouts)
    for layout in walk:
        if layout not in verified:
            token, probe, block = at
            return await _verified(rpc, token, probe, [layout, *walk], block)
        if _is_marker(verified[layout]):
            return layout
    return None


def _node_error(reply: object) -> TypeGuard[RpcError]:
    """A verifying call's reply that is a node error, not the call's revert."""
    return isinstance(reply, RpcError) and not isinstance(reply, CallReverted)


def _verify_call(token: str, probe: str, layout: BalanceSlot, block: str) -> tuple[str, list[Any]]:
    """``balanceOf(probe)`` with ``layout``'s key for ``probe`` overridden to MARKER."""
    override = {token: {"stateDiff": {layout.key(probe): _MARKER_WORD}}}
    return ("eth_call", [_balance_call(token, probe), block, override])


def _is_marker(result: object) -> bool:
    """True when a verifying call returned MARKER (an error or revert is not)."""
    return isinstance(result, str) and decode_uint(result) == MARKER


async def find_balance_slot(
    rpc: RpcClient, token: str, block: str = "latest", cache: SlotCache | None = None
) -> BalanceSlot | None:
    """The verified balance layout of ``token``, or None (not a plain mapping: reflection,
    rebasing, exotic layouts; callers then fall back or skip what needs it).

    One round trip (code + access list + the likely layouts' verifying calls) for a
    token first seen whose layout is a likely one, two for another layout, one when its
    remembered layout verifies.
    Raises only transport errors.
    """
    probe = "0x" + os.urandom(20).hex()
    remembered = cache.value(token_key(token)) if cache is not None else None
    calls: list[tuple[str, list[Any]]] = [
        ("eth_getCode", [token, block]),
        ("eth_createAccessList", [_balance_call(token, probe), block]),
    ]
    # this token's layout last time, else the likely ones, verified again now
    early = [remembered] if remembered is not None else list(LIKELY)
    calls += [_verify_call(token, probe, layout, block) for layout in early]
    # a node without access lists still gets the probe below
    code, access, *again = await rpc.batch(calls, tolerate=RpcError)
    if remembered is not None and again and _is_marker(again[0]):
        return remembered  # verified in the first round trip
    verified = {} if remembered is not None else dict(zip(early, again, strict=True))
    code_hash = bytes(keccak(hexstr=code)) if isinstance(code, str) else None
    known = cache.value(code_hash) if cache is not None and code_hash is not None else None
    if isinstance(access, dict):
        # a layout can only verify if balanceOf reads its key, so the access list is
        # complete: no match means no plain mapping, without probing every candidate
        keys = keys_read(access, token)
        if known is not None and known.key(probe) in keys:
            layouts: Iterable[BalanceSlot] = [known]  # one keccak, not one per candidate
        else:
            layouts = _matching(keys, probe)
    else:  # the node cannot build access lists: probe every candidate layout
        layouts = [known] if known is not None else list(LAYOUTS)
    slot = await _first_verified(rpc, (token, probe, block), layouts, verified)
    if slot is not None and cache is not None:
        cache.put(token_key(token), slot)
        if code_hash is not None:
            cache.put(code_hash, slot)
    return slot

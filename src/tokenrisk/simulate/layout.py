"""Static evidence of owner powers from the token's storage layout (evmole's, worked out
off the event loop by :mod:`.bytecode`), for what no simulation could confirm.

A trial needs a caller that passes the function's guard; when the guard's address is
kept where the scan cannot read it as a caller (a deep storage slot, a mapping), no
trial can run.  The bytecode still tells what the function writes: evmole's storage
output lists, per slot, the selectors that read it and those that write it.  A
state-changing function outside the ERC-20 surface that

- reads an address-typed storage value (its guard: ``msg.sender == stored``), which
  holds a live address at the pinned head (a zero or dead guard: nobody can pass), and
- writes the balance mapping (the one ``balanceOf`` reads), the total supply (what
  ``totalSupply`` reads), or a non-address value that ``transfer``/``transferFrom``
  read (a fee, a limit, a list),

is reported as a capability with ``confidence: static`` and the slots as evidence.  A
Uniswap V4 pool's hook is read the same way (:func:`swap_writes`): a guarded function
outside the hook's callbacks that writes a non-address value ``beforeSwap`` or
``afterSwap`` reads changes what every swap through the pool pays or may do.  The
storage layout is a heuristic (evmole infers it from access patterns), so a static
finding is one severity level below its simulated twin.  Pure except
:func:`guard_values` (one batch of ``eth_getStorageAt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tokenrisk.chain.abi import ZERO_ADDRESS, checksum
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import BALANCE_OF, TOTAL_SUPPLY, TRANSFER, TRANSFER_FROM
from tokenrisk.errors import RpcError
from tokenrisk.simulate.bytecode import Slot as Slot  # what callers read the layout as

_READS_BALANCE, _READS_SUPPLY = BALANCE_OF[2:], TOTAL_SUPPLY[2:]  # evmole: 8 hex, no 0x
TRANSFERS = frozenset({TRANSFER[2:], TRANSFER_FROM[2:]})
_DEAD = 0xDEAD
# IHooks: beforeSwap, afterSwap (what every swap runs), and every callback the
# PoolManager makes (the hook's public surface, never an owner's setter)
HOOK_SWAPS = frozenset({"575e24b4", "b47b2fb1"})
HOOK_CALLBACKS = frozenset(
    "0x" + s
    for s in (
        *HOOK_SWAPS,
        "dc98354e",  # beforeInitialize
        "6fe7e6eb",  # afterInitialize
        "259982e5",  # beforeAddLiquidity
        "9f063efc",  # afterAddLiquidity
        "21d0ee70",  # beforeRemoveLiquidity
        "6c2bbe7e",  # afterRemoveLiquidity
        "b6a8b0fa",  # beforeDonate
        "e1b4af69",  # afterDonate
    )
)


@dataclass(frozen=True)
class Write:
    """A guarded function and what it writes that a buyer would feel."""

    selector: str  # 0x + 8 hex
    kind: str  # a FINDINGS id
    what: str  # e.g. "the balance mapping (slot 4)"
    guards: tuple[Slot, ...]  # address values the function reads


def guarded_writes(slots: Sequence[Slot], surface: frozenset[str]) -> list[Write]:
    """Functions outside ``surface`` (selectors with 0x) that read an address value and
    write a balance, the supply or a value transfers read; one per function, the
    strongest kind first (balances, then supply, then transfer rules)."""
    balances = [s for s in slots if _READS_BALANCE in s.reads and s.type.startswith("mapping")]
    supply = [s for s in slots if _READS_SUPPLY in s.reads and not s.type.startswith("mapping")]
    rules = [
        s
        for s in slots
        if s.reads & TRANSFERS and s.type != "address" and s not in balances and s not in supply
    ]
    found: dict[str, Write] = {}
    for kind, group, name in (
        ("owner_can_move_balances", balances, "the balance mapping"),
        ("owner_can_mint", supply, "the total supply"),
        ("owner_can_change_transfer_rules", rules, "a value every transfer reads"),
    ):
        _collect(slots, group, (kind, name), surface, found)
    return list(found.values())


def swap_writes(slots: Sequence[Slot], surface: frozenset[str] = HOOK_CALLBACKS) -> list[Write]:
    """A V4 hook's functions outside ``surface`` that read an address value and write a
    non-address value its ``beforeSwap``/``afterSwap`` read (a fee share, a switch, a
    list): the hook's owner changing every swap through the pool."""
    rules = [s for s in slots if s.reads & HOOK_SWAPS and s.type != "address"]
    found: dict[str, Write] = {}
    what = ("owner_can_change_transfer_rules", "a value every swap's hook callback reads")
    _collect(slots, rules, what, surface, found)
    return list(found.values())


def _collect(
    slots: Sequence[Slot],
    group: Sequence[Slot],
    what: tuple[str, str],
    surface: frozenset[str],
    found: dict[str, Write],
) -> None:
    """Add to ``found`` each writer of ``group`` outside ``surface`` (and not found
    yet) that reads an address value: its guard."""
    kind, name = what
    for s in group:
        for selector in sorted(s.writes):
            key = "0x" + selector
            if key in surface or key in found:
                continue
            guards = tuple(g for g in slots if g.type == "address" and selector in g.reads)
            if guards:
                found[key] = Write(key, kind, f"{name} (slot {int(s.slot, 16)})", guards)


async def guard_values(
    rpc: RpcClient,
    token: str,
    guards: Sequence[Slot],
    block: str,
    stored: Sequence[object] = (),
) -> dict[tuple[str, int], str | None]:
    """The address each guard holds in ``token``'s storage (the token, or the pool's
    hook) at ``block`` (None: zero, dead or unreadable).  ``stored``: the words of the
    first slots already read at that ``block`` (slot ``i`` at index ``i``): a guard in
    one of them costs no request."""
    slots = sorted({g.slot for g in guards})
    if not slots:
        return {}
    known = {s: stored[int(s, 16)] for s in slots if int(s, 16) < len(stored)}
    missing = [s for s in slots if s not in known]
    replies = await rpc.batch([("eth_getStorageAt", [token, s, block]) for s in missing])
    words = {**known, **dict(zip(missing, replies, strict=True))}
    out: dict[tuple[str, int], str | None] = {}
    for g in guards:
        word = words[g.slot]
        out[(g.slot, g.offset)] = None if isinstance(word, RpcError) else _address(word, g.offset)
    return out


def _address(word: object, offset: int) -> str | None:
    if not isinstance(word, str) or not word.startswith("0x"):
        return None
    value = (int(word, 16) >> (8 * offset)) & (2**160 - 1)
    if value in (0, _DEAD):
        return None
    return checksum("0x" + value.to_bytes(20, "big").hex())


def live_guard(write: Write, values: dict[tuple[str, int], str | None]) -> str | None:
    """The first guard of ``write`` that holds a live address (who could call it)."""
    for g in write.guards:
        found = values.get((g.slot, g.offset))
        if found is not None and found.lower() != ZERO_ADDRESS:
            return found
    return None

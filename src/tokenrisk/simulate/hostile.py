"""Hostile arguments for an owner function, derived from its argument types alone.

The scan does not know what a function is for (names are never trusted), so it tries
values an attacker would pass: the buyer's own address and the pair for addresses, both
booleans, small and huge numbers (a 99 is a 99% tax, 0 is a zero limit, 2^256-1 is
"unlimited" or an overflow), and arrays holding the buyer.  Argument sets are built
"diagonally" (the i-th value of every type together) so a function of n arguments gets
a handful of sets rather than a product, and the first sets carry the most hostile
values.  Pure: no node.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NUMBERS = (99, 0, 10_000, 9_900, 25, 100, 2**256 - 1, 1_000)
"""Unsigned values of the diagonal sets, most telling first: 99 (a 99% tax), 0 (a zero
limit), 10,000 and 9,900 (100% and 99% in basis points), 25, 100, 2^256-1, 1,000."""
SCALES = (5, 10, 20, 50, 990, 10**18, 99 * 10**16)
"""Further values tried one argument position at a time: small percentages, per mille,
and 1e18 fractions (100% and 99% as a wad)."""
PIPS = (990_000,)
"""A ``uint24`` is how Uniswap V3/V4 and their hooks write fees, in hundredths of a bip
(1,000,000 = 100%): 99% in that unit, tried one position at a time too (a dynamic LP
fee a token's owner hands its V4 hook)."""
_SIGNED = (99, 0, 10_000, 9_900, 25, 100, -1, 1_000)
_SCALAR = re.compile(r"^(address|bool|string|bytes|u?int(\d*)|bytes(\d+))$")
_ZERO = "0x0000000000000000000000000000000000000000"


@dataclass(frozen=True)
class Targets:
    """The addresses and amounts hostile arguments point at."""

    buyer: str
    pair: str
    neutral: str = "0x000000000000000000000000000000000000bEEF"
    """A wallet nobody else names: where a mint or a balance write may land unseen."""
    caller: str = ""  # the privileged caller itself (a mint or balance set to oneself)
    router: str = ""
    token: str = ""
    supply: int = 0  # the token's total supply: token amounts and supply shares
    story: tuple[str, str, str] = ("", "", "")
    """The owner-power scan's other fresh wallets, chosen with these (B, who A sends to,
    C: :class:`~tokenrisk.simulate.story.Story`), so that a story predicted before its
    amounts round equals the one that round returns when their amounts agree; never
    hostile arguments (not in :attr:`addresses`).  Empty: chosen per story."""

    @property
    def addresses(self) -> list[str]:
        """Address values, most telling first (the buyer, the pair), then the rest."""
        more = [self.caller, self.neutral, self.router, self.token, _ZERO]
        return list(dict.fromkeys([self.buyer, self.pair, *(a for a in more if a)]))

    @property
    def amounts(self) -> list[int]:
        """Token amounts: a hundredth of the supply, the supply, a hundred supplies."""
        return [self.supply // 100, self.supply, self.supply * 100] if self.supply else []


def split_types(arguments: str) -> list[str] | None:
    """``"address[],bool"`` -> ``["address[]", "bool"]``; None for tuples (not tried)."""
    if "(" in arguments or ")" in arguments:
        return None
    return [t for t in arguments.split(",") if t] if arguments else []


def values_for(abi_type: str, targets: Targets) -> list[Any] | None:
    """Hostile values of one ABI type, most telling first; None when unsupported."""
    if abi_type.endswith("]"):
        inner = abi_type[: abi_type.rindex("[")]
        size = abi_type[abi_type.rindex("[") + 1 : -1]
        items = values_for(inner, targets)
        if items is None or (size and int(size) > 8):
            return None
        count = int(size) if size else 1
        return [[item] * count for item in items[:2]]
    match = _SCALAR.match(abi_type)
    if match is None:
        return None
    if abi_type == "address":
        return [targets.buyer, targets.pair]
    if abi_type == "bool":
        return [True, False]
    if abi_type == "string":
        return [""]
    if abi_type == "bytes":
        return [b""]
    if abi_type.startswith("bytes"):
        return [bytes(int(abi_type[5:]))]
    return _numbers(abi_type)


def _numbers(abi_type: str) -> list[int]:
    bits = int(abi_type.lstrip("uint") or 256)
    if abi_type.startswith("uint"):
        top = 2**bits - 1
        return list(dict.fromkeys(min(v, top) for v in NUMBERS))
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return list(dict.fromkeys(max(low, min(v, high)) for v in _SIGNED))


def argument_sets(types: Sequence[str], targets: Targets, limit: int) -> list[tuple[Any, ...]]:
    """Up to ``limit`` distinct argument tuples; [] when a type is unsupported.

    First the diagonal sets (set i takes the i-th value, cycling, of every argument's
    list), so ``setBots(address[],bool)`` gets ``([buyer], true)`` at once; then the
    other polarity of every boolean beside each address; then one position at a time
    with every other argument neutral (zero, false, the neutral wallet) across the
    scales real tokens use (:data:`SCALES`, token amounts, every target address), so a
    setter of three fees under one shared cap gets ``(25, 0, 0)``.  A function without
    arguments gets the single empty tuple.
    """
    if not types:
        return [()]
    lists = [values_for(t, targets) for t in types]
    if any(v is None for v in lists):
        return []
    ready = [v for v in lists if v is not None]
    width = max(len(v) for v in ready)
    sets = [tuple(v[i % len(v)] for v in ready) for i in range(width)]
    sets = sets[:DIAGONAL_FIRST] + _polarities(sets[:2], types) + sets[DIAGONAL_FIRST:]
    return _distinct(sets[:DIAGONAL_FIRST] + _one_at_a_time(types, targets) + sets, limit)


DIAGONAL_FIRST = 8
"""Diagonal sets tried before the one-position sets (the rest come after them)."""


def _distinct(sets: list[tuple[Any, ...]], limit: int) -> list[tuple[Any, ...]]:
    """The first ``limit`` distinct sets (the rest are not keyed: the screen is built
    between two rounds of a first check, issue #27)."""
    seen: set[Any] = set()
    out: list[tuple[Any, ...]] = []
    for candidate in sets:
        if 0 < limit <= len(out):
            break
        key = _hashable(candidate)
        if key not in seen:
            seen.add(key)
            out.append(candidate)
    return out[:limit]


def _hashable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return (type(value).__name__, value)


def _polarities(sets: list[tuple[Any, ...]], types: Sequence[str]) -> list[tuple[Any, ...]]:
    """Each diagonal set again with every boolean flipped (a list that allows, not blocks)."""
    flips = [i for i, t in enumerate(types) if t.startswith("bool")]
    if not flips:
        return []
    out: list[tuple[Any, ...]] = []
    for s in sets:
        items = list(s)
        for i in flips:
            items[i] = _flip(items[i])
        out.append(tuple(items))
    return out


def _flip(value: Any) -> Any:
    return [_flip(v) for v in value] if isinstance(value, list) else not value


def _one_at_a_time(types: Sequence[str], targets: Targets) -> list[tuple[Any, ...]]:
    """The j-th wide value at each position in turn (j = 0, 1, ...), the others neutral:
    interleaved, so a bound on sets still reaches the last position's telling values."""
    neutral = [_neutral(t, targets) for t in types]
    wide = [_wide(t, targets) for t in types]
    out: list[tuple[Any, ...]] = []
    for j in range(max(len(w) for w in wide)):
        for i, values in enumerate(wide):
            if j < len(values):
                items = list(neutral)
                items[i] = values[j]
                out.append(tuple(items))
    return out


def _neutral(abi_type: str, targets: Targets) -> Any:
    if abi_type.endswith("]"):
        inner = abi_type[: abi_type.rindex("[")]
        size = abi_type[abi_type.rindex("[") + 1 : -1]
        return [_neutral(inner, targets)] * (int(size) if size else 1)
    if abi_type == "address":
        return targets.neutral
    if abi_type == "bool":
        return False
    if abi_type in ("string", "bytes"):
        return "" if abi_type == "string" else b""
    if abi_type.startswith("bytes"):
        return bytes(int(abi_type[5:]))
    return 0


def _wide(abi_type: str, targets: Targets) -> list[Any]:
    """Every value one position tries: the diagonal's, then the wider scales."""
    if abi_type.endswith("]"):
        inner = abi_type[: abi_type.rindex("[")]
        size = abi_type[abi_type.rindex("[") + 1 : -1]
        return [[v] * (int(size) if size else 1) for v in _wide(inner, targets)[:4]]
    if abi_type == "address":
        return targets.addresses
    base = values_for(abi_type, targets) or []
    if abi_type.startswith("uint"):
        top = 2 ** int(abi_type[4:] or 256) - 1
        pips = PIPS if abi_type == "uint24" else ()
        more = [v for v in (*SCALES, *pips, *targets.amounts) if v <= top]
        return list(dict.fromkeys([*base, *more]))
    return base


def render(value: Any) -> str:
    """A short text form of one argument for evidence (addresses as given, bytes as hex)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, int) and value == 2**256 - 1:
        return "2^256-1"
    return str(value)

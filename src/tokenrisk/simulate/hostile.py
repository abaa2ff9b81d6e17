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
"""Unsigned values in the order tried, most telling first: 99 (a 99% tax), 0 (a zero
limit), 10,000 and 9,900 (100% and 99% in basis points), 25, 100, 2^256-1, 1,000."""
_SIGNED = (99, 0, 10_000, 9_900, 25, 100, -1, 1_000)
_SCALAR = re.compile(r"^(address|bool|string|bytes|u?int(\d*)|bytes(\d+))$")


@dataclass(frozen=True)
class Targets:
    """The addresses hostile arguments point at."""

    buyer: str
    pair: str
    neutral: str = "0x000000000000000000000000000000000000bEEF"
    """A wallet nobody else names: where a mint or a balance write may land unseen."""


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

    Set i takes the i-th value (cycling) of every argument's list; a function without
    arguments gets the single empty tuple.
    """
    if not types:
        return [()]
    lists = [values_for(t, targets) for t in types]
    if any(v is None for v in lists):
        return []
    ready = [v for v in lists if v is not None]
    width = max(len(v) for v in ready)
    sets: list[tuple[Any, ...]] = []
    for i in range(width):
        candidate = tuple(v[i % len(v)] for v in ready)
        if candidate not in sets:
            sets.append(candidate)
    return sets[:limit]


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

"""The ABI's head/tail layout for the shapes tokenrisk sends and reads in bulk, without
eth-abi's generic machinery (its validators and stream readers: ~9x the time to encode
25 runner steps, ~2x to decode their results, and a check on a node without
``eth_simulateV1`` encodes and decodes thousands of them, issue #27).

Types: ``address``, ``bool``, ``uintN``, ``intN``, ``bytes32``, ``bytes``, tuples of
these and dynamic arrays ``T[]`` of any of them.  Anything else (``string``, ``bytesN``
other than 32, fixed arrays) is not taken: :func:`encode` and :func:`decode` answer None
and the caller uses eth-abi, which also raises its own errors for bad values.

Decoding is exact by construction: a decoded value is accepted only when encoding it
again gives back the very same bytes (the canonical layout a contract's ``abi.encode``
writes).  Anything else -- other offsets, dirty padding, trailing bytes, a hostile node's
garbage -- answers None, and eth-abi decides (or refuses) it as it always did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tokenrisk.errors import AbiDecodeError

HEX_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_UINT_BITS = {f"uint{n}": n for n in range(8, 257, 8)}
_INT_BITS = {f"int{n}": n for n in range(8, 257, 8)}
_WORDS = frozenset({"address", "bool", "bytes32", *_UINT_BITS, *_INT_BITS})


@dataclass(frozen=True)
class Kind:
    """One parsed ABI type: a 32-byte word (``word`` names it), ``bytes``, a tuple
    (``members``) or a dynamic array (``item``); ``dynamic`` when its head is an offset,
    ``size`` its bytes in the head (a static tuple inline, anything else one word)."""

    word: str | None = None
    members: tuple[Kind, ...] | None = None
    item: Kind | None = None
    dynamic: bool = False
    size: int = 32


def _tuple(members: tuple[Kind, ...]) -> Kind:
    if any(m.dynamic for m in members):
        return Kind(members=members, dynamic=True)
    return Kind(members=members, size=sum(m.size for m in members))


BYTES = Kind(dynamic=True)


def split_types(inner: str) -> list[str]:
    """The top-level types of a comma-separated list (``"address,(uint8,bool)"``)."""
    types: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(inner):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            types.append(inner[start:i])
            start = i + 1
    if inner[start:]:
        types.append(inner[start:])
    return types


@lru_cache(maxsize=512)
def parse(kind: str) -> Kind | None:
    """The parsed type, or None for a type this codec leaves to eth-abi."""
    if kind.endswith("[]"):
        item = parse(kind[:-2])
        return None if item is None else Kind(item=item, dynamic=True)
    if kind.startswith("(") and kind.endswith(")"):
        members = [parse(k) for k in split_types(kind[1:-1])]
        if not members or any(m is None for m in members):
            return None
        return _tuple(tuple(m for m in members if m is not None))
    if kind == "bytes":
        return BYTES
    return Kind(word=kind) if kind in _WORDS else None


@lru_cache(maxsize=512)
def parse_all(types: tuple[str, ...]) -> tuple[Kind, ...] | None:
    kinds = [parse(k) for k in types]
    return None if any(k is None for k in kinds) else tuple(k for k in kinds if k is not None)


# -- encoding ---------------------------------------------------------------------------------


def address_word(value: Any) -> bytes | None:
    """The ABI word of a 0x-hex address (any case); None for anything else."""
    if isinstance(value, str) and HEX_ADDRESS.fullmatch(value):
        return bytes.fromhex(value[2:]).rjust(32, b"\0")
    return None


def word(kind: str, value: Any) -> bytes | None:
    """One 32-byte word for a static ``kind``; None when the value is not one eth-abi
    would encode as this word (eth-abi then raises its own error)."""
    if kind == "address":
        return address_word(value)
    bits = _UINT_BITS.get(kind)
    if bits is not None:
        if type(value) is int and 0 <= value < 1 << bits:
            return value.to_bytes(32, "big")
        return None
    if kind == "bool":
        return (1 if value else 0).to_bytes(32, "big") if type(value) is bool else None
    if kind == "bytes32":
        return value if type(value) is bytes and len(value) == 32 else None
    bits = _INT_BITS.get(kind)
    if bits is None or type(value) is not int or not -(1 << bits - 1) <= value < 1 << bits - 1:
        return None
    return value.to_bytes(32, "big", signed=True)


def encode(types: Sequence[str], args: Sequence[Any]) -> bytes | None:
    """``eth_abi.encode(types, args)``'s bytes, or None for a type or value not taken."""
    kinds = parse_all(tuple(types))
    if kinds is None or len(kinds) != len(args):
        return None
    return _sequence(kinds, args)


def _sequence(kinds: Sequence[Kind], values: Sequence[Any]) -> bytes | None:
    heads: list[bytes | None] = []
    tails: list[bytes] = []
    for kind, value in zip(kinds, values, strict=True):
        encoded = _one(kind, value)
        if encoded is None:
            return None
        if kind.dynamic:
            heads.append(None)
            tails.append(encoded)
        else:
            heads.append(encoded)
    offset = sum(32 if h is None else len(h) for h in heads)
    out: list[bytes] = []
    pending = iter(tails)
    for head in heads:
        if head is None:
            out.append(offset.to_bytes(32, "big"))
            offset += len(next(pending))
        else:
            out.append(head)
    return b"".join(out) + b"".join(tails)


def _one(kind: Kind, value: Any) -> bytes | None:
    if kind.word is not None:
        return word(kind.word, value)
    if kind.members is not None:
        if not isinstance(value, tuple | list) or len(value) != len(kind.members):
            return None
        return _sequence(kind.members, value)
    if kind.item is not None:
        if not isinstance(value, tuple | list):
            return None
        body = _sequence([kind.item] * len(value), value)
        return None if body is None else len(value).to_bytes(32, "big") + body
    if type(value) is not bytes:
        return None
    padding = b"\0" * (-len(value) % 32)
    return len(value).to_bytes(32, "big") + value + padding


# -- decoding ---------------------------------------------------------------------------------

_NOT_TAKEN = "not a canonical layout of these types"
"""Raised inside the reader only: eth-abi decides these bytes."""


def decode(types: Sequence[str], data: bytes) -> tuple[Any, ...] | None:
    """``eth_abi.decode(types, data)``'s values (addresses in lowercase 0x-hex, as
    eth-abi gives them), or None where eth-abi must decide."""
    kinds = parse_all(tuple(types))
    if kinds is None:
        return None
    try:
        values = _read_sequence(kinds, data, 0)
    except AbiDecodeError:
        return None
    return values if _sequence(kinds, values) == data else None


def _read_sequence(kinds: Sequence[Kind], data: bytes, start: int) -> tuple[Any, ...]:
    if start + sum(k.size for k in kinds) > len(data):
        raise AbiDecodeError(_NOT_TAKEN)
    out: list[Any] = []
    at = start
    for kind in kinds:
        if kind.dynamic:
            offset = int.from_bytes(data[at : at + 32], "big")
            if offset > len(data):
                raise AbiDecodeError(_NOT_TAKEN)
            out.append(_read(kind, data, start + offset))
        else:
            out.append(_read(kind, data, at))
        at += kind.size
    return tuple(out)


def _read(kind: Kind, data: bytes, at: int) -> Any:
    if kind.members is not None:
        return _read_sequence(kind.members, data, at)
    if at + 32 > len(data):
        raise AbiDecodeError(_NOT_TAKEN)
    head = data[at : at + 32]
    if kind.word is not None:
        return _word_value(kind.word, head)
    length = int.from_bytes(head, "big")
    if kind.item is not None:
        if length * kind.item.size > len(data) - at - 32:
            raise AbiDecodeError(_NOT_TAKEN)
        return _read_sequence([kind.item] * length, data, at + 32)
    if length > len(data) - at - 32:
        raise AbiDecodeError(_NOT_TAKEN)
    return data[at + 32 : at + 32 + length]


def _word_value(kind: str, head: bytes) -> Any:
    if kind == "address":
        return "0x" + head[12:].hex()
    if kind == "bool":
        return head[-1] == 1  # any other word fails the re-encoding check
    if kind == "bytes32":
        return head
    return int.from_bytes(head, "big", signed=kind in _INT_BITS)

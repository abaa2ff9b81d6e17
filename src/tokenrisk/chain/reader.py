"""Many plain ``eth_call``s as ONE: the reader contract placed by a state override.

``contracts/probe/TokenRiskReader.sol`` is compiled into ``data/reader.json`` (checked
against a fresh compile by a test, shipped in the wheel) and never deployed: each use
places its runtime code at a fresh address with an ``eth_call`` state override and calls
``read(targets, gases, datas, accounts, maxReturn)``.  The reader makes every call in
turn with the gas the caller asked for and returns one packed string of outcomes
(format in the contract's header).  :class:`tokenrisk.chain.coalesce.CoalescingRpc`
folds the plain ``eth_call``s a check makes at the same moment into one such call.

What a folded call sees differs from a direct one in two ways, both documented in
docs/performance.md: ``msg.sender`` is the reader (a fresh address each time) instead of
the zero address, and the calls of one read run one after the other in one EVM
context (a view call that writes state would show its write to the next one; a call
that writes state when it is not supposed to is already hostile and is read alike).
Anything the reader cannot answer for sure (return data over :data:`MAX_RETURN`, a call
that could not get its full gas) is marked so that the caller reads it directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from tokenrisk.chain.abi import selector
from tokenrisk.chain.entropy import random_bytes
from tokenrisk.errors import MalformedResponse

READER_FILE = Path(__file__).parents[1] / "data" / "reader.json"
READ_SIGNATURE = "read((address[],uint256[],bytes[],uint256[]),address[],address[],uint256)"
MAX_RETURN = 4096
"""Longest return data the reader hands back; longer ones are read directly."""
MAX_CALL_GAS = 10_000_000
"""A call asking for more gas than this is never folded."""
READER_GAS = 30_000_000
"""Gas of the reader's own eth_call (within every common node's eth_call gas cap)."""

REVERTED, RETURNED, TOO_LONG, NOT_RUN, SKIPPED = 0, 1, 2, 3, 4


@lru_cache(maxsize=1)
def reader_code() -> str:
    """The reader's runtime bytecode (0x-hex) from the committed artifact."""
    with open(READER_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return str(data["deployedBytecode"])


class Read(NamedTuple):
    """One call for the reader: ``to``, calldata (0x-hex), the gas it may use, and
    ``link``: k + 1 to take its first argument from call k's first return word (0: none).
    A NamedTuple (immutable; a check builds ~150 of these, a frozen dataclass cost ~2x)."""

    to: str
    data: str
    gas: int
    link: int = 0


def foldable(method: str, params: Sequence[Any]) -> Read | None:
    """The call as a :class:`Read` when it may be folded: an ``eth_call`` with only
    ``to``, ``data`` and an explicit ``gas`` (no sender, value or overrides), else None."""
    if method != "eth_call" or len(params) != 2 or not isinstance(params[0], dict):
        return None
    call = params[0]
    if set(call) != {"to", "data", "gas"} or not isinstance(params[1], str):
        return None
    to, data, gas = call["to"], call["data"], call["gas"]
    if not (isinstance(to, str) and isinstance(data, str) and isinstance(gas, str)):
        return None
    if not _ADDRESS.fullmatch(to) or not _HEX.fullmatch(data) or len(data) % 2:
        return None
    try:
        limit = int(gas, 16)
    except ValueError:
        return None
    return Read(to, data, limit) if 0 < limit <= MAX_CALL_GAS else None


CODE_HEAD = "tokenrisk_codeHead"
"""Not a node method: ``[address, block]`` -> the first 3 bytes of the account's code as
0x-hex (``"0x"``: no code), all that "is it a contract?" needs (EIP-7702 delegations
start with ``0xef0100``).  :class:`~tokenrisk.chain.coalesce.CoalescingRpc` answers it
through the reader, or from ``eth_getCode`` when the reader is not in use."""


def code_account(method: str, params: Sequence[Any]) -> str | None:
    """The account of an ``eth_getCode`` or :data:`CODE_HEAD` the reader can answer."""
    if method not in ("eth_getCode", CODE_HEAD) or len(params) != 2:
        return None
    if not isinstance(params[1], str):
        return None
    account = params[0]
    return account if isinstance(account, str) and _ADDRESS.fullmatch(account) else None


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HEX = re.compile(r"0x[0-9a-fA-F]*")


def fresh_address() -> str:
    """A never-seen address for the reader, so no token can single it out (bytes of the
    OS's CSPRNG, :mod:`tokenrisk.chain.entropy`)."""
    return "0x" + random_bytes(20).hex()


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _addresses(items: Sequence[str]) -> bytes:
    if all(len(a) == 42 for a in items):  # 0x + 40 hex: one fromhex for them all
        return _word(len(items)) + bytes.fromhex("".join(["0" * 24 + a[2:] for a in items]))
    return _word(len(items)) + b"".join(bytes.fromhex(a[2:]).rjust(32, b"\0") for a in items)


def _uints(items: Sequence[int]) -> bytes:
    return _word(len(items)) + b"".join([v.to_bytes(32, "big") for v in items])


def _bytes_array(items: Sequence[bytes]) -> bytes:
    """ABI ``bytes[]``: length, then offsets (from after the length), then each element.

    Written inline (no helper call per word): a batch holds a hundred reads or more."""
    heads: list[bytes] = []
    tails: list[bytes] = []
    offset = 32 * len(items)
    for item in items:
        size = len(item)
        heads.append(offset.to_bytes(32, "big"))
        tails.append(size.to_bytes(32, "big"))
        tails.append(item)
        pad = -size % 32
        if pad:
            tails.append(bytes(pad))
        offset += 32 + size + pad
    return _word(len(items)) + b"".join(heads) + b"".join(tails)


def _dynamic(parts: Sequence[bytes], statics: Sequence[bytes] = ()) -> bytes:
    """A tuple of dynamic ``parts`` then static words: offsets, statics, the parts."""
    offset = 32 * (len(parts) + len(statics))
    heads = b""
    for part in parts:
        heads += _word(offset)
        offset += len(part)
    return heads + b"".join(statics) + b"".join(parts)


def read_calldata(
    reads: Sequence[Read], accounts: Sequence[str] = (), heads: Sequence[str] = ()
) -> str:
    """Calldata of ``read`` (encoded here: eth_abi's generic path costs milliseconds)."""
    batch = _dynamic(
        [
            _addresses([r.to for r in reads]),
            _uints([r.gas for r in reads]),
            _bytes_array([bytes.fromhex(r.data[2:]) for r in reads]),
            _uints([r.link for r in reads]),
        ]
    )
    # read(Batch, address[], address[], uint256): three dynamic heads, then maxReturn
    body = _dynamic([batch, _addresses(accounts), _addresses(heads)], [_word(MAX_RETURN)])
    # the static word sits after both offsets in _dynamic's layout, as the ABI wants
    return "0x" + (selector(READ_SIGNATURE) + body).hex()


def read_params(
    reader: str,
    reads: Sequence[Read],
    block: str,
    accounts: Sequence[str] = (),
    heads: Sequence[str] = (),
) -> list[Any]:
    """``eth_call`` params running the reader at ``reader`` (a fresh address):
    ``reads``, the full code of ``accounts`` and the first bytes of the code of ``heads``."""
    return run_params(reader, read_calldata(reads, accounts, heads), block)


def run_params(reader: str, data: str, block: str) -> list[Any]:
    """``eth_call`` params running the reader at ``reader`` with calldata ``data`` (of
    :func:`read_calldata`, or a copy of it made for another token)."""
    call = {"to": reader, "data": data, "gas": hex(READER_GAS)}
    return [call, block, {reader: {"code": reader_code()}}]


class Outcome(NamedTuple):
    """One call's outcome: ``status`` (REVERTED ... SKIPPED) and its return data (a
    NamedTuple, as :class:`Read`)."""

    status: int
    data: bytes = b""

    @property
    def word(self) -> int | None:
        """The first return word as an unsigned int (None: reverted, skipped or short)."""
        if self.status != RETURNED or len(self.data) < 32:
            return None
        return int.from_bytes(self.data[:32], "big")


def decode_output(
    result: Any, calls: int, accounts: int = 0, heads: int = 0
) -> tuple[list[Outcome], list[str]]:
    """Split the reader's ABI-encoded ``bytes`` return into outcomes and codes (0x-hex:
    the full code of each account, then the first bytes of each head's, "0x" for none).

    Raises MalformedResponse when the result is not exactly that (e.g. a node that
    ignored the code override returns ``0x``).
    """
    try:
        raw = bytes.fromhex(result[2:]) if isinstance(result, str) else b""
    except ValueError as exc:
        raise MalformedResponse("the reader's answer is not hex") from exc
    if len(raw) < 64 or int.from_bytes(raw[:32], "big") != 32:
        raise MalformedResponse("the reader's answer is not one byte string")
    size = int.from_bytes(raw[32:64], "big")
    packed = raw[64 : 64 + size]
    if len(packed) != size:
        raise MalformedResponse("the reader's answer is cut short")
    outcomes: list[Outcome] = []
    at = 0
    for _ in range(calls):
        if at + 4 > size:
            raise MalformedResponse("the reader's answer lacks a call")
        status, length = packed[at], int.from_bytes(packed[at + 1 : at + 4], "big")
        if status > SKIPPED or (status != RETURNED and length):
            raise MalformedResponse("the reader's answer has an unknown status")
        outcomes.append(Outcome(status, packed[at + 4 : at + 4 + length]))
        at += 4 + length
    codes = []
    for _ in range(accounts):
        length = int.from_bytes(packed[at : at + 4], "big")
        codes.append("0x" + packed[at + 4 : at + 4 + length].hex())
        at += 4 + length
    for _ in range(heads):
        length = min(3, int.from_bytes(packed[at : at + 4], "big"))
        codes.append("0x" + packed[at + 4 : at + 4 + length].hex())
        at += 7
    if at != size:
        raise MalformedResponse("the reader's answer has a wrong length")
    return outcomes, codes


def as_call_result(outcome: Outcome) -> str | None:
    """What a direct ``eth_call`` would have returned (0x-hex), None for a revert."""
    return "0x" + outcome.data.hex() if outcome.status == RETURNED else None


__all__ = [
    "MAX_RETURN",
    "NOT_RUN",
    "READER_FILE",
    "RETURNED",
    "REVERTED",
    "TOO_LONG",
    "SKIPPED",
    "Outcome",
    "Read",
    "CODE_HEAD",
    "as_call_result",
    "code_account",
    "decode_output",
    "foldable",
    "fresh_address",
    "read_params",
    "run_params",
    "reader_code",
]

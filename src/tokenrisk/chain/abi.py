"""ABI encoding, selectors, addresses and revert decoding (thin, typed wrappers).

eth-abi / eth-utils define the answers; this module gives them the shapes tokenrisk
uses everywhere: ``encode_call("transfer(address,uint256)", [to, amount])`` and
``decode(["uint256"], data)``.  The shapes sent and read in bulk (words, bytes, tuples,
arrays) go through :mod:`.abicodec`, which gives eth-abi's bytes and values and leaves
everything else to it.  Decoding failures raise :class:`AbiDecodeError` so a
token returning garbage becomes a verdict, never a crash.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from Crypto.Hash import keccak as _keccak
from Crypto.Util import _raw_api
from eth_abi.abi import decode as _abi_decode
from eth_abi.abi import encode as _abi_encode
from eth_utils.address import to_checksum_address

from tokenrisk.chain import abicodec
from tokenrisk.chain.signatures import ERROR, PANIC, WRAPPED_ERROR
from tokenrisk.errors import AbiDecodeError, InvalidAddress

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
_HEX_ADDRESS = abicodec.HEX_ADDRESS
_ERROR_SELECTOR = bytes.fromhex(ERROR[2:])
_PANIC_SELECTOR = bytes.fromhex(PANIC[2:])
WRAPPED_ERROR_SELECTOR = bytes.fromhex(WRAPPED_ERROR[2:])
"""Uniswap V4's ``WrappedError(address target, bytes4 selector, bytes reason, bytes details)``:
the PoolManager's wrapping of a revert from a hook (or a token) it called."""


def parse_address(value: str) -> str:
    """Validate a user-supplied address and return it checksummed.

    Accepts all-lowercase and all-uppercase hex; mixed case must be a valid EIP-55
    checksum (a mixed-case typo is rejected rather than silently accepted).
    """
    if not isinstance(value, str) or not _HEX_ADDRESS.fullmatch(value):
        raise InvalidAddress("address must be 0x followed by 40 hexadecimal characters")
    return _parse_checked(value)


@lru_cache(maxsize=65_536)
def _parse_checked(value: str) -> str:
    """:func:`parse_address` of well-formed hex, cached (a request parses the same
    address several times; each checksum is a keccak)."""
    body = value[2:]
    checksummed = _eip55(value)
    if body != body.lower() and body != body.upper() and checksummed != value:
        raise InvalidAddress("address has an invalid EIP-55 checksum")
    return checksummed


@lru_cache(maxsize=65_536)
def checksum(value: str) -> str:
    """Checksum an address that is already known to be well-formed (node output).

    Cached: the same few addresses (token, pools, routers, holders) are checksummed
    many times per check, and each checksum is a keccak.
    """
    return _eip55(value)


def _object_keccak(data: bytes) -> bytes:
    return _keccak.new(data=data, digest_bits=256).digest()


def _raw_keccak() -> Callable[[bytes], bytes] | None:
    """Keccak-256 through pycryptodome's own C functions (its ``Keccak_Hash`` makes
    each hash a Python object and four wrapped calls: 3x the cost, and a first check
    hashes hundreds of keys, ids and checksums, issue #27), one reset state per thread;
    None when this pycryptodome build does not offer them (cffi backend only)."""
    lib = getattr(_keccak, "_raw_keccak_lib", None)
    ffi = getattr(_raw_api, "ffi", None)
    if lib is None or ffi is None or getattr(_raw_api, "backend", None) != "cffi":
        return None
    local = threading.local()

    def digest(data: bytes) -> bytes:
        state = getattr(local, "state", None)
        if state is None:
            pointer = ffi.new("void **")
            if lib.keccak_init(pointer, 64, 24):
                return _object_keccak(data)
            handle = ffi.gc(pointer[0], lib.keccak_destroy)  # freed with the thread
            state = local.state = (handle, ffi.new("uint8_t[32]"))
        handle, out = state
        if lib.keccak_reset(handle) or lib.keccak_absorb(handle, data, len(data)):
            return _object_keccak(data)
        if lib.keccak_digest(handle, out, 32, 0x01):
            return _object_keccak(data)
        return bytes(ffi.buffer(out))

    return digest


_digest = _raw_keccak() or _object_keccak


def keccak256(data: bytes) -> bytes:
    """Keccak-256 of ``data``, straight from pycryptodome (eth-hash's backend, without
    the dispatch layers eth-utils and pycryptodome's hash objects add to each hash)."""
    return _digest(data)


_HIGH_NIBBLE = str.maketrans("0123456789abcdef", "0000000011111111")


def _eip55(value: str) -> str:
    """EIP-55: each letter of the lowercase hex upper-cased where the keccak of that
    hex text has a nibble of 8 or more at its place (``to_checksum_address``'s answer at
    half its cost: a first check checksums a few thousand holders, issue #27); any
    other shape goes to eth-utils, which accepts or refuses it as it always did."""
    if not _HEX_ADDRESS.fullmatch(value):
        return str(to_checksum_address(value))
    body = value[2:].lower()
    nibbles = _digest(body.encode("ascii")).hex()
    high = nibbles[:40].translate(_HIGH_NIBBLE)
    upper = body.upper()
    return "0x" + "".join([u if h == "1" else c for c, u, h in zip(body, upper, high, strict=True)])


@lru_cache(maxsize=512)
def selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


def _types_of(signature: str) -> list[str]:
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    return abicodec.split_types(inner)


def encode_args(types: Sequence[str], args: Sequence[Any]) -> bytes:
    fast = _fast_encode(types, args)
    return fast if fast is not None else bytes(_abi_encode(list(types), list(args)))


@lru_cache(maxsize=512)
def _call_types(signature: str) -> tuple[str, ...]:
    return tuple(_types_of(signature))


def encode_call(signature: str, args: Sequence[Any] = ()) -> str:
    """Calldata (0x-hex) for ``signature`` such as ``"approve(address,uint256)"``.

    Calls whose arguments are plain strings and numbers are remembered (a check builds
    the same approvals, quotes and balance reads many times over)."""
    if _SCALARS.issuperset(map(type, args)):
        return _encode_cached(signature, tuple(args))
    return _encode(signature, args)


_SCALARS = frozenset({str, int})  # not bool: True == 1 would share an entry


@lru_cache(maxsize=8192)
def _encode_cached(signature: str, args: tuple[Any, ...]) -> str:
    return _encode(signature, args)


def _encode(signature: str, args: Sequence[Any]) -> str:
    return "0x" + (selector(signature) + encode_args(_call_types(signature), args)).hex()


_fast_encode = abicodec.encode
"""The hot path: the shapes tokenrisk encodes in bulk, without eth_abi (see abicodec)."""
address_word = abicodec.address_word


def to_bytes(data: str | bytes) -> bytes:
    if isinstance(data, bytes):
        return data
    return bytes.fromhex(data[2:] if data.startswith("0x") else data)


def decode(types: Sequence[str], data: str | bytes) -> tuple[Any, ...]:
    """Decode return data; raises AbiDecodeError on anything malformed.

    The canonical layouts of the common shapes are read without eth_abi (abicodec,
    which accepts only bytes that encode back to themselves); eth_abi decides the rest."""
    try:
        raw = to_bytes(data)
        fast = abicodec.decode(types, raw)
        return fast if fast is not None else tuple(_abi_decode(list(types), raw))
    except Exception as exc:  # eth-abi raises a zoo of types; all mean "garbage"
        raise AbiDecodeError(f"cannot decode {list(types)}: {exc}") from exc


_REVERT_MEMO_LIMIT = 1024
"""Revert data up to this length (hex characters or bytes) is decoded once per process:
a check's limit ladders and holder sells revert with the same few messages every time,
and eth-abi's string decoding costs tens of microseconds each."""


def decode_revert(data: str | bytes | None) -> str | None:
    """Human text of revert data: Error(string), Panic(uint256), or a custom selector."""
    if not data:
        return None
    if len(data) <= _REVERT_MEMO_LIMIT:
        return _remembered_revert(data)
    return _decode_revert(data)


@lru_cache(maxsize=1024)
def _remembered_revert(data: str | bytes) -> str | None:
    return _decode_revert(data)


def _decode_revert(data: str | bytes) -> str | None:
    try:
        raw = to_bytes(data)
    except ValueError:
        return None
    if raw.startswith(_ERROR_SELECTOR):
        try:
            return str(decode(["string"], raw[4:])[0])
        except AbiDecodeError:
            return "malformed Error(string)"
    if raw.startswith(_PANIC_SELECTOR) and len(raw) >= 36:
        return f"panic 0x{int.from_bytes(raw[4:36], 'big'):02x}"
    if raw.startswith(WRAPPED_ERROR_SELECTOR):
        return _wrapped(raw)
    if len(raw) >= 4:
        return f"custom error 0x{raw[:4].hex()}"
    return None


def decode_uint(data: Any) -> int | None:
    """The first 32-byte word of 0x-hex return data as an unsigned int (None if shorter).

    Read straight from the hex (the hot path: every balance read); the RPC client has
    already checked that ``eth_call`` results are hex.
    """
    if not isinstance(data, str) or not data.startswith("0x") or len(data) < 66:
        return None
    try:
        return int(data[2:66], 16)
    except ValueError:
        return None


def topic_address(topic: str) -> str:
    """The address an indexed event topic (a 0x-hex word) holds, lowercase and not
    checksummed: the hot path of log indexing compares and stores it as it is."""
    return "0x" + topic[-40:].lower()


def _wrapped(raw: bytes) -> str:
    """The innermost reason of a V4 ``WrappedError``, naming the contract that reverted."""
    try:
        target, _, reason, _ = decode(["address", "bytes4", "bytes", "bytes"], raw[4:])
    except AbiDecodeError:
        return f"custom error 0x{raw[:4].hex()}"
    inner = decode_revert(bytes(reason)) or "no reason"
    return f"{inner} (in {checksum(str(target))}, wrapped by the V4 PoolManager)"


def word_address(word: bytes) -> str:
    """The address in the low 20 bytes of a 32-byte ABI word known to hold one (a
    return value, an indexed topic); :func:`tokenrisk.simulate.owners.stored_address`
    judges words of unknown type."""
    return checksum("0x" + word[-20:].hex())

"""ERC-20 metadata, read defensively.

Hostile or old tokens revert in ``name()``, return ``bytes32`` instead of ``string``
(MKR-style), or return garbage.  Every getter has a fallback so a token always gets a
summary: unreadable names become ``""``, unreadable decimals become 18 with a note.
"""

from __future__ import annotations

from typing import Any

from tokenrisk.chain.abi import checksum, decode, decode_uint, encode_call, to_bytes
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.reader import CODE_HEAD
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import AbiDecodeError, CallReverted
from tokenrisk.model import TokenInfo

MAX_DECIMALS = 77  # 10**77 < 2**256; anything larger is garbage
_GETTERS = ("name()", "symbol()", "decimals()", "totalSupply()")


def call_params(to: str, data: str, block: str = "latest", gas: int = 5_000_000) -> list[Any]:
    return [{"to": to, "data": data, "gas": hex(gas)}, block]


def decode_text(data: Any) -> str:
    """A ``string`` or ``bytes32`` return value as text ("" when neither)."""
    if not isinstance(data, str):
        return ""
    raw = to_bytes(data)
    try:
        return _clean(str(decode(["string"], raw)[0]))
    except (AbiDecodeError, UnicodeDecodeError):
        pass
    if len(raw) == 32:
        return _clean(raw.rstrip(b"\0").decode("utf-8", errors="replace"))
    return ""


def _clean(text: str) -> str:
    return "".join(ch for ch in text if ch.isprintable())[:64]


async def read_token(rpc: RpcClient, address: str, block: str = "latest") -> TokenInfo:
    """Metadata of ``address`` in one batch; never raises for token misbehaviour.

    A getter that reverts gets its fallback; any other node failure raises (the rpc
    module's errors), so a throttled node never turns into an empty name or supply.
    """
    calls = [("eth_call", call_params(address, encode_call(sig), block)) for sig in _GETTERS]
    name, symbol, decimals, supply = await rpc.batch(calls)
    raw_decimals = None if isinstance(decimals, CallReverted) else decode_uint(decimals)
    return TokenInfo(
        address=checksum(address),
        name="" if isinstance(name, CallReverted) else decode_text(name),
        symbol="" if isinstance(symbol, CallReverted) else decode_text(symbol),
        decimals=raw_decimals if raw_decimals is not None and raw_decimals <= MAX_DECIMALS else 18,
        total_supply=None if isinstance(supply, CallReverted) else decode_uint(supply),
    )


async def balances_of(
    rpc: RpcClient, token: str, holders: list[str], block: str = "latest"
) -> list[int | None]:
    """``balanceOf`` of each holder in one batch (None where the call reverts)."""
    calls = [
        ("eth_call", call_params(token, encode_call("balanceOf(address)", [h]), block))
        for h in holders
    ]
    results = await rpc.batch(calls)
    return [None if isinstance(r, CallReverted) else decode_uint(r) for r in results]


async def is_erc20(rpc: RpcClient, address: str, block: str = "latest") -> bool:
    """True when ``totalSupply()`` and ``balanceOf(address)`` both return a uint256.

    The two calls every ERC-20 answers and routers, pools of other protocols and smart
    wallets do not; a token that reverts in them cannot be traded either.
    """
    calls = [
        ("eth_call", call_params(address, encode_call("totalSupply()"), block)),
        ("eth_call", call_params(address, encode_call("balanceOf(address)", [address]), block)),
    ]
    results = await rpc.batch(calls)
    return all(not isinstance(r, CallReverted) and decode_uint(r) is not None for r in results)


async def code_heads(rpc: RpcClient, addresses: list[str], block: str = "latest") -> list[str]:
    """The first bytes of each address's code as 0x-hex ("0x": none); errors raise.

    The node client reads only those bytes through the reader contract when it can
    (:data:`tokenrisk.chain.reader.CODE_HEAD`), not whole contracts.
    """
    method = CODE_HEAD if isinstance(rpc, CoalescingRpc) else "eth_getCode"
    results = await rpc.batch([(method, [a, block]) for a in addresses])
    return [str(r) if isinstance(r, str) else "0x" for r in results]


DELEGATION_PREFIX = "0xef0100"
"""EIP-7702: an externally owned account that delegated its code holds exactly
``0xef0100 || address``.  Its key still signs for it, so it is a wallet, not a contract."""


def is_contract_code(code: object) -> bool:
    """The one is-contract rule: the account holds code (or its first bytes, as
    :func:`code_heads` reads them) that is not an EIP-7702 delegation.

    Delegated EOAs count as wallets everywhere: holder analysis keeps them among the
    people, the owner-power scan impersonates them as EOAs, the call trace does not try
    to verify them.  Anything but a hex string (an error reply) is "no code".
    """
    if not isinstance(code, str) or len(code) <= 2:
        return False
    return not code.lower().startswith(DELEGATION_PREFIX)


async def is_contract(rpc: RpcClient, addresses: list[str], block: str = "latest") -> list[bool]:
    """:func:`is_contract_code` for each address; "no" only from a successful code read
    (errors raise)."""
    return [is_contract_code(head) for head in await code_heads(rpc, addresses, block)]

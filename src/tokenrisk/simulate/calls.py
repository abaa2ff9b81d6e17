"""Calldata for trading one token against one pool, and funding a simulated wallet.

A :class:`Route` knows how a person trades on a pool: through the DEX's router
(Uniswap V2 Router02-style ``...SupportingFeeOnTransferTokens`` swaps, or a V3
SwapRouter ``exactInputSingle``), and how the router quotes it (``getAmountsOut`` or
a V3 QuoterV2).  Wallets are funded with the base token by overriding its balance slot,
which :func:`find_balance_slot` discovers for mapping-based ERC-20s (Solidity and Vyper
layouts), with ``deposit()`` of native currency as the fallback for the wrapped native.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import checksum, encode_args, encode_call
from tokenrisk.chain.registry import Dex
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import decode_uint
from tokenrisk.errors import CallReverted
from tokenrisk.model import Pool

MAX_UINT = 2**256 - 1
DEADLINE = 2**40  # far future: the devnet clock reads 2026 and simulations advance it
_MARKER = 0x7E57_BA1A_9CE5_1075
_SLOT_CANDIDATES = range(32)


def fresh_address() -> str:
    """A random never-seen EOA address, so no token can pre-list our simulated wallets."""
    return checksum("0x" + os.urandom(20).hex())


@dataclass(frozen=True)
class Route:
    pool: Pool
    dex: Dex
    token: str
    base: str

    @property
    def v3(self) -> bool:
        return self.dex.version == "V3"

    def quote(self, amount_in: int, selling: bool = False) -> dict[str, Any]:
        """A call whose return data starts with the expected output amount."""
        token_in, token_out = (self.token, self.base) if selling else (self.base, self.token)
        if not self.v3:
            data = encode_call(
                "getAmountsOut(uint256,address[])", [amount_in, [token_in, token_out]]
            )
            return {"to": self.dex.router, "data": data}
        params = (token_in, token_out, amount_in, self.pool.fee or 0, 0)
        sig = "quoteExactInputSingle((address,address,uint256,uint24,uint160))"
        return {"to": self.dex.quoter, "data": encode_call(sig, [params])}

    def swap(self, wallet: str, amount_in: int, selling: bool = False) -> dict[str, Any]:
        token_in, token_out = (self.token, self.base) if selling else (self.base, self.token)
        if not self.v3:
            sig = (
                "swapExactTokensForTokensSupportingFeeOnTransferTokens"
                "(uint256,uint256,address[],address,uint256)"
            )
            data = encode_call(sig, [amount_in, 0, [token_in, token_out], wallet, DEADLINE])
        else:
            params = (token_in, token_out, self.pool.fee or 0, wallet, DEADLINE, amount_in, 0, 0)
            sig = (
                "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
            )
            data = encode_call(sig, [params])
        return {"from": wallet, "to": self.dex.router, "data": data}


def quoted_amount(return_data: str, v3: bool) -> int | None:
    """Output amount from a quote call's return data (last element of getAmountsOut)."""
    raw = bytes.fromhex(return_data[2:]) if return_data else b""
    if v3:
        return decode_uint("0x" + raw[:32].hex()) if len(raw) >= 32 else None
    if len(raw) < 96:
        return None
    return int.from_bytes(raw[-32:], "big")


def approve(token: str, owner: str, spender: str) -> dict[str, Any]:
    return {
        "from": owner,
        "to": token,
        "data": encode_call("approve(address,uint256)", [spender, MAX_UINT]),
    }


def transfer(token: str, sender: str, to: str, amount: int) -> dict[str, Any]:
    return {
        "from": sender,
        "to": token,
        "data": encode_call("transfer(address,uint256)", [to, amount]),
    }


def balance_of(token: str, holder: str, caller: str) -> dict[str, Any]:
    return {"from": caller, "to": token, "data": encode_call("balanceOf(address)", [holder])}


def slot_key(holder: str, slot: int, vyper: bool = False) -> str:
    """Storage key of ``balances[holder]`` for a mapping at ``slot``."""
    a, s = encode_args(["address"], [holder]), encode_args(["uint256"], [slot])
    return "0x" + bytes(keccak(s + a if vyper else a + s)).hex()


@dataclass(frozen=True)
class BalanceSlot:
    slot: int
    vyper: bool

    def override(self, holder: str, amount: int) -> dict[str, str]:
        return {slot_key(holder, self.slot, self.vyper): "0x" + amount.to_bytes(32, "big").hex()}


async def find_balance_slot(
    rpc: RpcClient, token: str, block: str = "latest"
) -> BalanceSlot | None:
    """Discover the storage slot of the balance mapping (one batch of eth_calls).

    Returns None for tokens whose balances are not a plain mapping (reflection,
    rebasing, exotic layouts); callers then fall back or skip what needs it.
    """
    probe = fresh_address()
    layouts = [(slot, vyper) for slot in _SLOT_CANDIDATES for vyper in (False, True)]
    data = encode_call("balanceOf(address)", [probe])
    calls = [
        (
            "eth_call",
            [
                {"to": token, "data": data, "gas": hex(1_000_000)},
                block,
                {token: {"stateDiff": BalanceSlot(s, v).override(probe, _MARKER)}},
            ],
        )
        for s, v in layouts
    ]
    results = await rpc.batch(calls)
    for (slot, vyper), result in zip(layouts, results, strict=True):
        if not isinstance(result, CallReverted) and decode_uint(result) == _MARKER:
            return BalanceSlot(slot, vyper)
    return None

"""Calldata for trading one token against one pool, and funding a simulated wallet.

A :class:`Route` knows how a person trades on a pool: through the DEX's router
(Uniswap V2 Router02-style ``...SupportingFeeOnTransferTokens`` swaps, or a V3
SwapRouter ``exactInputSingle``), and how the router quotes it (``getAmountsOut`` or
a V3 QuoterV2).  Wallets are funded with the base token by overriding its balance slot,
which :func:`tokenrisk.slots.find_balance_slot` discovers for mapping-based ERC-20s
(Solidity and Vyper layouts), with ``deposit()`` of native currency as the fallback for
the wrapped native.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.abi import encode_call
from tokenrisk.chain.registry import Dex
from tokenrisk.chain.tokens import decode_uint
from tokenrisk.model import Pool
from tokenrisk.simulate.slots import BalanceSlot as BalanceSlot  # re-exported: callers fund with it
from tokenrisk.simulate.slots import find_balance_slot as find_balance_slot

MAX_UINT = 2**256 - 1
DEADLINE = 2**40  # far future: the devnet clock reads 2026 and simulations advance it


def fresh_address() -> str:
    """A random never-seen EOA address, so no token can pre-list our simulated wallets.

    Lowercase (valid everywhere in JSON-RPC): checksumming a random address would cost a
    keccak that no caller reads.
    """
    return "0x" + os.urandom(20).hex()


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

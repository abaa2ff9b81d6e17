"""Calldata for trading one token against one pool, and funding a simulated wallet.

A :class:`Route` knows how a person trades on a pool: through the DEX's router
(Uniswap V2 Router02-style ``...SupportingFeeOnTransferTokens`` swaps, or a V3
SwapRouter ``exactInputSingle``, or the Universal Router's V4 swap after Permit2
approvals: :mod:`tokenrisk.chain.universal`), and how the router quotes it
(``getAmountsOut`` or a V3 QuoterV2; for V4 the pool's own curve without its hook, from
its state read by the quote call: :func:`tokenrisk.chain.v4.expected_out`).  Wallets are
funded with the base token by overriding its balance slot,
which :func:`tokenrisk.slots.find_balance_slot` discovers for mapping-based ERC-20s
(Solidity and Vyper layouts), with ``deposit()`` of native currency as the fallback for
the wrapped native.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tokenrisk.chain import universal
from tokenrisk.chain import v4 as pools_v4
from tokenrisk.chain.abi import ZERO_ADDRESS, decode_uint, encode_call
from tokenrisk.chain.entropy import fresh_randao as fresh_randao  # re-exported: plans use it
from tokenrisk.chain.entropy import random_bytes
from tokenrisk.chain.registry import Dex
from tokenrisk.model import Pool
from tokenrisk.simulate.slots import BalanceSlot as BalanceSlot  # re-exported: callers fund with it
from tokenrisk.simulate.slots import find_balance_slot as find_balance_slot

MAX_UINT = 2**256 - 1
DEADLINE = 2**40  # far future: the devnet clock reads 2026 and simulations advance it


def fresh_address() -> str:
    """A random never-seen EOA address, so no token can pre-list our simulated wallets.

    No byte of it is zero: the address is calldata of the trades (the swap's recipient),
    and calldata costs 4 gas a zero byte and 16 any other, so a random zero byte would
    move the reported gas of the same trade by 12 from one check to the next.
    Lowercase (valid everywhere in JSON-RPC): checksumming a random address would cost a
    keccak that no caller reads.  The bytes come from the OS's CSPRNG in blocks
    (:mod:`tokenrisk.chain.entropy`); the spare bytes that replace zero bytes are drawn
    only for the ~7 % of addresses that have one.
    """
    drawn = random_bytes(20)
    if 0 in drawn:
        spare = random_bytes(20)
        drawn = bytes(b or 1 + s % 255 for b, s in zip(drawn, spare, strict=True))
    return "0x" + drawn.hex()


@dataclass(frozen=True)
class Route:
    pool: Pool
    dex: Dex
    token: str
    base: str

    @property
    def v3(self) -> bool:
        """Quoted by a QuoterV2-like call (the V4 quote is read apart: :meth:`v4_quote`)."""
        return self.dex.version == "V3"

    @property
    def v4(self) -> bool:
        return self.dex.version == "V4"

    @property
    def spender(self) -> str:
        """What a wallet approves on the token it pays: the router, or Permit2 (V4)."""
        return self.dex.permit2 or self.dex.router

    def approvals(self, token: str, owner: str) -> list[dict[str, Any]]:
        """The calls that let the router spend ``owner``'s ``token``: ``approve``, and for
        the Universal Router also ``Permit2.approve(token, router, ...)``."""
        calls = [approve(token, owner, self.spender)]
        if self.v4:
            data = universal.permit2_approve(token, self.dex.router)
            calls.append({"from": owner, "to": self.spender, "data": data})
        return calls

    def v4_quote(self, amount_in: int, selling: bool) -> V4Quote:
        """What :func:`quoted_amount` needs to read a V4 quote call's answer."""
        token_first, fee = _v4_reading(self.pool, self.token)
        return (amount_in, token_first == selling, fee)

    def v4_expected(self, amount_in: int) -> int:
        """A V4 buy's output on the pool's own curve (no hook) at the virtual reserves the
        pool was read with: the quote a single-call probe is held against."""
        _, zero_for_one, fee = self.v4_quote(amount_in, False)
        reserves = (self.pool.reserves0, self.pool.reserves1)
        return pools_v4.curve_out(reserves, amount_in, zero_for_one, fee)

    def v4_key(self) -> tuple[str, str, int, int, str]:
        """The V4 pool's key (native ETH is currency address 0)."""
        return _v4_key(self.pool)

    def quote(self, amount_in: int, selling: bool = False) -> dict[str, Any]:
        """A call whose return data starts with the expected output amount (V4: the
        pool's state, read with :meth:`v4_quote`)."""
        token_in, token_out = (self.token, self.base) if selling else (self.base, self.token)
        if self.v4:
            return dict(_v4_state_call(self.pool))
        if not self.v3:
            sig = "getAmountsOut(uint256,address[])"
            data = filled(sig, (0, (token_in, token_out)), {0: amount_in})
            return {"to": self.dex.router, "data": data}
        sig = "quoteExactInputSingle((address,address,uint256,uint24,uint160))"
        data = filled(sig, ((token_in, token_out, 0, self.pool.fee or 0, 0),), {2: amount_in})
        return {"to": self.dex.quoter, "data": data}

    def swap(self, wallet: str, amount_in: int, selling: bool = False) -> dict[str, Any]:
        token_in, token_out = (self.token, self.base) if selling else (self.base, self.token)
        if self.v4:
            key = _v4_key(self.pool)
            data = v4_trade(key, self.token, self.base, self.pool.native, amount_in, selling)
        elif not self.v3:
            sig = (
                "swapExactTokensForTokensSupportingFeeOnTransferTokens"
                "(uint256,uint256,address[],address,uint256)"
            )
            shape = (0, 0, (token_in, token_out), ZERO_ADDRESS, DEADLINE)
            data = filled(sig, shape, {0: amount_in, 3: wallet})
        else:
            params = (token_in, token_out, self.pool.fee or 0, ZERO_ADDRESS, DEADLINE, 0, 0, 0)
            sig = (
                "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
            )
            data = filled(sig, (params,), {3: wallet, 5: amount_in})
        return {"from": wallet, "to": self.dex.router, "data": data}


V4Quote = tuple[int, bool, int]
"""A V4 quote's amount in, direction (zeroForOne) and LP fee (see :meth:`Route.v4_quote`)."""


# A V4 pool's key, its state read and how its quote reads are the same for every quote
# and swap of a check (a holder analysis builds hundreds): the key's sort, the pool id's
# keccak and the ``extsload`` encoding are done once per pool (issue #27).


@lru_cache(maxsize=256)
def _v4_key(pool: Pool) -> universal.Key:
    return pools_v4.key_of(pool).as_tuple()


@lru_cache(maxsize=256)
def _v4_state_call(pool: Pool) -> dict[str, str]:
    """The pool's state read (callers get a copy: a plan's calls are its own)."""
    return pools_v4.state_call(pool.address, pools_v4.key_of(pool).id)


@lru_cache(maxsize=256)
def _v4_reading(pool: Pool, token: str) -> tuple[bool, int]:
    """Whether ``token`` is the pool's currency0, and the LP fee its quote is read with."""
    key = pools_v4.key_of(pool)
    return key.currency0.lower() == token.lower(), pools_v4.static_fee(key)


def quoted_amount(return_data: str, v3: bool, v4: V4Quote | None = None) -> int | None:
    """Output amount from a quote call's return data (last element of getAmountsOut;
    with ``v4``, the pool curve's output from the pool state the call read)."""
    if v4 is not None:
        state = pools_v4.decode_state(return_data)
        return None if state is None else pools_v4.expected_out(state, v4[0], v4[1], v4[2])
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
    """A ``balanceOf(holder)`` read from ``caller`` (a check builds ~200: the calldata of
    a well-formed address is written straight after the selector)."""
    if isinstance(holder, str) and _ADDRESS.fullmatch(holder):
        data = _BALANCE_OF + holder[2:].lower()
    else:
        data = filled("balanceOf(address)", (ZERO_ADDRESS,), {0: holder})
    return {"from": caller, "to": token, "data": data}


# CALLDATA FROM TEMPLATES: a holder analysis builds thousands of quotes, swaps and balance
# reads that differ only in an amount or an address; encoding each from scratch was the
# largest CPU cost of building its simulations.

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_BALANCE_OF = encode_call("balanceOf(address)", [ZERO_ADDRESS])[:10] + "0" * 24
"""``balanceOf``'s selector and the zero padding of its address word."""


def filled(signature: str, shape: tuple[Any, ...], words: dict[int, int | str]) -> str:
    """``encode_call(signature, args)`` for the args that are ``shape`` with head word
    ``i`` set to ``words[i]`` (a uint or an address; zero in ``shape``).

    The encoding of ``shape`` is remembered and the words are written into it.  Only for
    words of the static head (the uint and address words of a signature, or of a static
    tuple laid out inline); a value the fast path cannot write (negative, too large, not
    hex) goes to :func:`encode_call` with the real args, which raises as it always did.
    """
    data = _template(signature, shape)
    for index, value in words.items():  # any order: each write keeps the length
        word = _word(value)
        if word is None:
            return encode_call(signature, _with_values(signature, shape, words))
        start = 10 + 64 * index
        data = data[:start] + word + data[start + 64 :]
    return data


@lru_cache(maxsize=1024)
def _template(signature: str, shape: tuple[Any, ...]) -> str:
    return encode_call(signature, list(shape))


def _word(value: int | str) -> str | None:
    if type(value) is int:
        return f"{value:064x}" if 0 <= value < 1 << 256 else None
    if isinstance(value, str) and _ADDRESS.fullmatch(value):
        return "0" * 24 + value[2:].lower()
    return None


def _with_values(signature: str, shape: tuple[Any, ...], words: dict[int, int | str]) -> list[Any]:
    """``shape`` with its head words set (for the slow path): a single static tuple
    argument holds the words itself, otherwise word ``i`` is argument ``i``."""
    if signature.count("(") > 1:  # one static tuple argument, its fields are the words
        (inner,) = shape
        return [tuple(words.get(i, v) for i, v in enumerate(inner))]
    return [words.get(i, v) for i, v in enumerate(shape)]


_MARKS = (0x5EED_C0DE_0000_0001_A5A5_A5A5_0000_0001, 0x5EED_C0DE_0000_0002_A5A5_A5A5_0000_0002)
"""Two amounts no pool key or address encodes as, written into a V4 trade's template."""


def v4_trade(
    key: universal.Key, token: str, base: str, native: bool, amount: int, selling: bool
) -> str:
    """:func:`universal.trade`'s calldata, from a template per pool and direction: the
    amount is a static word wherever it appears (swap, settle, Permit2 pull), so the
    encoding of a marker amount is split at its words and the amount written between.
    An amount the swap's ``uint128`` cannot hold goes to :func:`universal.trade`, which
    raises as it always did."""
    parts = _v4_template(key, token, base, native, selling)
    if parts is None or not 0 <= amount < 1 << 128:
        return universal.trade(key, token, base, native, amount, selling)
    return f"{amount:064x}".join(parts)


@lru_cache(maxsize=256)
def _v4_template(
    key: universal.Key, token: str, base: str, native: bool, selling: bool
) -> tuple[str, ...] | None:
    """The trade encoded with the first marker, split at its words; None when writing
    the second marker there does not give the second marker's own encoding."""
    first, second = (universal.trade(key, token, base, native, m, selling) for m in _MARKS)
    parts = tuple(first.split(f"{_MARKS[0]:064x}"))
    return parts if len(parts) > 1 and f"{_MARKS[1]:064x}".join(parts) == second else None

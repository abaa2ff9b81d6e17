"""Calldata of a Uniswap V4 trade through the Universal Router (2.x), and Permit2.

Pure (no node): the simulation and the devnet build use the same encoding.  A trade is
``execute(commands, inputs, deadline)``; its ``V4_SWAP`` command carries V4 router
actions: ``SWAP_EXACT_IN_SINGLE`` (the pool key, direction, amount, no minimum out),
``SETTLE_ALL`` (pay what the swap owes) and ``TAKE_ALL``/``TAKE`` (collect its output).
The router pulls ERC-20s through Permit2, so a wallet approves Permit2 on the token and
then ``Permit2.approve(token, router, amount, expiration)``.

Native ETH pools are traded two ways: ``eth_in`` buys with ETH sent as value and sells
for ETH (a wallet's usual trade, the devnet history); ``weth_in``/``weth_out`` wrap
around it so the wallet pays and is paid in WETH (``PERMIT2_TRANSFER_FROM`` +
``UNWRAP_WETH`` before the swap, ``TAKE`` to the router + ``WRAP_ETH`` after), which is
how the simulation keeps its WETH accounting for every pool; the pool sees the same swap.
"""

from __future__ import annotations

from typing import Any

from tokenrisk.chain.abi import ZERO_ADDRESS, encode_args, encode_call

PERMIT2_TRANSFER_FROM = 0x02
WRAP_ETH = 0x0B
UNWRAP_WETH = 0x0C
V4_SWAP = 0x10
SWAP_EXACT_IN_SINGLE = 0x06
SETTLE_ALL = 0x0C
TAKE = 0x0E
TAKE_ALL = 0x0F
MSG_SENDER = "0x0000000000000000000000000000000000000001"
ADDRESS_THIS = "0x0000000000000000000000000000000000000002"
CONTRACT_BALANCE = 2**255
DEADLINE = 2**40
MAX_UINT160 = 2**160 - 1
MAX_UINT48 = 2**48 - 1

Key = tuple[str, str, int, int, str]
"""A V4 pool key: (currency0, currency1, fee, tickSpacing, hooks); ETH is address 0."""

_EXACT_IN_SINGLE = "((address,address,uint24,int24,address),bool,uint128,uint128,bytes)"


def execute(commands: list[int], inputs: list[bytes]) -> str:
    """``execute(bytes,bytes[],uint256)`` calldata with a far deadline."""
    return encode_call("execute(bytes,bytes[],uint256)", [bytes(commands), inputs, DEADLINE])


def v4_swap(key: Key, zero_for_one: bool, amount: int, take: list[int], pay_in: str) -> bytes:
    """A ``V4_SWAP`` input: swap ``amount`` in, settle it all, then ``take`` (action ids,
    TAKE_ALL to the sender or TAKE of everything to the router)."""
    out = key[1] if zero_for_one else key[0]
    swap = encode_args([_EXACT_IN_SINGLE], [(key, zero_for_one, amount, 0, b"")])
    settle = encode_args(["address", "uint256"], [pay_in, amount])
    if take == [TAKE]:
        taking = encode_args(["address", "address", "uint256"], [out, ADDRESS_THIS, 0])
    else:
        taking = encode_args(["address", "uint256"], [out, 0])
    actions = bytes([SWAP_EXACT_IN_SINGLE, SETTLE_ALL, take[0]])
    return encode_args(["bytes", "bytes[]"], [actions, [swap, settle, taking]])


def eth_in(key: Key, zero_for_one: bool, amount: int) -> str:
    """A swap paid from the sender (ETH as value, or an ERC-20 through Permit2) whose
    output goes to the sender (ETH or the token)."""
    pay_in = key[0] if zero_for_one else key[1]
    return execute([V4_SWAP], [v4_swap(key, zero_for_one, amount, [TAKE_ALL], pay_in)])


def weth_in(key: Key, weth: str, amount: int) -> str:
    """Buy from a native-ETH pool paying WETH: pull it through Permit2, unwrap, swap."""
    pull = encode_args(["address", "address", "uint160"], [weth, ADDRESS_THIS, amount])
    unwrap = encode_args(["address", "uint256"], [ADDRESS_THIS, 0])
    swap = v4_swap(key, True, amount, [TAKE_ALL], ZERO_ADDRESS)
    return execute([PERMIT2_TRANSFER_FROM, UNWRAP_WETH, V4_SWAP], [pull, unwrap, swap])


def weth_out(key: Key, amount: int) -> str:
    """Sell into a native-ETH pool for WETH: swap, take the ETH to the router, wrap it
    to the sender."""
    swap = v4_swap(key, False, amount, [TAKE], key[1])
    wrap = encode_args(["address", "uint256"], [MSG_SENDER, CONTRACT_BALANCE])
    return execute([V4_SWAP, WRAP_ETH], [swap, wrap])


def permit2_approve(token: str, spender: str) -> str:
    """``Permit2.approve(token, spender, max uint160, max uint48)``."""
    sig = "approve(address,address,uint160,uint48)"
    return encode_call(sig, [token, spender, MAX_UINT160, MAX_UINT48])


def trade(key: Key, token: str, weth: str, native: bool, amount: int, selling: bool) -> str:
    """The calldata a WETH- or ERC-20-paying wallet sends to buy or sell ``token``."""
    token_is_0 = key[0].lower() == token.lower()
    zero_for_one = token_is_0 == selling
    if native:
        return weth_out(key, amount) if selling else weth_in(key, weth, amount)
    return eth_in(key, zero_for_one, amount)


def as_key(raw: Any) -> Key:
    c0, c1, fee, spacing, hooks = raw
    return (str(c0), str(c1), int(fee), int(spacing), str(hooks))

"""Calldata of the swaps a person makes: Router02 and SwapRouter, fee-on-transfer safe,
and the Universal Router's V4 swap (:mod:`tokenrisk.chain.universal`) with Permit2.

Pure functions (no node): the build's history and the ground-truth tests both use them.
Every minimum output is 0, because the devnet wants to see what a token does to a
trade, not have the router refuse it; deadlines are far in the future.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenrisk.chain.abi import decode, encode_call
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.liquidity import DEADLINE
from tokenrisk.devnet.uniswap import QUOTER_V2, V2_ROUTER, WETH
from tokenrisk.devnet.v4 import (
    PERMIT2,
    UNIVERSAL_ROUTER,
    PoolState,
    is_native,
    permit2_approve,
    v4_key_quote,
    v4_key_state,
    v4_trade,
)
from tokenrisk.devnet.venues import routers as _venue_routers
from tokenrisk.devnet.venues import venue as venue  # re-exported: pools are made on it
from tokenrisk.errors import AbiDecodeError, DevnetBuildError

_V3_EXACT_INPUT_SINGLE = (
    "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
)


@dataclass(frozen=True)
class Route:
    """Where a token trades against one base: a V2 pair or a V3 pool (with its fee), on
    Uniswap or another ``venue`` (:mod:`tokenrisk.devnet.venues`), or a Uniswap V4 pool
    against native ETH or an ERC-20 (with its ``key``)."""

    dex: str
    base: str
    fee: int | None = None
    venue: str | None = None
    key: tuple[str, str, int, int, str] | None = None

    @property
    def router(self) -> str:
        """The contract a trader calls for this route."""
        if self.dex == "v4":
            return UNIVERSAL_ROUTER
        return venue(self.dex, self.venue).router

    @property
    def quoter(self) -> str:
        """The V3 venue's QuoterV2 (V2 routes quote on their router)."""
        return venue(self.dex, self.venue).quoter or self.router

    @property
    def spender(self) -> str:
        """The contract a trader approves: the router, or Permit2 for the Universal Router."""
        return PERMIT2 if self.dex == "v4" else self.router


def routers() -> tuple[str, ...]:
    """The contracts a history trade calls: every venue's routers and the Universal Router."""
    return (*_venue_routers(), UNIVERSAL_ROUTER)


def approvals(route: Route, wallet: str, token: str, label: str) -> list[Tx]:
    """What ``wallet`` sends before ``route``'s router may spend its ``token``."""
    txs = [Tx(wallet, token, approve_calldata(route.spender), label=label)]
    if route.dex == "v4":
        data = permit2_approve(token, route.router)
        txs.append(Tx(wallet, PERMIT2, data, label=label))
    return txs


def paying(route: Route, wallet: str, base: str, amount: int, label: str) -> list[Tx]:
    """What a buyer sends before paying ``amount`` of ``base`` on ``route``: nothing for
    ETH sent as value; for a V4 pool against an ERC-20, WETH wrapped from its ETH (where
    the base is WETH) and the two Permit2 approvals a wallet gives the Universal Router;
    else the router's approval of a non-WETH base."""
    if route.dex == "v4":
        if is_native(_key(route)):
            return []
        wrap = [Tx(wallet, WETH, encode_call("deposit()"), amount, label=label)]
        return [*(wrap if base == WETH else []), *approvals(route, wallet, base, label)]
    if base == WETH:
        return []
    return [Tx(wallet, base, approve_calldata(route.router), label=label)]


def v4_swap(route: Route, token: str, amount: int, selling: bool, weth: bool) -> str:
    """A V4 swap of ``token`` through the Universal Router: paid in ETH (value) and paid
    out in ETH, or (``weth``) paid and paid out in WETH."""
    return v4_trade(_key(route), token, amount, selling, weth)


async def v4_state(chain: Chain, route: Route) -> PoolState:
    """The route's V4 pool's price and active liquidity now."""
    return await v4_key_state(chain, _key(route))


async def v4_quote(chain: Chain, route: Route, token: str, amount: int, selling: bool) -> int:
    """The pool's own curve for ``amount`` in, its LP fee taken, no hook
    (:func:`tokenrisk.chain.v4.expected_out`): what a V4 trade is held against."""
    return await v4_key_quote(chain, _key(route), token, amount, selling)


def _key(route: Route) -> tuple[str, str, int, int, str]:
    if route.key is None:
        raise DevnetBuildError("a V4 route needs its pool key")
    return route.key


def buy_calldata(route: Route, token: str, recipient: str, amount_in: int) -> tuple[str, int]:
    """(calldata, ETH value) of a buy of ``token`` paying ``amount_in`` of the base.

    A WETH base is paid in ETH (Router02 ``swapExactETHFor...``, or SwapRouter with
    ``msg.value``); any other base is an ERC-20 the buyer holds and has approved.
    """
    if route.dex == "v4":  # ETH as value; an ERC-20 pool's base through Permit2
        data = v4_swap(route, token, amount_in, False, False)
        return data, amount_in if is_native(_key(route)) else 0
    if route.dex == "v2":
        if route.base == WETH:
            sig = (
                "swapExactETHForTokensSupportingFeeOnTransferTokens"
                "(uint256,address[],address,uint256)"
            )
            return encode_call(sig, [0, [WETH, token], recipient, DEADLINE]), amount_in
        return v2_swap_tokens([route.base, token], amount_in, recipient), 0
    data = v3_exact_input(route.base, token, route.fee or 3000, recipient, amount_in)
    return data, amount_in if route.base == WETH else 0


def sell_calldata(route: Route, token: str, recipient: str, amount: int) -> str:
    """Calldata selling ``amount`` raw units of ``token`` (router already approved).

    V2 WETH routes pay out ETH; other routes pay out the base token (WETH for V3; ETH
    for the devnet's native V4 pools, the ERC-20 for the others).
    """
    if route.dex == "v4":
        return v4_swap(route, token, amount, True, False)
    if route.dex == "v2":
        if route.base == WETH:
            sig = (
                "swapExactTokensForETHSupportingFeeOnTransferTokens"
                "(uint256,uint256,address[],address,uint256)"
            )
            return encode_call(sig, [amount, 0, [token, WETH], recipient, DEADLINE])
        return v2_swap_tokens([token, route.base], amount, recipient)
    return v3_exact_input(token, route.base, route.fee or 3000, recipient, amount)


def v2_swap_tokens(path: list[str], amount_in: int, recipient: str) -> str:
    """Router02 token-for-token swap along ``path`` (fee-on-transfer supporting)."""
    sig = (
        "swapExactTokensForTokensSupportingFeeOnTransferTokens"
        "(uint256,uint256,address[],address,uint256)"
    )
    return encode_call(sig, [amount_in, 0, path, recipient, DEADLINE])


def v3_exact_input(token_in: str, token_out: str, fee: int, recipient: str, amount: int) -> str:
    """SwapRouter ``exactInputSingle`` with no minimum out and no price limit."""
    params = (token_in, token_out, fee, recipient, DEADLINE, amount, 0, 0)
    return encode_call(_V3_EXACT_INPUT_SINGLE, [params])


def approve_calldata(spender: str, amount: int = 2**256 - 1) -> str:
    """ERC-20 ``approve`` (unlimited by default, as wallets usually do for routers)."""
    return encode_call("approve(address,uint256)", [spender, amount])


def balance_of_calldata(account: str) -> str:
    return encode_call("balanceOf(address)", [account])


def transfer_calldata(to: str, amount: int) -> str:
    return encode_call("transfer(address,uint256)", [to, amount])


async def v2_quote(
    chain: Chain, amount: int, path: list[str], router: str = V2_ROUTER
) -> int | None:
    """What a V2 router (Uniswap's by default) quotes for ``amount`` along ``path``; None
    when it cannot."""
    data = encode_call("getAmountsOut(uint256,address[])", [amount, path])
    try:
        (amounts,) = decode(["uint256[]"], await chain.call(router, data))
    except (DevnetBuildError, AbiDecodeError):  # a token the router cannot quote
        return None
    return int(amounts[-1])


async def v3_quote(
    chain: Chain, amount: int, token_in: str, token_out: str, fee: int, quoter: str = QUOTER_V2
) -> int | None:
    """What a QuoterV2 (Uniswap's by default) quotes for ``amount`` in one pool; None when
    it cannot (a token that refuses to send to the quoter, a contract, makes it revert)."""
    sig = "quoteExactInputSingle((address,address,uint256,uint24,uint160))"
    data = encode_call(sig, [(token_in, token_out, amount, fee, 0)])
    try:
        return int(decode(["uint256"], (await chain.call(quoter, data))[:66])[0])
    except (DevnetBuildError, AbiDecodeError):
        return None


async def balance(chain: Chain, token: str, holder: str) -> int:
    """``token.balanceOf(holder)`` now."""
    return int(decode(["uint256"], await chain.call(token, balance_of_calldata(holder)))[0])

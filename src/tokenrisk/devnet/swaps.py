"""Calldata of the swaps a person makes: Router02 and SwapRouter, fee-on-transfer safe.

Pure functions (no node): the build's history and the ground-truth tests both use them.
Every minimum output is 0, because the devnet wants to see what a token does to a
trade, not have the router refuse it; deadlines are far in the future.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenrisk.chain.abi import decode, encode_call
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.liquidity import DEADLINE
from tokenrisk.devnet.uniswap import QUOTER_V2, V2_ROUTER, WETH
from tokenrisk.devnet.venues import routers as routers  # re-exported: the history's routers
from tokenrisk.devnet.venues import venue as venue  # re-exported: pools are made on it
from tokenrisk.errors import AbiDecodeError, DevnetBuildError

_V3_EXACT_INPUT_SINGLE = (
    "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
)


@dataclass(frozen=True)
class Route:
    """Where a token trades against one base: a V2 pair or a V3 pool (with its fee), on
    Uniswap or another ``venue`` (:mod:`tokenrisk.devnet.venues`)."""

    dex: str
    base: str
    fee: int | None = None
    venue: str | None = None

    @property
    def router(self) -> str:
        """The contract a trader calls (and approves) for this route."""
        return venue(self.dex, self.venue).router

    @property
    def quoter(self) -> str:
        """The V3 venue's QuoterV2 (V2 routes quote on their router)."""
        return venue(self.dex, self.venue).quoter or self.router


def buy_calldata(route: Route, token: str, recipient: str, amount_in: int) -> tuple[str, int]:
    """(calldata, ETH value) of a buy of ``token`` paying ``amount_in`` of the base.

    A WETH base is paid in ETH (Router02 ``swapExactETHFor...``, or SwapRouter with
    ``msg.value``); any other base is an ERC-20 the buyer holds and has approved.
    """
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

    V2 WETH routes pay out ETH; other routes pay out the base token (WETH for V3).
    """
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

"""A pool whose token side is short of its reserve (issue #31): named, never "empty"."""

from __future__ import annotations

from typing import Any, cast

from eth_abi import encode

from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import CallReverted
from tokenrisk.model import Pool
from tokenrisk.simulate.reserves import token_side_short

TOKEN = "0x" + "11" * 20
WETH = "0x" + "c0" * 20


def pair(version: str = "V2") -> Pool:
    return Pool(
        "0x" + "9a" * 20, "Uniswap", version, TOKEN, WETH, WETH, "0x" + "77" * 20, 0, 10**19, 1.0
    )


class Replies:
    """An RpcClient stand-in answering a batch with fixed replies."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.sent: list[Any] = []

    async def batch(self, calls: Any, tolerate: Any = None) -> list[Any]:
        self.sent.append(calls)
        return self.replies


def reserves(token: int, base: int) -> str:
    return "0x" + encode(["uint112", "uint112", "uint32"], [token, base, 1]).hex()


def word(value: int) -> str:
    return "0x" + f"{value:064x}"


async def test_a_balance_below_the_reserve_is_named_with_both_numbers() -> None:
    rpc = Replies(reserves(4 * 10**26, 10**19), word(0))
    why = await token_side_short(cast(RpcClient, rpc), pair(), TOKEN, "0x10")
    assert why is not None and "token balance (0) is below its reserve (400000000" in why
    assert rpc.sent[0][0][1][1] == "0x10"  # read at the block the sells are simulated on


async def test_a_sound_pool_or_a_v3_pool_or_a_failed_read_says_nothing() -> None:
    sound = Replies(reserves(10**26, 10**19), word(10**26 + 5))
    assert await token_side_short(cast(RpcClient, sound), pair(), TOKEN, "0x10") is None
    v3 = Replies()
    assert await token_side_short(cast(RpcClient, v3), pair("V3"), TOKEN, "0x10") is None
    assert v3.sent == []
    failed = Replies(CallReverted("execution reverted"), word(0))
    assert await token_side_short(cast(RpcClient, failed), pair(), TOKEN, "0x10") is None

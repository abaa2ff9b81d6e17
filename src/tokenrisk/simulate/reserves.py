"""Why buys through a pool fail when the pool is not empty: its token side is short.

A Uniswap V2 pair prices trades from its stored reserves but pays out of its balance.
When something (a privileged balance rewrite, a rebase that skips the pair) leaves the
pair holding fewer tokens than its reserve says, a buy reverts (the pair cannot send
tokens it does not hold) and a router sell reverts too (the pair sees its balance below
the reserve, so no tokens "arrived"): every holder is trapped although the pool still
holds all its base token.  Reading the reserve beside the balance names the cause.
"""

from __future__ import annotations

from tokenrisk.chain.abi import decode, decode_uint, encode_call
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import call_params
from tokenrisk.errors import AbiDecodeError, RpcError
from tokenrisk.model import Pool

_GET_RESERVES = encode_call("getReserves()")


async def token_side_short(rpc: RpcClient, pool: Pool, token: str, block: str) -> str | None:
    """A sentence when ``pool`` (a V2 pair) holds less of ``token`` than its reserve,
    else None (also for V3 pools, which keep no reserves, and when a read fails)."""
    if pool.version != "V2":
        return None
    reads = [
        ("eth_call", call_params(pool.address, _GET_RESERVES, block)),
        ("eth_call", call_params(token, encode_call("balanceOf(address)", [pool.address]), block)),
    ]
    try:
        reserves, held = await rpc.batch(reads, tolerate=RpcError)
    except RpcError:
        return None
    reserve = _token_reserve(reserves, pool, token)
    balance = decode_uint(held) if isinstance(held, str) else None
    if reserve is None or balance is None or balance >= reserve:
        return None
    return (
        f"the pool's token balance ({balance}) is below its reserve ({reserve}): the pool "
        "still holds its base token, but it cannot pay out tokens to buyers and sees no "
        "tokens arrive from sellers"
    )


def _token_reserve(reply: object, pool: Pool, token: str) -> int | None:
    if not isinstance(reply, str):
        return None
    try:
        r0, r1, _ = decode(["uint112", "uint112", "uint32"], reply)
    except AbiDecodeError:  # not a V2 pair after all: nothing to compare
        return None
    return int(r0) if pool.token0.lower() == token.lower() else int(r1)

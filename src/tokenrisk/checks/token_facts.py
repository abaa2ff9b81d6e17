"""What IsHoneypot says about the tokens themselves: the pair's base token (read once per
chain), the pool's creation, and the "No pairs found" answer with the token in it."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk.chain.created import with_creations
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import read_token
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.indexing import base_token_holders, holders_counted
from tokenrisk.checks.target import Target, base_token_info, no_pairs_reason
from tokenrisk.errors import NoPairsFound
from tokenrisk.model import Pool, TokenInfo


async def token_info(node: Node, token: str) -> TokenInfo:
    """The checked token's metadata as the chain reports it."""
    return await read_token(node.rpc, token)


async def counted(deps: HoneypotDeps, node: Node, token: str, info: TokenInfo) -> TokenInfo:
    """``info`` with ``token``'s holder count from the index (None: never indexed)."""
    total = await holders_counted(deps.index, node, token)
    return replace(info, total_holders=total)


async def base_info(deps: HoneypotDeps, node: Node, base: str) -> TokenInfo:
    """:func:`base_token_info`, read once per chain and token (registry base tokens are
    the operator's well-known WETH and stablecoins; their total supply is not shown),
    with its holder count where the index has it (read every time: it changes)."""
    key = (node.id, base)
    info = deps.base_infos.value(key)
    if info is None:
        info = await base_token_info(node, base)
        deps.base_infos.put(key, info)
    holders = await base_token_holders(deps.index, node, base)
    return replace(info, total_holders=holders)


async def created(node: Node, pool: Pool, token: str, simulated: bool) -> Pool:
    """The pool with its creation time and transaction (unchanged for a pool that exists
    only in a simulation).  The events are looked up by the checked ``token``, never by
    the base token (WETH has countless pools); on a node that caps ``eth_getLogs``
    ranges, the pool's creation comes from the node's history (unknown without it)."""
    if simulated:
        return pool
    return (await with_creations(node, token, [pool]))[0]


async def no_pairs(
    deps: HoneypotDeps, target: Target, index: asyncio.Task[None], why: str = ""
) -> NoPairsFound:
    """The 404 for a token without a pool, with the token (holder count included)."""
    await index
    node = target.node
    token = await read_token(node.rpc, target.token)
    total = await holders_counted(deps.index, node, target.token)
    reason = no_pairs_reason(node.chain) + (f"; liquidity simulation: {why}" if why else "")
    if target.unsearched is not None:  # a node's log cap hid part of the V4 history
        reason += f"; not checked: {target.unsearched.sentence}"
    return NoPairsFound(reason, replace(token, total_holders=total))

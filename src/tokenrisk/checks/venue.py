"""Where IsHoneypot trades, and what it says of that market: the pool chosen, or one made
inside the simulation (``simulateLiquidity``: the largest indexed holder provides the
liquidity against the chain's wrapped native coin); the pool's creation, the pair's base
token (read once per chain), the checked token's metadata and holder count; and the
"No pairs found" answer, with the token in it, when there is no pool to trade on.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk.chain.created import with_creations
from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import read_token
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.holder_sells import largest_holders
from tokenrisk.checks.target import Target, base_token_info, no_pairs_reason
from tokenrisk.checks.top_holders import base_token_holders, holders_counted
from tokenrisk.checks.trade import Prepared, base_slot_of, head_of, prepare
from tokenrisk.errors import LiquidityError, NoPairsFound
from tokenrisk.model import Pool, TokenInfo, evolve
from tokenrisk.simulate.liquidity import SimulatedPool, simulate_pool

# THE POOL TRADED ON


async def ready_pool(
    deps: HoneypotDeps,
    target: Target,
    pool: Pool | None,
    head: ChainHead | None,
    index: asyncio.Task[None],
    liquidity: str,
) -> Prepared:
    """The trade on ``pool``, or on a simulated pool when ``liquidity`` asks for one:
    "always", or "if_missing" and there is no pool.

    Raises NoPairsFound when there is no pool to trade on (and none could be simulated).
    """
    node, token = target.node, target.token
    if liquidity == "always" or (liquidity == "if_missing" and pool is None):
        await index  # the liquidity provider is the largest indexed holder
        made = await simulated_pool(deps, target)
        if isinstance(made, str):
            raise await no_pairs(deps, target, index, made)
        return await prepare(node, deps.trading, made.pool, token, made, head)
    if pool is None:
        raise await no_pairs(deps, target, index)
    return await prepare(node, deps.trading, pool, token, None, head)


# A POOL MADE INSIDE THE SIMULATION


async def simulated_pool(deps: HoneypotDeps, target: Target) -> SimulatedPool | str:
    """A pool made inside the simulation, or the reason it could not be made.  Reads the
    holder index: the caller brings it up to date first."""
    node, token = target.node, target.token
    wrapped = node.chain.wrapped_native.address
    slot, head = await asyncio.gather(base_slot_of(node, deps.trading, wrapped), head_of(node))
    store, limit = deps.index.store, deps.holder_limit
    providers = await largest_holders(node, store, limit, token, [], head.tag)
    if not providers:
        return "no holder of this token can provide liquidity"
    try:
        return await simulate_pool(
            node.rpc, node.chain, token, providers[0], slot, head, node.native_pools
        )
    except LiquidityError as exc:
        return str(exc)


# THE TOKENS AND THE POOL


async def token_info(deps: HoneypotDeps, ready: Prepared) -> TokenInfo:
    """The checked token's metadata as the chain reports it at the simulations' block,
    read once per block (by hash and number, as ``trade.token_slot`` keeps the balance
    slot): a check again at an unchanged head sent the same four calls for the same
    answer (issue #27).  Without a pinned block (no journey, a simulated pool's
    prelude) it is read at "latest" every time."""
    node, token = ready.node, ready.route.token
    head = _pinned(ready)
    if head is None:
        return await read_token(node.rpc, token)
    key = ("token", node.id, token.lower(), head.number, head.hash)
    kept = deps.at_head.value(key)
    if isinstance(kept, TokenInfo):
        return kept
    info = await read_token(node.rpc, token, head.tag)
    deps.at_head.put(key, info)
    return info


def _pinned(ready: Prepared) -> ChainHead | None:
    """The real block ``ready``'s simulations start after; None when there is none
    (no journey) or they start after a prelude of simulated blocks."""
    return None if ready.sim is None else ready.sim.pinned


async def counted(
    deps: HoneypotDeps,
    node: Node,
    token: str,
    info: TokenInfo,
    ahead: tuple[asyncio.Task[None], asyncio.Task[None]] | None = None,
) -> TokenInfo:
    """``info`` with ``token``'s holder count from the index (None: never indexed).

    ``ahead``: the index refresh and :func:`count_ahead`'s task.  A count it made is
    found in the count's memo (kept per index state), so it is used only when the index
    still holds what was counted; an unfinished one is given up when the refresh is."""
    if ahead is not None:
        index, counting = ahead
        if not index.done():
            counting.cancel()
        if not counting.done():  # mostly done by now: then no wait, no turn of the loop
            await asyncio.wait([counting])
        if not counting.cancelled():
            counting.exception()  # retrieved: errors are left to the read below
    total = await holders_counted(deps.index, node, token)
    return evolve(info, total_holders=total)


def count_ahead(
    deps: HoneypotDeps, node: Node, token: str, index: asyncio.Task[None]
) -> asyncio.Task[None]:
    """The holder count taken as soon as the index refresh ends, while the check's other
    requests are still at the node: on first sight the count was two store reads in a
    thread after the last reply, on the critical path (issue #27).  Errors are left for
    :func:`counted`, which reads again."""

    async def count() -> None:
        await asyncio.wait([index])
        if not index.cancelled() and index.exception() is None:
            await holders_counted(deps.index, node, token)

    return asyncio.create_task(count())


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
    return evolve(info, total_holders=holders)


async def created(node: Node, pool: Pool, token: str, simulated: bool) -> Pool:
    """The pool with its creation time and transaction (unchanged for a pool that exists
    only in a simulation, and for a Uniswap V4 pool: its ``Initialize`` event, read with
    the pool, gave them; a factory's events never name it, and its address is the
    PoolManager's).  The events are looked up by the checked ``token``, never by
    the base token (WETH has countless pools); on a node that caps ``eth_getLogs``
    ranges, the pool's creation comes from the node's history (unknown without it)."""
    if simulated or pool.version == "V4":
        return pool
    return (await with_creations(node, token, [pool]))[0]


async def traded_created(deps: HoneypotDeps, ready: Prepared) -> Pool:
    """:func:`created` for the pool ``ready`` trades on, a creation found kept per
    simulations' block (hash and number): that block fixes its ancestors, so the
    creation block's header, read again to see it is still there, cannot differ at it
    (issue #27: a check again at an unchanged head read it for the same answer).  An
    unknown creation is looked up every time."""
    node, pool, token = ready.node, ready.route.pool, ready.route.token
    head = None if ready.simulated or pool.version == "V4" else _pinned(ready)
    if head is None:
        return await created(node, pool, token, ready.simulated)
    key = ("created", node.id, pool.address.lower(), head.number, head.hash)
    kept = deps.at_head.value(key)
    if isinstance(kept, tuple):
        return evolve(pool, created_at_timestamp=kept[0], creation_tx_hash=kept[1])
    made = await created(node, pool, token, False)
    if made.created_at_timestamp is not None and made.creation_tx_hash:
        deps.at_head.put(key, (made.created_at_timestamp, made.creation_tx_hash))
    return made


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

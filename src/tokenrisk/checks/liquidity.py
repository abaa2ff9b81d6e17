"""A pool made inside the simulation (``simulateLiquidity``): the largest indexed holder
provides the liquidity against the chain's wrapped native coin."""

from __future__ import annotations

import asyncio

from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.people import largest_holders
from tokenrisk.checks.prepare import base_slot_of, head_of
from tokenrisk.checks.target import Target
from tokenrisk.errors import LiquidityError
from tokenrisk.simulate.liquidity import SimulatedPool, simulate_pool


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

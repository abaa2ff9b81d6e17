"""Where IsHoneypot trades: the chosen pool, or one made inside the simulation
(``simulateLiquidity``, see :mod:`tokenrisk.checks.liquidity`)."""

from __future__ import annotations

import asyncio

from tokenrisk.chain.head import ChainHead
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.liquidity import simulated_pool
from tokenrisk.checks.prepare import Prepared, prepare
from tokenrisk.checks.target import Target
from tokenrisk.checks.tokens import no_pairs
from tokenrisk.model import Pool


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

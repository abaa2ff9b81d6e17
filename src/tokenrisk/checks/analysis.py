"""One token's analysis once its target is resolved: the holder index refreshed in the
background, the pool chosen (or simulated), then everything measured on it."""

from __future__ import annotations

import asyncio

from tokenrisk.chain.head import ChainHead
from tokenrisk.checks.deps import HoneypotDeps, Options
from tokenrisk.checks.indexing import refresh_index
from tokenrisk.checks.measure import measure
from tokenrisk.checks.target import Target
from tokenrisk.checks.tasks import finish
from tokenrisk.checks.venue import ready_pool
from tokenrisk.model import Analysis, Pool


async def analyse(
    deps: HoneypotDeps,
    target: Target,
    pool: Pool | None,
    head: ChainHead | None,
    liquidity: str,
    options: Options,
) -> Analysis:
    """Everything measured for ``target`` traded on ``pool`` (see
    :func:`tokenrisk.checks.venue.ready_pool` for ``liquidity``).  The index refresh
    runs alongside; only the holder sells (and a simulated pool's provider) wait for it.

    Raises NoPairsFound when there is no pool to trade on (and none could be simulated).
    """
    index = asyncio.create_task(refresh_index(deps.index, target.node, target.token))
    try:
        ready = await ready_pool(deps, target, pool, head, index, liquidity)
        return await measure(deps, ready, target.pools, index, options)
    finally:
        await finish(index)

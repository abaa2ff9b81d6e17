"""IsHoneypot's scans beside the journey: real holders selling, the launch's airdrop,
and the owner-power scan.  Each runs concurrently with the journey and answers None
when it cannot or may not run."""

from __future__ import annotations

import asyncio
from collections.abc import Set
from dataclasses import replace

from tokenrisk.checks.deps import HoneypotDeps, Options, owner_powers_enabled
from tokenrisk.checks.holder_sells import analyse_holders
from tokenrisk.checks.prepare import Prepared
from tokenrisk.errors import MethodUnsupported
from tokenrisk.findings import OwnerPowers
from tokenrisk.holders.launch import airdrop_summary
from tokenrisk.model import AirdropSummary, HolderStats, Pool
from tokenrisk.simulate.powers import scan
from tokenrisk.simulate.powers import unchecked as unchecked  # what a scan left unchecked


async def airdrop(
    deps: HoneypotDeps, ready: Prepared, pools: list[Pool], index: asyncio.Task[None]
) -> AirdropSummary | None:
    """``token.airdropSummary`` once the index is fresh (it reads the indexed transfers)."""
    await index
    return await airdrop_summary(ready.node, deps.index.store, ready.route.token, pools)


async def holder_sells(
    deps: HoneypotDeps,
    ready: Prepared,
    pools: list[Pool],
    skip: Set[str],
    index: asyncio.Task[None],
    options: Options,
) -> HolderStats | None:
    """Holder sells once the index is fresh; None when no journey can run, or when the
    node cannot simulate and ``ready`` is not emulating it (``Prepared.emulated``).
    ``skip``: the provider of simulated liquidity."""
    await index
    if not options.holder_analysis or ready.sim is None:
        return None
    node = ready.node
    if not ready.emulated and not (await node.capabilities()).simulate_v1:
        return None
    try:
        memo = ready.trading.crowds if ready.trading is not None else None
        return await analyse_holders(
            node, deps.index.store, deps.holder_limit, ready.sim, pools, skip, memo
        )
    except MethodUnsupported:
        return None


async def owner_powers(deps: HoneypotDeps, ready: Prepared, options: Options) -> OwnerPowers | None:
    """The owner-power scan, concurrent with the journey (it runs its own baseline).

    None when the tier, the request or the config turned it off, for a pool that exists
    only in a simulation, or when the node cannot run eth_simulateV1 and ``ready`` is
    not emulating it (``Prepared.emulated``: one block, so future sells are not seen).
    """
    powers = deps.powers
    if not (powers.enabled and owner_powers_enabled(options)) or ready.simulated:
        return None
    caps = await ready.node.capabilities()
    if ready.sim is None or not (ready.emulated or caps.simulate_v1):
        return None
    # the deployer is looked up only as the node can tell it (Otterscan, kept state)
    bounds = replace(powers.bounds, otterscan=caps.otterscan, state_floor=caps.state_floor())
    return await scan(ready.sim, ready.node.id, powers.cache, bounds)

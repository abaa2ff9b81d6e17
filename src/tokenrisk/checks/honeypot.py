"""IsHoneypot: can this token be sold after buying it, and at what cost?

Step by step: the target is resolved (:mod:`.target`) and the holder index refreshed in
the background (:mod:`.top_holders`); the pool is chosen or simulated (:mod:`.venue`)
and the trade made ready (:mod:`.trade`); then everything is measured on it at once
(:func:`measure`): the journey, the call trace (:mod:`.verification`), the token facts
(:mod:`.venue`), the holder sells and the airdrop (:mod:`.holder_sells`) and the
owner-power scan; the rubric (:mod:`tokenrisk.risk`) gives the verdict.  The request
waits for the longest chain of round trips, not their sum.

Runs under the request deadline set by the API layer; node failures surface as the
typed errors of :mod:`tokenrisk.errors`.  Hostile tokens never raise: they become a
verdict (see ``risk``) or a ``simulationError``.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk import risk
from tokenrisk.chain.abi import parse_address
from tokenrisk.chain.head import ChainHead
from tokenrisk.checks.deps import EVERY_ANALYSIS, HoneypotDeps, Options, owner_powers_enabled
from tokenrisk.checks.holder_sells import airdrop, holder_sells, read_holders_early
from tokenrisk.checks.results import HoneypotResult
from tokenrisk.checks.speculation import at_head
from tokenrisk.checks.target import Target, early_token_work, pick_pool, started_early
from tokenrisk.checks.tasks import finish
from tokenrisk.checks.top_holders import index_ahead, refresh_index
from tokenrisk.checks.trade import Prepared, emulating, run_journey, slot_ahead
from tokenrisk.checks.venue import (
    base_info,
    count_ahead,
    counted,
    ready_pool,
    token_info,
    traded_created,
)
from tokenrisk.checks.verification import code_report
from tokenrisk.findings import OwnerPowers
from tokenrisk.model import Analysis, Pool, evolve
from tokenrisk.simulate.powers import reads_ahead, scan, unchecked

# THE CHECK


async def is_honeypot(
    deps: HoneypotDeps,
    address: str,
    chain_id: int | None,
    pair: str | None,
    liquidity: str = "never",
    options: Options = EVERY_ANALYSIS,
    router: str | None = None,
) -> HoneypotResult:
    """The analysis of one token and the verdict on it.

    ``liquidity``: "never", "if_missing" (simulate a pool only when none exists) or
    "always" (simulate one even when pools exist).  ``router``: only pools traded
    through it.  ``options.holder_analysis`` false: no holder sells are simulated.  The
    owner-power scan runs alongside when ``options`` and the config allow it.

    Raises NoPairsFound when there is no pool to trade on (and none could be simulated).
    """
    token = parse_address(address)
    pair_address = parse_address(pair) if pair else None
    router_address = parse_address(router) if router else None

    async def at(target: Target, head: ChainHead | None) -> HoneypotResult:
        pool = pick_pool(target, pair_address, token, router_address)
        analysis = await analyse(deps, target, pool, head, liquidity, options)
        if target.unsearched is not None:  # a node's log cap hid part of the V4 history
            unchecked = (*analysis.unchecked, target.unsearched.sentence)
            analysis = replace(analysis, unchecked=unchecked)
        verdict = risk.assess(analysis)
        return HoneypotResult(analysis, verdict, target.chain, target.node.fork_block)

    # the target and the head: remembered ones confirmed beside the check, or read first;
    # the holder index refreshed from the moment a search confirms the token
    if chain_id is not None:  # a first index's logs asked beside the head read
        index_ahead(deps.index, deps.nodes.select(chain_id)[0], token, deps.trading.ahead)
        token_reads_ahead(deps, chain_id, token, options)
    async with early_token_work(lambda node, t: refresh_index(deps.index, node, t)):
        return await at_head(deps.nodes, deps.trading, token, chain_id, at)


def token_reads_ahead(deps: HoneypotDeps, chain_id: int, token: str, options: Options) -> None:
    """A token's reads that need only its address and a block, asked at the head the
    chain's node read less than ``Trading.ahead`` of a block interval ago, beside the check's own
    head read and the search that confirms the token (issue #27: a first check's
    large sells and delayed sells waited a round trip for the balance layout, and its
    owner-power screen and trials for the scan's facts): the balance-layout search
    (:func:`~tokenrisk.checks.trade.slot_ahead`) and a first scan's facts, role grants
    and supply (:func:`~tokenrisk.simulate.owners.reads_ahead`).  Each is used only by a
    check that then runs at that very head; a chain that moved meanwhile wastes them."""
    node = deps.nodes.select(chain_id)[0]
    head = node.recent(deps.trading.ahead)
    if head is None:
        return
    slot_ahead(node, deps.trading, token, head)
    powers, caps = deps.powers, node.known_capabilities
    if powers.enabled and owner_powers_enabled(options) and caps and caps.simulate_v1:
        slots = powers.bounds.storage_slots
        history = (caps.otterscan, caps.state_floor())
        reads_ahead(node.rpc, powers.cache, node.id, token, head, slots, history)


# ONE TOKEN'S ANALYSIS


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
    index = started_early(target.node, target.token) or asyncio.create_task(
        refresh_index(deps.index, target.node, target.token)
    )
    pools = [*target.pools, pool] if pool is not None else list(target.pools)
    block = head.tag if head is not None else None  # the head the trade is pinned to
    read_holders_early(deps, target.node, target.token, (block, pools), (options, index))
    try:
        ready = await ready_pool(deps, target, pool, head, index, liquidity)
        return await measure(deps, ready, target.pools, index, options)
    finally:
        await finish(index)


# EVERYTHING MEASURED, CONCURRENTLY


async def measure(
    deps: HoneypotDeps,
    ready: Prepared,
    known: list[Pool],
    index: asyncio.Task[None],
    options: Options,
) -> Analysis:
    """The analysis of ``ready``'s trade; ``known``: the token's existing pools.

    The owner-power scan's result is kept in every state: on an armed honeypot it says
    who holds the trap (it runs from held positions when nobody can buy); the call
    trace only when the simulation ran.  When the trace would have been
    taken but the node cannot trace (no debug_traceCall), the analysis says so
    (``trace_unavailable``: an informational flag and a note, as the check was partial).
    """
    node, token, pool = ready.node, ready.route.token, ready.route.pool
    traced = (
        asyncio.create_task(code_report(ready, deps.verifier))
        if not ready.simulated and ready.failed is None
        else None
    )
    pools = [*known, pool]
    skip = {ready.made.provider} if ready.made else set()
    scans = await emulating(ready)  # the scans' simulations, through eth_call if need be
    ahead = count_ahead(deps, node, token, index)  # counted once the index is refreshed
    try:
        info, with_token, report, holders, launch, powers = await asyncio.gather(
            token_info(deps, ready),
            base_info(deps, node, pool.base_token),
            run_journey(ready, deps.trading.simulations),
            holder_sells(deps, scans, pools, skip, index, options),
            asyncio.gather(traded_created(deps, ready), airdrop(deps, ready, pools, index)),
            owner_powers(deps, scans, options),
        )
        # a trace covers one call, so a pool that exists only in a prelude cannot be traced
        code = await traced if traced is not None and report.success else None
        untraced = traced is not None and report.success and not await _can_trace(ready)
        info = await counted(deps, node, token, info, (index, ahead))
    finally:
        if traced is not None:
            await finish(traced)
        await finish(ahead)
    made, dropped = launch
    kept = powers
    return Analysis(
        token=evolve(info, airdrop=dropped),
        with_token=with_token,
        pool=made,
        simulation=report,
        code=code,
        holders=holders,
        whitelisted=token in node.chain.whitelist,
        owner_powers=kept,
        trace_unavailable=untraced,
        unchecked=tuple(dict.fromkeys([*report.unchecked, *unchecked(kept)])),
    )


async def _can_trace(ready: Prepared) -> bool:
    """Whether the node has debug_traceCall (probed once per node, kept)."""
    return (await ready.node.capabilities()).trace_call


# THE OWNER-POWER SCAN


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
    bounds = evolve(powers.bounds, otterscan=caps.otterscan, state_floor=caps.state_floor())
    return await scan(ready.sim, ready.node.id, powers.cache, bounds)

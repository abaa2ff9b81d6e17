"""Everything IsHoneypot measures on a prepared trade, concurrently.

The request waits for the longest chain of round trips, not their sum: the token's
metadata, the base token, the journey, the holder sells (once the index is fresh), the
pool's creation, the airdrop, the owner-power scan and the call trace all proceed
together.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk.checks.deps import HoneypotDeps, Options
from tokenrisk.checks.prepare import Prepared
from tokenrisk.checks.scans import airdrop, holder_sells, owner_powers, unchecked
from tokenrisk.checks.tasks import finish
from tokenrisk.checks.token_facts import base_info, counted, created, token_info
from tokenrisk.checks.trace import code_report
from tokenrisk.checks.trade import emulating, run_journey
from tokenrisk.model import Analysis, Pool


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
    try:
        info, with_token, report, holders, launch, powers = await asyncio.gather(
            token_info(node, token),
            base_info(deps, node, pool.base_token),
            run_journey(ready, deps.trading.simulations),
            holder_sells(deps, scans, pools, skip, index, options),
            asyncio.gather(
                created(node, pool, token, ready.simulated), airdrop(deps, ready, pools, index)
            ),
            owner_powers(deps, scans, options),
        )
        # a trace covers one call, so a pool that exists only in a prelude cannot be traced
        code = await traced if traced is not None and report.success else None
        untraced = traced is not None and report.success and not await _can_trace(ready)
    finally:
        if traced is not None:
            await finish(traced)
    made, dropped = launch
    kept = powers
    return Analysis(
        token=replace(await counted(deps, node, token, info), airdrop=dropped),
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

"""IsHoneypot: can this token be sold after buying it, and at what cost?

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
from tokenrisk.checks.analysis import analyse
from tokenrisk.checks.deps import EVERY_ANALYSIS, HoneypotDeps, Options
from tokenrisk.checks.prepare import head_of
from tokenrisk.checks.results import HoneypotResult
from tokenrisk.checks.target import Target, pick_pool, resolve


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
    target, head = await _target_and_head(deps, token, chain_id)
    pool = pick_pool(target, pair_address, token, router_address)
    analysis = await analyse(deps, target, pool, head, liquidity, options)
    if target.unsearched is not None:  # a node's log cap hid part of the V4 history
        unchecked = (*analysis.unchecked, target.unsearched.sentence)
        analysis = replace(analysis, unchecked=unchecked)
    verdict = risk.assess(analysis)
    return HoneypotResult(analysis, verdict, target.chain, target.node.fork_block)


async def _target_and_head(
    deps: HoneypotDeps, address: str, chain_id: int | None
) -> tuple[Target, ChainHead | None]:
    """The target, with the head block read alongside when the chain is known."""
    nodes = deps.nodes.select(chain_id)
    if chain_id is None:  # the chain is known only once resolved
        return await resolve(nodes, address), None
    return await asyncio.gather(resolve(nodes, address), head_of(nodes[0]))

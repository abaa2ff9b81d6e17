"""The simulated buyer's journey on a prepared pool, or the probe contract without
``eth_simulateV1``; a sell the router masked is explained by the token's own failure.

Shared by IsHoneypot and GetContractVerification; every run is counted in the metrics.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk import metrics
from tokenrisk.chain import dex
from tokenrisk.checks.prepare import Prepared
from tokenrisk.checks.reserves import token_side_short
from tokenrisk.errors import MethodUnsupported
from tokenrisk.model import SimulationReport
from tokenrisk.simulate.journey import simulate
from tokenrisk.simulate.probe import explain_sell_failure, probe_simulate


async def run_journey(ready: Prepared, simulations: asyncio.Semaphore) -> SimulationReport:
    """Buy -> transfer -> sell as a fresh EOA through the prepared pool (counted in the
    metrics); ``simulations`` bounds the journeys running at once in this process."""
    report = await _run_once(ready, simulations)
    sold = report.buy_ok and report.sell_ok
    outcome = "not_run" if not report.success else "sold" if sold else "blocked"
    metrics.simulation(ready.node.id, outcome)
    return report


async def _run_once(ready: Prepared, simulations: asyncio.Semaphore) -> SimulationReport:
    token_slot = ready.token_slot
    if ready.failed is not None or ready.sim is None or token_slot is None:
        return ready.failed or SimulationReport(success=False)
    try:
        report, journeyed = await _journey(ready, simulations)
        if not journeyed:
            return report
        slot = await token_slot
    finally:
        if not token_slot.done():
            token_slot.cancel()
        elif not token_slot.cancelled():
            token_slot.exception()  # retrieved: when the journey failed, it was not awaited
    if ready.simulated:
        report = replace(report, via_liquidity_simulation=True)
    if report.failure_step == "buy" and not ready.simulated and ready.sim is not None:
        report = _short(report, await _token_side(ready))
    if report.failure_step == "sell" and slot is not None and not ready.simulated:
        caps = await ready.node.capabilities()
        reserve = dex.token_reserve(ready.route.pool)
        amount = max(1, reserve // 1_000)
        detail = await explain_sell_failure(
            ready.node.rpc, ready.route, slot, amount, caps.trace_call
        )
        report = _explained(report, detail)
    return report


async def _journey(
    ready: Prepared, simulations: asyncio.Semaphore
) -> tuple[SimulationReport, bool]:
    """``(report, True)`` from the journey, or ``(report, False)`` when the node lacks
    eth_simulateV1: the probe's report, or why a simulated pool cannot be traded."""
    sim, pool, token_slot = ready.sim, ready.route.pool, ready.token_slot
    assert sim is not None and token_slot is not None
    caps = await ready.node.capabilities()
    async with simulations:
        try:
            if not caps.simulate_v1:  # known from the probe: skip the doomed call
                raise MethodUnsupported("eth_simulateV1 is not available on this node")
            base, reserve = dex.base_reserve(pool), dex.token_reserve(pool)
            return await simulate(sim, base, reserve, token_slot), True
        except MethodUnsupported:
            if ready.simulated:
                error = "liquidity simulation needs eth_simulateV1, which this node lacks"
                return SimulationReport(success=False, error=error), False
            amount = sim.settings.buy_amount(dex.base_reserve(pool))
            return await probe_simulate(sim.rpc, ready.route, ready.funding, amount), False


async def _token_side(ready: Prepared) -> str | None:
    assert ready.sim is not None
    rpc, route = ready.node.rpc, ready.route
    return await token_side_short(rpc, route.pool, route.token, ready.sim.base.tag)


def _short(report: SimulationReport, why: str | None) -> SimulationReport:
    """A failed buy explained by the pool's token side being short of its reserve: the
    reason names it and the note says that holders' sells decide the answer."""
    if why is None:
        return report
    reason = f"{report.failure_reason}; {why}" if report.failure_reason else why
    note = f"buys fail because {why}; the holders' sells decide whether the token can be sold"
    return replace(report, failure_reason=reason, notes=(*report.notes, note))


def _explained(report: SimulationReport, detail: str | None) -> SimulationReport:
    """Put the token's own failure first when a router masked it.

    E.g. ``out of gas (router: execution reverted: TransferHelper: TRANSFER_FROM_FAILED)``:
    the innermost failing frame is the true reason, the router's wrapper is kept after it.
    """
    router = report.failure_reason
    if not detail or (router and detail in router):
        return report
    return replace(report, failure_reason=f"{detail} (router: {router})" if router else detail)

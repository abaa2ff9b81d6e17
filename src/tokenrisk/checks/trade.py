"""The simulated buyer's journey on a prepared pool; a sell the router masked is
explained by the token's own failure.

Without ``eth_simulateV1`` the same journey runs through ``eth_call`` and the runner
contract (:mod:`tokenrisk.simulate.emulation`), with a note saying what that cannot see;
the single-call probe contract is the last resort when even that fails.

Shared by IsHoneypot and GetContractVerification; every run is counted in the metrics.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk import metrics
from tokenrisk.chain import dex
from tokenrisk.checks.prepare import Prepared
from tokenrisk.errors import MethodUnsupported, RpcError
from tokenrisk.model import SimulationReport
from tokenrisk.simulate.emulation import emulated, notes_of, one_block
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
    if report.failure_step == "sell" and slot is not None and not ready.simulated:
        caps = await ready.node.capabilities()
        reserve = dex.token_reserve(ready.route.pool)
        amount = max(1, reserve // 1_000)
        head = ready.sim.base if ready.sim is not None else None
        detail = await explain_sell_failure(
            ready.node.rpc, ready.route, slot, amount, caps.trace_call, head
        )
        report = _explained(report, detail)
    return report


async def _journey(
    ready: Prepared, simulations: asyncio.Semaphore
) -> tuple[SimulationReport, bool]:
    """``(report, True)`` from the journey (emulated over eth_call when the node lacks
    eth_simulateV1), or ``(report, False)``: the probe's report when even the emulation
    fails, or why a simulated pool cannot be traded."""
    sim, pool, token_slot = ready.sim, ready.route.pool, ready.token_slot
    assert sim is not None and token_slot is not None
    caps = await ready.node.capabilities()
    async with simulations:
        try:
            if not caps.simulate_v1:  # known from the probe: skip the doomed call
                raise MethodUnsupported("eth_simulateV1 is not available on this node")
            base, reserve = dex.base_reserve(pool), dex.token_reserve(pool)
            memo = ready.trading.journeys if ready.trading else None
            return await simulate(sim, base, reserve, token_slot, memo), True
        except MethodUnsupported:
            if ready.simulated:
                error = "liquidity simulation needs eth_simulateV1, which this node lacks"
                return SimulationReport(success=False, error=error), False
            try:
                return await _emulated(ready), True
            except RpcError:
                pass  # the node refuses the runner too: one probe call is all that is left
            amount = sim.settings.buy_amount(dex.base_reserve(pool))
            return await probe_simulate(
                sim.rpc, ready.route, ready.funding, amount, sim.base
            ), False


async def emulating(ready: Prepared) -> Prepared:
    """``ready`` with its simulator emulated over ``eth_call`` when the node lacks
    ``eth_simulateV1`` (for the holder sells and the owner-power scan); otherwise, or for
    a pool that exists only in a liquidity simulation, ``ready`` itself."""
    if ready.sim is None or ready.simulated or ready.emulated:
        return ready
    caps = await ready.node.capabilities()
    if caps.simulate_v1:
        return ready
    return replace(ready, sim=emulated(ready.sim, caps.call_block_overrides), emulated=True)


async def _emulated(ready: Prepared) -> SimulationReport:
    """The whole journey with every simulation run through the runner contract, then
    what one block hides checked apart (:func:`~tokenrisk.simulate.emulation.one_block`)."""
    assert ready.sim is not None and ready.token_slot is not None
    sim = emulated(ready.sim, (await ready.node.capabilities()).call_block_overrides)
    pool = ready.route.pool
    report = await simulate(sim, dex.base_reserve(pool), dex.token_reserve(pool), ready.token_slot)
    report = replace(report, notes=(*notes_of(sim), *report.notes))
    slot = await ready.token_slot
    if not report.buy_ok or slot is None:
        return report
    return await one_block(sim, slot, max(1, dex.token_reserve(pool) // 1_000), report)


def _explained(report: SimulationReport, detail: str | None) -> SimulationReport:
    """Put the token's own failure first when a router masked it.

    E.g. ``out of gas (router: execution reverted: TransferHelper: TRANSFER_FROM_FAILED)``:
    the innermost failing frame is the true reason, the router's wrapper is kept after it.
    """
    router = report.failure_reason
    if not detail or (router and detail in router):
        return report
    return replace(report, failure_reason=f"{detail} (router: {router})" if router else detail)

"""A simulated trade, shared by IsHoneypot and GetContractVerification: made ready (route,
funding, simulator, the token's balance slot), then run (the buyer's journey; a sell the
router masked is explained by the token's own failure).

What a trade needs is read once (the pool's head block, a registry base token's balance
slot per chain and token, the checked token's slot per head block) and the checked
token's own slot is searched in a task, so the first simulations of the journey need not
wait for it.

Without ``eth_simulateV1`` the same journey runs through ``eth_call`` and the runner
contract (:mod:`tokenrisk.simulate.emulation`), with a note saying what that cannot see;
the single-call probe contract is the last resort when even that fails.  Every journey
is counted in the metrics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from tokenrisk import metrics
from tokenrisk.chain import dex
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.checks.deps import Trading
from tokenrisk.checks.tasks import finish, given
from tokenrisk.errors import MethodUnsupported, RpcError, retrieved
from tokenrisk.model import Pool, SimulationReport
from tokenrisk.simulate.calls import BalanceSlot, Route, find_balance_slot
from tokenrisk.simulate.emulation import emulated, notes_of, one_block
from tokenrisk.simulate.journey import simulate
from tokenrisk.simulate.liquidity import SimulatedPool
from tokenrisk.simulate.probe import SellTrace, explain_sell_failure, probe_simulate
from tokenrisk.simulate.simulator import ChainHead, Funding, NodeLimits, SimSettings, Simulator

# READY


@dataclass
class Prepared:
    """What a journey needs, ready before it starts (the token's slot may be in flight).

    ``failed`` set: no journey can run, it is the report.  ``made``: the pool exists
    only inside this liquidity simulation (no trace, no explained failure).
    """

    node: Node
    route: Route
    funding: Funding
    sim: Simulator | None
    token_slot: asyncio.Future[BalanceSlot | None] | None
    failed: SimulationReport | None
    made: SimulatedPool | None = None
    emulated: bool = False
    """``sim`` runs its simulations through ``eth_call`` and the runner contract (the node
    lacks ``eth_simulateV1``: :func:`tokenrisk.checks.trade.emulating`)."""
    trading: Trading | None = None
    """The process's trading state (its memo of journey amounts), when a journey runs."""

    @property
    def simulated(self) -> bool:
        """The pool exists only in a liquidity simulation."""
        return self.made is not None

    @property
    def probe_amount(self) -> int:
        """The default buy size in this pool (what the probe and the trace buy)."""
        return SimSettings().buy_amount(dex.base_reserve(self.route.pool))


async def head_of(node: Node) -> ChainHead:
    """The head block the simulations start after (and are pinned to), with its base
    fee, gas limit and fee recipient: simulated blocks keep them."""
    return await node.head()


async def limits_of(node: Node) -> NodeLimits:
    """What the node allows a simulation, from its probed capabilities."""
    caps = await node.capabilities()
    return NodeLimits(
        max_blocks=caps.simulate_max_blocks, block_overrides=caps.call_block_overrides
    )


def _learner(node: Node) -> Callable[[int], None]:
    """Keeps a smaller block cap the node taught (see ``Simulator.run``) on the Node, so
    later checks plan within it from the start."""
    return node.learn_simulate_cap


def _failed(
    node: Node, route: Route, funding: Funding, error: str, made: SimulatedPool | None
) -> Prepared:
    report = SimulationReport(success=False, error=error)
    return Prepared(node, route, funding, None, None, report, made)


async def prepare(
    node: Node,
    trading: Trading,
    pool: Pool,
    token: str,
    simulated: SimulatedPool | None = None,
    head: ChainHead | None = None,
) -> Prepared:
    """Route, funding and simulator for ``pool``; the token's balance slot is searched in
    a task so that the journey's first simulations need not wait for it."""
    chain, made = node.chain, simulated
    route = Route(pool, dex.dex_of(chain, pool), token, pool.base_token)
    caps = await node.capabilities()
    if not caps.state_override:
        error = "node lacks eth_call state overrides: cannot fund a simulated buyer"
        return _failed(node, route, Funding(route.base, None), error, made)
    if simulated:
        head = simulated.head
    base_slot, at = await asyncio.gather(
        base_slot_of(node, trading, route.base), head_of(node) if head is None else given(head)
    )
    funding = Funding(route.base, base_slot)
    if base_slot is None and route.base != chain.wrapped_native.address:
        return _failed(
            node, route, funding, "cannot fund a simulated buyer with the base token", made
        )
    prelude = simulated.prelude if simulated else []
    base = simulated.base if simulated else at
    limits = await limits_of(node)
    sim = Simulator(
        node.rpc, route, at, funding, SimSettings(), prelude, base, limits, _learner(node)
    )
    if dex.base_reserve(pool) == 0:
        # only the base side makes a pool empty: a pool whose token side was taken away
        # still holds the buyers' money, and what trades through it do is the answer
        return _failed(node, route, funding, "insufficient liquidity: the pool is empty", made)
    found, known = slot_known(node, trading, token, sim)
    slot: asyncio.Future[BalanceSlot | None]
    if found:  # known without a request: the journey plans with it from its first step
        slot = asyncio.get_running_loop().create_future()
        slot.set_result(known)
    else:
        slot = asyncio.create_task(token_slot(node, trading, token, sim))
    sim.token_slot = slot
    sim.memo = trading.simulated
    return Prepared(node, route, funding, sim, slot, None, made, trading=trading)


async def token_slot(
    node: Node, trading: Trading, token: str, sim: Simulator
) -> BalanceSlot | None:
    """The checked token's balance slot verified at the simulations' block, searched
    once per block (by hash and number, as :meth:`Simulator.remembered` keeps the holder
    sells): the layout is a fact of that block's code and storage, and the search is
    three calls, the token's whole code among them, which a recomputed check at an
    unchanged head sent again for the same answer.  A plan with a prelude (simulated
    liquidity) or a block without a hash is searched every time; a search that fails
    (transport) is not kept."""
    base = sim.pinned
    if base is None:
        return await find_balance_slot(node.rpc, token, sim.base.tag, cache=trading.slots)
    key = (node.id, token.lower(), base.number, base.hash)
    early = trading.slots_ahead.value(key)
    if early is not None:  # the same search at this very block, asked already
        await asyncio.wait([early])
    found, slot = slot_known(node, trading, token, sim)  # it, taken once back
    if not found:
        slot = await find_balance_slot(node.rpc, token, base.tag, cache=trading.slots)
        trading.slots_at.put(key, slot)
    return slot


def slot_known(
    node: Node, trading: Trading, token: str, sim: Simulator
) -> tuple[bool, BalanceSlot | None]:
    """``(True, slot)`` when the checked token's slot at the simulations' block needs no
    request: verified there by an earlier check, or found there by the search asked
    ahead (:func:`slot_ahead`) and back already; else ``(False, None)``.  A first check's
    journey then has it before its first step, so the steps that give a wallet tokens by
    override (the large sells, the delayed sell by block count) go with its buy instead
    of waiting for the buy's reply (issue #27; a task, even one with nothing to wait
    for, finishes only a loop turn after the journey has planned)."""
    base = sim.pinned
    if base is None:
        return False, None
    key = (node.id, token.lower(), base.number, base.hash)
    found, slot = trading.slots_at.get(key)
    if found:
        return True, slot
    early = trading.slots_ahead.value(key)
    if early is None or not early.done():
        return False, None
    trading.slots_ahead.forget(key)
    took = not early.cancelled() and early.exception() is None
    metrics.sent_ahead(SLOT_AHEAD, took)
    if not took:
        return False, None  # the search failed: :func:`token_slot` searches again
    slot = early.result()
    trading.slots_at.put(key, slot)
    return True, slot


SLOT_AHEAD = "slot_ahead"
"""``tokenrisk_sent_ahead_total``'s ``planned`` for :func:`slot_ahead`."""


def slot_ahead(node: Node, trading: Trading, token: str, head: ChainHead) -> None:
    """A first check's balance-layout search asked now at ``head`` (a head read a moment
    ago, likely still the chain's), beside the check's own head read and the search that
    confirms the token (issue #27: the large-sell search and the delayed sells, which
    give a wallet tokens by override, waited a round trip for it after them).
    :func:`token_slot` takes it at that very head (number and hash); at another it is
    left to expire unread.  Not when the node lacks state overrides or the slot is known
    at that head."""
    caps = node.known_capabilities
    if caps is None or not caps.state_override or not head.hash:
        return
    key = (node.id, token.lower(), head.number, head.hash)
    if trading.slots_at.get(key)[0] or trading.slots_ahead.value(key) is not None:
        return
    search = asyncio.ensure_future(
        find_balance_slot(node.rpc, token, head.tag, cache=trading.slots)
    )
    search.add_done_callback(retrieved)
    trading.slots_ahead.put(key, search)


async def base_slot_of(node: Node, trading: Trading, base: str) -> BalanceSlot | None:
    """Balance slot of a registry base token, discovered once per chain and token.

    Base tokens come from the operator's registry (WETH, stablecoins), so their storage
    layout is trusted to stay put; the checked token's slot is always verified again
    (its layout is remembered per code hash, see :mod:`tokenrisk.simulate.slots`).
    """
    key = (node.id, base)
    found, slot = trading.base_slots.get(key)
    if not found:
        slot = await find_balance_slot(node.rpc, base)
        trading.base_slots.put(key, slot)
    return slot


async def warm_nodes(nodes: Nodes, trading: Trading) -> None:
    """What a first check would wait for, done at the service's start (the app's
    lifespan, beside everything else): every node's first connections, then every
    chain's registry base tokens' balance slots, so that the first check of a token
    paired with each base token does not spend two sequential round trips finding it
    before its buy can be funded.  The same search :func:`base_slot_of` makes, kept the
    same way.  Never raises: a node that cannot be reached, or has no state overrides,
    is searched at its first check as before."""
    await nodes.warm()
    await asyncio.gather(
        *(_warm_bases(n, trading) for n in nodes.select(None)), return_exceptions=True
    )


async def _warm_bases(node: Node, trading: Trading) -> None:
    if not (await node.capabilities()).state_override:
        return  # prepare() refuses such a node before it needs a slot
    bases = node.chain.base_tokens
    await asyncio.gather(*(base_slot_of(node, trading, b.address) for b in bases))


# THE JOURNEY


async def run_journey(
    ready: Prepared, simulations: asyncio.Semaphore, verdicts_only: bool = False
) -> SimulationReport:
    """Buy -> transfer -> sell as a fresh EOA through the prepared pool (counted in the
    metrics); ``simulations`` bounds the journeys running at once in this process.
    ``verdicts_only``: whether the buy and the sell go through, and why not, without the
    limits and the later sells (:func:`~tokenrisk.simulate.journey.simulate`)."""
    report = await _run_once(ready, simulations, verdicts_only)
    sold = report.buy_ok and report.sell_ok
    outcome = "not_run" if not report.success else "sold" if sold else "blocked"
    metrics.simulation(ready.node.id, outcome)
    return report


async def _run_once(
    ready: Prepared, simulations: asyncio.Semaphore, verdicts_only: bool
) -> SimulationReport:
    token_slot = ready.token_slot
    if ready.failed is not None or ready.sim is None or token_slot is None:
        return ready.failed or SimulationReport(success=False)
    trace = SellTrace(lambda: _why_sell_fails(ready))
    try:
        report, journeyed = await _journey(ready, simulations, trace, verdicts_only)
        if not journeyed:
            return report
        slot = await token_slot
        if ready.simulated:
            report = replace(report, via_liquidity_simulation=True)
        used = report.failure_step == "sell" and slot is not None and not ready.simulated
        if trace.early:
            metrics.sent_ahead(SELL_TRACE, used)
        if used:
            report = _explained(report, await trace.result())
    finally:
        trace.drop()
        if not token_slot.done():
            token_slot.cancel()
        elif not token_slot.cancelled():
            token_slot.exception()  # retrieved: when the journey failed, it was not awaited
    return report


SELL_TRACE = "sell_trace"
"""The failing sell's explanation asked as soon as the journey's sell failed
(:class:`~tokenrisk.simulate.probe.SellTrace`), counted in ``tokenrisk_sent_ahead_total``."""


async def _why_sell_fails(ready: Prepared) -> str | None:
    """The token's own words for a failed sell (:func:`explain_sell_failure`): a fresh
    wallet holding a thousandth of the pool's token reserve sends it to the pool.

    Its balance is given by override, so it needs the token's balance layout.  While
    that layout is being verified at this block (a new head: the search's round trip),
    the trace goes at once with the layout the token's last search verified, and is
    used when this search verifies the same one; otherwise it is asked again with the
    layout found (issue #27: a honeypot checked again at a new block paid a round trip
    for it after the search)."""
    token_slot = ready.token_slot
    assert token_slot is not None
    caps = await ready.node.capabilities()
    amount = max(1, dex.token_reserve(ready.route.pool) // 1_000)
    head = ready.sim.base if ready.sim is not None else None

    async def explain(slot: BalanceSlot) -> str | None:
        return await explain_sell_failure(
            ready.node.rpc, ready.route, slot, amount, caps.trace_call, head
        )

    last = ready.trading.slots.last_of(ready.route.token) if ready.trading else None
    early = None if token_slot.done() or last is None else asyncio.ensure_future(explain(last))
    try:
        slot = await token_slot
        if early is not None and slot == last:
            return await early
    finally:
        if early is not None:
            await finish(early)  # unread: a layout that no longer verifies
    return None if slot is None else await explain(slot)


async def _journey(
    ready: Prepared, simulations: asyncio.Semaphore, trace: SellTrace, verdicts_only: bool
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
            trading = ready.trading
            memo = trading.journeys if trading else None
            failed = None if ready.simulated else trace.start  # a simulated pool: no trace
            searches = trading.searches if trading else None
            report = await simulate(
                sim, base, reserve, token_slot, memo, failed, verdicts_only, searches
            )
            return report, True
        except MethodUnsupported:
            if ready.simulated:
                error = "liquidity simulation needs eth_simulateV1, which this node lacks"
                return SimulationReport(success=False, error=error), False
            try:
                return await _emulated(ready, verdicts_only), True
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


async def _emulated(ready: Prepared, verdicts_only: bool) -> SimulationReport:
    """The whole journey with every simulation run through the runner contract, then
    what one block hides checked apart (:func:`~tokenrisk.simulate.emulation.one_block`;
    for ``verdicts_only`` only after a failed sell, which it may find possible)."""
    assert ready.sim is not None and ready.token_slot is not None
    sim = emulated(ready.sim, (await ready.node.capabilities()).call_block_overrides)
    pool = ready.route.pool
    reserves = dex.base_reserve(pool), dex.token_reserve(pool)
    report = await simulate(sim, *reserves, ready.token_slot, verdicts_only=verdicts_only)
    report = replace(report, notes=(*notes_of(sim), *report.notes))
    slot = await ready.token_slot
    if not report.buy_ok or slot is None or (verdicts_only and report.sell_ok):
        return report  # a sold journey's second look finds only a same-block rule
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

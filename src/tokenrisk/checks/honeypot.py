"""One async function per endpoint: validate, gather chain data, simulate, judge, render.

Every function runs under the request deadline set by the API layer; node failures
surface as the typed errors of :mod:`tokenrisk.errors`.  Hostile tokens never raise:
they become a verdict (see ``risk``) or a ``simulationError``.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tokenrisk import metrics, risk
from tokenrisk.api import wire
from tokenrisk.chain import dex
from tokenrisk.chain.abi import checksum, parse_address
from tokenrisk.chain.head import read_head
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import is_contract, is_erc20, read_token
from tokenrisk.checks.holders import (
    airdrop_summary,
    analyse_holders,
    base_token_holders,
    largest_holders,
    refresh_index,
)
from tokenrisk.checks.search import on_every_chain
from tokenrisk.errors import (
    CallReverted,
    LiquidityError,
    MethodUnsupported,
    NoPairsFound,
    NotAToken,
    NotFoundError,
    ReplyTooDeep,
    ReplyTooLarge,
)
from tokenrisk.findings import OwnerPowers
from tokenrisk.holders.index import holder_count
from tokenrisk.model import (
    AirdropSummary,
    Analysis,
    CodeReport,
    HolderStats,
    Pool,
    SimulationReport,
    TokenInfo,
)
from tokenrisk.service import Service
from tokenrisk.simulate.calls import BalanceSlot, Route, find_balance_slot
from tokenrisk.simulate.engine import Funding, Head, SimSettings, Simulator
from tokenrisk.simulate.journey import simulate
from tokenrisk.simulate.liquidity import SimulatedPool, simulate_pool
from tokenrisk.simulate.powers import ScanBounds, scan
from tokenrisk.simulate.probe import (
    explain_sell_failure,
    is_precompile,
    probe_simulate,
    trace_journey,
    walk_calls,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """The chain, token and pools a request resolved to."""

    chain: Chain
    token: str
    pools: list[Pool]


async def _target_on(
    svc: Service, chain: Chain, address: str, require_token: bool = True
) -> Target | None:
    """The target on one chain, or None without code at ``address``.

    The code, the pair probe, the ERC-20 probe and the pools of ``address`` taken as a
    token are read at once (one round trip deep): most requests name a token, so only a
    pair address costs a second pool search, for the token it resolves to.
    """
    rpc = svc.client(chain.id)
    code, resolved, pools, erc20 = await asyncio.gather(
        rpc.call("eth_getCode", [address, "latest"]),
        dex.resolve_pair(rpc, chain, address),
        dex.find_pools(rpc, chain, address),
        is_erc20(rpc, address) if require_token else _given(True),
    )
    if len(code) <= 2:
        return None
    if resolved is None:
        if require_token and not erc20:
            raise NotAToken(
                f"{address} is a contract on {chain.name} but not an ERC-20 token "
                "(totalSupply() and balanceOf() do not answer); is it a router or a wallet?"
            )
        return Target(chain, address, pools)
    token = resolved[0]
    if require_token and chain.base_token(token) is not None:
        raise NotAToken(
            f"{address} is a DEX pool of two base tokens on {chain.name}, not a token; "
            "check one of the tokens traded against them instead"
        )
    if require_token and not await is_erc20(rpc, token):
        raise NotAToken(
            f"{address} is a contract on {chain.name} but not an ERC-20 token "
            "(totalSupply() and balanceOf() do not answer); is it a router or a wallet?"
        )
    return Target(chain, token, await dex.find_pools(rpc, chain, token))


async def resolve(
    svc: Service, address: str, chain_id: int | None, require_token: bool = True
) -> Target:
    """Find the token (or pair) on the given chain, or on every chain, deepest pool wins.

    Raises NotFoundError when no configured chain has a contract at ``address`` (an
    externally owned account or an unused address), NotAToken when the contract is not
    a token (unless ``require_token`` is False).
    """

    async def on(chain: Chain) -> Target | NotAToken | None:
        try:
            return await _target_on(svc, chain, address, require_token)
        except NotAToken as exc:  # a token on another chain still wins
            return exc

    search = await on_every_chain(svc.chains_for(chain_id), on)
    if search.down and not any(t for _, t in search.answers):
        raise search.down[0][1]  # "no contract" only when every chain answered that
    found = [t for _, t in search.skip_down() if t is not None]
    targets = [t for t in found if isinstance(t, Target)]
    if not targets:
        not_tokens = [t for t in found if isinstance(t, NotAToken)]
        if not_tokens:
            raise not_tokens[0]
        raise NotFoundError(
            f"{address} is not a contract on the configured chains "
            "(an externally owned account or an unused address): nothing to check"
        )
    return max(targets, key=lambda t: t.pools[0].depth if t.pools else -2.0)


def _pick_pool(
    target: Target, pair: str | None, address: str, router: str | None = None
) -> Pool | None:
    """The pool a check trades on: ``pair`` (or the pair given as ``address``) when set,
    else the deepest pool, among the pools traded through ``router`` when that is set.

    Raises NotFoundError when the requested pair or router has no pool of the token.
    """
    pools = target.pools
    if router is not None:
        pools = [p for p in pools if p.router.lower() == router.lower()]
        if not pools and target.pools:
            raise NotFoundError("the given router trades no pool of this token")
    wanted = pair or (address if any(p.address == address for p in pools) else None)
    if wanted is None:
        return pools[0] if pools else None
    for pool in pools:
        if pool.address == wanted:
            return pool
    raise NotFoundError("the given pair is not a pool of this token on a known DEX")


async def base_token_info(rpc: RpcClient, chain: Chain, address: str) -> TokenInfo:
    """A base token's metadata: symbol and decimals from the chain registry (which the
    operator vouches for), the name and supply from the chain."""
    info = await read_token(rpc, address)
    base = chain.base_token(address)
    if base is None:
        return info
    return replace(info, symbol=base.symbol, decimals=base.decimals, name=info.name or base.symbol)


def no_pairs_reason(chain: Chain) -> str:
    """What was searched, for the 404 "No pairs found" body."""
    bases = ", ".join(b.symbol for b in chain.base_tokens)
    dexes = ", ".join(f"{d.name} {d.version}" for d in chain.dexes) or "no DEX"
    return f"no pool of this token against {bases} on {dexes} (chain {chain.id})"


async def _head(rpc: RpcClient) -> Head:
    head = await read_head(rpc)
    return Head(head.number, head.timestamp)


Simulated = tuple[SimulationReport, Funding, Route, Simulator | None]


@dataclass
class Prepared:
    """What a journey needs, ready before it starts (the token's slot may be in flight)."""

    route: Route
    funding: Funding
    sim: Simulator | None
    token_slot: asyncio.Task[BalanceSlot | None] | None
    failed: SimulationReport | None  # set: no journey can run, this is the report


async def _prepare(
    svc: Service,
    chain: Chain,
    pool: Pool,
    token: str,
    simulated: SimulatedPool | None = None,
    head: Head | None = None,
) -> Prepared:
    """Route, funding and simulator for ``pool``; the token's balance slot is searched in
    a task so that the journey's first simulations need not wait for it."""
    rpc = svc.client(chain.id)
    route = Route(pool, dex.dex_of(chain, pool), token, pool.base_token)
    caps = await svc.capabilities(chain.id)
    if not caps.state_override:
        error = "node lacks eth_call state overrides: cannot fund a simulated buyer"
        funding = Funding(route.base, None)
        return Prepared(route, funding, None, None, SimulationReport(success=False, error=error))
    if simulated:
        head = simulated.head
    base_slot, at = await asyncio.gather(
        _base_slot(svc, chain, route.base), _head(rpc) if head is None else _given(head)
    )
    funding = Funding(route.base, base_slot)
    if base_slot is None and route.base != chain.wrapped_native.address:
        error = "cannot fund a simulated buyer with the base token"
        return Prepared(route, funding, None, None, SimulationReport(success=False, error=error))
    prelude = simulated.prelude if simulated else []
    sim = Simulator(rpc, route, at, funding, SimSettings(), prelude)
    if dex.base_reserve(pool) == 0 or dex.token_reserve(pool) == 0:
        error = "insufficient liquidity: the pool is empty"
        return Prepared(route, funding, None, None, SimulationReport(success=False, error=error))
    slot = asyncio.create_task(find_balance_slot(rpc, token, cache=svc.slot_cache))
    return Prepared(route, funding, sim, slot, None)


async def _given(value: T) -> T:
    return value


async def _simulate(
    svc: Service,
    chain: Chain,
    pool: Pool,
    token: str,
    simulated: SimulatedPool | None = None,
    prepared: Prepared | None = None,
) -> Simulated:
    """Buy -> transfer -> sell as a fresh EOA through ``pool`` (counted in the metrics)."""
    result = await _simulate_once(svc, chain, pool, token, simulated, prepared)
    report = result[0]
    sold = report.buy_ok and report.sell_ok
    metrics.simulation(chain.id, "not_run" if not report.success else "sold" if sold else "blocked")
    return result


async def _simulate_once(
    svc: Service,
    chain: Chain,
    pool: Pool,
    token: str,
    simulated: SimulatedPool | None = None,
    prepared: Prepared | None = None,
) -> Simulated:
    ready = prepared or await _prepare(svc, chain, pool, token, simulated)
    route, funding, sim = ready.route, ready.funding, ready.sim
    if ready.failed is not None or sim is None or ready.token_slot is None:
        return ready.failed or SimulationReport(success=False), funding, route, None
    try:
        outcome = await _journey(svc, chain, pool, sim, ready.token_slot, simulated)
        if not isinstance(outcome, SimulationReport):
            return outcome
        token_slot = await ready.token_slot
    finally:
        if not ready.token_slot.done():
            ready.token_slot.cancel()
    report = outcome
    if simulated:
        report = replace(report, via_liquidity_simulation=True)
    if report.failure_step == "sell" and token_slot is not None and not simulated:
        caps = await svc.capabilities(chain.id)
        reserve = dex.token_reserve(pool)
        report = await _explained(sim.rpc, route, token_slot, report, reserve, caps.trace_call)
    return report, funding, route, sim


async def _journey(
    svc: Service,
    chain: Chain,
    pool: Pool,
    sim: Simulator,
    token_slot: asyncio.Task[BalanceSlot | None],
    simulated: SimulatedPool | None,
) -> SimulationReport | Simulated:
    """The journey's report, or the whole answer when the node lacks eth_simulateV1."""
    caps = await svc.capabilities(chain.id)
    route, funding = sim.route, sim.funding
    async with svc.simulations:
        try:
            if not caps.simulate_v1:  # known from the probe: skip the doomed call
                raise MethodUnsupported("eth_simulateV1 is not available on this node")
            return await simulate(sim, dex.base_reserve(pool), dex.token_reserve(pool), token_slot)
        except MethodUnsupported:
            if simulated:
                error = "liquidity simulation needs eth_simulateV1, which this node lacks"
                return SimulationReport(success=False, error=error), funding, route, None
            amount = sim.settings.buy_amount(dex.base_reserve(pool))
            report = await probe_simulate(sim.rpc, route, funding, amount)
            return report, funding, route, None


async def _explained(
    rpc: RpcClient,
    route: Route,
    slot: BalanceSlot,
    report: SimulationReport,
    token_reserve: int,
    trace: bool,
) -> SimulationReport:
    """Put the token's own failure first when a router masked it.

    E.g. ``out of gas (router: execution reverted: TransferHelper: TRANSFER_FROM_FAILED)``:
    the innermost failing frame is the true reason, the router's wrapper is kept after it.
    """
    amount = max(1, token_reserve // 1_000)
    detail = await explain_sell_failure(rpc, route, slot, amount, trace)
    router = report.failure_reason
    if not detail or (router and detail in router):
        return report
    return replace(report, failure_reason=f"{detail} (router: {router})" if router else detail)


async def _base_slot(svc: Service, chain: Chain, base: str) -> BalanceSlot | None:
    """Balance slot of a registry base token, discovered once per chain and token.

    Base tokens come from the operator's registry (WETH, stablecoins), so their storage
    layout is trusted to stay put; the checked token's slot is always verified again
    (its layout is remembered per code hash, see :mod:`tokenrisk.slots`).
    """
    key = (chain.id, base)
    if key not in svc.base_slots:
        svc.base_slots[key] = await find_balance_slot(svc.client(chain.id), base)
    return svc.base_slots[key]


async def _simulated_pool(svc: Service, chain: Chain, token: str) -> SimulatedPool | str:
    """A pool made inside the simulation, or the reason it could not be made."""
    rpc = svc.client(chain.id)
    providers = await largest_holders(svc, chain, token, [])
    if not providers:
        return "no holder of this token can provide liquidity"
    slot, head = await asyncio.gather(
        _base_slot(svc, chain, chain.wrapped_native.address), _head(rpc)
    )
    try:
        return await simulate_pool(rpc, chain, token, providers[0], slot, head)
    except LiquidityError as exc:
        return str(exc)


async def code_report(
    svc: Service, chain: Chain, route: Route, funding: Funding, fresh: bool = False
) -> CodeReport | None:
    """Call tree of a probe buy+sell and the verification of every contract in it.

    None when the node cannot trace (no debug_traceCall), the traced call fails in the
    EVM, or the token makes the trace too big or deep to read.  Other node errors raise,
    so a flaky node never yields a cached answer without a code report.
    """
    if not (await svc.capabilities(chain.id)).trace_call:
        return None
    rpc = svc.client(chain.id)
    amount = SimSettings().buy_amount(dex.base_reserve(route.pool))
    try:
        tree = await trace_journey(rpc, route, funding, amount)
    except (CallReverted, MethodUnsupported, ReplyTooLarge, ReplyTooDeep):
        return None  # the token's own doing (or no tracer): no tree, nothing claimed
    probe = str(tree.get("to", "")).lower()
    calls = [c for c in walk_calls(tree) if not is_precompile(c.to_address)]
    token = route.token.lower()
    contracts = await _with_code(rpc, {c.to_address for c in calls if c.to_address != probe})
    statuses = await svc.verifier.statuses(chain.id, sorted(contracts | {token}), fresh=fresh)
    opened = {addr: status == "verified" for addr, status in statuses.items()}
    unknown = tuple(checksum(a) for a, status in statuses.items() if status == "unknown")
    return CodeReport(
        root_open_source=opened[token],
        root_unknown=statuses[token] == "unknown",
        unknown=unknown,
        open_source=all(opened.values()),
        is_proxy=any(c.call_type == "DELEGATECALL" and c.from_address == token for c in calls),
        has_proxy_calls=any(c.call_type == "DELEGATECALL" for c in calls),
        contracts_open_source={checksum(a): v for a, v in opened.items()},
        calls=tuple(
            replace(c, from_address=checksum(c.from_address), to_address=checksum(c.to_address))
            for c in calls
        ),
    )


async def _with_code(rpc: RpcClient, addresses: set[str]) -> set[str]:
    """The addresses that hold code: only contracts can be verified (EOAs, such as wallets
    paid in ETH during a sell, are not contracts and are never listed)."""
    ordered = sorted(addresses)
    flags = await is_contract(rpc, ordered) if ordered else []
    return {a for a, has_code in zip(ordered, flags, strict=True) if has_code}


@dataclass(frozen=True)
class Options:
    """What a check may do for the caller's tier (``tokenrisk.tiers``); default: everything.

    Hashable, so the API puts it in the results-cache key: two tiers never share an answer
    that one of them may not see.
    """

    holder_analysis: bool = True  # real holders sell in simulation (holderAnalysis)
    owner_powers: bool = True  # the owner-power scan; see owner_powers_enabled


def owner_powers_enabled(options: Options) -> bool:
    """Whether this check may run the owner-power scan (the tier switch ``owner_powers``,
    also turned off per request by ``?ownerPowers=false``)."""
    return options.owner_powers


async def analyse(
    svc: Service,
    address: str,
    chain_id: int | None,
    pair: str | None,
    liquidity: str = "never",
    options: Options = Options(),
    router: str | None = None,
) -> tuple[Analysis, Chain]:
    """Everything measured for one token.  ``liquidity``: "never", "if_missing" (simulate
    a pool only when none exists) or "always" (simulate one even when pools exist).
    ``router``: only pools traded through it.

    Independent work runs concurrently, so the request waits for the longest chain of
    round trips, not their sum: after the target is resolved (with the head block read
    alongside), the token's metadata, the holder-index refresh, the pool's creation
    event, the journey, the call trace and the holder sells all proceed together (the
    holder sells wait for the index only).  ``options.holder_analysis`` false: no holder
    sells are simulated (no holderAnalysis).  The owner-power scan runs alongside when
    ``owner_powers_enabled(options)`` and the config's ``owner_powers.enabled`` allow; it
    is kept only when the journey's buyer could buy and sell.

    Raises NoPairsFound when there is no pool to trade on (and none could be simulated).
    """
    target, head = await _target_and_head(svc, address, chain_id)
    chain = target.chain
    pool = _pick_pool(target, pair, address, router)
    index = asyncio.create_task(refresh_index(svc, chain.id, target.token))
    try:
        return await _analyse_target(svc, target, pool, head, index, liquidity, options), chain
    finally:
        await _finish(index)


async def _target_and_head(
    svc: Service, address: str, chain_id: int | None
) -> tuple[Target, Head | None]:
    if chain_id is None:  # the chain is known only once resolved
        return await resolve(svc, address, chain_id), None
    return await asyncio.gather(resolve(svc, address, chain_id), _head(svc.client(chain_id)))


async def _finish(task: asyncio.Task[Any]) -> None:
    """Wait for a background task on the way out (cancelling it when it was not needed),
    so nothing outlives the request."""
    if not task.done():
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _no_pairs(
    svc: Service, target: Target, index: asyncio.Task[None], why: str = ""
) -> NoPairsFound:
    """The 404 for a token without a pool, with the token (holder count included)."""
    await index
    chain = target.chain
    token = await read_token(svc.client(chain.id), target.token)
    total = await holder_count(svc.store, chain.id, target.token)
    reason = no_pairs_reason(chain) + (f"; liquidity simulation: {why}" if why else "")
    return NoPairsFound(reason, replace(token, total_holders=total))


async def _analyse_target(
    svc: Service,
    target: Target,
    pool: Pool | None,
    head: Head | None,
    index: asyncio.Task[None],
    liquidity: str,
    options: Options,
) -> Analysis:
    chain, rpc = target.chain, svc.client(target.chain.id)
    simulated: SimulatedPool | None = None
    if liquidity == "always" or (liquidity == "if_missing" and pool is None):
        await index  # the liquidity provider is the largest indexed holder
        made = await _simulated_pool(svc, chain, target.token)
        if isinstance(made, str):
            raise await _no_pairs(svc, target, index, made)
        simulated, pool = made, made.pool
    if pool is None:
        raise await _no_pairs(svc, target, index)
    prepared = await _prepare(svc, chain, pool, target.token, simulated, head)
    traced = (
        asyncio.create_task(code_report(svc, chain, prepared.route, prepared.funding))
        if simulated is None and prepared.failed is None
        else None
    )
    pools = [*target.pools, pool]
    try:
        token, with_token, simulation, holders, launch, powers = await asyncio.gather(
            read_token(rpc, target.token),
            _base_info(svc, chain, pool.base_token),
            _simulate(svc, chain, pool, target.token, simulated, prepared),
            _holders(svc, chain, prepared, pools, simulated, index, options),
            asyncio.gather(
                _created(svc, chain, pool, target.token, simulated),
                _airdrop(svc, chain, target.token, pools, index),
            ),
            _owner_powers(svc, chain, prepared, simulated, options),
        )
        report = simulation[0]
        # a trace covers one call, so a pool that exists only in a prelude cannot be traced
        code = await traced if traced is not None and report.success else None
    finally:
        if traced is not None:
            await _finish(traced)
    total = await holder_count(svc.store, chain.id, target.token)
    created, airdrop = launch
    return Analysis(
        token=replace(token, total_holders=total, airdrop=airdrop),
        with_token=with_token,
        pool=created,
        simulation=report,
        code=code,
        holders=holders,
        whitelisted=target.token in chain.whitelist,
        owner_powers=powers if report.buy_ok and report.sell_ok else None,
    )


async def _airdrop(
    svc: Service, chain: Chain, token: str, pools: list[Pool], index: asyncio.Task[None]
) -> AirdropSummary | None:
    """``token.airdropSummary`` once the index is fresh (it reads the indexed transfers)."""
    await index
    return await airdrop_summary(svc, chain, token, pools)


async def _holders(
    svc: Service,
    chain: Chain,
    prepared: Prepared,
    pools: list[Pool],
    simulated: SimulatedPool | None,
    index: asyncio.Task[None],
    options: Options,
) -> HolderStats | None:
    """Holder sells once the index is fresh; None when no journey can run, or when the
    node cannot simulate (the journey then falls back to the probe contract)."""
    await index
    if not options.holder_analysis or prepared.sim is None:
        return None
    if not (await svc.capabilities(chain.id)).simulate_v1:
        return None
    provider = {simulated.provider} if simulated else set()
    try:
        return await analyse_holders(svc, chain, prepared.sim, pools, provider)
    except MethodUnsupported:
        return None


async def _created(
    svc: Service, chain: Chain, pool: Pool, token: str, simulated: SimulatedPool | None
) -> Pool:
    """The pool with its creation time and transaction (unchanged for a pool that exists
    only in a simulation).  The events are looked up by the checked ``token``, never by
    the base token (WETH has countless pools)."""
    if simulated is not None:
        return pool
    rpc = svc.client(chain.id)
    return (await dex.with_creation(rpc, [pool], await dex.creations(rpc, chain, token)))[0]


async def _base_info(svc: Service, chain: Chain, base: str) -> TokenInfo:
    """:func:`base_token_info`, read once per chain and token (registry base tokens are
    the operator's well-known WETH and stablecoins; their total supply is not shown),
    with its holder count where the index has it (read every time: it changes)."""
    key = (chain.id, base)
    if key not in svc.base_infos:
        svc.base_infos[key] = await base_token_info(svc.client(chain.id), chain, base)
    holders = await base_token_holders(svc, chain, base)
    return replace(svc.base_infos[key], total_holders=holders)


async def _owner_powers(
    svc: Service,
    chain: Chain,
    prepared: Prepared,
    simulated: SimulatedPool | None,
    options: Options,
) -> OwnerPowers | None:
    """The owner-power scan, concurrent with the journey (it runs its own baseline).

    None when the tier, the request or the config turned it off, for a pool that exists
    only in a simulation, or when the node cannot run eth_simulateV1.
    """
    config = svc.settings.owner_powers
    if not (config.enabled and owner_powers_enabled(options)) or simulated is not None:
        return None
    if prepared.sim is None or not (await svc.capabilities(chain.id)).simulate_v1:
        return None
    bounds = ScanBounds(
        max_functions=config.max_functions,
        max_callers=config.max_callers,
        max_arg_sets=config.max_arg_sets,
        max_trials=config.max_trials,
        # never the reason a check misses its own deadline: the scan gives up first
        deadline=min(config.deadline, svc.settings.deadline / 3),
    )
    return await scan(prepared.sim, chain.id, svc.powers, bounds)


async def is_honeypot(
    svc: Service,
    address: str,
    chain_id: int | None,
    pair: str | None,
    liquidity: str = "never",
    options: Options = Options(),
    router: str | None = None,
) -> dict[str, Any]:
    """The IsHoneypot body; ``router`` narrows the pools to those it trades (optional)."""
    pair_address = parse_address(pair) if pair else None
    router_address = parse_address(router) if router else None
    analysis, chain = await analyse(
        svc, parse_address(address), chain_id, pair_address, liquidity, options, router_address
    )
    verdict = risk.assess(analysis)
    return wire.dump(wire.honeypot_response(analysis, verdict, chain))


async def _pairs_on(svc: Service, chain: Chain, token: str) -> list[Pool]:
    """Base-token pools, then pools against other tokens, all with their creation data."""
    rpc = svc.client(chain.id)
    base, found = await asyncio.gather(
        dex.find_pools(rpc, chain, token), dex.creations(rpc, chain, token)
    )
    others = await dex.other_pools(rpc, chain, token, found, base)
    return await dex.with_creation(rpc, [*base, *others], found)


async def get_pairs(
    svc: Service, address: str, chain_id: int | None, limit: int = 10
) -> list[dict[str, Any]]:
    """The ``limit`` first pairs of the token (all chains merged) in :func:`rank_pools` order."""
    token = parse_address(address)
    chains = svc.chains_for(chain_id)
    search = await on_every_chain(chains, lambda c: _pairs_on(svc, c, token))
    pools = rank_pools([p for _, ps in search.skip_down() for p in ps], limit)
    keys = sorted({(p.chain_id, a) for p in pools for a in (p.token0, p.token1)})
    infos = await asyncio.gather(*(read_token(svc.client(c), a) for c, a in keys))
    symbols = {key: info.symbol for key, info in zip(keys, infos, strict=True)}
    return wire.dump_all(
        wire.pair_item(
            p, p.chain_id, (symbols[(p.chain_id, p.token0)], symbols[(p.chain_id, p.token1)])
        )
        for p in pools
    )


def rank_pools(pools: list[Pool], limit: int) -> list[Pool]:
    """The ``limit`` first pools: pools against registry base tokens before pools against
    other tokens; then USD liquidity descending (unknown liquidity last); then creation
    time (older first, unknown last); then address.

    Every pool already carries its creation time (one batched ``eth_getLogs`` per factory
    reads them all, for ``CreatedAtTimestamp``), so ranking reads nothing more.
    """

    def order(p: Pool) -> tuple[bool, float, float, str]:
        created = p.created_at_timestamp
        return (not p.against_base, -p.depth, math.inf if created is None else created, p.address)

    return sorted(pools, key=order)[:limit]


async def contract_verification(
    svc: Service,
    address: str,
    chain_id: int | None,
    pair: str | None = None,
    router: str | None = None,
) -> dict[str, Any]:
    """GetContractVerification; ``pair`` / ``router`` choose the pool whose buy and sell
    are traced (the deepest when omitted)."""
    root = parse_address(address)
    chains = svc.chains_for(chain_id)
    search = await on_every_chain(chains, lambda c: is_contract(svc.client(c.id), [root]))
    if search.down and not any(flags[0] for _, flags in search.answers):
        raise search.down[0][1]  # "not a contract" only when every chain answered that
    on = [c for c, flags in search.skip_down() if flags[0]]
    if not on:
        reason = "there is no contract at this address on the configured chains"
        return wire.dump(wire.verification_response(False, False, None, reason=reason))
    target = await resolve(svc, root, on[0].id if len(on) == 1 else None, require_token=False)
    chain = target.chain
    root_status = await svc.verifier.status(chain.id, root, fresh=True)
    root_open = root_status == "verified"
    unknown = [checksum(root)] if root_status == "unknown" else []
    pool = _pick_pool(target, parse_address(pair) if pair else None, root, router)
    if pool is None:
        reason = "no pool of the token was found, so no buy and sell could be traced"
        return wire.dump(wire.verification_response(True, root_open, None, unknown, reason))
    report, funding, route, _ = await _simulate(svc, chain, pool, target.token)
    failed = untraceable(report)
    if failed is not None:
        return wire.dump(wire.verification_response(True, root_open, None, unknown, failed))
    code = await code_report(svc, chain, route, funding, fresh=True)
    return wire.dump(wire.verification_response(True, root_open, code, unknown))


def untraceable(report: SimulationReport) -> str | None:
    """Why a buy and sell cannot be traced for the call tree (None: they can)."""
    if not report.success:
        return f"the buy and sell could not be simulated: {report.error or 'unknown reason'}"
    for step, ok in (("buy", report.buy_ok), ("sell", report.sell_ok)):
        if not ok:
            why = report.failure_reason if report.failure_step == step else None
            return f"the simulated {step} failed" + (f": {why}" if why else "")
    return None

"""The owner-power scan: try every privileged function on a buyer, in the node.

Today's buy and sell cannot show a trap the owner arms tomorrow, so the scan does what
the owner could do and watches a buyer.  Phases:

1. FUNCTIONS: evmole reads selectors, argument types and mutability from the token's
   runtime code (and from its EIP-1967 implementation's); state-changing functions
   beyond the plain ERC-20 surface are candidates.  Names come from a bundled selector
   table and are only shown, never used to decide anything.
2. CALLERS: addresses returned by owner-style getters, held in the first storage slots
   or the EIP-1967 admin slot, a role admin, and the deployer (k-ary search of
   ``eth_getCode`` over history).  Only EOAs are impersonated: a contract owner (a
   timelock, a multisig) acts through its own code, which the scan does not fake.
3. SCREEN: one batch of ``eth_call``s (function x caller x hostile argument set, see
   :mod:`.hostile`) keeps the calls the caller can actually make.
4. TRY: one JSON-RPC batch of ``eth_simulateV1`` runs: a baseline, four future sells
   (1 h, 1 d, 7 d, 30 d: time bombs) and one trial per surviving call; each trial is
   classified against the baseline (:mod:`.effects`).

A Uniswap V4 pool's hook runs on every swap, so when the chosen pool has one the hook
is scanned like the token: its callers are found by the same rules (``foundBy`` says
"hook ..."), its functions screened and tried in the same batch (called on the hook),
and a finding it shows names the hook in its detail and evidence.

Everything is bounded (:class:`ScanBounds`: functions, callers, argument sets, trials, a
deadline) and results are cached per code hash, caller set and pool
(:class:`PowerCache`).  Errors never escape: the result says the scan could not run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.chain.signatures import OWNER
from tokenrisk.errors import RpcError, TokenRiskError
from tokenrisk.findings import (
    FINDINGS,
    SEVERITIES,
    Caller,
    Evidence,
    FutureSell,
    OwnerPowers,
    PowerFinding,
    controlled,
)
from tokenrisk.simulate import owners
from tokenrisk.simulate.effects import Classifier, Effect, comparable, holding
from tokenrisk.simulate.owners import DEAD, Facts, PowerCache
from tokenrisk.simulate.owners import reads_ahead as reads_ahead  # the check asks them
from tokenrisk.simulate.simulator import Outcome, Plan, Simulator, sells_ahead
from tokenrisk.simulate.story import (
    SHRINK,
    Story,
    Targets,
    amounts,
    balance_slot,
    count_ahead,
    count_curve,
    count_dumps,
    count_held,
    count_pairs,
    count_reads,
    curve_story,
    dump_plan,
    fresh_targets,
    future_plan,
    held_story,
    new_targets,
    owned,
    story_plans,
    supplied,
    with_supply,
)
from tokenrisk.simulate.trials import (
    DUMP_CAP,
    Guards,
    Screened,
    Trial,
    backdoors,
    candidates_of,
    functions_of,
    guard_values,
    hook_static_findings,
    is_switch,
    layout_ahead,
    likely_dumps,
    likely_pairs,
    screen,
    screen_calls,
    selectors_of,
    static_findings,
    two_steps,
)
from tokenrisk.simulate.trials import ScanBounds as ScanBounds

FUTURE = (("1h", 3_600), ("1d", 86_400), ("7d", 7 * 86_400), ("30d", 30 * 86_400))
# SCAN


async def scan(
    sim: Simulator,
    chain_id: int,
    cache: PowerCache,
    bounds: ScanBounds | None = None,
) -> OwnerPowers:
    """Scan the simulator's token for owner powers; never raises for a token's behaviour."""
    bounds = bounds or ScanBounds()
    try:
        async with asyncio.timeout(bounds.deadline):
            return await _scan(sim, chain_id, cache, bounds)
    except TimeoutError:
        return OwnerPowers(scanned=False, error="the owner-power scan ran out of time")
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise  # the check itself was stopped (its deadline, its client gone)
        # a step it awaited was stopped by another (a bug, never the token's doing): the
        # check still answers, without the scan, instead of failing the request
        return OwnerPowers(scanned=False, error="the owner-power scan failed (a step was stopped)")
    except TokenRiskError as exc:
        kind = type(exc).__name__
        return OwnerPowers(scanned=False, error=f"the owner-power scan failed ({kind})")


async def _scan(
    sim: Simulator, chain_id: int, cache: PowerCache, bounds: ScanBounds
) -> OwnerPowers:
    # FUNCTIONS AND CALLERS (read once per head block: they are state at that block)
    hook, token = hook_of(sim), sim.route.token
    known = _known(sim, chain_id, cache, sim.route.token)
    # the scan's wallets and the token's supply go with the first reads when the facts
    # are new at this head (a remembered scan result then wastes one eth_call)
    wallets = new_targets(sim) if known is None else None
    # a token and pool never scanned: the amounts round (it needs only the wallets) goes
    # with the facts, the screen with the reads that find the callers, the trials on the
    # amounts round's story with the screen (a remembered result would waste them)
    first = wallets is not None and not cache.scanned(chain_id, token, sim.route.pool.address)
    taken = _taken(sim, chain_id, cache, token, first)
    supply = taken.supply if taken is not None else None
    early = asyncio.ensure_future(_with_supply(sim, wallets, first, supply)) if wallets else None
    bought = _bought(sim, wallets) if first and wallets else None
    ahead: Ahead | None = None
    going_on = False
    # a first scan of a pool with a hook: the hook's screen and trials go with the token's
    asked, on_hook_ahead = _hook_ahead_of(sim, chain_id, cache, bounds, hook, (early, bought))
    if asked is not None and taken is not None:
        taken.drop(supply=False)  # the hook's path asked the token's facts with the hook's
        taken = None
    reads = asked[0] if asked else (taken.facts, taken.grants) if taken else None
    try:
        ((facts, callers), ahead), hooked = await asyncio.gather(
            _facts(
                sim,
                chain_id,
                cache,
                bounds,
                token,
                (early, bought) if early and bought else None,
                reads,
            ),
            _hook_facts(sim, chain_id, cache, bounds, hook, asked[1] if asked else None),
        )
        key: tuple[object, ...] = (
            chain_id,
            _hash(facts.code),
            _hash(facts.impl_code),
            callers,
            sim.route.pool.address,
        )
        if hooked is not None:
            key += (hook, _hash(hooked[0].code), hooked[1])
        cached = await cache.lookup(key)
        if cached is not None:
            return cached
        # the functions only when the scan runs: a remembered result needs none of them
        functions, cut = functions_of(facts.code, facts.impl_code, bounds)
        # SCREEN
        targets = await (early if early is not None else fresh_targets(sim))
        going_on = True
    finally:
        if taken is not None:
            taken.drop(supply=False)  # read by the facts step by now, unless it failed
        for pending in (early, bought) if not going_on else (early,):
            if pending is not None and not pending.done():
                pending.cancel()
        if ahead is not None and not going_on:
            ahead.stop()
        if on_hook_ahead is not None and not going_on:
            _drop_hook_ahead(on_hook_ahead)
    # every caller is tried as a sender, contracts too (a multisig, a timelock: a node
    # simulates a call from any address); severities then respect their controls
    senders = [c.address for c in callers][: bounds.max_callers]
    # the amounts round needs only the wallets: it goes with the screen
    story = (
        ahead.story
        if ahead is not None
        else asyncio.ensure_future(
            owned(bought, facts.owner is not None)
            if bought is not None
            else amounts(sim, targets, facts.owner is not None)
        )
    )
    # the guards a static finding may name are read with the screen (a few words)
    guards = (
        ahead.guards
        if ahead is not None
        else asyncio.ensure_future(guard_values(sim, facts.code, facts.impl_code, facts.words))
    )
    try:
        if ahead is not None:  # a sender only the callers' reads found: its trials now
            ahead = _more_senders(sim, facts, ahead, senders, (targets, bounds))
        screened = ahead.screened if ahead is not None else None
        hook_known, hook_tried, nothing = await _hook_sent(on_hook_ahead)
        (trials, trimmed), (on_hook, hook_cut) = await asyncio.gather(
            screen(sim, functions, senders, targets, bounds, known=screened),
            _hook_screen(sim, hooked, hook, targets, bounds, hook_known),
        )
        # TRY
        selectors = selectors_of(facts.code, facts.impl_code)
        everything, shared = _within(trials, on_hook, bounds.max_trials)
        tried = ahead.tried if ahead is not None else None
        if hooked is not None:  # the hook's trials sent ahead too, or none used
            tried = _with_hook_tried(tried, hook_tried, nothing)
        held = ahead.held if ahead is not None and hooked is None else None
        result = await _try_all(
            sim, facts, targets, everything, (selectors, senders), (story, tried), held
        )
        names = {t.function.selector for t in trials}
        if result.scanned:
            found = await _static(sim, (facts, guards), hooked, hook, names, on_hook)
            result = _with_static(result, found)
    finally:
        # the amounts round too: a guessed screen's story waits on it shielded (_guessed)
        running: list[asyncio.Future[Any]] = [story, guards]
        for started in running + ([bought] if bought is not None else []):
            if not started.done():
                started.cancel()
        if ahead is not None and ahead.tried is not None:
            _drop_tried(ahead.tried[1])  # unless used (then done): not sent for nothing
        if ahead is not None and ahead.held is not None:
            _stop(ahead.held)
        if on_hook_ahead is not None:
            _drop_hook_ahead(on_hook_ahead)
    every = _merged(callers, hooked[1] if hooked else ())
    result = replace(
        result,
        callers=every,
        functions=len(functions) + hook_cut[0],
        findings=tuple(_with_control(result.findings, every)),
        bounded=cut or trimmed or shared or hook_cut[1] or len(callers) > len(senders),
    )
    await cache.store(key, result)
    cache.mark_scanned(chain_id, token, sim.route.pool.address)
    return result


async def _with_supply(
    sim: Simulator, targets: Targets, first: bool, supply: asyncio.Future[Any] | None = None
) -> Targets:
    """:func:`~.story.with_supply`; on a ``first`` scan on a request of its own
    (:func:`.owners.own_request`), as the facts: the screen's token amounts wait for it, and in
    the check's shared batch it would come back only after the amounts and journey
    simulations ran.  ``supply``: that read asked already, at this head
    (:func:`.owners.reads_ahead`)."""
    if supply is not None:
        return supplied(targets, await supply)
    if not first:
        return await with_supply(sim, targets)
    return supplied(targets, await owners.supply_alone(sim.rpc, sim.route.token, sim.base.tag))


async def _static(
    sim: Simulator,
    read: tuple[Facts, asyncio.Future[Guards]],
    hooked: tuple[Facts, tuple[Caller, ...]] | None,
    hook: str | None,
    tried: set[str],
    on_hook: Sequence[Trial],
) -> list[PowerFinding]:
    """The layout's capabilities of the token (its guards read already: ``read``) and
    of the pool's hook, read together."""
    facts, guards = read
    token = static_findings(sim, facts.code, facts.impl_code, tried, guards)
    if hooked is None or hook is None:
        return await token
    seen = {t.function.selector for t in on_hook}
    hooks = hook_static_findings(sim, hook, hooked[0].code, hooked[0].impl_code, seen)
    found = await asyncio.gather(token, hooks)
    return [*found[0], *found[1]]


def _taken(
    sim: Simulator, chain_id: int, cache: PowerCache, token: str, first: bool
) -> owners.ReadsAhead | None:
    """The reads asked for this first scan before its head was read
    (:func:`.owners.reads_ahead`), when they were asked at this scan's head; counted
    used or dropped.  A scan that is not a first one drops them."""
    if cache.ahead.value((chain_id, token.lower())) is None:
        return None
    taken = owners.taken_ahead(cache, chain_id, token, sim.base)
    if taken is not None and not first:
        taken.drop()
        taken = None
    count_reads(taken is not None)
    if taken is not None:
        taken.facts.add_done_callback(_layout_ahead)
    return taken


def _known(
    sim: Simulator, chain_id: int, cache: PowerCache, subject: str
) -> tuple[Facts, tuple[Caller, ...]] | None:
    return cache.facts_at(_at(sim, chain_id, subject))


def _at(sim: Simulator, chain_id: int, subject: str) -> tuple[object, ...]:
    return (chain_id, subject.lower(), sim.route.pool.address, sim.head.number, sim.head.timestamp)


async def _facts(
    sim: Simulator,
    chain_id: int,
    cache: PowerCache,
    bounds: ScanBounds,
    subject: str,
    early: Early | None = None,
    started: Reads | None = None,
) -> tuple[tuple[Facts, tuple[Caller, ...]], Ahead | None]:
    """The facts and callers of ``subject`` (the token, or the pool's hook), remembered
    per head block; with ``early`` (the scan's wallets and its amounts round, in
    flight), the screen and the trials sent ahead; ``started``: its facts and role
    grants already asked (:func:`_hook_ahead_of`)."""
    known = _known(sim, chain_id, cache, subject)
    if known is not None:
        return known, None
    found, ahead = await _facts_and_callers(sim, chain_id, cache, bounds, subject, early, started)
    cache.put_facts(_at(sim, chain_id, subject), found)
    return found, ahead


# THE POOL'S HOOK


def hook_of(sim: Simulator) -> str | None:
    """The hook contract of the chosen pool (a Uniswap V4 pool's key), if it has one."""
    hooks = sim.route.pool.hooks
    return hooks if sim.route.v4 and hooks and int(hooks, 16) else None


async def _hook_facts(
    sim: Simulator,
    chain_id: int,
    cache: PowerCache,
    bounds: ScanBounds,
    hook: str | None,
    started: Reads | None = None,
) -> tuple[Facts, tuple[Caller, ...]] | None:
    """The hook's facts and its callers (by the token's rules, ``foundBy`` "hook ...");
    ``started``: its facts and grants already asked."""
    if hook is None:
        return None
    (facts, callers), _ = await _facts(sim, chain_id, cache, bounds, hook, None, started)
    named = tuple(replace(c, found_by=tuple(f"hook {w}" for w in c.found_by)) for c in callers)
    return facts, named


async def _hook_screen(
    sim: Simulator,
    hooked: tuple[Facts, tuple[Caller, ...]] | None,
    hook: str | None,
    targets: Targets,
    bounds: ScanBounds,
    known: Screened | None = None,
) -> tuple[list[Trial], tuple[int, bool]]:
    """The hook's calls its callers can make, and (functions found, a bound cut it);
    ``known``: its calls screened ahead (:func:`_hook_ahead`)."""
    if hooked is None or hook is None:
        return [], (0, False)
    facts, callers = hooked
    functions, cut = functions_of(facts.code, facts.impl_code, bounds)
    senders = [c.address for c in callers][: bounds.max_callers]
    trials, trimmed = await screen(sim, functions, senders, targets, bounds, hook, known)
    return trials, (len(functions), cut or trimmed or len(callers) > len(senders))


def _within(token: list[Trial], hook: list[Trial], limit: int) -> tuple[list[Trial], bool]:
    """The token's and the hook's trials under one bound (:attr:`ScanBounds.max_trials`):
    each side keeps at least half of it when the other has more; True when any was cut."""
    if len(token) + len(hook) <= limit:
        return [*token, *hook], False
    on_hook = min(len(hook), max(limit // 2, limit - len(token)))
    return [*token[: limit - on_hook], *hook[:on_hook]], True


def _merged(token: Sequence[Caller], hook: Sequence[Caller]) -> tuple[Caller, ...]:
    """The token's callers, then the hook's; one entry per address, every way it was found."""
    out: dict[str, Caller] = {}
    for c in (*token, *hook):
        seen = out.get(c.address.lower())
        ways = (*seen.found_by, *c.found_by) if seen else c.found_by
        out[c.address.lower()] = replace(seen or c, found_by=tuple(dict.fromkeys(ways)))
    return tuple(out.values())


# THE HOOK'S SCREEN AND TRIALS, SENT WITH THE TOKEN'S (A FIRST SCAN)

Reads = tuple[asyncio.Future[Facts], asyncio.Future[list[tuple[str, str]]]]
"""A subject's facts and its role grants, asked (:func:`_reads`)."""
HookAhead = tuple[Screened, tuple[Story, asyncio.Future["Tried"]] | None, bool]
"""The hook's calls screened on its likely senders, its trials on the amounts round's
story (None: no story, or too many candidates) and whether it had no candidate at all
(nothing of the hook to try ahead: the token's trials sent ahead are then complete)."""


def _reads(sim: Simulator, subject: str, bounds: ScanBounds, alone: bool) -> Reads:
    """``subject``'s facts and role grants, asked now (``alone``: on a request of their own)."""
    rpc, tag = sim.rpc, sim.base.tag
    facts = asyncio.ensure_future(owners.read_facts(rpc, subject, bounds.storage_slots, tag, alone))
    facts.add_done_callback(_layout_ahead)
    return facts, asyncio.ensure_future(owners.role_grants(rpc, subject, tag))


def _layout_ahead(facts: asyncio.Future[Facts]) -> None:
    """The storage layout begun off the loop as the facts arrive (:func:`.trials.layout_ahead`)."""
    if not facts.cancelled() and facts.exception() is None:
        layout_ahead(facts.result().code, facts.result().impl_code)


def _hook_ahead_of(
    sim: Simulator,
    chain_id: int,
    cache: PowerCache,
    bounds: ScanBounds,
    hook: str | None,
    first: tuple[asyncio.Future[Targets] | None, asyncio.Future[Told] | None],
) -> tuple[tuple[Reads, Reads] | None, asyncio.Future[HookAhead] | None]:
    """On a first scan of a pool with a hook (V4), the token's and the hook's facts asked
    at once, and the hook's screen and trials started on them (:func:`_hook_ahead`):
    they waited for the hook's callers, then for its screen, two rounds after the
    token's screen and trials (issue #27).  Nothing when either's facts are remembered."""
    early, bought = first
    token = sim.route.token
    if hook is None or early is None or bought is None:
        return None, None
    if any(_known(sim, chain_id, cache, subject) is not None for subject in (token, hook)):
        return None, None
    started = (_reads(sim, token, bounds, True), _reads(sim, hook, bounds, True))
    plan = _hook_ahead(sim, hook, (started[0][0], *started[1]), bounds, (early, bought))
    return started, asyncio.ensure_future(plan)


async def _hook_ahead(
    sim: Simulator,
    hook: str,
    read: tuple[asyncio.Future[Facts], asyncio.Future[Facts], asyncio.Future[list[Any]]],
    bounds: ScanBounds,
    first: Early,
) -> HookAhead:
    """The hook's screen of the senders :func:`_likely` names without the deployer, and
    the trials of every candidate on the amounts round's story (the token's owner getter
    read as the token's scan does), sent as soon as the facts and that story are back.
    Used only where they are what the scan would send: the screen fills in the calls
    of a sender it missed (:func:`~.trials.screen`'s ``known``), the trials only when
    they ran every trial and on the story the scan uses (:func:`_from_tried`)."""
    token_read, hook_read, granted = read
    targets, bought = _shielded(first)
    facts, grants, wallets = await asyncio.gather(
        asyncio.shield(hook_read), asyncio.shield(granted), targets
    )
    likely = _likely(sim, facts, None, grants, bounds)
    functions, _ = functions_of(facts.code, facts.impl_code, bounds)
    candidates = candidates_of(functions, likely, wallets, bounds, hook)
    screening = asyncio.ensure_future(screen_calls(sim, candidates, likely))
    started: list[asyncio.Future[Any]] = [screening]
    tried: tuple[Story, asyncio.Future[Tried]] | None = None
    try:
        if candidates and trials_ahead(candidates, bounds):
            token_facts = await asyncio.shield(token_read)
            story = asyncio.ensure_future(owned(bought, token_facts.owner is not None))
            started.append(story)
            told = await _story_of(story)
            if told is not None:  # the backdoors are the token's (its senders): not here
                run = _tried_ahead(sim, token_facts, wallets, told, (candidates, []))
                tried = (told, asyncio.ensure_future(run))
        return await screening, tried, not candidates
    except BaseException:
        _stop_sent(started, tried)
        raise


async def _hook_sent(
    ahead: asyncio.Future[HookAhead] | None,
) -> HookAhead | tuple[None, None, bool]:
    """What :func:`_hook_ahead` sent (nothing when it was not started or failed: the
    hook is then screened and tried the usual way)."""
    if ahead is None:
        return None, None, False
    try:
        return await asyncio.shield(ahead)
    except TokenRiskError:  # a node's error on what was sent ahead: sent again the usual way
        return None, None, False


def _with_hook_tried(
    token: tuple[Story, asyncio.Future[Tried]] | None,
    hook: tuple[Story, asyncio.Future[Tried]] | None,
    nothing: bool,
) -> tuple[Story, asyncio.Future[Tried]] | None:
    """The token's trials sent ahead with the hook's, as one batch run on one story
    (None unless both ran on the same story: the scan then sends its batch);
    ``nothing``: the hook had no candidate to try ahead, the token's are used alone
    (where the hook's screen finds a call after all, :func:`_from_tried` drops them)."""
    if nothing:
        return token
    if token is None or hook is None or token[0] != hook[0]:
        return None
    return token[0], asyncio.ensure_future(_hook_joined(token[1], hook[1]))


async def _hook_joined(token: asyncio.Future[Tried], hook: asyncio.Future[Tried]) -> Tried:
    """The token's :class:`Tried` with the hook's trials, pairs and dumps added (the
    baseline, future sells and classifier the token's: the same story's)."""
    ran = await token
    try:
        more = await hook
    except TokenRiskError:
        return ran  # the hook's trials are then missing: the scan sends its batch
    return replace(
        ran,
        by_trial={**more.by_trial, **ran.by_trial},
        pairs=ran.pairs | more.pairs,
        dumps={**more.dumps, **ran.dumps},
    )


def _drop_hook_ahead(ahead: asyncio.Future[HookAhead]) -> None:
    """Stop the hook's screen and trials sent ahead (unless used: then done)."""
    if not ahead.done():
        ahead.cancel()
    elif not ahead.cancelled() and ahead.exception() is None:
        tried = ahead.result()[1]
        if tried is not None:
            _drop_tried(tried[1])
    ahead.add_done_callback(lambda f: f.cancelled() or f.exception())


@dataclass
class Ahead:
    """A first scan's screen and amounts round, sent with the reads that find the
    callers: ``screened`` covers the likely senders (:func:`_likely`); a sender found
    only by those reads is screened after them (:func:`~.trials.screen`)."""

    screened: Screened
    story: asyncio.Future[tuple[Story | None, tuple[str, ...]]]
    guards: asyncio.Future[Guards]
    """Every static guard's value (:func:`~.trials.guard_values`), read with the screen."""
    tried: tuple[Story, asyncio.Future[Tried]] | None = None
    """The amounts round's story and the trials of every likely candidate on it, sent
    with the screen (:func:`_tried_ahead`); None when the round found no story or there
    were too many candidates (:func:`trials_ahead`)."""
    held: asyncio.Future[Tried | None] | None = None
    """The same batch from held positions (:func:`_held_tried`), sent with it when the
    amounts round's sell failed (``Story.sells_fail``)."""
    senders: tuple[str, ...] = ()
    """The senders (lower case, in order) whose candidates ``tried`` ran: a sender the
    screen covers beyond them (past the bound) has its trials sent once it is screened
    (:func:`_more_senders`)."""
    callers: tuple[str, ...] = ()
    """The senders (lower case, in order) whose backdoors ``tried`` ran (the first
    :data:`~.trials.BACKDOOR_CALLERS`): every likely one, past the bound too."""

    def stop(self) -> None:
        self.story.cancel()
        self.guards.cancel()
        if self.tried is not None:
            _drop_tried(self.tried[1])
        if self.held is not None:
            _stop(self.held)


TrialKey = tuple[str, tuple[str, ...], str | None]
"""A trial's sender (lower case), calldata in order and target: equal keys, equal plans."""


@dataclass(frozen=True)
class Tried:
    """The scan's batch run with the screen on the amounts round's story: the baseline
    and future sells (``base``), each trial's outcome by :data:`TrialKey`, and the sells
    by block count."""

    story: Story
    base: list[Outcome | RpcError]
    by_trial: dict[TrialKey, Outcome | RpcError]
    counted: tuple[list[str | None], tuple[str, ...]]
    pairs: frozenset[TrialKey] = frozenset()
    """The two-step trials run with the others (:func:`~.trials.likely_pairs`): also in
    ``by_trial``, used by :func:`_paired` where the real pairing names them."""
    dumps: dict[tuple[TrialKey, int], Outcome | RpcError] = field(default_factory=dict)
    """Mint-and-dump sells run with the trials by (trial, amount sold)
    (:func:`~.trials.likely_dumps`), used by :func:`_dumped` where its job is the same."""
    seen: Classifier | None = None
    """The trials' outcomes classified against ``base``'s baseline as they came back
    (:func:`_classified_early`), while the check still waited on other replies; None
    when that baseline is not the one :func:`_try_all` classifies against."""


def _key_of(trial: Trial) -> TrialKey:
    return trial.key


def _stop_sent(
    started: Sequence[asyncio.Future[Any]], tried: tuple[Story, asyncio.Future[Tried]] | None
) -> None:
    """Stop what a screen-and-trials step sent ahead when that step itself fails or is
    cancelled (the token's and the hook's alike)."""
    for future in started:
        future.cancel()
    if tried is not None:
        _drop_tried(tried[1])


def _drop_tried(tried: asyncio.Future[Tried]) -> None:
    """Stop trials sent ahead that will not be used (their error, if any, seen)."""
    if not tried.done():
        tried.cancel()
    tried.add_done_callback(lambda f: f.cancelled() or f.exception())


async def _facts_and_callers(
    sim: Simulator,
    chain_id: int,
    cache: PowerCache,
    bounds: ScanBounds,
    subject: str,
    first: Early | None = None,
    started: Reads | None = None,
) -> tuple[tuple[Facts, tuple[Caller, ...]], Ahead | None]:
    """The subject's facts, its deployer and its role grants, read at once (none needs
    another); then, at once, which grants still hold and the code of everyone who can
    become a caller (with ``first``, the scan's wallets and its amounts round: the
    screen of the likely senders and the trials too); then who can call it."""
    rpc, tag = sim.rpc, sim.base.tag
    memo = (chain_id, subject.lower())
    last = cache.inputs.value(memo) if first is None else None
    # a scan seen before: its callers' reads go with the facts, planned from the last
    # scan's (used when this head's facts, deployer and grants are those)
    early = asyncio.ensure_future(_caller_reads(sim, subject, last, bounds)) if last else None
    reads, grants = started or _reads(sim, subject, bounds, first is not None)
    known = (cache, chain_id, subject)
    guess = (
        asyncio.ensure_future(_guessed(sim, (reads, grants), bounds, first, known))
        if first
        else None
    )
    # a first scan: the callers' reads that need no deployer go with the guess
    before = (
        asyncio.ensure_future(_reads_before(sim, subject, (reads, grants), bounds))
        if first
        else None
    )
    try:
        facts, deployer, granted = await asyncio.gather(
            reads,
            owners.deployer_once(
                rpc, chain_id, subject, cache, (bounds.otterscan, bounds.state_floor)
            ),
            grants,
        )
    except BaseException:
        for planned in (early, before):
            if planned is not None:
                _drop_early(planned)
        if guess is not None:
            _drop_guess(guess)
        raise
    inputs: owners.Inputs = (facts, deployer, tuple(granted))
    cache.inputs.put(memo, inputs)
    if early is not None and inputs != last:
        _drop_early(early)
        early = None
    likely = _likely(sim, facts, deployer, granted, bounds)
    if before is not None:
        early = asyncio.ensure_future(_with_deployer(sim, before, inputs, bounds))
    kept = _added_to(guess, likely)
    if kept is not None and first is not None:  # the deployer added a sender: widen the guess
        ahead: asyncio.Future[Ahead] | None = _widening(
            _widened(sim, facts, likely, bounds, (_shielded(first), kept)), kept[1]
        )
    else:
        ahead = _verified(guess, likely)
    if first and ahead is None:
        ahead = asyncio.ensure_future(_ahead(sim, facts, likely, bounds, first))
    try:
        # sent ahead too: the likely senders' control getters (multisig, timelock)
        roles, read, controls = await (
            early
            if early is not None
            else asyncio.gather(
                owners.roles_held(rpc, subject, tag, granted),
                owners.caller_reads(rpc, facts, deployer, sim, granted),
                owners.control_reads(rpc, likely if first else [], tag),
            )
        )
        found = await owners.callers(rpc, facts, deployer, sim, roles, read, controls)
        return (facts, found), (await ahead if ahead is not None else None)
    except BaseException:
        if ahead is not None:
            _drop_ahead(ahead)
        raise


Guess = tuple[list[str], asyncio.Future[Ahead]]
"""The likely senders known without the deployer, and the screen and trials sent on them."""


async def _guessed(
    sim: Simulator,
    read: tuple[asyncio.Future[Facts], asyncio.Future[list[tuple[str, str]]]],
    bounds: ScanBounds,
    first: Early,
    known: tuple[PowerCache, int, str],
) -> Guess:
    """A first scan's screen and trials (:func:`_ahead`) started once the facts and the
    role grants are back, on the senders :func:`_likely` names without the deployer
    unless its lookup is done (``known``: the cache, chain and subject; asked beside
    the check's head, :func:`~.owners.reads_ahead`): its reply
    (``ots_getContractCreator``) comes 5-20 ms after theirs on anvil, and the deployer
    is most often a sender they name already.  Used only when the deployer leaves the
    senders unchanged (:func:`_verified`)."""
    facts, granted = await asyncio.gather(*read)
    found, creator = owners.deployer_known(*known)
    likely = _likely(sim, facts, creator if found else None, granted, bounds)
    return likely, asyncio.ensure_future(_ahead(sim, facts, likely, bounds, _shielded(first)))


def _shielded(first: Early) -> Early:
    """The wallets (their supply read) and the amounts round as a guess awaits them:
    shielded, because a wrong guess is dropped (its task cancelled) and cancelling a task
    cancels the future it awaits, while the scan (or the next guess) still needs both."""
    targets, bought = first
    return asyncio.shield(targets), asyncio.shield(bought)


def _verified(
    guess: asyncio.Future[Guess] | None, likely: list[str]
) -> asyncio.Future[Ahead] | None:
    """The guessed screen and trials when their senders are ``likely`` (the deployer
    added nothing, and changed no order); otherwise dropped (None)."""
    if guess is None:
        return None
    if guess.done() and not guess.cancelled() and guess.exception() is None:
        guessed, ahead = guess.result()
        if guessed == likely:
            return ahead
        _drop_ahead(ahead)
        return None
    _drop_guess(guess)
    return None


def _drop_guess(guess: asyncio.Future[Guess]) -> None:
    """Stop a guess that will not be used (and what it started, once it started)."""
    if not guess.done():
        guess.cancel()
    elif not guess.cancelled() and guess.exception() is None:
        _drop_ahead(guess.result()[1])
    guess.add_done_callback(lambda f: f.cancelled() or f.exception())


def _added_to(guess: asyncio.Future[Guess] | None, likely: list[str]) -> Guess | None:
    """The guess, back already, when ``likely`` only adds senders to its own (most often
    the deployer, a sender no getter names): the rest in the guessed order.  None
    otherwise (the same senders: :func:`_verified` uses the guess as it is)."""
    if guess is None or not guess.done() or guess.cancelled() or guess.exception() is not None:
        return None
    guessed, _ = guess.result()
    named = set(guessed)
    if guessed == likely or [a for a in likely if a in named] != guessed:
        return None
    return guess.result()


def _widening(
    widened: Coroutine[Any, Any, Ahead], guessing: asyncio.Future[Ahead]
) -> asyncio.Future[Ahead]:
    """:func:`_widened` started; the guess it keeps is stopped with it even when it is
    cancelled before its first step (its own cleanup then never runs)."""
    started = asyncio.ensure_future(widened)
    started.add_done_callback(lambda done: _drop_ahead(guessing) if done.cancelled() else None)
    return started


async def _widened(
    sim: Simulator,
    facts: Facts,
    likely: list[str],
    bounds: ScanBounds,
    sources: tuple[Early, Guess],
) -> Ahead:
    """The guessed screen and trials, kept, and those of the senders the deployer's reply
    added, sent now (:func:`_tried_more`): the guess was planned on the same facts,
    wallets and amounts round, each call of it is one the scan makes for that sender,
    and each outcome is used by its sender and calldata (:data:`TrialKey`), so only the
    added senders' calls are new.  Until this session the whole guess was dropped and
    sent again, its trials leaving a round later (issue #27)."""
    (targets, bought), (guessed, guessing) = sources
    story = asyncio.ensure_future(owned(bought, facts.owner is not None))
    started: list[asyncio.Future[Any]] = [story]
    more: asyncio.Future[Tried] | None = None
    try:
        wallets = await targets
        functions, _ = functions_of(facts.code, facts.impl_code, bounds)
        lead, before = _leading(candidates_of(functions, guessed, wallets, bounds), guessed, bounds)
        every = candidates_of(functions, likely, wallets, bounds)
        new = [t for t in every if t.caller.lower() not in set(guessed)]
        screening = asyncio.ensure_future(screen_calls(sim, new, likely))
        started.append(screening)
        # as :func:`_ahead`: the guess ran its leading senders' trials (``lead``); past
        # the bound with the added senders its batch is kept and they get their
        # backdoors now, their trials once screened (:func:`_more_senders`)
        within = lead == guessed and trials_ahead(every, bounds)
        told = await _story_of(story) if trials_ahead(before, bounds) else None
        if told is not None:
            planned = ((before, guessed), (every if within else before, likely))
            more = asyncio.ensure_future(_tried_more(sim, facts, wallets, told, planned))
            started.append(more)
        ahead = await guessing
        screened = await screening
    except BaseException:
        for future in started:
            future.cancel()
        _drop_ahead(guessing)
        raise
    return _joined(ahead, screened, more, (likely if within else lead, likely))


def _joined(
    ahead: Ahead,
    screened: Screened,
    more: asyncio.Future[Tried] | None,
    ran: tuple[list[str], list[str]],
) -> Ahead:
    """The guess's :class:`Ahead` with the added senders' screen and trials (``ran``:
    the senders whose candidates, and whose backdoors, the two batches ran)."""
    tried = None
    if ahead.tried is not None and more is not None:
        story, guessed = ahead.tried
        merged = asyncio.ensure_future(_with_more(guessed, more))
        merged.add_done_callback(lambda done: _stop_both(done, guessed, more))
        tried = (story, merged)
    else:
        if ahead.tried is not None:
            _drop_tried(ahead.tried[1])
        if more is not None:
            _drop_tried(more)
    screened = {**ahead.screened, **screened}
    senders, callers = ran
    return replace(
        ahead, screened=screened, tried=tried, senders=tuple(senders), callers=tuple(callers)
    )


def _more_senders(
    sim: Simulator,
    facts: Facts,
    ahead: Ahead,
    senders: list[str],
    planned: tuple[Targets, ScanBounds],
) -> Ahead:
    """``ahead`` with the trials of the senders its batch did not run (one only the
    callers' reads found: a packed address; the deployer past the bound), sent now on
    its story beside their screen (:func:`~.trials.screen`'s ``known``): they waited a
    round for that screen (issue #27).  Only the calls the screen could choose from
    them: not a call an earlier sender is known to get through (the first caller wins),
    nor one they are known not to; none past :func:`trials_ahead`.  Each outcome is used
    by its sender and calldata, on the same story (:func:`_from_tried`)."""
    targets, bounds = planned
    ran = set(ahead.senders)
    if ahead.tried is None or all(s.lower() in ran for s in senders):
        return ahead
    functions, _ = functions_of(facts.code, facts.impl_code, bounds)
    through: set[str] = set()  # calldata an earlier sender is known to get through
    could: list[Trial] = []  # what the screen may choose, in its order
    for t in candidates_of(functions, senders, targets, bounds):
        ok = ahead.screened.get((t.caller.lower(), t.data))
        if t.data not in through and (ok or (ok is None and t.caller.lower() not in ran)):
            could.append(t)
        if ok:
            through.add(t.data)
    wanted = [t for t in could if t.caller.lower() not in ran]
    if not wanted or not trials_ahead(wanted, bounds):
        return ahead
    before = candidates_of(functions, list(ahead.senders), targets, bounds)
    story = ahead.tried[0]
    every = ((before, list(ahead.callers)), (could, senders))
    # no two-step trials: planned as if every candidate got through, they would be
    # dozens of simulations for the few (most often none) the real pairing names
    more = asyncio.ensure_future(_tried_more(sim, facts, targets, story, every, paired=False))
    added = [s.lower() for s in senders if s.lower() not in ran]
    return _joined(ahead, {}, more, ([*ahead.senders, *added], [s.lower() for s in senders]))


def _stop_both(
    merged: asyncio.Future[Tried], guessed: asyncio.Future[Tried], more: asyncio.Future[Tried]
) -> None:
    """Both batches stopped when their merge is (dropped, even before its first step)
    or failed."""
    if merged.cancelled() or merged.exception() is not None:
        _drop_tried(guessed)
        _drop_tried(more)


async def _with_more(guessed: asyncio.Future[Tried], more: asyncio.Future[Tried]) -> Tried:
    """The guess's batch with the added senders' outcomes (both on one story); when
    either fails the merge does (:func:`_stop_both` stops the other)."""
    tried, added = await asyncio.gather(guessed, more)
    return replace(
        tried,
        by_trial={**tried.by_trial, **added.by_trial},
        pairs=tried.pairs | added.pairs,
        dumps={**tried.dumps, **added.dumps},
    )


async def _tried_more(
    sim: Simulator,
    facts: Facts,
    targets: Targets,
    story: Story,
    planned: tuple[tuple[list[Trial], list[str]], tuple[list[Trial], list[str]]],
    paired: bool = True,
) -> Tried:
    """What :func:`_tried_ahead` would run for ``every`` sender but the guess ran already
    for its own (``before``): the added senders' trials, backdoors, two-step trials
    (unless not ``paired``) and dumps; no baseline (the guess's is the scan's)."""
    before, every = planned
    amount = max(1, story.a_sent)
    selectors = selectors_of(facts.code, facts.impl_code)
    ran = [*before[0], *backdoors(selectors, before[1], targets, amount), *likely_pairs(before[0])]
    sent = set(map(_key_of, ran))
    pairs = likely_pairs(every[0]) if paired else []
    wanted = [*every[0], *backdoors(selectors, every[1], targets, amount), *pairs]
    trials = list({k: t for t in wanted if (k := _key_of(t)) not in sent}.values())
    dumped = {(_key_of(t), n) for t, n in likely_dumps(before[0], story.pool)}
    jobs = [(t, n) for t, n in likely_dumps(every[0], story.pool) if (_key_of(t), n) not in dumped]
    plans = _trial_plans(sim, targets, story, trials)
    plans += [dump_plan(sim, targets, story, t.calls, n, t.target) for t, n in jobs]
    outcomes: list[Outcome | RpcError] = [*await sim.run(plans)] if plans else []
    by_trial = {_key_of(t): o for t, o in zip(trials, outcomes[: len(trials)], strict=True)}
    dumps = {(_key_of(t), n): o for (t, n), o in zip(jobs, outcomes[len(trials) :], strict=True)}
    added = frozenset(map(_key_of, pairs)) - sent
    return Tried(story, [], by_trial, ([], ()), added, dumps)


CallerReads = tuple[
    list[tuple[str, str]], tuple[list[tuple[str, str]], dict[str, str]], owners.Controls
]
"""Which grants still hold, the callers' reads and their control getters."""


async def _caller_reads(
    sim: Simulator, subject: str, inputs: owners.Inputs, bounds: ScanBounds
) -> CallerReads:
    """The reads :func:`_facts_and_callers` makes after the facts (no sender is screened
    ahead: ``targets`` is None), planned from ``inputs``, with the likely senders'
    control getters, as a first scan sends them: a multisig's or a timelock's were read
    a round trip after the callers, at every new head (issue #27)."""
    facts, deployer, granted = inputs
    rpc, tag = sim.rpc, sim.base.tag
    likely = _likely(sim, facts, deployer, granted, bounds)
    roles, read, controls = await asyncio.gather(
        owners.roles_held(rpc, subject, tag, list(granted)),
        owners.caller_reads(rpc, facts, deployer, sim, list(granted)),
        owners.control_reads(rpc, likely, tag),
    )
    return roles, read, controls


async def _reads_before(
    sim: Simulator,
    subject: str,
    read: tuple[asyncio.Future[Facts], asyncio.Future[list[tuple[str, str]]]],
    bounds: ScanBounds,
) -> CallerReads:
    """A first scan's callers' reads that need no deployer (which grants still hold, which
    packed candidates are accounts, the code heads of the getters', granted and packed
    addresses, the likely senders' control getters), sent once the facts and the role
    grants are back, with the guessed screen: they waited for the deployer's reply
    (``ots_getContractCreator``, the slowest of the three on anvil), often a round after
    the screen they decide (issue #27).  The deployer's part follows its reply
    (:func:`_with_deployer`); together they are the reads :func:`_facts_and_callers`
    made after it."""
    facts, granted = await asyncio.gather(asyncio.shield(read[0]), asyncio.shield(read[1]))
    rpc, tag = sim.rpc, sim.base.tag
    roles, found, controls = await asyncio.gather(
        owners.roles_held(rpc, subject, tag, granted),
        owners.caller_reads(rpc, facts, None, sim, granted),
        owners.control_reads(rpc, _likely(sim, facts, None, granted, bounds), tag),
    )
    return roles, found, controls


async def _with_deployer(
    sim: Simulator, before: asyncio.Future[CallerReads], inputs: owners.Inputs, bounds: ScanBounds
) -> CallerReads:
    """:func:`_reads_before`'s reads with the deployer's own (its code head and, when it
    is a likely sender, its control getters), read now unless they covered it."""
    facts, deployer, granted = inputs
    covered = {a.lower() for a, _ in facts.getters} | {a.lower() for _, a in granted}
    covered |= {a.lower() for a, _ in facts.packed[: owners.PACKED_KEPT]}
    earlier = _likely(sim, facts, None, list(granted), bounds)
    now = _likely(sim, facts, deployer, list(granted), bounds)
    wanted = deployer is not None and deployer.lower() in set(now) - set(earlier)
    rpc, tag = sim.rpc, sim.base.tag
    own = asyncio.ensure_future(owners.deployer_reads(rpc, deployer, tag, (covered, wanted)))
    try:
        roles, (existing, heads), controls = await before
        more_heads, more_controls = await own
    except BaseException:
        _stop(own)
        raise
    return roles, (existing, {**heads, **more_heads}), {**controls, **more_controls}


def _drop_early(early: asyncio.Future[CallerReads]) -> None:
    """Cancel reads planned from inputs this head does not have (their error, if any, seen)."""
    if not early.done():
        early.cancel()
    early.add_done_callback(lambda f: f.cancelled() or f.exception())


def _drop_ahead(ahead: asyncio.Future[Ahead]) -> None:
    """Stop what was sent ahead (the amounts round too, once it was started)."""
    if not ahead.done():
        ahead.cancel()
    elif not ahead.cancelled() and ahead.exception() is None:
        ahead.result().stop()


def _likely(
    sim: Simulator,
    facts: Facts,
    deployer: str | None,
    granted: Sequence[tuple[str, str]],
    bounds: ScanBounds,
) -> list[str]:
    """The senders the scan will most likely try, known before the callers' reads: the
    getters' and slots' addresses, the deployer and every account a RoleGranted log
    named (the reads then drop grants revoked since and add packed ones)."""
    every = [a for a, _ in facts.getters] + ([deployer] if deployer else [])
    every += [a for _, a in granted]
    skip = {a.lower() for a in (ZERO_ADDRESS, DEAD, sim.route.token, sim.route.pool.address)}
    skip |= {a.lower() for a in (sim.route.base, sim.route.dex.router, facts.impl or ZERO_ADDRESS)}
    kept = dict.fromkeys(a.lower() for a in every if a.lower() not in skip)
    return list(kept)[: bounds.max_callers]


Told = tuple[Story | None, tuple[str, ...]]
"""The amounts round's story (None: no wallet could buy or hold) and its notes."""
Early = tuple[asyncio.Future[Targets], asyncio.Future[Told]]
"""A first scan's wallets (the supply read in flight) and its amounts round, started
with the facts."""


def _bought(sim: Simulator, wallets: Targets) -> asyncio.Future[Told]:
    """The amounts round, started before the facts are back: it needs only A's wallet
    (and B's, chosen now); whether the story reads ``owner()`` is set once the facts
    say (:func:`~tokenrisk.simulate.story.owned`)."""
    return asyncio.ensure_future(amounts(sim, wallets, False, predict=True))


def trials_ahead(candidates: Sequence[Trial], bounds: ScanBounds) -> bool:
    """Whether the trials of every candidate go with the screen: not past
    :attr:`ScanBounds.max_trials` (most would be screened out: node work for nothing)."""
    return len(candidates) <= bounds.max_trials


def _leading(
    candidates: list[Trial], senders: Sequence[str], bounds: ScanBounds
) -> tuple[list[str], list[Trial]]:
    """The first ``senders`` (lower case) whose candidates together stay within
    :func:`trials_ahead`, and those candidates in order: the screen's first caller wins,
    so theirs are the calls it most likely keeps; a later sender's trials go once its
    screen tells which of its calls the first ones did not get through
    (:func:`_more_senders`).  Past the bound no trial went ahead (Keeper's and Two Keys'
    78-82 candidates over two senders), the whole batch a round after the screen."""
    lead: list[str] = []
    for sender in senders:
        ran = {*lead, sender.lower()}
        if not trials_ahead([t for t in candidates if t.caller.lower() in ran], bounds):
            break
        lead.append(sender.lower())
    return lead, [t for t in candidates if t.caller.lower() in lead]


async def _ahead(
    sim: Simulator,
    facts: Facts,
    likely: list[str],
    bounds: ScanBounds,
    early: Early,
) -> Ahead:
    """The screen of the ``likely`` senders, started at once, and the trials of every
    candidate of the leading ones (:func:`_leading`: all of them within the bound) on
    the amounts round's story as soon as that round (sent with the facts) is back
    (:func:`_tried_ahead`); on a V2 pool, started at once too on the story its curve
    predicts, and used when the round told that one (:func:`_on_curve`)."""
    targets, bought = early
    wallets = await targets
    story = asyncio.ensure_future(owned(bought, facts.owner is not None))
    started: list[asyncio.Future[Any]] = [story]
    tried: tuple[Story, asyncio.Future[Tried]] | None = None
    held: asyncio.Future[Tried | None] | None = None
    try:
        functions, _ = functions_of(facts.code, facts.impl_code, bounds)
        candidates = candidates_of(functions, likely, wallets, bounds)
        screening = asyncio.ensure_future(screen_calls(sim, candidates, likely))
        started.append(screening)
        lead, leading = _leading(candidates, likely, bounds)
        at_once = trials_ahead(leading, bounds)
        # on the curve's story, the trials leave with the amounts round (issue #27)
        curve = _on_curve(sim, facts, wallets, (leading, likely)) if at_once else None
        if curve is not None:
            started.append(curve[1])
        told = await _story_of(story) if at_once else None
        if curve is not None:
            tried = _curve_kept(curve, told)
            started.remove(curve[1])
        if told is not None:
            if tried is None:
                run = _tried_ahead(sim, facts, wallets, told, (leading, likely))
                tried = (told, asyncio.ensure_future(run))
            if told.sells_fail:
                held = asyncio.ensure_future(_held_tried(sim, facts, wallets, (leading, likely)))
                started.append(held)
        # the guards' layout (evmole's CPU) once the screen and the trials have left
        guards = asyncio.ensure_future(guard_values(sim, facts.code, facts.impl_code, facts.words))
        started.append(guards)
        screened = await screening
    except BaseException:
        _stop_sent(started, tried)
        raise
    return Ahead(screened, story, guards, tried, held, tuple(lead), tuple(likely))


def _on_curve(
    sim: Simulator, facts: Facts, targets: Targets, likely: tuple[list[Trial], list[str]]
) -> tuple[Story, asyncio.Future[Tried]] | None:
    """:func:`_tried_ahead` on the story the pool's curve predicts for the amounts round
    (:func:`~tokenrisk.simulate.story.curve_story`), started now, beside that round;
    None where the curve does not say (a V3 or V4 pool: so never one with a hook, whose
    trials go on the round's story)."""
    story = curve_story(sim, targets, facts.owner is not None)
    if story is None:
        return None
    return story, asyncio.ensure_future(_tried_ahead(sim, facts, targets, story, likely))


def _curve_kept(
    curve: tuple[Story, asyncio.Future[Tried]], told: Story | None
) -> tuple[Story, asyncio.Future[Tried]] | None:
    """The trials sent on the curve's story, as run on the story the amounts round told,
    when that round told exactly the curve's (counted ``scan_curve``); otherwise
    dropped, unread (None).  Whether the round's sell failed (``Story.sells_fail``)
    the curve cannot say, and it plans nothing: it only sends the batch from held
    positions as well."""
    predicted, tried = curve
    used = told is not None and replace(told, sells_fail=False) == predicted
    count_curve(used)
    if told is None or not used:
        _drop_tried(tried)
        return None
    if told == predicted:
        return curve
    relabelled = asyncio.ensure_future(_told(tried, told))
    # stopped with it, even when cancelled before its first step
    relabelled.add_done_callback(lambda done: _drop_tried(tried) if done.cancelled() else None)
    return told, relabelled


async def _told(tried: asyncio.Future[Tried], story: Story) -> Tried:
    """The batch ``tried`` ran on ``story``'s amounts, labelled with ``story``."""
    return replace(await tried, story=story)


async def _held_tried(
    sim: Simulator, facts: Facts, targets: Targets, likely: tuple[list[Trial], list[str]]
) -> Tried | None:
    """:func:`_tried_ahead` on the story from held positions :func:`_try_all` would build
    once the baseline's sells failed (None without a balance slot): sent with the trials
    when the amounts round's sell failed, it saves the round trip after the baseline's
    reply (issue #27).  Each trial is its own simulation on that story, so an outcome is
    the one the later batch would give.  Without the likely two-step trials and dumps
    (an armed trap's rarely need them; those named run after, as before): a smaller
    batch leaves sooner after the trials' and costs less when the prediction misses."""
    held = await held_story(sim, targets, facts.owner is not None)
    if held is None:
        return None
    return await _tried_ahead(sim, facts, targets, held, likely, extras=False)


async def _story_of(story: asyncio.Future[Told]) -> Story | None:
    """The amounts round's story once back (None when it found none or failed: its
    error is met where the scan reads it)."""
    await asyncio.wait([story])
    return None if story.cancelled() or story.exception() else story.result()[0]


async def _tried_ahead(
    sim: Simulator,
    facts: Facts,
    targets: Targets,
    story: Story,
    likely: tuple[list[Trial], list[str]],
    extras: bool = True,
) -> Tried:
    """The batch :func:`_try_all` would send, run on the amounts round's ``story`` for every
    candidate the screen tries (each caller's), and the backdoors of the likely
    senders: sent with the screen, so that the trials need not wait for it.  ``extras``
    False: without the likely two-step trials and dumps."""
    candidates, senders = likely
    selectors = selectors_of(facts.code, facts.impl_code)
    trials = [*candidates, *backdoors(selectors, senders, targets, max(1, story.a_sent))]
    # two-step trials, before any setter is known harmless; dumps as if each minted
    pairs = likely_pairs(candidates) if extras else []
    jobs = likely_dumps(candidates, story.pool) if extras else []  # used only if the same
    dumping = _dumping(sim, targets, story, jobs)
    try:
        _, outcomes, counted, seen = await _batch(sim, targets, story, [*trials, *pairs])
    except BaseException:
        if dumping is not None:
            dumping.cancel()
        raise
    head = 1 + len(FUTURE)
    by_trial = {_key_of(t): o for t, o in zip([*trials, *pairs], outcomes[head:], strict=True)}
    dumped = await _dumps_back(dumping)
    dumps = {(_key_of(t), n): o for (t, n), o in zip(jobs, dumped, strict=False)}
    paired = frozenset(map(_key_of, pairs))
    return Tried(story, outcomes[:head], by_trial, counted, paired, dumps, seen)


def _dumping(
    sim: Simulator, targets: Targets, story: Story, jobs: list[tuple[Trial, int]]
) -> asyncio.Future[list[Any]] | None:
    """The dumps ``jobs`` plan, run (their plans held only by the run, see :func:`_batch`)."""
    plans = [dump_plan(sim, targets, story, t.calls, n, t.target) for t, n in jobs]
    return asyncio.ensure_future(sim.run(plans)) if plans else None


PER_RUN = 4
"""Plans per :meth:`~.simulator.Simulator.run` of the trials sent ahead: the coalescer
sends as many simulations per request (``coalesce.MAX_HEAVY``), so a run's outcomes
come back with a request, not with the batch's last one."""


def _runs(sim: Simulator, plans: list[Plan]) -> list[asyncio.Future[list[Any]]]:
    """``plans`` in runs of :data:`PER_RUN`, all started now (they share the coalescer's
    flush: the same requests as one run)."""
    return [
        asyncio.ensure_future(sim.run(plans[i : i + PER_RUN]))
        for i in range(0, len(plans), PER_RUN)
    ]


async def _run_classified(
    sim: Simulator, runs: list[asyncio.Future[list[Any]]], story: Story
) -> tuple[list[Outcome | RpcError], Classifier | None]:
    """The runs' outcomes in order, each trial classified as soon as its run is back
    (and the baseline's): the batch's other requests, the sells by block count, the
    dumps, the screen and the journey's last round are often still in flight then;
    after the check's last reply this CPU would delay the answer (issue #27).  Only
    against a baseline :func:`_try_all` keeps (one it would not re-run from held
    positions).  A run's error stops the others and is raised, as one run's would."""
    try:
        seen = _classifier(sim, await runs[0], story)
        if seen is not None:
            for done in asyncio.as_completed(runs):
                for outcome in await done:
                    if not isinstance(outcome, RpcError) and outcome is not seen.base:
                        seen(outcome)
        outcomes: list[Outcome | RpcError] = []
        for run in runs:
            outcomes += await run
    except BaseException:
        for run in runs:
            _stop(run)
        raise
    return outcomes, seen


def _stop(started: asyncio.Future[Any]) -> None:
    """Cancel what is still running; an error already there is seen (not reported lost)."""
    if not started.done():
        started.cancel()
    elif not started.cancelled():
        started.exception()


def _classifier(sim: Simulator, outcomes: list[Any], story: Story) -> Classifier | None:
    """The trials' classifier against the baseline (``outcomes[0]``: the pool's kind;
    armed when the story starts from held positions); None when :func:`_try_all` would
    not classify against it (no holding, or sells it re-runs from held positions)."""
    base = outcomes[0]
    if isinstance(base, RpcError) or not holding(base):
        return None
    if not comparable(base) and story.held is None:
        return None
    return _classifier_of(sim, base, story)


def _classifier_of(sim: Simulator, base: Outcome, story: Story) -> Classifier:
    """The one classifier of a scan's trials against ``base``: the pool's kind, armed when
    ``story`` starts from held positions (:func:`_try_all` reuses one built early only
    because it is this one)."""
    route = sim.route
    return Classifier(base, v3=route.v3, armed=story.held is not None, v4=route.v4)


async def _dumps_back(dumping: asyncio.Future[Any] | None) -> list[Any]:
    """The dumps sent ahead, or none when none was sent or their batch failed."""
    try:
        return await dumping if dumping is not None else []
    except RpcError:
        return []  # each dump is sent again the usual way


@lru_cache(maxsize=256)
def _hash(code: str | None) -> str | None:
    """The code's keccak, the scan result's key: ~0.1 ms for a 12 KB contract, asked at
    every check of a token (issue #27), so kept per code (the remembered facts hand the
    same string again; a string's hash is computed once and kept by Python)."""
    return None if code is None else "0x" + keccak(hexstr=code).hex()


# SIMULATIONS


async def _try_all(
    sim: Simulator,
    facts: Facts,
    targets: Targets,
    screened: Sequence[Trial],
    beside: tuple[set[str], Sequence[str]],
    sources: tuple[
        asyncio.Future[tuple[Story | None, tuple[str, ...]]],
        tuple[Story, asyncio.Future[Tried]] | None,
    ],
    held_ahead: asyncio.Future[Tried | None] | None = None,
) -> OwnerPowers:
    """The baseline, the future sells and every trial in one batch; then the two-step
    trials (setters that changed nothing, followed by a switch) in a second one.
    ``beside``: the code's selectors and the senders, for the ERC-20-named backdoors;
    ``sources``: the amounts round (:func:`~tokenrisk.simulate.story.amounts`), in
    flight, and the batch sent ahead with the screen (:func:`_tried_ahead`), if any;
    ``held_ahead``: that batch from held positions (:func:`_held_tried`), if sent."""
    told, ahead = sources
    story, notes = await told
    if story is None:
        if ahead is not None:
            _drop_tried(ahead[1])
        return OwnerPowers(scanned=False, error="no wallet could buy or hold, nothing to compare")
    fitted = await _fitting(ahead, story)
    story = fitted.story if fitted is not None else story
    trials = [*screened, *backdoors(beside[0], beside[1], targets, max(1, story.a_sent))]
    ran = _from_tried(fitted, trials)
    runs, outcomes, (counted, unchecked), early = ran or await _batch(sim, targets, story, trials)
    if ahead is not None:
        count_ahead(ran is not None)
    sent = len(SHRINK) + runs  # the amounts batch and this one
    base = outcomes[0]
    if not isinstance(base, RpcError) and not comparable(base) and story.held is None:
        # sells fail after a buy: an armed trap, or a rule about buying and selling soon
        # after (a cooldown a simulation cannot wait out); held positions tell them apart
        from_held = await _held_batch(sim, (facts, targets), screened, beside, held_ahead)
        if from_held is not None:
            story, held_tried, trials, (runs, outcomes, (counted, unchecked), early) = from_held
            fitted = held_tried or fitted
            base = outcomes[0]
            sent += runs
            notes += ("sells failed after a buy: the scan re-ran from held positions",)
    elif held_ahead is not None:
        count_held(False)  # the baseline's sells went through: sent for nothing
    if isinstance(base, RpcError) or not holding(base):
        return OwnerPowers(scanned=False, error="the baseline wallets got no tokens")
    if not comparable(base):
        notes += ("selling fails without any owner call: findings show who can lift or change it",)
    tried = list(outcomes[1 + len(FUTURE) :])
    # each trial read once, as it came back (:func:`_run_classified`)
    seen = early or _classifier_of(sim, base, story)
    harmless = [t for t, o in zip(trials, tried, strict=True) if _harmless(seen, o)]
    paired = two_steps(harmless, [t for t in screened if is_switch(t)])
    tried += await _paired(sim, targets, story, paired, fitted)
    trials += paired
    findings = _findings(seen, trials, tried)
    findings = await _dumped(sim, (targets, story), findings, (trials, tried), fitted)
    future = _future(outcomes[1 : 1 + len(FUTURE)], counted)
    if comparable(base):  # a sell failing now is not a time bomb
        findings += _future_findings(future)
    # "renounced" only when no privileged caller remains (a role holder, a keeper)
    getter_zero = facts.owner is not None and facts.owner.lower() in (ZERO_ADDRESS, DEAD)
    powers = [f for f in findings if f.caller and FINDINGS[f.kind].severity != "info"]
    renounced = getter_zero and not powers
    if renounced and not any(FINDINGS[f.kind].severity != "info" for f in findings):
        findings.append(_renounced(facts.owner or ZERO_ADDRESS))
    return OwnerPowers(
        scanned=True,
        owner=facts.owner,
        renounced=renounced,
        simulations=sent + len(paired),
        findings=tuple(_ordered(findings)),
        future=future,
        notes=notes + unchecked,
    )


async def _held_batch(
    sim: Simulator,
    planned: tuple[Facts, Targets],
    screened: Sequence[Trial],
    beside: tuple[set[str], Sequence[str]],
    held_ahead: asyncio.Future[Tried | None] | None,
) -> tuple[Story, Tried | None, list[Trial], Batch] | None:
    """The story from held positions, the batch sent ahead on it (if any came back), the
    trials and their batch: from that batch when it ran every trial, else run now.  None
    without a balance slot."""
    facts, targets = planned
    was_held = await _held_back(held_ahead)
    held = was_held.story if was_held else await held_story(sim, targets, facts.owner is not None)
    if held is None:
        return None
    trials = [*screened, *backdoors(beside[0], beside[1], targets, max(1, held.a_sent))]
    ran = _from_tried(was_held, trials)
    if held_ahead is not None:
        count_held(ran is not None)
    return held, was_held, trials, ran or await _batch(sim, targets, held, trials)


async def _held_back(held: asyncio.Future[Tried | None] | None) -> Tried | None:
    """The batch from held positions sent ahead (:func:`_held_tried`), once back; None
    when none was sent or it failed (then it is sent again the usual way)."""
    try:
        return await held if held is not None else None
    except RpcError:
        return None


async def _fitting(ahead: tuple[Story, asyncio.Future[Tried]] | None, story: Story) -> Tried | None:
    """The batch sent with the screen, when it was planned on the story the scan uses
    (the amounts round's) and it ran; otherwise dropped, unread."""
    if ahead is None:
        return None
    planned, tried = ahead
    if planned == story:
        try:
            ran = await tried
        except RpcError:
            return None  # the batch is sent again the usual way
        return ran if ran.story == story else None
    _drop_tried(tried)
    return None


async def _paired(
    sim: Simulator, targets: Targets, story: Story, paired: Sequence[Trial], tried: Tried | None
) -> list[Outcome | RpcError]:
    """The two-step trials' outcomes: those run with the trials on this same story (the
    batch sent with the screen, :class:`Tried`), the others run now (one batch; none
    planned when none is missing: the story's baseline plan, built only to splice
    trials into, was most of the scan's CPU after its trials' last reply, issue #27)."""
    ahead = tried.by_trial if tried is not None and tried.story == story else {}
    missing = [t for t in paired if _key_of(t) not in ahead]
    if tried is not None and tried.pairs:
        count_pairs(bool(paired) and not missing)
    plans = _trial_plans(sim, targets, story, missing)
    ran = iter(await sim.run(plans) if plans else [])
    return [ahead[_key_of(t)] if _key_of(t) in ahead else next(ran) for t in paired]


def _trial_plans(
    sim: Simulator, targets: Targets, story: Story, trials: Sequence[Trial]
) -> list[Plan]:
    """The story's plan of each trial, without its baseline's (none for no trial)."""
    if not trials:
        return []
    return story_plans(sim, targets, story, [(t.calls, t.target) for t in trials])[1:]


def _from_tried(tried: Tried | None, trials: Sequence[Trial]) -> Batch | None:
    """What :func:`_batch` would return for ``trials``, from the batch sent ahead: None
    unless it ran every one of them (a sender only the callers' reads found was not)."""
    if tried is None or any(_key_of(t) not in tried.by_trial for t in trials):
        return None
    outcomes = [*tried.base, *(tried.by_trial[_key_of(t)] for t in trials)]
    return len(outcomes), outcomes, tried.counted, tried.seen


def _with_static(result: OwnerPowers, static: list[PowerFinding]) -> OwnerPowers:
    """Static capabilities beside the simulated findings: a live guard means a privileged
    caller remains, so the token is not renounced."""
    if not static:
        return result
    kept = [f for f in result.findings if f.kind != "owner_renounced"]
    return replace(result, renounced=False, findings=tuple(_ordered([*kept, *static])))


Batch = tuple[
    int,
    list[Outcome | RpcError],
    tuple[list[str | None], tuple[str, ...]],
    Classifier | None,
]
"""A scan batch: how many simulations it ran, their outcomes (the baseline, the
:data:`FUTURE` sells, one per trial), the future sells by block count and the trials
classified as they came back (:func:`_run_classified`)."""


async def _batch(sim: Simulator, targets: Targets, story: Story, trials: Sequence[Trial]) -> Batch:
    """The baseline, the four future sells and one story per trial, in one batch, beside
    the future sells by block count (started first: its lone ``eth_call`` then joins the
    runs' last request instead of leaving a few ms after them, often past the end of a
    round, issue #27).  The plans are held only by their runs: each run's are freed as
    its reply comes back, not all of them once the last is back (tens of plans of
    hundreds of objects each, freed after the check's last reply, issue #27)."""
    counting = asyncio.ensure_future(_counted(sim, story.a_sell))
    runs: list[asyncio.Future[list[Any]]] = []
    try:
        runs = _runs(sim, _plans(sim, targets, story, trials))
        (outcomes, seen), counted = await asyncio.gather(
            _run_classified(sim, runs, story), counting
        )
    except BaseException:
        _stop(counting)
        for run in runs:
            _stop(run)
        raise
    return 1 + len(FUTURE) + len(trials), outcomes, counted, seen


def _plans(sim: Simulator, targets: Targets, story: Story, trials: Sequence[Trial]) -> list[Plan]:
    """The baseline, the :data:`FUTURE` sells and one story per trial."""
    base, *tried = story_plans(sim, targets, story, [(t.calls, t.target) for t in trials])
    return [base, *(future_plan(sim, targets, story, seconds) for _, seconds in FUTURE), *tried]


def _harmless(seen: Classifier, outcome: Outcome | RpcError) -> bool:
    """The call went through and changed nothing a buyer sees: a setter to pair with a
    switch.  ``seen``: the baseline's classifier (the pool's kind, armed or not)."""
    if isinstance(outcome, RpcError):
        return False
    call = outcome.get("call")
    return call is not None and call.ok and not seen(outcome)


DUMPS = 2
"""Mint findings whose caller then sells the new tokens (one extra simulation each)."""


async def _dumped(
    sim: Simulator,
    planned: tuple[Targets, Story],
    findings: list[PowerFinding],
    ran: tuple[Sequence[Trial], Sequence[Outcome | RpcError]],
    tried: Tried | None,
) -> list[PowerFinding]:
    """Mint findings with the pool's loss when the caller sells what it gained (at most
    100x the pool's tokens: a larger sell overflows the pool's maths); a dump sent ahead
    with the trials (:class:`Tried`) is used where it is this one (same story, trial and
    amount), the others run now."""
    (targets, story), (trials, outcomes) = planned, ran
    jobs: list[tuple[int, Trial, int]] = []
    for i, f in enumerate(findings):
        source = _source(f, trials, outcomes) if f.kind == "owner_can_mint" else None
        if source is not None and len(jobs) < DUMPS:
            trial, outcome = source
            gained = (outcome["caller1"].uint or 0) - (outcome["caller0"].uint or 0)
            cap = (outcome["pool1"].uint or 0) * DUMP_CAP
            if gained > 0 and cap > 0:
                jobs.append((i, trial, min(gained, cap)))
    ahead = tried.dumps if tried is not None and tried.story == story else {}
    if tried is not None and tried.dumps:
        count_dumps(bool(jobs) and all((_key_of(t), n) in ahead for _, t, n in jobs))
    if not jobs:
        return findings
    missing = [(t, n) for _, t, n in jobs if (_key_of(t), n) not in ahead]
    plans = [dump_plan(sim, targets, story, t.calls, n, t.target) for t, n in missing]
    run = iter(await sim.run(plans) if plans else [])
    dumps = [ahead[k] if (k := (_key_of(t), n)) in ahead else next(run) for _, t, n in jobs]
    out = list(findings)
    for (i, _, _), dump in zip(jobs, dumps, strict=True):
        if not isinstance(dump, RpcError):
            out[i] = _with_dump(out[i], dump, sim.route.base)
    return out


def _source(
    f: PowerFinding, trials: Sequence[Trial], outcomes: Sequence[Outcome | RpcError]
) -> tuple[Trial, Outcome] | None:
    for trial, outcome in zip(trials, outcomes, strict=True):
        same = (trial.function.selector, trial.caller) == (f.selector, f.caller)
        if same and trial.rendered == f.args:
            return (trial, outcome) if isinstance(outcome, Outcome) else None
    return None


def _with_dump(f: PowerFinding, dump: Outcome, base: str) -> PowerFinding:
    before, after = dump.get("pool_base0"), dump.get("pool_base1")
    sold = dump.get("dump.sell")
    if before is None or after is None or sold is None or not sold.ok:
        return f
    b0, b1 = before.uint or 0, after.uint or 0
    if b0 <= 0 or b1 >= b0:
        return f
    share = (b0 - b1) * 100 / b0
    evidence = (*f.evidence, Evidence("pool base token (mint and dump)", str(b0), str(b1)))
    detail = f"{f.detail}; selling the new tokens took {share:.2f}% of the pool's {base}"
    return replace(f, evidence=evidence, detail=detail)


_BY_BLOCKS = "future sells by block count"
NOT_CHECKED = "not checked: "
"""How a note of the scan that names what it left unchecked begins (see :func:`unchecked`)."""


def unchecked(result: OwnerPowers | None) -> tuple[str, ...]:
    """What the scan left unchecked, ``"<check>: <why>"`` each (from its notes)."""
    notes = result.notes if result is not None else ()
    return tuple(n.removeprefix(NOT_CHECKED) for n in notes if n.startswith(NOT_CHECKED))


async def _counted(sim: Simulator, amount: int) -> tuple[list[str | None], tuple[str, ...]]:
    """The future sells by block count (:func:`~.simulator.sells_ahead`): a failure reason
    (or None) per :data:`FUTURE` horizon, and what left them unchecked (a note)."""
    none: list[str | None] = [None] * len(FUTURE)
    if not sim.limits.block_overrides:
        return none, (f"{NOT_CHECKED}{_BY_BLOCKS}: the node ignores eth_call block overrides",)
    slot = await balance_slot(sim)  # the journey may cancel it: then no slot
    if slot is None:
        return none, (f"{NOT_CHECKED}{_BY_BLOCKS}: the token's balance slot was not found",)
    ahead = [(seconds // 12, seconds) for _, seconds in FUTURE]
    found = await sells_ahead(sim, slot, max(1, amount), ahead)
    if isinstance(found, str):
        return none, (f"{NOT_CHECKED}{_BY_BLOCKS}: {found}",)
    return found, ()


def _future(
    outcomes: Sequence[Outcome | RpcError], counted: Sequence[str | None]
) -> tuple[FutureSell, ...]:
    """Each horizon's sell: failed when it failed by time (the simulation) or by block
    count (``counted``, from :func:`.simulator.sells_ahead`)."""
    out: list[FutureSell] = []
    for (label, seconds), o, by_blocks in zip(FUTURE, outcomes, counted, strict=True):
        if isinstance(o, RpcError):
            continue
        sell = o.get("a.sell")
        if sell is not None:
            reason = sell.reason if not sell.ok else by_blocks
            out.append(FutureSell(label, seconds, reason is None, reason))
    return tuple(out)


def _future_findings(future: Sequence[FutureSell]) -> list[PowerFinding]:
    failed = [f for f in future if not f.ok]
    if not failed:
        return []
    first = failed[0]
    evidence = tuple(Evidence(f"sell after {f.label}", "ok", f.reason or "failed") for f in failed)
    detail = f"a sell {first.label} after buying fails: {first.reason}"
    return [PowerFinding("sell_fails_in_future", "-", "", None, (), evidence, detail)]


def _findings(
    seen: Classifier, trials: Sequence[Trial], outcomes: Sequence[Outcome | RpcError]
) -> list[PowerFinding]:
    best: dict[tuple[str, str], PowerFinding] = {}
    for trial, outcome in zip(trials, outcomes, strict=True):
        if isinstance(outcome, RpcError):
            continue
        for effect in _as_upgrade(trial, seen(outcome)):
            finding = _finding(trial, effect)
            key = (finding.kind, finding.selector)
            if key not in best or _weight(finding) > _weight(best[key]):
                best[key] = finding
    fee_powers = {s for k, s in best if k in ("owner_can_set_sell_tax", "owner_can_set_buy_tax")}
    return [
        f for (k, s), f in best.items() if not (k == "owner_can_adjust_fees" and s in fee_powers)
    ]


def _as_upgrade(trial: Trial, effects: list[Effect]) -> list[Effect]:
    """A proxy's own function that changes what buyers see is an upgrade power."""
    harmful = [e for e in effects if FINDINGS[e.kind].severity != "info"]
    if not trial.function.proxy_own or not harmful:
        return effects
    worst = harmful[0]
    text = f"after the proxy admin's call, {worst.detail}"
    return [Effect("owner_can_upgrade", text, worst.evidence)]


def _finding(trial: Trial, effect: Effect) -> PowerFinding:
    """A trial's effect as a finding; a call on the pool's hook says so (detail, evidence)."""
    detail, evidence = effect.detail, effect.evidence
    if trial.target is not None:
        detail = f"through the pool's hook {trial.target}: {detail}"
        evidence = (*evidence, Evidence("hook contract called", "-", trial.target))
    return PowerFinding(
        kind=effect.kind,
        function=trial.label,
        selector=trial.function.selector,
        caller=trial.caller,
        args=trial.rendered,
        evidence=evidence,
        detail=detail,
    )


def _with_control(
    findings: Iterable[PowerFinding], callers: Sequence[Caller]
) -> list[PowerFinding]:
    """Each finding with the severity its caller's controls leave (:func:`controlled`)."""
    by_address = {c.address.lower(): c for c in callers}
    out: list[PowerFinding] = []
    for f in findings:
        caller = by_address.get((f.caller or "").lower())
        severity, control = controlled(FINDINGS[f.kind], caller)
        if f.confidence == "static" and severity != "info":  # a layout read, not a trial
            severity = SEVERITIES[max(1, SEVERITIES.index(severity) - 1)]
        out.append(replace(f, severity=severity, control=control))
    return out


def _weight(finding: PowerFinding) -> float:
    """Prefer the trial that showed the most (the highest tax reached)."""
    for e in finding.evidence:
        if e.what.endswith("tax %"):
            try:
                return max(float(e.before), float(e.after))
            except ValueError:
                return 0.0
    return 0.0


def _renounced(owner: str) -> PowerFinding:
    evidence = (Evidence("owner()", "-", owner),)
    detail = "the owner getter returns the zero address and no caller found a usable power"
    return PowerFinding("owner_renounced", "owner()", OWNER, None, (), evidence, detail)


def _ordered(findings: list[PowerFinding]) -> list[PowerFinding]:
    order = list(FINDINGS)
    return sorted(findings, key=lambda f: (order.index(f.kind), f.selector))

"""IsHoneypot's holders: who sells as themselves (``holderAnalysis``) and the launch's
airdrop (``token.airdropSummary``), both read from the holder index once it is fresh.

Who: the largest EOA holders up to the configured limit and the snipers that still hold,
skipping pools, the zero/dead addresses and contracts (a contract cannot sign a
transaction, so "can it sell like a person" does not apply), with balances read from the
chain (the index says who holds, ``balanceOf`` how much: reflection and rebasing tokens
change balances without Transfer logs); past ``SAMPLE_MAX`` candidates, a sample by
balance (:func:`sample_by_balance`).

How: :mod:`tokenrisk.holders.selling` (in groups, then alone for whoever failed in one).

Who sells is planned before the reads that find them answer (issue #27): the last
check's people (``CrowdMemo``) or, on a token's first check, the largest holders and
snipers of the index's first batch of logs, in memory while they are committed
(:func:`logged_people`: the sells leave with the commit, not after a store query), else
the stored index's (:func:`indexed_people`); their sells go out with those reads and
are used only when the reads find exactly the same people and balances (counted as
``holders`` in ``tokenrisk_sent_ahead_total``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence, Set
from contextvars import ContextVar
from dataclasses import replace
from itertools import islice
from typing import Any, NamedTuple

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import checksum
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import balances_of, is_contract
from tokenrisk.checks.deps import HoneypotDeps, Options
from tokenrisk.checks.trade import Prepared
from tokenrisk.errors import MethodUnsupported
from tokenrisk.holders.index import (
    FirstBatch,
    first_logs,
    index_content,
    next_first_logs,
    top_holders,
)
from tokenrisk.holders.launch import (
    airdrop_summary,
    logged_pool_transfers,
    read_deployer_ahead,
    sniper_addresses,
    snipers,
)
from tokenrisk.holders.selling import PEOPLE, capped, count, pool_sell_limit, sell_all
from tokenrisk.holders.siphon import read_ahead, siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate
from tokenrisk.model import AirdropSummary, HolderStats, Pool, evolve
from tokenrisk.simulate.simulator import Simulator
from tokenrisk.store.engine import Store, TransferLog, balance_deltas

# THE STEPS ISHONEYPOT RUNS


async def airdrop(
    deps: HoneypotDeps, ready: Prepared, pools: list[Pool], index: asyncio.Task[None]
) -> AirdropSummary | None:
    """``token.airdropSummary`` once the index is fresh (it reads the indexed transfers);
    on a token's first index here, the deployer's transaction is read from its logs
    while they are stored (:func:`~tokenrisk.holders.launch.read_deployer_ahead`; a later
    check's summary is remembered per index state, so there is nothing to read ahead)."""
    store, known = deps.index.store, (ready.node.id, ready.route.token)
    if index_content(store, *known) is None:  # not indexed here yet: a first index
        batch = await _first_batch(store, *known, index)
        if batch is not None:
            read_deployer_ahead(ready.node, store, (ready.route.token, batch.logs), pools)
    await index
    return await airdrop_summary(ready.node, store, ready.route.token, pools)


async def _first_batch(
    store: Store, chain_id: int, token: str, index: asyncio.Task[None]
) -> FirstBatch | None:
    """The index's first batch of logs once decoded, when this refresh publishes one
    (:func:`~tokenrisk.holders.index.first_logs`); None otherwise, or once the index is
    refreshed without it."""
    published = first_logs(store, chain_id, token)
    if published is None:
        return None
    either: list[asyncio.Future[Any]] = [published, index]
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if not published.done() or published.cancelled():
        return None
    return published.result()


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
    ``skip``: the provider of simulated liquidity.

    A quiet token (the last check's refresh found no transfer of it) is analysed from
    the index as it is, alongside the refresh: the result is used only when the
    refresh leaves the index's content unchanged (``index_content``), else it is
    dropped and the analysis runs again on the fresh index, as for any other token."""
    store, token = deps.index.store, ready.route.token
    known = (ready.node.id, token.lower())
    before = index_content(store, *known)
    quiet = ready.trading.quiet if ready.trading is not None else None
    early, first = None, None
    if quiet is not None and before is not None and quiet.value(known) == (before, True):
        early = asyncio.ensure_future(_holder_sells(deps, ready, pools, skip, options))
    else:  # on first sight (nobody remembered), who sells from the first logs in memory
        first = asyncio.ensure_future(_first_sight(deps, ready, pools, skip, (options, index)))
    ahead: Ahead | None = None
    try:
        await index
        after = index_content(store, *known)
        if quiet is not None:  # unknown content (None) is never quiet
            quiet.put(known, (after, after is not None and after == before))
        if early is not None and after == before:
            return await early
        ahead = await first if first is not None else None
    finally:
        _drop(early)
        if ahead is None:
            _drop_first(first)
    try:
        return await _holder_sells(deps, ready, pools, skip, options, ahead)
    finally:
        if ahead is not None:
            _drop_ahead(ahead)


async def _holder_sells(
    deps: HoneypotDeps,
    ready: Prepared,
    pools: list[Pool],
    skip: Set[str],
    options: Options,
    ahead: Ahead | None = None,
) -> HolderStats | None:
    if not await _analysable(ready, options):
        return None
    assert ready.sim is not None  # _analysable
    try:
        trading = ready.trading
        memo, alone = (trading.crowds, trading.alone) if trading is not None else (None, None)
        return await analyse_holders(
            ready.node,
            deps.index.store,
            deps.holder_limit,
            ready.sim,
            pools,
            skip,
            memo,
            ahead,
            alone=alone,
        )
    except MethodUnsupported:
        return None


async def _analysable(ready: Prepared, options: Options) -> bool:
    """Whether holders are analysed: asked for, a journey, a node that simulates."""
    if not options.holder_analysis or ready.sim is None:
        return False
    return ready.emulated or (await ready.node.capabilities()).simulate_v1


Sold = asyncio.Future[tuple[list[HolderSell], set[str], list[HolderSell]]]
"""Started sells: the people's results, who of them was siphoned, the other snipers'."""
ReadKey = tuple[str, tuple[str, ...]]
"""A read's block and addresses."""
Reads = dict[ReadKey, asyncio.Future[list[tuple[str, int]]]]
""":func:`_holding_people`'s reads started ahead, by (block, addresses)."""
READS = "holder_reads"
"""``tokenrisk_sent_ahead_total``'s ``planned`` for :data:`Reads`."""


class Ahead(NamedTuple):
    """A guess of who sells (people, holding snipers), its sells and the reads that
    will check it, started; ``gate``: set once those reads confirm a guess made while
    they were in flight (the lone sells of its groups' failures wait for it:
    ``selling.sell_all``'s ``after``), None when it was planned on them."""

    guess: tuple[People, People]
    sells: Sold
    reads: Reads
    gate: asyncio.Future[None] | None = None


async def _first_sight(
    deps: HoneypotDeps,
    ready: Prepared,
    pools: list[Pool],
    skip: Set[str],
    when: tuple[Options, asyncio.Task[None]],
) -> Ahead | None:
    """On a token's first check (nobody remembered), the sells of who the index's first
    batch of logs says holds, started the moment the indexer has decoded them (while it
    commits them: :func:`~tokenrisk.holders.index.first_logs`); None when there is no
    such batch here (the index was already there, or read in several batches) or the
    index is refreshed first.  Planned on the people's balances read when those reads
    are back (:func:`read_holders_early`), else on the logged ones (corrected at the
    reads' reply, :func:`_corrected`).  Verified like every guess (:func:`_analyse`)."""
    options, index = when
    sim, store = ready.sim, deps.index.store
    if sim is None or not options.holder_analysis:
        return None
    memo = ready.trading.crowds if ready.trading is not None else None
    if memo is not None and memo.value(_crowd_key(ready.node, sim)) is not None:
        return None
    if first_logs(store, ready.node.id, sim.route.token) is None:
        return None
    if not await _analysable(ready, options):
        return None
    batch = await _first_batch(store, ready.node.id, sim.route.token, index)
    if batch is None:
        return None
    token, node, limit = sim.route.token, ready.node, deps.holder_limit
    logged = _logged(batch.logs, limit, pools)  # once, for the guess and its reads
    # nothing awaited until the sells leave: they start in the loop turn the logs woke
    reads = _reads_ahead(node, sim, logged, (pools, skip), _early_reads(sim.base.tag, token))
    keys = _read_keys(sim, logged, (pools, skip))
    guess, gate = _read_people(reads, keys, limit, skip), None
    if guess is None:  # the reads not back (or failed): who the logs say, as logged
        guess = logged_people(batch.logs, limit, token, pools, skip, logged)
        gate = _gate(reads, keys)
    if not guess[0]:
        return None
    ahead = Ahead(guess, _sells(node, store, sim, guess, (index, gate), batch), reads, gate)
    return await _corrected(ahead, (node, store, sim), (keys, limit, skip), (index, batch))


def _gate(reads: Reads, keys: tuple[ReadKey | None, ReadKey | None]) -> asyncio.Future[None] | None:
    """What a guess made while ``reads`` are in flight waits for before its groups'
    failures sell alone (:attr:`Ahead.gate`, set by :func:`_corrected`); None when none
    is in flight (they failed: the guess stands as it is)."""
    pending = [reads[k] for k in keys if k is not None and k in reads and not reads[k].done()]
    return asyncio.get_running_loop().create_future() if pending else None


async def _corrected(
    ahead: Ahead,
    on: tuple[Node, Store, Simulator],
    find: tuple[tuple[ReadKey | None, ReadKey | None], int, Set[str]],
    when: tuple[asyncio.Task[None], FirstBatch],
) -> Ahead:
    """``ahead``, or, when its guess was the logged one and the reads that will verify
    it were in flight, the sells of who those reads find, started at their reply
    where they differ (a reflection or rebasing token's balances move without logs):
    not after the index's commit and the store's queries, which :func:`_analyse`
    waits for before it redoes a missed guess.  Verified there all the same; the
    logged plan replaced is counted ``holders`` dropped."""
    (node, store, sim), (keys, limit, skip), (index, batch) = on, find, when
    pending = [ahead.reads[k] for k in keys if k is not None and k in ahead.reads]
    if all(read.done() for read in pending):
        return _opened(ahead)  # planned on them already, or they failed: as it is
    try:
        await asyncio.wait(pending)
    except BaseException:
        _drop_ahead(ahead)
        raise
    found = _read_people(ahead.reads, keys, limit, skip)
    if found is None or found == ahead.guess or not found[0]:
        return _opened(ahead)
    _drop(ahead.sells)
    _drop(ahead.gate)  # its groups' failures never sold alone
    count(PEOPLE, False)  # the logged plan's sells: node work for nothing
    moved = {a for a, _ in found[0]} != {a for a, _ in ahead.guess[0]}
    sells = _sells(node, store, sim, found, (index, None), batch if moved else None)
    return Ahead(found, sells, ahead.reads)


def _opened(ahead: Ahead) -> Ahead:
    """``ahead`` kept: the lone sells of its groups' failures may go (:attr:`Ahead.gate`)."""
    if ahead.gate is not None and not ahead.gate.done():
        ahead.gate.set_result(None)
    return ahead


def _drop_first(first: asyncio.Future[Ahead | None] | None) -> None:
    """``first`` dropped, with the sells and reads it started.  Not done yet, it has
    started none (it starts them as it returns)."""
    if first is None or not first.done():
        _drop(first)
    elif not first.cancelled() and first.exception() is None and (found := first.result()):
        _drop_ahead(found)


def _drop_ahead(ahead: Ahead) -> None:
    """The sells and the reads not taken (``_holding_people`` takes a read out of
    ``reads``: what is left was not asked, counted ``holder_reads`` dropped)."""
    for _ in ahead.reads:
        count(READS, False)
    every: list[asyncio.Future[Any]] = [ahead.sells, *ahead.reads.values()]
    if ahead.gate is not None:
        every.append(ahead.gate)
    ahead.reads.clear()
    for started in every:
        _drop(started)
        if started.done():
            _seen(started)


def _reads_ahead(
    node: Node,
    sim: Simulator,
    logged: tuple[list[tuple[str, int]], list[str]],
    beside: tuple[list[Pool], Set[str]],
    reads: Reads | None = None,
) -> Reads:
    """The code and balance reads :func:`largest_holders` and :func:`holding_snipers`
    will make once the index is stored, started from its logs in memory (``logged``:
    :func:`_logged`): the same addresses at the same block (:func:`_holding_people`
    takes them by that key).  ``beside``: the pools, and who is not analysed.
    ``reads``: those started already (:func:`read_holders_early`), kept; only the
    missing ones are started."""
    return _started_reads(node, sim.route.token, _read_keys(sim, logged, beside), reads)


def _read_keys(
    sim: Simulator,
    logged: tuple[list[tuple[str, int]], list[str]],
    beside: tuple[list[Pool], Set[str]],
) -> tuple[ReadKey | None, ReadKey | None]:
    """The keys of :data:`Reads` :func:`largest_holders` and :func:`holding_snipers`
    will look up (None: no address to read, no read asked)."""
    return _keys_at(sim.base.tag, sim.route.token, logged, beside)


def _keys_at(
    block: str,
    token: str,
    logged: tuple[list[tuple[str, int]], list[str]],
    beside: tuple[list[Pool], Set[str]],
) -> tuple[ReadKey | None, ReadKey | None]:
    """:func:`_read_keys` at ``block`` for ``token``."""
    pools, skip = beside
    rows, sniped = logged
    largest = _candidates(rows, token, pools)
    left_out = {s.lower() for s in skip} | {token.lower()}
    held = [checksum(a) for a in sniped if a not in left_out]
    return _key(block, largest), _key(block, held)


def _key(block: str, addresses: list[str]) -> ReadKey | None:
    return (block, tuple(addresses)) if addresses else None


def _started_reads(
    node: Node, token: str, keys: tuple[ReadKey | None, ...], reads: Reads | None
) -> Reads:
    started: Reads = dict(reads or {})
    for key in keys:
        if key is not None and key not in started:
            read = asyncio.ensure_future(_holding_people(node, token, list(key[1]), key[0]))
            read.add_done_callback(_seen)  # a failed read nobody took: not reported
            started[key] = read
    return started


def _read_people(
    reads: Reads, keys: tuple[ReadKey | None, ReadKey | None], limit: int, skip: Set[str]
) -> tuple[People, People] | None:
    """Who :func:`_analyse` will find, from ``reads`` already back: the people and
    holding snipers exactly as it makes them of the same reads (the first ``limit``
    candidates that hold, less ``skip``; the snipers that hold); None when a read is
    not back or failed.  Balances read, not logged: a reflection or rebasing token's
    move without logs, so a plan on these holds where the logged one misses."""
    got: list[list[tuple[str, int]]] = []
    for key in keys:
        read = reads.get(key) if key is not None else None
        if key is None:
            got.append([])
        elif read is None or not read.done() or read.cancelled() or read.exception():
            return None
        else:
            got.append(read.result())
    found, held = got
    return tuple(p for p in found[:limit] if p[0] not in skip), tuple(held)


# THE HOLDERS' READS, FROM THE INDEX'S FIRST LOGS, BEFORE THE TRADE IS READY

_early: ContextVar[tuple[str, asyncio.Future[Reads | None]] | None] = ContextVar(
    "tokenrisk_holder_reads", default=None
)


def read_holders_early(
    deps: HoneypotDeps,
    node: Node,
    token: str,
    at: tuple[str | None, list[Pool]],
    when: tuple[Options, asyncio.Task[None]],
) -> None:
    """On a token's first index here, the code and balance reads of who its first logs
    say holds, started the moment they are decoded, at ``at``'s block (the head the
    sells will be pinned to, its tag) and with its pools, before the trade is prepared
    (issue #27): when the index's first window was asked beside the check's head read
    (:func:`~tokenrisk.checks.top_holders.index_ahead`) they leave a round trip
    earlier, so :func:`_first_sight` plans the sells on the balances read when they are
    back, and :func:`_corrected` replaces a plan on the logged ones that they contradict
    at their reply (a reflection or rebasing token's balances move without logs; the
    redo after the index's commit was a round trip more).  Verified by
    :func:`_analyse` as every guess.  For this check's later steps only (a context
    variable)."""
    block, pools = at
    options, index = when
    store = deps.index.store
    _early.set(None)
    if block is None or not options.holder_analysis:
        return
    if index_content(store, node.id, token) is not None:
        return  # indexed here already: no first logs to come
    published = next_first_logs(store, node.id, token)
    early = asyncio.ensure_future(
        _reads_from_logs(node, (token, block), (pools, deps.holder_limit), published, index)
    )
    early.add_done_callback(_seen)
    _early.set((token.lower(), early))


async def _reads_from_logs(
    node: Node,
    at: tuple[str, str],
    beside: tuple[list[Pool], int],
    published: asyncio.Future[FirstBatch | None],
    index: asyncio.Task[None],
) -> Reads | None:
    (token, block), (pools, limit) = at, beside
    either: list[asyncio.Future[Any]] = [published, index]
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if not published.done() or published.cancelled() or published.result() is None:
        return None
    batch = published.result()
    assert batch is not None
    keys = _keys_at(block, token, _logged(batch.logs, limit, pools), (pools, frozenset()))
    return _started_reads(node, token, keys, None)


def _early_reads(block: str, token: str) -> Reads | None:
    """The reads :func:`read_holders_early` started for this check of ``token`` at
    ``block``, as they are (back or in flight); None when there are none (yet)."""
    found = _early.get()
    if found is None or found[0] != token.lower():
        return None
    early = found[1]
    if not early.done() or early.cancelled() or early.exception() is not None:
        return None
    reads = early.result()
    if reads is None:
        return None
    mine = {k: r for k, r in reads.items() if k[0] == block}
    for key in reads.keys() - mine.keys():
        _drop(reads[key])
    return mine


# HOLDERS AND SNIPERS SELLING


async def analyse_holders(
    node: Node,
    store: Store,
    limit: int,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str] = frozenset(),
    memo: CrowdMemo | None = None,
    ahead: Ahead | None = None,
    *,
    alone: AloneMemo | None = None,
) -> HolderStats | None:
    """Sell simulations of the ``limit`` largest holders and of the snipers that still
    hold; None when there is nobody to analyse.

    Reads the holder index: the caller brings it up to date (``refresh_index``).
    ``skip``: addresses not to analyse (the provider of simulated liquidity, whose
    balance the simulation has already changed).  ``memo``: who the last check found;
    their sells go out with the reads that find this check's people, and are used
    only when those reads find exactly the same people and balances (else they are
    dropped and the sells go out after the reads, as without a memo).  ``ahead``: on
    first sight (nobody in ``memo``), a guess whose sells were started already
    (:func:`_first_sight`), verified the same way.  ``alone``: who failed in a group at
    the last check (:data:`AloneMemo`); their lone sells go out with the groups.
    """
    token = sim.route.token
    # the snipers' reads share the largest holders' round trip, the siphon's the sells
    at = sim.base.tag  # balances as of the block the sells are simulated on
    reads = ahead.reads if ahead is not None else None
    holding = asyncio.ensure_future(
        holding_snipers(node, store, token, pools, skip, at, reads, kept=sim)
    )
    try:
        known = (memo, ahead, alone)
        return await _analyse(node, store, limit, sim, pools, skip, holding, known)
    finally:
        holding.cancel()  # a no-op once it is done


async def _analyse(
    node: Node,
    store: Store,
    limit: int,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str],
    holding: asyncio.Future[list[tuple[str, int]]],
    known: tuple[CrowdMemo | None, Ahead | None, AloneMemo | None] = (None, None, None),
) -> HolderStats | None:
    token = sim.route.token
    memo, ahead, alone = known
    key = _crowd_key(node, sim)
    guess = memo.value(key) if memo is not None else None
    failed = (alone.value(key) if alone is not None else None) or frozenset()
    early = None
    reads = None
    if guess is None and ahead is not None:  # first sight, sells started from the logs
        guess, early, reads = ahead.guess, ahead.sells, ahead.reads
    elif guess is None:  # first sight: the holders and snipers as the index has them
        guess = await indexed_people(node, store, limit, token, pools, skip)
    if early is None:
        early = _sells(node, store, sim, guess, failed=failed) if guess[0] else None
    try:
        at = sim.base.tag
        found = await largest_holders(node, store, limit, token, pools, at, reads, kept=sim)
        people = tuple(p for p in found if p[0] not in skip)
        if not people:
            return None
        held = tuple(await holding)
        if memo is not None:
            memo.put(key, (people, held))
        if early is not None:
            count(PEOPLE, guess == (people, held))
        if early is None or guess != (people, held):
            _drop(early)
            early = _sells(node, store, sim, (people, held), failed=failed)
        sold, siphoned, fresh = await early
    finally:
        _drop(early)
    if alone is not None:
        alone.put(key, frozenset(r.holder.lower() for r in (*sold, *fresh) if r.alone))
    results = [replace(r, siphoned=True) if r.holder in siphoned else r for r in sold]
    cap = pool_sell_limit(sim)
    over = sum(1 for (_, b), (_, c) in zip(people, capped(list(people), cap), strict=True) if c < b)
    snipers = _sniper_sells(list(held), results, fresh)
    stats = aggregate(results)
    if over:
        stats = evolve(stats, sold_at_pool_limit=over, pool_limit_wei=cap)
    return evolve(
        stats,
        snipers_success=sum(1 for r in snipers if r.ok),
        snipers_failed=sum(1 for r in snipers if not r.ok),
    )


def _crowd_key(node: Node, sim: Simulator) -> tuple[int, str, str]:
    """Where ``CrowdMemo`` keeps a check's people: chain, token, pool."""
    return (node.id, sim.route.token.lower(), sim.route.pool.address.lower())


def _sells(
    node: Node,
    store: Store,
    sim: Simulator,
    crowd: tuple[People, People],
    when: tuple[asyncio.Future[Any] | None, asyncio.Future[None] | None] = (None, None),
    batch: FirstBatch | None = None,
    failed: frozenset[str] = frozenset(),
) -> Sold:
    """The sells of ``crowd`` (people, holding snipers), the siphon check of the people
    and the sells of the snipers not among them, all started now (the siphon check,
    which reads the index, once ``when``'s index is refreshed when it is not yet; its
    node reads from ``batch``, the index's first logs, now: ``siphon.read_ahead``; the
    lone sells of the groups' failures once ``when``'s gate is set: :attr:`Ahead.gate`).
    ``failed``: who failed in a group at the last check, suspects as the snipers are."""
    people, held = crowd
    index, gate = when
    suspects = _suspects(held) | failed
    names = [a for a, _ in people]
    if batch is not None:
        token = sim.route.token
        read_ahead(node.rpc, store, (node.id, token), (batch.start, batch.logs), names)
    return asyncio.ensure_future(
        asyncio.gather(
            sell_all(sim, capped(list(people), pool_sell_limit(sim)), suspects, gate),
            _siphoned(node, store, sim.route.token, names, index),
            _other_snipers(sim, list(held), set(names), (suspects, gate)),
        )
    )


async def _siphoned(
    node: Node, store: Store, token: str, names: list[str], index: asyncio.Future[Any] | None
) -> set[str]:
    if index is not None:
        await asyncio.wait([index])  # not ``await index``: a cancel here must not reach it
    return await siphoned_holders(node.rpc, store, node.id, token, names)


def _drop(started: asyncio.Future[Any] | None) -> None:
    if started is not None and not started.done():
        started.cancel()
        started.add_done_callback(_seen)


def _seen(future: asyncio.Future[Any]) -> None:
    """A cancelled gather ends with a CancelledError set: retrieved, so asyncio does not
    report it as never retrieved."""
    if not future.cancelled():
        future.exception()


async def _other_snipers(
    sim: Simulator,
    held: list[tuple[str, int]],
    people: Set[str],
    waits: tuple[Set[str], asyncio.Future[None] | None],
) -> list[HolderSell]:
    """The sells of the holding snipers (``holding_snipers``) not in ``people`` (capped
    at what the pool can take, as for every holder; ``waits``: the suspects and the
    gate, as for :func:`_sells`)."""
    todo = capped([(a, b) for a, b in held if a not in people], pool_sell_limit(sim))
    suspects, gate = waits
    return await sell_all(sim, todo, suspects, gate)


def _suspects(held: Sequence[tuple[str, int]]) -> frozenset[str]:
    """Whose lone sells go out with the groups (``selling.sell_all``'s ``suspects``):
    the holding snipers, whom a launch trap blacklists, so that their lone sells (and
    99.9% tries) are not a round trip after the groups.  Used only for one whose group
    sell failed."""
    return frozenset(a.lower() for a, _ in held)


def _sniper_sells(
    holding: list[tuple[str, int]], analysed: list[HolderSell], fresh: list[HolderSell]
) -> list[HolderSell]:
    """Sell results of the snipers that still hold a balance and are not contracts:
    those among the analysed holders reuse their result, then the ``fresh`` ones."""
    known = {r.holder: r for r in analysed}
    return [known[a] for a, _ in holding if a in known] + fresh


# WHO SELLS

People = tuple[tuple[str, int], ...]
"""(holder, balance) pairs, in the order the check found them."""
CrowdMemo = MemoryCache[tuple[int, str, str], tuple[People, People]]
"""Per (chain, token, pool): the holders and the holding snipers the last check found
(``checks.holder_sells`` sends their sells with the reads that find them again)."""
AloneMemo = MemoryCache[tuple[int, str, str], frozenset[str]]
"""Per (chain, token, pool): the holders (lowercase) whose sell failed in its group at
the last check (``HolderSell.alone``).  A trap that holds at one block (a blacklist, a
pause, a sell that needs more gas than a group leaves each) mostly holds at the next, so
their lone sells go out with the groups, as the snipers' do (``selling.sell_all``'s
``suspects``, counted ``holder_suspect``; used only for one whose group sell fails
again): at a new head block the lone sells are not a round trip after the groups
(issue #27)."""

_SKIP = {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
SAMPLE_MAX = 2_000
"""Most holders whose sells are simulated in one check.  A larger candidate set is
sampled by balance: the largest ``SAMPLE_MAX // 2`` always, the rest evenly spaced by
balance rank over the remaining candidates (see :func:`sample_by_balance`)."""


async def largest_holders(
    node: Node,
    store: Store,
    limit: int,
    token: str,
    pools: list[Pool],
    block: str = "latest",
    reads: Reads | None = None,
    *,
    kept: Simulator | None = None,
) -> list[tuple[str, int]]:
    """The ``limit`` largest EOA holders with their balances read from the chain at
    ``block`` (the head the sells are simulated on: a newer block may have moved them).
    ``reads``: those reads started ahead (:func:`_reads_ahead`).  ``kept``: the
    simulator pinned to ``block``, whose head-block memory keeps the reads
    (:func:`_people_at`)."""
    rows = await top_holders(store, node.id, token, limit * 2)
    addresses = _candidates(rows, token, pools)
    if not addresses:
        return []
    people = await _people_at(node, token, addresses, (block, reads), kept)
    return people[:limit]


def _candidates(rows: list[tuple[str, int]], token: str, pools: list[Pool]) -> list[str]:
    """Whose balances :func:`largest_holders` reads, of the largest indexed ``rows``
    (checksummed already: checksumming them again would hash each once more)."""
    skip = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    return [a for a, _ in sample_by_balance(rows, SAMPLE_MAX) if a.lower() not in skip]


async def indexed_people(
    node: Node, store: Store, limit: int, token: str, pools: list[Pool], skip: Set[str]
) -> tuple[People, People]:
    """Who :func:`largest_holders` and :func:`holding_snipers` will most likely find,
    from the index alone (no node call): the largest indexed holders and the snipers
    among them, with their indexed balances, as if every one were a person whose
    ``balanceOf`` the index got right.  A guess to send sells ahead with, never an
    answer (``checks.holder_sells`` uses it only when the reads find exactly these)."""
    left_out = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    left_out |= {s.lower() for s in skip}
    # both queries at once: the sells wait for them (one worker-thread hop, not two)
    rows, snipers = await asyncio.gather(
        top_holders(store, node.id, token, limit * 2),
        sniper_addresses(store, node.id, token, pools),
    )
    return _guessed(rows, snipers, limit, left_out)


def logged_people(
    logs: Sequence[TransferLog],
    limit: int,
    token: str,
    pools: list[Pool],
    skip: Set[str],
    logged: tuple[list[tuple[str, int]], list[str]] | None = None,
) -> tuple[People, People]:
    """:func:`indexed_people` from a token's whole history of Transfer logs in memory
    (the index's first batch, before the store has them): the balances and the
    snipers the store will hold once they are committed, ranked as it ranks them.
    ``logged``: :func:`_logged` of them, when already made."""
    left_out = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    left_out |= {s.lower() for s in skip}
    rows, sniped = logged if logged is not None else _logged(logs, limit, pools)
    return _guessed(rows, sniped, limit, left_out)


def _logged(
    logs: Sequence[TransferLog], limit: int, pools: list[Pool]
) -> tuple[list[tuple[str, int]], list[str]]:
    """What the stored index will answer, from its logs in memory: the ``limit * 2``
    largest holders (``top_holders``, checksummed) and the snipers
    (``launch.sniper_addresses``, lowercase)."""
    pool_addresses = frozenset(p.address.lower() for p in pools)
    held = [(a, b) for a, b in balance_deltas(logs).items() if b > 0]
    rows = [(checksum(a), b) for a, b in sorted(held, key=lambda x: (-x[1], x[0]))[: limit * 2]]
    return rows, snipers(logged_pool_transfers(logs, pools), pool_addresses)


def _guessed(
    rows: list[tuple[str, int]], sniped: list[str], limit: int, left_out: Set[str]
) -> tuple[People, People]:
    """The guess from the largest indexed ``rows`` (checksummed, largest first) and the
    ``sniped`` addresses (lowercase)."""
    kept = ((a, b) for a, b in sample_by_balance(rows, SAMPLE_MAX) if a.lower() not in left_out)
    people = tuple(islice(kept, limit))
    indexed = {a.lower(): b for a, b in rows}
    # a sniper outside the largest rows: sold out, or a small holder (then a miss)
    held = tuple((checksum(a), indexed[a]) for a in sniped if a not in left_out and a in indexed)
    return people, held


async def holding_snipers(
    node: Node,
    store: Store,
    token: str,
    pools: list[Pool],
    skip: Set[str],
    block: str = "latest",
    reads: Reads | None = None,
    *,
    kept: Simulator | None = None,
) -> list[tuple[str, int]]:
    """The snipers (``holders.launch``) that still hold a balance and are not contracts,
    leaving out ``skip`` and the token itself.  ``reads``, ``kept``: as for
    :func:`largest_holders`."""
    found = await sniper_addresses(store, node.id, token, pools)
    left_out = {s.lower() for s in skip} | {token.lower()}
    found = [checksum(a) for a in found if a not in left_out]
    if not found:
        return []
    return await _people_at(node, token, found, (block, reads), kept)


async def _people_at(
    node: Node,
    token: str,
    addresses: list[str],
    at: tuple[str, Reads | None],
    kept: Simulator | None,
) -> list[tuple[str, int]]:
    """:func:`_holding_people`, kept per head block by ``kept``
    (:meth:`Simulator.remembered`, by block hash and number) when ``block`` is the one
    it is pinned to: whether an address has code and what it holds are facts of that
    block, so a check again at an unchanged head sends and decodes none of the 2 x N
    reads; at a new head (another hash) they are read as before.  Taken from ``reads``
    first when started ahead (first sight), and then kept all the same."""
    block, reads = at
    if kept is None or block != kept.base.tag:
        return await _holding_people(node, token, addresses, block, reads)
    key = ("holding people", node.id, token.lower(), tuple(addresses))
    return await kept.remembered(key, lambda: _holding_people(node, token, addresses, block, reads))


async def _holding_people(
    node: Node, token: str, addresses: list[str], block: str, reads: Reads | None = None
) -> list[tuple[str, int]]:
    """``addresses`` that are not contracts and hold a balance at ``block``, with it;
    read already when ``reads`` has those addresses at that block (and the read went
    through: one that failed is made again)."""
    ahead = reads.pop((block, tuple(addresses)), None) if reads is not None else None
    if ahead is not None and not ahead.cancelled():
        await asyncio.wait([ahead])
        if not ahead.cancelled() and ahead.exception() is None:
            count(READS, True)
            return ahead.result()
    flags, balances = await asyncio.gather(
        is_contract(node.rpc, addresses, block), balances_of(node.rpc, token, addresses, block)
    )
    return [(a, b) for a, c, b in zip(addresses, flags, balances, strict=True) if b and not c]


def sample_by_balance(rows: list[tuple[str, int]], cap: int) -> list[tuple[str, int]]:
    """At most ``cap`` of ``rows`` (largest balance first): the top half of the cap as
    they are, then every k-th of the rest, so small holders are represented in
    proportion to their number rather than left out.  Order is kept."""
    if len(rows) <= cap:
        return rows
    top = cap // 2
    rest = rows[top:]
    picks = cap - top
    step = len(rest) / picks
    return rows[:top] + [rest[int(i * step)] for i in range(picks)]

"""The head follower: follows each chain's new blocks, finds what must be checked (new
pools' tokens, watched tokens whose answer may have changed) and queues those checks;
any worker runs them (:mod:`tokenrisk.watch.checker`).  Exactly once:
:mod:`tokenrisk.store.watch` and :mod:`tokenrisk.store.watchtasks`.

One :meth:`Watcher.step` per chain and poll:

1. read the head and the chain's cursor (a first run starts at the head: the watcher
   follows what happens from now on); a cursor whose block hash changed is a reorg:
   its events from that block on are retracted, its queued checks dropped, and the
   cursor steps back;
2. newly watched tokens get a baseline check queued;
3. take at most ``blocks_per_step`` blocks and find, in them, each new pool (V2/V3
   creation events of the registry's factories: its token's first check, kept pending
   until its first liquidity when it has none) and each watched token with a trigger
   (a direct call, an ownership/role/pause event, a liquidity change of at least
   ``liquidity_threshold`` percent of the pool's base reserve, a block past the
   time-bomb horizon its last answer's future sells showed, the configured interval);
4. commit those checks (queued) with the cursor in one transaction;
5. hand out queued checks, oldest block first, at most ``max_checks_per_block`` for each
   block the step advanced (and never more than ``max_checks`` in flight): the rest
   stay queued, and the lag reported is the distance from the head to the oldest block
   with a check not done yet;
6. each token with handed-out checks goes to the job queue (``enqueue``: one job per
   token, idempotent; Redis down or no queue: this watcher runs them itself).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from tokenrisk import metrics
from tokenrisk.chain.node import Node
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.errors import StoreConflict
from tokenrisk.store.watch import NewEvent, Task, TaskStore, WatchCursor, WatchStore
from tokenrisk.watch import blocks, events
from tokenrisk.watch.checker import Checker

log = logging.getLogger("tokenrisk.watch")


@dataclass(frozen=True)
class Bounds:
    """How much one step may do (``[watch]`` settings)."""

    blocks_per_step: int = 10
    max_checks: int = 16  # checks in flight at most
    interval_blocks: int = 0  # 0: no periodic re-check
    tax_threshold: float = 5.0  # percentage points
    liquidity_threshold: float = 20.0  # percent of the pool's base reserve (0: any change)
    max_checks_per_block: int = 4  # handed out per block the head moved (the rest queue)


Enqueue = Callable[[int, str], Awaitable[object]]
"""Puts "run token T's checks on chain C" on the job queue (idempotent per token)."""


@dataclass
class Work:
    """One range's outcome before it is committed."""

    events: list[NewEvent] = field(default_factory=list)
    snapshots: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)


@dataclass
class Watcher:
    """Follows the chains of ``deps.nodes`` (see the module docstring)."""

    deps: HoneypotDeps
    store: WatchStore
    bounds: Bounds = Bounds()
    enqueue: Enqueue | None = None  # None: this watcher runs the checks it hands out
    lag: dict[int, int] = field(default_factory=dict)  # blocks behind the head, per chain
    queued: dict[int, int] = field(default_factory=dict)  # checks not done, per chain
    checker: Checker = field(init=False)

    def __post_init__(self) -> None:
        self.checker = Checker(self.deps, self.store, self.bounds.tax_threshold)

    @property
    def checks(self) -> int:
        """Checks this process ran since start."""
        return self.checker.checks

    @property
    def committed(self) -> int:
        """Events this process committed since start."""
        return self.checker.committed

    @property
    def tasks(self) -> TaskStore:
        return TaskStore(self.store.store)

    async def step(self, chain_id: int) -> int:
        """Process one range of ``chain_id`` and hand out its checks; returns the events
        this watcher committed (0 when the checks went to the job queue)."""
        node = self.deps.nodes.node(chain_id)
        head = int(await node.rpc.call("eth_blockNumber", []), 16)
        cursor = await asyncio.to_thread(self.store.cursor, chain_id)
        if cursor is None:
            return await self._commit(chain_id, None, await self._at(node, head), Work())
        if await blocks.block_hash(node, cursor.block) != cursor.block_hash:
            return await self._rewind(node, cursor)
        await self._baselines(node, cursor)
        end = min(head, cursor.block + self.bounds.blocks_per_step)
        if end > cursor.block:
            work = Work(tasks=await self._range(node, cursor.block + 1, end))
            await self._commit(chain_id, cursor, await self._at(node, end), work)
        added = await self._work(chain_id, max(end - cursor.block, 1))
        await self._measure(chain_id, head, end)
        return added

    async def _work(self, chain_id: int, blocks_moved: int) -> int:
        """Hand out queued checks (module docstring, 5-6); returns events committed here."""
        budget = self.bounds.max_checks_per_block * blocks_moved
        await asyncio.to_thread(self.tasks.dispatch, chain_id, budget, self.bounds.max_checks)
        tokens = await asyncio.to_thread(self.tasks.open_tokens, chain_id)
        if self.enqueue is not None:
            try:
                for token in tokens:
                    await self.enqueue(chain_id, token)
                return 0
            except RedisError:
                log.warning("chain %s: job queue unreachable, checking here", chain_id)
        added = 0
        for token in tokens:
            added += await self.checker.run(chain_id, token)
        return added

    async def _measure(self, chain_id: int, head: int, end: int) -> None:
        """The lag: from the head back to the oldest block with a check not done yet
        (the cursor's block when there is none)."""
        waiting, oldest = await asyncio.to_thread(self.tasks.waiting, chain_id)
        done_to = end if oldest is None else min(end, oldest - 1)
        self.lag[chain_id] = max(head - done_to, 0)
        self.queued[chain_id] = waiting
        metrics.watch_step(chain_id, self.lag[chain_id], waiting)

    async def _baselines(self, node: Node, cursor: WatchCursor) -> None:
        """Newly watched tokens get a first check queued (its answer is the baseline: no
        event), committed with the cursor unmoved."""
        tokens = await asyncio.to_thread(self.store.watched, node.id)
        waiting = await asyncio.to_thread(self.tasks.tokens, node.id)
        work = Work()
        for token in sorted(tokens - waiting):
            if await asyncio.to_thread(self.store.snapshot, node.id, token) is None:
                work.tasks.append(Task(node.id, token, "baseline", cursor.block, "baseline"))
        if work.tasks:
            await self._commit(node.id, cursor, cursor, work)

    async def _at(self, node: Node, number: int) -> WatchCursor:
        return WatchCursor(number, await blocks.block_hash(node, number))

    async def _commit(
        self, chain_id: int, expected: WatchCursor | None, new: WatchCursor, work: Work
    ) -> int:
        try:
            added = await asyncio.to_thread(
                self.store.commit,
                chain_id,
                expected,
                new,
                work.events,
                work.snapshots,
                work.tasks,
            )
        except StoreConflict:
            log.info("chain %s: another watcher committed this range first", chain_id)
            return 0
        self.checker.committed += added
        for event in work.events if added else ():
            metrics.watch_event(chain_id, event.kind)
        return added

    async def _range(self, node: Node, start: int, end: int) -> list[Task]:
        """The checks ``start..end`` calls for (module docstring, 3)."""
        pools = await blocks.new_pools(node, start, end)
        watched = await self._tracked(node.id)
        pending = await asyncio.to_thread(self.store.pending, node.id)
        pending.update(await asyncio.to_thread(self.tasks.pools, node.id))
        large = self.bounds.liquidity_threshold
        found = await blocks.triggers(node, start, end, watched, large, frozenset(pending))
        found += self._interval(watched, start, end)
        found += await self._horizons(node, start, end)
        bases = {b.address.lower() for b in node.chain.base_tokens}
        tasks = [
            Task(node.id, token.lower(), "new_pool", pool.block, "pool", pool.tx, pool.pool)
            for pool in pools
            for token in blocks.tokens_of(pool, bases)
        ]
        return tasks + [
            Task(node.id, t.token, "recheck", t.block, t.why, t.tx or None)
            for t in _first_per_token(found)
        ]

    async def _tracked(self, chain_id: int) -> dict[str, str | None]:
        """Watched and pending tokens (new pools waiting for liquidity or for their first
        check) -> their pool (None when not known yet)."""
        tokens = await asyncio.to_thread(self.store.watched, chain_id)
        tracked: dict[str, str | None] = {}
        for token in tokens:
            snap = await asyncio.to_thread(self.store.snapshot, chain_id, token)
            tracked[token] = (snap or {}).get("pair")
        tracked.update(await asyncio.to_thread(self.store.pending, chain_id))
        for token, pool in (await asyncio.to_thread(self.tasks.pools, chain_id)).items():
            tracked.setdefault(token, pool)
        return tracked

    def _interval(
        self, watched: dict[str, str | None], start: int, end: int
    ) -> list[blocks.Trigger]:
        every = self.bounds.interval_blocks
        if every <= 0:
            return []
        due = [b for b in range(start, end + 1) if b % every == 0]
        return [blocks.Trigger(t, due[0], "", "interval") for t in watched] if due else []

    async def _horizons(self, node: Node, start: int, end: int) -> list[blocks.Trigger]:
        """A watched token whose last answer saw later sells fail (``sellsFailFrom``) is
        re-checked at the first block that passes that horizon, by number or by time
        (the scan tried both; a bomb set on either goes off there)."""
        due: dict[str, tuple[int, int]] = {}
        for token in await asyncio.to_thread(self.store.watched, node.id):
            snap = await asyncio.to_thread(self.store.snapshot, node.id, token)
            horizon = (snap or {}).get("sellsFailFrom")
            if horizon:
                due[token] = (int(horizon["block"]), int(horizon["timestamp"]))
        if not due:
            return []
        stamps: dict[int, int] = {}
        found = []
        for token, (block, at) in due.items():
            first = await self._first_past(node, start, end, at, stamps)
            if block <= end:
                first = max(start, block) if first is None else min(first, max(start, block))
            if first is not None:
                found.append(blocks.Trigger(token, first, "", "horizon"))
        return found

    async def _first_past(
        self, node: Node, start: int, end: int, at: int, stamps: dict[int, int]
    ) -> int | None:
        """The first block of ``start..end`` whose timestamp is ``at`` or later (None:
        none), by bisection: timestamps never decrease."""

        async def stamp(number: int) -> int:
            if number not in stamps:
                stamps[number] = await blocks.timestamp(node, hex(number))
            return stamps[number]

        if await stamp(end) < at:
            return None
        low, high = start, end
        while low < high:
            middle = (low + high) // 2
            if await stamp(middle) >= at:
                high = middle
            else:
                low = middle + 1
        return low

    async def _rewind(self, node: Node, cursor: WatchCursor) -> int:
        """A reorg: the cursor's block left the chain.  Step back one block (each step
        checks again, so a deep reorg takes a few) and retract that block's events."""
        gone = await asyncio.to_thread(self.store.events_at_or_after, node.id, cursor.block)
        work = Work()
        for event in gone:
            body = events.retracted_body(node.id, event.seq, event.event_id, event.block)
            ident = events.event_id(node.id, event.token, "retracted", event.block, event.event_id)
            body["id"] = ident
            work.events.append(
                NewEvent(ident, node.id, event.token, "retracted", event.block, "", body)
            )
        log.warning("chain %s: block %s left the chain (reorg)", node.id, cursor.block)
        back = await self._at(node, max(cursor.block - 1, 0))
        return await self._commit(node.id, cursor, back, work)


def _first_per_token(found: list[blocks.Trigger]) -> list[blocks.Trigger]:
    """One re-check per token per range, attributed to its first transaction."""
    first: dict[str, blocks.Trigger] = {}
    for trigger in sorted(found, key=lambda t: (t.block, not t.tx)):
        first.setdefault(trigger.token, trigger)
    return list(first.values())

"""The watcher: follows each chain's new blocks, checks new pools' tokens, re-checks
watched tokens when something that can change their answer happens, and commits each
processed range with its events at once (exactly once: :mod:`tokenrisk.store.watch`).

One :meth:`Watcher.step` per chain and poll:

1. read the head and the chain's cursor (a first run starts at the head: the watcher
   follows what happens from now on); a cursor whose block hash changed is a reorg:
   its events from that block on are retracted and the cursor steps back;
2. take at most ``blocks_per_step`` blocks, fewer when they hold more than
   ``max_checks`` checks (the rest wait for the next step: that is the lag reported);
3. for each new pool (V2/V3 creation events of the registry's factories), check its
   token with IsHoneypot (:func:`tokenrisk.checks.honeypot.is_honeypot`, the same check
   the API runs); a pool without liquidity yet is kept pending and checked again on its
   first liquidity event;
4. for each watched token with a trigger (a direct call, an ownership/role/pause event,
   a liquidity change of at least ``liquidity_threshold`` percent of the pool's base
   reserve, a block past the time-bomb horizon its last answer's future sells showed,
   the configured interval), check again and compare with the last
   answer (:mod:`tokenrisk.watch.events`);
5. commit events, answers and the cursor in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from tokenrisk import metrics
from tokenrisk.chain.node import Node
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.errors import StoreConflict, TokenRiskError
from tokenrisk.store.watch import NewEvent, WatchCursor, WatchStore
from tokenrisk.watch import blocks, events

log = logging.getLogger("tokenrisk.watch")


@dataclass(frozen=True)
class Bounds:
    """How much one step may do (``[watch]`` settings)."""

    blocks_per_step: int = 10
    max_checks: int = 16
    interval_blocks: int = 0  # 0: no periodic re-check
    tax_threshold: float = 5.0  # percentage points
    liquidity_threshold: float = 20.0  # percent of the pool's base reserve (0: any change)


@dataclass
class Work:
    """One range's outcome before it is committed."""

    events: list[NewEvent] = field(default_factory=list)
    snapshots: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)


@dataclass
class Watcher:
    """Follows the chains of ``deps.nodes`` (see the module docstring)."""

    deps: HoneypotDeps
    store: WatchStore
    bounds: Bounds = Bounds()
    lag: dict[int, int] = field(default_factory=dict)  # blocks behind the head, per chain
    checks: int = 0  # checks run since start
    committed: int = 0  # events committed since start

    async def step(self, chain_id: int) -> int:
        """Process one range of ``chain_id``; returns the events it committed (0 when
        another watcher committed that range first)."""
        node = self.deps.nodes.node(chain_id)
        head = int(await node.rpc.call("eth_blockNumber", []), 16)
        cursor = await asyncio.to_thread(self.store.cursor, chain_id)
        if cursor is None:
            return await self._commit(chain_id, None, await self._at(node, head), Work())
        if await blocks.block_hash(node, cursor.block) != cursor.block_hash:
            return await self._rewind(node, cursor)
        await self._baselines(node, cursor)
        end = min(head, cursor.block + self.bounds.blocks_per_step)
        self.lag[chain_id] = head - cursor.block
        if end <= cursor.block:
            return 0
        work, end = await self._range(node, cursor.block + 1, end)
        self.lag[chain_id] = head - end
        metrics.watch_step(chain_id, head - end)
        return await self._commit(chain_id, cursor, await self._at(node, end), work)

    async def _baselines(self, node: Node, cursor: WatchCursor) -> None:
        """Newly watched tokens get their first answer now (no event: nothing to
        compare), committed with the cursor unmoved."""
        tokens = await asyncio.to_thread(self.store.watched, node.id)
        work = Work()
        for token in sorted(tokens)[: self.bounds.max_checks]:
            if await asyncio.to_thread(self.store.snapshot, node.id, token) is None:
                snap = await self._check(node, token, None)
                # a token that cannot be checked now is not tried again every poll: its
                # next trigger takes the baseline
                work.snapshots[token] = (cursor.block, snap or {"unchecked": True})
        if work.snapshots:
            await self._commit(node.id, cursor, cursor, work)

    async def _at(self, node: Node, number: int) -> WatchCursor:
        return WatchCursor(number, await blocks.block_hash(node, number))

    async def _commit(
        self, chain_id: int, expected: WatchCursor | None, new: WatchCursor, work: Work
    ) -> int:
        try:
            added = await asyncio.to_thread(
                self.store.commit, chain_id, expected, new, work.events, work.snapshots
            )
        except StoreConflict:
            log.info("chain %s: another watcher committed this range first", chain_id)
            return 0
        self.committed += added
        for event in work.events if added else ():
            metrics.watch_event(chain_id, event.kind)
        return added

    async def _range(self, node: Node, start: int, end: int) -> tuple[Work, int]:
        """Events and answers of ``start..end`` (``end`` cut when checks exceed the cap)."""
        pools = await blocks.new_pools(node, start, end)
        watched = await self._tracked(node.id)
        pending = frozenset(await asyncio.to_thread(self.store.pending, node.id))
        large = self.bounds.liquidity_threshold
        found = await blocks.triggers(node, start, end, watched, large, pending)
        found += self._interval(watched, start, end)
        found += await self._horizons(node, start, end)
        end = self._cut(start, end, [p.block for p in pools] + [t.block for t in found])
        work = Work()
        for pool in (p for p in pools if p.block <= end):
            await self._new_pool(node, pool, work)
        for trigger in _first_per_token([t for t in found if t.block <= end]):
            await self._recheck(node, trigger, work)
        return work, end

    async def _tracked(self, chain_id: int) -> dict[str, str | None]:
        """Watched and pending tokens -> their pool (None when not known yet)."""
        tokens = await asyncio.to_thread(self.store.watched, chain_id)
        tracked: dict[str, str | None] = {}
        for token in tokens:
            snap = await asyncio.to_thread(self.store.snapshot, chain_id, token)
            tracked[token] = (snap or {}).get("pair")
        tracked.update(await asyncio.to_thread(self.store.pending, chain_id))
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

    def _cut(self, start: int, end: int, work_blocks: list[int]) -> int:
        """The last block whose checks fit in ``max_checks`` (never before ``start``)."""
        ordered = sorted(work_blocks)
        if len(ordered) <= self.bounds.max_checks:
            return end
        return max(start, ordered[self.bounds.max_checks] - 1)

    async def _check(self, node: Node, token: str, pool: str | None) -> dict[str, Any] | None:
        """The token's answer reduced to a snapshot; None when it cannot be checked (no
        liquidity yet, a node failure: checked again on the next trigger)."""
        self.checks += 1
        metrics.watch_check(node.id)
        try:
            result = await is_honeypot(self.deps, token, node.id, pool)
            later = events.fail_after(result)
            # the head read after the check: the one it simulated at is no later, so the
            # horizon is never early
            head = None if later is None else await blocks.head(node)
        except TokenRiskError as exc:
            log.info("chain %s: %s not checked (%s)", node.id, token, exc.__class__.__name__)
            return None
        snap = events.snapshot(result)
        if head is not None and later is not None:
            number, stamp = head
            ahead = later // events.SECONDS_PER_BLOCK
            snap["sellsFailFrom"] = {"block": number + ahead, "timestamp": stamp + later}
        return snap

    async def _new_pool(self, node: Node, pool: blocks.NewPool, work: Work) -> None:
        bases = {b.address.lower() for b in node.chain.base_tokens}
        for token in (pool.token0, pool.token1):
            if token.lower() in bases:
                continue
            await self._launch(node, token, pool.pool, pool.block, pool.tx, work)

    async def _launch(
        self, node: Node, token: str, pool: str, block: int, tx: str | None, work: Work
    ) -> None:
        snap = await self._check(node, token, pool)
        if snap is None or not snap.get("liquidity"):
            work.snapshots[token.lower()] = (block, {"pending": True, "pair": pool})
            return
        body = events.new_pool_body(node.id, token, pool, block, tx, snap)
        ident = events.event_id(node.id, token, "new_pool", block, pool)
        work.events.append(await self._event(node, ident, token, "new_pool", block, body))
        work.snapshots[token.lower()] = (block, snap)

    async def _recheck(self, node: Node, trigger: blocks.Trigger, work: Work) -> None:
        before = await asyncio.to_thread(self.store.snapshot, node.id, trigger.token)
        if before is not None and before.get("pending"):
            pool = str(before["pair"])
            await self._launch(node, trigger.token, pool, trigger.block, trigger.tx, work)
            return
        after = await self._check(node, trigger.token, (before or {}).get("pair"))
        if after is None:
            return
        work.snapshots[trigger.token] = (trigger.block, after)
        if before is None or before.get("unchecked"):
            return  # first answer: the baseline, nothing to compare
        found = events.changes(before, after, self.bounds.tax_threshold)
        if found:
            tx = trigger.tx or None
            body = events.alert_body(node.id, trigger.token, trigger.block, tx, found, after)
            ident = events.event_id(node.id, trigger.token, "alert", trigger.block, found)
            work.events.append(
                await self._event(node, ident, trigger.token, "alert", trigger.block, body)
            )

    async def _event(
        self, node: Node, ident: str, token: str, kind: str, block: int, body: dict[str, Any]
    ) -> NewEvent:
        body = {**body, "id": ident}
        return NewEvent(
            ident, node.id, token, kind, block, await blocks.block_hash(node, block), body
        )

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

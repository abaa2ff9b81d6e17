"""The checks the follower queued (:mod:`tokenrisk.store.watchtasks`), run by any worker:
``tokenrisk worker``, every ``tokenrisk watch``, or the follower itself without Redis.

:meth:`Checker.run` takes one token's dispatched tasks in block order (a new pool's
first check, a watched token's baseline, a re-check) and commits each outcome with the
task's removal (:meth:`WatchStore.finish`): events, the new last answer, done.  A token
is run by one job at a time (the job id is the token's), and were two runs to overlap
(a job whose worker died is replaced after a while) the compare-and-set removal makes
the second run of a task commit nothing: to pass a task, a run must see it committed,
so each run reads the last answer after the previous task's outcome.  Event ids are
content digests, so an outcome redone after a crash is stored once.

A node that is down (or a store that is) leaves the task in place for the next run; a
token that simply cannot be checked yet is recorded as such, as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from tokenrisk import metrics
from tokenrisk.chain.node import Node
from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.errors import (
    DeadlineExceeded,
    NodeUnavailable,
    Overloaded,
    StoreConflict,
    StoreError,
    TokenRiskError,
)
from tokenrisk.store.watch import NewEvent, Task, TaskStore, WatchStore
from tokenrisk.watch import blocks, events

log = logging.getLogger("tokenrisk.watch")
RETRY_LATER = (NodeUnavailable, DeadlineExceeded, Overloaded, StoreError)
"""Failures of the machinery, not of the token: the task stays and runs again."""

Outcome = tuple[list[NewEvent], dict[str, Any] | None]


@dataclass
class Checker:
    """Runs queued checks against ``deps`` and commits them to ``store``."""

    deps: HoneypotDeps
    store: WatchStore
    tax_threshold: float = 5.0
    checks: int = 0  # checks run since start
    committed: int = 0  # events committed since start

    @property
    def tasks(self) -> TaskStore:
        return TaskStore(self.store.store)

    async def run(
        self, chain_id: int, token: str, limit: int = 64, seconds: float | None = None
    ) -> int:
        """Run up to ``limit`` of ``token``'s dispatched tasks, in order, starting none
        after ``seconds``; returns the events committed.  A failure of the node or store
        stops the run (the rest wait, as those not started)."""
        node = self.deps.nodes.node(chain_id)
        added = 0
        until = None if seconds is None else time.monotonic() + seconds
        for task in (await asyncio.to_thread(self.tasks.taken, chain_id, token))[:limit]:
            if until is not None and time.monotonic() > until:
                break
            found, snap = await self._outcome(node, task)
            try:
                new = await asyncio.to_thread(self.store.finish, task, found, snap)
            except StoreConflict:
                continue  # another worker committed it
            added += new
            for event in found if new else ():
                metrics.watch_event(chain_id, event.kind)
        self.committed += added
        return added

    async def _outcome(self, node: Node, task: Task) -> Outcome:
        if task.kind == "new_pool":
            return await self._launch(node, task, str(task.pool))
        before = await asyncio.to_thread(self.store.snapshot, node.id, task.token)
        if before is not None and before.get("pending"):
            return await self._launch(node, task, str(before["pair"]))
        if task.kind == "recheck" and not await self._watched(node.id, task.token):
            return [], None  # a new pool's liquidity after its first check: nothing to do
        after = await self._check(node, task.token, (before or {}).get("pair"))
        if before is None or before.get("unchecked"):
            # first answer: the baseline, nothing to compare (one that cannot be checked
            # now waits for its next trigger rather than being tried every poll)
            return [], after or {"unchecked": True}
        if after is None:
            return [], None
        found = events.changes(before, after, self.tax_threshold)
        if not found:
            return [], after
        body = events.alert_body(node.id, task.token, task.block, task.tx, found, after)
        ident = events.event_id(node.id, task.token, "alert", task.block, found)
        return [await self._event(node, ident, task, "alert", body)], after

    async def _watched(self, chain_id: int, token: str) -> bool:
        return token in await asyncio.to_thread(self.store.watched, chain_id)

    async def _launch(self, node: Node, task: Task, pool: str) -> Outcome:
        snap = await self._check(node, task.token, pool)
        if snap is None or not snap.get("liquidity"):
            return [], {"pending": True, "pair": pool}
        body = events.new_pool_body(node.id, task.token, pool, task.block, task.tx, snap)
        ident = events.event_id(node.id, task.token, "new_pool", task.block, pool)
        return [await self._event(node, ident, task, "new_pool", body)], snap

    async def _event(
        self, node: Node, ident: str, task: Task, kind: str, body: dict[str, Any]
    ) -> NewEvent:
        body = {**body, "id": ident}
        block_hash = await blocks.block_hash(node, task.block)
        return NewEvent(ident, node.id, task.token, kind, task.block, block_hash, body)

    async def _check(self, node: Node, token: str, pool: str | None) -> dict[str, Any] | None:
        """The token's answer reduced to a snapshot; None when it cannot be checked (no
        liquidity yet, an answer the check refuses).  A node, store or capacity failure
        is raised: the task runs again later."""
        self.checks += 1
        metrics.watch_check(node.id)
        try:
            result = await is_honeypot(self.deps, token, node.id, pool)
            later = events.fail_after(result)
            # the head read after the check: the one it simulated at is no later, so the
            # horizon is never early
            head = None if later is None else await blocks.head(node)
        except RETRY_LATER:
            raise
        except TokenRiskError as exc:
            log.info("chain %s: %s not checked (%s)", node.id, token, exc.__class__.__name__)
            return None
        snap = events.snapshot(result)
        if head is not None and later is not None:
            number, stamp = head
            ahead = later // events.SECONDS_PER_BLOCK
            snap["sellsFailFrom"] = {"block": number + ahead, "timestamp": stamp + later}
        return snap

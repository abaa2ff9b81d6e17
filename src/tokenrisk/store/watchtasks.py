"""The watcher's queued checks (``watch_tasks``): what the head follower found to check,
kept in the store until a worker has committed its outcome.

The follower inserts a range's tasks in the same transaction that moves the chain's
cursor (:meth:`tokenrisk.store.watch.WatchStore.commit`), so a found check is never lost
whatever restarts: Redis only carries "token X has work" (a job per token), and a job
lost with Redis is enqueued again from these rows.  A task is *queued* until the
follower hands it out under the per-block cap (:meth:`TaskStore.dispatch`), then
*dispatched*; a worker runs a token's dispatched tasks in block order and deletes each in
the transaction that writes its events and answer (:meth:`WatchStore.finish`), by
compare-and-set: a second worker running the same task commits nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, select, update

from tokenrisk.store.engine import Store, upsert, watch_task_table

KINDS = ("baseline", "new_pool", "recheck")  # also their order within one block


@dataclass(frozen=True)
class Task:
    """One check to run: a new pool's token, a watched token's re-check or its baseline."""

    chain_id: int
    token: str  # lowercase
    kind: str
    block: int
    why: str  # what set it off: pool, call, control, liquidity, interval, horizon, baseline
    tx: str | None = None
    pool: str | None = None

    @property
    def task_id(self) -> str:
        """A digest of what the task is: the same finding makes the same row."""
        what = [self.token.lower(), self.kind, self.block, self.pool, self.tx]
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]


def insert_tasks(conn: Connection, tasks: Iterable[Task]) -> None:
    """Add ``tasks`` (queued); one already there is kept as it is."""
    now = time.time()
    for task in tasks:
        values = {
            "chain_id": task.chain_id,
            "task_id": task.task_id,
            "token": task.token.lower(),
            "kind": task.kind,
            "block": task.block,
            "tx": task.tx,
            "pool": task.pool,
            "why": task.why,
            "dispatched": 0,
            "created_at": now,
        }
        conn.execute(upsert(conn, watch_task_table).values(**values).on_conflict_do_nothing())


def remove_task(conn: Connection, task: Task) -> bool:
    """Delete ``task``; False when another worker already did (its outcome is in)."""
    c = watch_task_table.c
    where = (c.chain_id == task.chain_id) & (c.task_id == task.task_id)
    return bool(conn.execute(delete(watch_task_table).where(where)).rowcount == 1)


def drop_from(conn: Connection, chain_id: int, block: int) -> None:
    """A reorg: tasks found in ``block`` or later left the chain with it."""
    c = watch_task_table.c
    conn.execute(delete(watch_task_table).where((c.chain_id == chain_id) & (c.block >= block)))


class TaskStore:
    """Reads and the dispatch of ``watch_tasks`` (synchronous, thread-safe)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def dispatch(self, chain_id: int, budget: int, ceiling: int) -> int:
        """Hand out up to ``budget`` queued tasks, oldest block first, never leaving more
        than ``ceiling`` handed out and not done; returns how many."""
        c = watch_task_table.c
        with self.store.transaction("watch tasks dispatch", writes=True) as conn:
            busy = conn.execute(
                select(func.count()).where((c.chain_id == chain_id) & (c.dispatched == 1))
            ).scalar()
            room = max(min(budget, ceiling - int(busy or 0)), 0)
            if room == 0:
                return 0
            rows = conn.execute(
                select(c.task_id)
                .where((c.chain_id == chain_id) & (c.dispatched == 0))
                .order_by(c.block, c.kind, c.task_id)  # kinds sort in their KINDS order
                .limit(room)
            ).all()
            ids = [str(r.task_id) for r in rows]
            if ids:
                where = (c.chain_id == chain_id) & c.task_id.in_(ids)
                conn.execute(update(watch_task_table).where(where).values(dispatched=1))
            return len(ids)

    def open_tokens(self, chain_id: int) -> list[str]:
        """Tokens with dispatched tasks (a job each), oldest first."""
        c = watch_task_table.c
        with self.store.transaction("watch tasks read") as conn:
            rows = conn.execute(
                select(c.token, func.min(c.block).label("first"))
                .where((c.chain_id == chain_id) & (c.dispatched == 1))
                .group_by(c.token)
                .order_by("first", c.token)
            )
            return [str(r.token) for r in rows]

    def tokens(self, chain_id: int) -> set[str]:
        """Tokens with any task not done yet."""
        c = watch_task_table.c
        with self.store.transaction("watch tasks read") as conn:
            rows = conn.execute(select(c.token).where(c.chain_id == chain_id).distinct())
            return {str(r.token) for r in rows}

    def taken(self, chain_id: int, token: str) -> list[Task]:
        """``token``'s dispatched tasks in the order they must run."""
        c = watch_task_table.c
        where = (c.chain_id == chain_id) & (c.token == token.lower()) & (c.dispatched == 1)
        with self.store.transaction("watch tasks read") as conn:
            rows = conn.execute(select(watch_task_table).where(where)).all()
        tasks = [
            Task(chain_id, str(r.token), str(r.kind), int(r.block), str(r.why), r.tx, r.pool)
            for r in rows
        ]
        return sorted(tasks, key=lambda t: (t.block, KINDS.index(t.kind), t.task_id))

    def waiting(self, chain_id: int) -> tuple[int, int | None]:
        """How many tasks are not done yet, and the oldest block among them."""
        c = watch_task_table.c
        with self.store.transaction("watch tasks read") as conn:
            row = conn.execute(
                select(func.count(), func.min(c.block)).where(c.chain_id == chain_id)
            ).one()
        return int(row[0] or 0), None if row[1] is None else int(row[1])

    def pools(self, chain_id: int) -> dict[str, str]:
        """New pools' tokens whose first check is not done yet: token -> pool (their
        liquidity events still count as triggers)."""
        c = watch_task_table.c
        where = (c.chain_id == chain_id) & (c.kind == "new_pool")
        with self.store.transaction("watch tasks read") as conn:
            rows = conn.execute(select(c.token, c.pool).where(where))
            return {str(r.token): str(r.pool) for r in rows if r.pool}

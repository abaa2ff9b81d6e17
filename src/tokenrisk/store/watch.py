"""The watcher's tables: watchlists, per-chain cursors, last answers, events, deliveries.

Exactly once rests on one rule: a processed block range is committed by ONE transaction
that inserts its events, replaces the last answers of the tokens it re-checked and moves
the chain's cursor with a compare-and-set (:meth:`WatchStore.commit`).  A watcher killed
before the commit leaves nothing behind and the next one redoes the range; two watchers
on one chain cannot both commit it (the loser gets :class:`StoreConflict`).  Event ids
are content digests (``tokenrisk.watch.events``), unique in the table, so a range redone
after a commit that did land inserts nothing twice.

Events are numbered by ``seq`` (the table's autoincrement): the SSE stream's
``Last-Event-ID`` and each webhook endpoint's delivery cursor are such numbers.
A reorg that undoes a block with events appends a ``retracted`` event naming each
(:meth:`WatchStore.rewind`), so a reader that saw the event is told, in order.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from tokenrisk.errors import StoreConflict
from tokenrisk.store.engine import (
    Store,
    dead_letter_table,
    upsert,
    watch_cursor_table,
    watch_event_table,
    watch_state_table,
    watchlist_table,
    webhook_table,
)
from tokenrisk.store.watchtasks import Task as Task
from tokenrisk.store.watchtasks import TaskStore as TaskStore
from tokenrisk.store.watchtasks import drop_from, insert_tasks, remove_task


@dataclass(frozen=True)
class WatchCursor:
    """The newest block the watcher committed on a chain, with its hash (reorg check)."""

    block: int
    block_hash: str


@dataclass(frozen=True)
class StoredEvent:
    """One event row: ``seq`` orders them; ``body`` is what readers receive."""

    seq: int
    event_id: str
    chain_id: int
    token: str
    kind: str
    block: int
    body: dict[str, Any]


@dataclass(frozen=True)
class NewEvent:
    """An event to insert (its ``seq`` is given by the store)."""

    event_id: str
    chain_id: int
    token: str
    kind: str
    block: int
    block_hash: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Delivery:
    """A webhook endpoint's progress: events up to ``delivered_seq`` are done."""

    delivered_seq: int
    attempts: int
    last_status: str


def endpoint_name(url: str) -> str:
    """A webhook endpoint's name in the store, logs and status: a digest, never the URL
    (it may hold a token)."""
    return hashlib.sha256(url.encode()).hexdigest()[:16]


class WatchStore:
    """The watcher's reads and writes on a :class:`Store` (synchronous, thread-safe)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # WATCHLIST

    def add(self, key_name: str, chain_id: int, token: str, limit: int) -> bool:
        """Watch ``token`` for ``key_name``; False when the key already has ``limit``
        tokens (an existing entry is kept and counts as success)."""
        with self.store.transaction("watchlist add", writes=True) as conn:
            where = watchlist_table.c.key_name == key_name
            count = conn.execute(select(func.count()).where(where)).scalar() or 0
            stmt = upsert(conn, watchlist_table).values(
                key_name=key_name, chain_id=chain_id, token=token.lower(), created_at=time.time()
            )
            present = self._listed(conn, key_name, chain_id, token)
            if not present and count >= limit:
                return False
            conn.execute(stmt.on_conflict_do_nothing())
            return True

    def _listed(self, conn: Connection, key_name: str, chain_id: int, token: str) -> bool:
        c = watchlist_table.c
        row = conn.execute(
            select(c.token).where(
                (c.key_name == key_name) & (c.chain_id == chain_id) & (c.token == token.lower())
            )
        ).first()
        return row is not None

    def remove(self, key_name: str, chain_id: int, token: str) -> bool:
        c = watchlist_table.c
        with self.store.transaction("watchlist remove", writes=True) as conn:
            where = (c.key_name == key_name) & (c.chain_id == chain_id)
            result = conn.execute(delete(watchlist_table).where(where & (c.token == token.lower())))
            return bool(result.rowcount)

    def listed(self, key_name: str) -> list[tuple[int, str]]:
        """``(chain id, lowercase token)`` pairs ``key_name`` watches, oldest first."""
        c = watchlist_table.c
        with self.store.transaction("watchlist read") as conn:
            rows = conn.execute(
                select(c.chain_id, c.token).where(c.key_name == key_name).order_by(c.created_at)
            )
            return [(int(r.chain_id), str(r.token)) for r in rows]

    def watched(self, chain_id: int) -> set[str]:
        """Every token anyone watches on ``chain_id`` (lowercase)."""
        c = watchlist_table.c
        with self.store.transaction("watchlist read") as conn:
            rows = conn.execute(select(c.token).where(c.chain_id == chain_id).distinct())
            return {str(r.token) for r in rows}

    def watchers(self, chain_id: int, token: str) -> set[str]:
        """The key names that watch ``token``."""
        c = watchlist_table.c
        with self.store.transaction("watchlist read") as conn:
            rows = conn.execute(
                select(c.key_name).where((c.chain_id == chain_id) & (c.token == token.lower()))
            )
            return {str(r.key_name) for r in rows}

    def visible(self, key_name: str, event: StoredEvent) -> bool:
        """Whether ``key_name`` receives ``event`` (its SSE stream and its webhooks): new
        pools and retractions go to every key, an alert to the keys watching its token."""
        return event.kind != "alert" or key_name in self.watchers(event.chain_id, event.token)

    # CURSOR, ANSWERS, EVENTS

    def cursor(self, chain_id: int) -> WatchCursor | None:
        c = watch_cursor_table.c
        with self.store.transaction("watch cursor read") as conn:
            row = conn.execute(select(c.block, c.block_hash).where(c.chain_id == chain_id)).first()
            return None if row is None else WatchCursor(int(row.block), str(row.block_hash))

    def snapshot(self, chain_id: int, token: str) -> dict[str, Any] | None:
        """The last answer recorded for ``token`` (None: never checked by the watcher)."""
        c = watch_state_table.c
        with self.store.transaction("watch state read") as conn:
            row = conn.execute(
                select(c.snapshot).where((c.chain_id == chain_id) & (c.token == token.lower()))
            ).first()
            return None if row is None else dict(json.loads(row.snapshot))

    def pending(self, chain_id: int) -> dict[str, str | None]:
        """New pools' tokens waiting for liquidity: token -> pool."""
        c = watch_state_table.c
        with self.store.transaction("watch state read") as conn:
            rows = conn.execute(
                select(c.token, c.snapshot).where(
                    (c.chain_id == chain_id) & c.snapshot.contains('"pending": true')
                )
            )
            return {str(r.token): json.loads(r.snapshot).get("pair") for r in rows}

    def commit(
        self,
        chain_id: int,
        expected: WatchCursor | None,
        new: WatchCursor,
        events: Sequence[NewEvent],
        snapshots: dict[str, tuple[int, dict[str, Any]]],
        tasks: Sequence[Task] = (),
    ) -> int:
        """One processed range, all or nothing (module docstring): its events, answers
        and the checks it found (queued); returns how many events were new.  Raises
        StoreConflict when the cursor is not ``expected``.  A cursor moved back (a
        reorg) drops the queued checks of the blocks it left."""
        with self.store.transaction("watch commit", writes=True) as conn:
            _move(conn, chain_id, expected, new)
            if expected is not None and new.block < expected.block:
                drop_from(conn, chain_id, new.block + 1)
            insert_tasks(conn, tasks)
            for token, (block, snap) in snapshots.items():
                _put_snapshot(conn, chain_id, token, block, snap)
            return sum(_insert_event(conn, event) for event in events)

    def finish(
        self, task: Task, events: Sequence[NewEvent], snapshot: dict[str, Any] | None
    ) -> int:
        """A check's outcome with its task's removal, all or nothing; returns how many
        events were new.  StoreConflict when another worker finished the task first."""
        with self.store.transaction("watch check commit", writes=True) as conn:
            if not remove_task(conn, task):
                raise StoreConflict("store: another worker finished this check first")
            if snapshot is not None:
                _put_snapshot(conn, task.chain_id, task.token, task.block, snapshot)
            return sum(_insert_event(conn, event) for event in events)

    def events_after(self, seq: int, limit: int = 100) -> list[StoredEvent]:
        c = watch_event_table.c
        with self.store.transaction("watch events read") as conn:
            rows = conn.execute(
                select(watch_event_table).where(c.seq > seq).order_by(c.seq).limit(limit)
            )
            return [_stored(r) for r in rows]

    def events_at_or_after(self, chain_id: int, block: int) -> list[StoredEvent]:
        c = watch_event_table.c
        with self.store.transaction("watch events read") as conn:
            where = (c.chain_id == chain_id) & (c.block >= block) & (c.kind != "retracted")
            rows = conn.execute(select(watch_event_table).where(where).order_by(c.seq))
            return [_stored(r) for r in rows]

    # WEBHOOKS

    def delivery(self, endpoint: str) -> Delivery:
        c = webhook_table.c
        with self.store.transaction("webhook read") as conn:
            row = conn.execute(select(webhook_table).where(c.endpoint == endpoint)).first()
        if row is None:
            return Delivery(0, 0, "never")
        return Delivery(int(row.delivered_seq), int(row.attempts), str(row.last_status))

    def record_delivery(self, endpoint: str, delivery: Delivery, dead: str | None = None) -> None:
        """Store an endpoint's progress; ``dead``: the reason its event ``delivered_seq``
        was given up on (kept as a dead letter)."""
        now = time.time()
        values = {
            "delivered_seq": delivery.delivered_seq,
            "attempts": delivery.attempts,
            "last_status": delivery.last_status[:64],
            "updated_at": now,
        }
        with self.store.transaction("webhook write", writes=True) as conn:
            stmt = upsert(conn, webhook_table).values(endpoint=endpoint, **values)
            conn.execute(stmt.on_conflict_do_update(index_elements=["endpoint"], set_=values))
            if dead is not None:
                row = {"endpoint": endpoint, "seq": delivery.delivered_seq}
                dead_row = {**row, "reason": dead[:200], "created_at": now}
                conn.execute(
                    upsert(conn, dead_letter_table).values(**dead_row).on_conflict_do_nothing()
                )

    def dead_letters(self, endpoint: str) -> list[tuple[int, str]]:
        c = dead_letter_table.c
        with self.store.transaction("dead letters read") as conn:
            rows = conn.execute(
                select(c.seq, c.reason).where(c.endpoint == endpoint).order_by(c.seq)
            )
            return [(int(r.seq), str(r.reason)) for r in rows]


def _move(conn: Connection, chain_id: int, expected: WatchCursor | None, new: WatchCursor) -> None:
    c = watch_cursor_table.c
    values = {"block": new.block, "block_hash": new.block_hash, "updated_at": time.time()}
    if expected is None:
        exists = conn.execute(select(c.block).where(c.chain_id == chain_id)).first()
        if exists is not None:
            raise StoreConflict("store: another watcher started this chain first")
        conn.execute(insert(watch_cursor_table).values(chain_id=chain_id, **values))
        return
    where = (c.chain_id == chain_id) & (c.block == expected.block)
    moved = conn.execute(
        update(watch_cursor_table)
        .where(where & (c.block_hash == expected.block_hash))
        .values(**values)
    )
    if moved.rowcount != 1:
        raise StoreConflict("store: another watcher moved this chain's cursor first")


def _put_snapshot(
    conn: Connection, chain_id: int, token: str, block: int, snap: dict[str, Any]
) -> None:
    values = {"snapshot": json.dumps(snap, sort_keys=True), "block": block}
    stmt = upsert(conn, watch_state_table).values(chain_id=chain_id, token=token.lower(), **values)
    conn.execute(stmt.on_conflict_do_update(index_elements=["chain_id", "token"], set_=values))


def _insert_event(conn: Connection, event: NewEvent) -> int:
    c = watch_event_table.c
    if conn.execute(select(c.seq).where(c.event_id == event.event_id)).first() is not None:
        return 0
    conn.execute(
        insert(watch_event_table).values(
            event_id=event.event_id,
            chain_id=event.chain_id,
            token=event.token.lower(),
            kind=event.kind,
            block=event.block,
            block_hash=event.block_hash,
            body=json.dumps(event.body, sort_keys=True),
            created_at=time.time(),
        )
    )
    return 1


def _stored(row: Any) -> StoredEvent:
    body = dict(json.loads(row.body))
    body["seq"] = int(row.seq)
    return StoredEvent(
        int(row.seq),
        str(row.event_id),
        int(row.chain_id),
        str(row.token),
        str(row.kind),
        int(row.block),
        body,
    )

"""Persistent state: the Transfer-log index and the API keys.

One schema, written with SQLAlchemy 2 Core, runs on SQLite (the default: one file under
the data directory, WAL mode) and on PostgreSQL (``postgresql+psycopg://...``)::

    index_cursors      (chain_id, token) -> start_block, last_block, last_block_hash
    index_checkpoints  (chain_id, token, block) -> block_hash   newest 64 commits
    balances           (chain_id, token, holder) -> balance     non-zero only
    transfers          (chain_id, token, block, log_index) -> tx_hash, sender, recipient, amount
    api_keys           name -> tier, key_hash (NULL once revoked), created/reset/revoked/last used
    api_keys_retired   key_hash -> name, reason ("reset" or "revoked"), retired_at
    api_key_usage      (name, day, endpoint) -> requests
    schema_version     version -> description, applied_at   one row per applied migration
    watchlist, watch_cursors, watch_state, watch_events, webhook_cursors,
    webhook_dead_letters,  the watcher's tables (operations in tokenrisk.store.watch
    watch_tasks,           and tokenrisk.store.watchtasks)
    watch_key_webhooks

The schema is versioned: :data:`MIGRATIONS` lists every change in order, and opening a
store applies the ones it lacks, each in the same transaction as its ``schema_version``
row (DDL is transactional on both backends), so a crash leaves the old version or the
new one.  Version 1 is the index as it was before versioning and is created with
``checkfirst``, so databases made by earlier releases adopt the mechanism unchanged
(version 2 then drops their unused ``results_cache``).  A database newer than the code
is refused rather than guessed at.

Addresses are stored lowercase (so ties sort by address) and returned checksummed.
Amounts are exact signed integers of up to 78 digits (uint256 fits): ``NUMERIC(78,0)``
on PostgreSQL, zero-padded decimal text on SQLite, whose numbers are 64-bit.

Every indexed window is written by ONE transaction that also moves the cursor with a
compare-and-set: a crash loses the whole window or nothing, and two indexers of the same
token cannot both apply a window (the loser gets :class:`StoreConflict`).  Transfers are
kept whole so a reorg can be undone exactly (:meth:`Store.rollback`) and so siphon
detection can see who moved a holder's tokens.

SQLAlchemy errors never leave this module: they become :class:`StoreError` (status 503),
whose message names the operation, never the database URL (it may hold a password).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Dialect,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    and_,
    create_engine,
    delete,
    event,
    func,
    insert,
    make_url,
    select,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeDecorator, TypeEngine

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum
from tokenrisk.errors import SchemaTooNew, StoreConflict, StoreError

AMOUNT_DIGITS = 78
AMOUNT_LIMIT = 10**AMOUNT_DIGITS
CHECKPOINTS_KEPT = 64
SCHEMA_LOCK_ID = 0x746F6B656E7269  # "tokenri": PostgreSQL advisory lock for create_all
_CHUNK = 500  # bound parameters per IN (...) list; far below SQLite's limit
_WRITES = "tokenrisk_writes"  # connection.info key read by the SQLite BEGIN hook


@dataclass(frozen=True)
class Cursor:
    """How far a token is indexed.

    ``last_block`` is the last block whose logs are fully applied; before the first
    window it is ``start_block - 1`` (and ``last_block_hash`` may be None).
    """

    start_block: int
    last_block: int
    last_block_hash: str | None


class TransferLog(NamedTuple):
    """One ERC-20 Transfer event; ``sender``/``recipient`` are its from/to (lowercase).

    A named tuple rather than a dataclass: the indexer builds one per log, and tuples
    are cheap to create and go straight into the bulk insert.
    """

    block: int
    log_index: int
    tx_hash: str
    sender: str
    recipient: str
    amount: int


class Amount(TypeDecorator[int]):
    """Exact signed integer of up to 78 decimal digits on both backends.

    SQLite gets zero-padded text ("-" before negatives), so ordering and comparisons
    are numeric for non-negative values, which is all the queries rely on.
    """

    impl = Numeric(AMOUNT_DIGITS, 0)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(AMOUNT_DIGITS + 1))
        return dialect.type_descriptor(Numeric(AMOUNT_DIGITS, 0))

    def process_bind_param(self, value: int | None, dialect: Dialect) -> Any:
        return None if value is None else amount_param(dialect.name, value)

    def process_result_value(self, value: Any, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


def amount_param(backend: str, value: int) -> Any:
    """The database value of an amount (see :class:`Amount`); raises ValueError."""
    if not -AMOUNT_LIMIT < value < AMOUNT_LIMIT:
        raise ValueError("amount does not fit in 78 decimal digits")
    if backend == "sqlite":
        return (
            str(value).zfill(AMOUNT_DIGITS)
            if value >= 0
            else "-" + str(-value).zfill(AMOUNT_DIGITS)
        )
    return Decimal(value)


metadata = MetaData()

cursor_table = Table(
    "index_cursors",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("start_block", BigInteger, nullable=False),
    Column("last_block", BigInteger, nullable=False),
    Column("last_block_hash", String(66)),
    Column("updated_at", Float, nullable=False),
)

checkpoint_table = Table(
    "index_checkpoints",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("block", BigInteger, primary_key=True),
    Column("block_hash", String(66), nullable=False),
)

balance_table = Table(
    "balances",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("holder", String(42), primary_key=True),
    Column("balance", Amount(), nullable=False),
    Index("ix_balances_rank", "chain_id", "token", "balance", "holder"),
)

transfer_table = Table(
    "transfers",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("block", BigInteger, primary_key=True),
    Column("log_index", Integer, primary_key=True),
    Column("tx_hash", String(66), nullable=False),
    Column("sender", String(42), nullable=False),
    Column("recipient", String(42), nullable=False),
    Column("amount", Amount(), nullable=False),
    Index("ix_transfers_sender", "chain_id", "token", "sender", "block"),
)

api_key_table = Table(
    "api_keys",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("tier", String(64), nullable=False),
    Column("key_hash", String(80), unique=True),  # NULL once revoked; see tokenrisk.store.keys
    Column("created_at", Float, nullable=False),
    Column("reset_at", Float),
    Column("revoked_at", Float),
    Column("last_used_at", Float),
)

retired_key_table = Table(
    "api_keys_retired",
    metadata,
    Column("key_hash", String(80), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("reason", String(16), nullable=False),
    Column("retired_at", Float, nullable=False),
)

key_usage_table = Table(
    "api_key_usage",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("day", String(10), primary_key=True),  # UTC date, YYYY-MM-DD
    Column("endpoint", String(64), primary_key=True),
    Column("requests", BigInteger, nullable=False),
)

watchlist_table = Table(
    "watchlist",
    metadata,
    Column("key_name", String(64), primary_key=True),  # "" for callers without a key
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("created_at", Float, nullable=False),
)

watch_cursor_table = Table(
    "watch_cursors",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("block", BigInteger, nullable=False),
    Column("block_hash", String(66), nullable=False),
    Column("updated_at", Float, nullable=False),
)

watch_state_table = Table(
    "watch_state",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("token", String(42), primary_key=True),
    Column("snapshot", Text, nullable=False),  # JSON of tokenrisk.watch.snapshot.Snapshot
    Column("block", BigInteger, nullable=False),
)

watch_event_table = Table(
    "watch_events",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(64), nullable=False, unique=True),
    Column("chain_id", BigInteger, nullable=False),
    Column("token", String(42), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("block", BigInteger, nullable=False),
    Column("block_hash", String(66), nullable=False),
    Column("body", Text, nullable=False),  # the event as delivered (JSON)
    Column("created_at", Float, nullable=False),
)

webhook_table = Table(
    "webhook_cursors",
    metadata,
    Column("endpoint", String(64), primary_key=True),  # a digest of the URL, never the URL
    Column("delivered_seq", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("last_status", String(64), nullable=False),
    Column("updated_at", Float, nullable=False),
)

dead_letter_table = Table(
    "webhook_dead_letters",
    metadata,
    Column("endpoint", String(64), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("reason", String(200), nullable=False),
    Column("created_at", Float, nullable=False),
)

watch_task_table = Table(
    "watch_tasks",
    metadata,
    Column("chain_id", BigInteger, primary_key=True),
    Column("task_id", String(32), primary_key=True),  # a digest of what the task is
    Column("token", String(42), nullable=False),
    Column("kind", String(16), nullable=False),  # new_pool, recheck, baseline
    Column("block", BigInteger, nullable=False),
    Column("tx", String(66), nullable=True),
    Column("pool", String(42), nullable=True),
    Column("why", String(16), nullable=False),
    Column("dispatched", Integer, nullable=False),  # 0: queued, 1: handed to a worker
    Column("created_at", Float, nullable=False),
)

key_webhook_table = Table(
    "watch_key_webhooks",
    metadata,
    Column("key_name", String(64), primary_key=True),  # "" for callers without a key
    Column("endpoint", String(64), primary_key=True),  # a digest of the URL
    Column("url", Text, nullable=False),  # never logged nor returned
    Column("secret", String(128), nullable=False),
    Column("created_at", Float, nullable=False),
)

schema_table = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", String(200), nullable=False),
    Column("applied_at", Float, nullable=False),
)


@dataclass(frozen=True)
class Migration:
    """One schema change; ``apply`` runs inside the migrating transaction."""

    version: int
    description: str
    apply: Callable[[Connection], None]


def _create(*tables: Table) -> Callable[[Connection], None]:
    def apply(conn: Connection) -> None:
        metadata.create_all(conn, tables=list(tables), checkfirst=True)

    return apply


def _drop_results_cache(conn: Connection) -> None:
    """Earlier releases kept results in the store; they live in memory or Redis now."""
    conn.execute(text("DROP TABLE IF EXISTS results_cache"))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "Transfer-log index",
        _create(cursor_table, checkpoint_table, balance_table, transfer_table),
    ),
    Migration(2, "drop the unused results cache", _drop_results_cache),
    Migration(
        3, "API keys and their usage", _create(api_key_table, retired_key_table, key_usage_table)
    ),
    Migration(
        4,
        "watch: watchlists, cursors, events, webhook deliveries",
        _create(
            watchlist_table,
            watch_cursor_table,
            watch_state_table,
            watch_event_table,
            webhook_table,
            dead_letter_table,
        ),
    ),
    Migration(
        5,
        "watch: queued checks, webhook endpoints per API key",
        _create(watch_task_table, key_webhook_table),
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


def normalize_url(url: str) -> str:
    """Route plain PostgreSQL URLs to the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def create_store(url: str) -> Store:
    """Open (and create the tables of) the store at ``url``.

    ``sqlite:///path/file.db`` creates missing parent directories; ``sqlite://`` is an
    in-memory store shared by all threads (tests).  Raises StoreError.
    """
    store = Store(_engine(normalize_url(url)))
    try:
        store.create_all()
    except StoreError:
        store.close()
        raise
    return store


def _engine(url: str) -> Engine:
    try:
        if not url.startswith("sqlite"):
            return create_engine(url, pool_pre_ping=True)
        return _sqlite_engine(url)
    except (SQLAlchemyError, ValueError, ImportError, OSError) as exc:
        raise StoreError(f"store: cannot open ({exc.__class__.__name__})") from exc


def _sqlite_engine(url: str) -> Engine:
    path = make_url(url).database or ""
    in_memory = path in ("", ":memory:")
    if in_memory:
        engine = create_engine(
            "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    _sqlite_events(engine, wal=not in_memory)
    return engine


def _sqlite_events(engine: Engine, wal: bool) -> None:
    """WAL, and real transactions: pysqlite would otherwise run SELECTs outside them."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        if wal:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # IMMEDIATE takes the write lock up front: a deferred transaction that reads
        # and then writes fails at once with "database is locked" under contention.
        writes = connection.info.get(_WRITES, False)
        _driver(connection, "BEGIN IMMEDIATE" if writes else "BEGIN", ()).close()


def _driver(conn: Connection, sql: str, params: tuple[Any, ...]) -> Any:
    """``sql`` run by the driver's own cursor on ``conn``, in its transaction: the few
    statements every index refresh runs (the cursor read and moved, the checkpoints),
    each of which cost ~20 us of SQLAlchemy's execution machinery (statement context,
    result wrapping, events) for a few microseconds of SQLite, twice per check at every
    new head.  The same SQL and parameters ``exec_driver_sql`` passed on; the driver's
    errors are mapped by :meth:`Store._transaction` like SQLAlchemy's."""
    cursor = conn.connection.cursor()
    cursor.execute(sql, params)
    return cursor


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def balance_deltas(logs: Iterable[TransferLog], sign: int = 1) -> dict[str, int]:
    """Net balance change per holder; the zero address (mint/burn side) is left out."""
    deltas: dict[str, int] = {}
    for log in logs:
        amount = sign * log.amount
        deltas[log.sender] = deltas.get(log.sender, 0) - amount
        deltas[log.recipient] = deltas.get(log.recipient, 0) + amount
    deltas.pop(ZERO_ADDRESS, None)
    return {holder: delta for holder, delta in deltas.items() if delta}


class Store:
    """The database behind tokenrisk; all methods are synchronous and thread-safe.

    Async callers run them with ``asyncio.to_thread``.  Every method raises StoreError
    (or its subclass StoreConflict) and nothing else from the database layer.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._driver_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        # what this process learnt of a token's index (the head it reached, its counts),
        # for the holders layer: valid while the token's content_version stays, so a
        # check repeated in one block, or at a later head without a transfer of the
        # token, skips the database.  Every write here bumps ``generation``.
        self.memo: MemoryCache[tuple[Any, ...], Any] = MemoryCache(max_entries=16_384)
        self.generation = 0
        self._epoch = 0  # bumped when every token's content may have changed
        self._changed: dict[tuple[int, str], int] = {}

    def content_version(self, chain_id: int, token: str) -> tuple[int, int]:
        """Changes with every write made here that may change ``token``'s indexed
        transfers or balances (a window of logs, a rollback, a reset, dropping the
        schema); a window without logs, which only moves the cursor, leaves it.
        Writes by other processes are not seen: callers pair it with the cursor."""
        return self._epoch, self._changed.get((chain_id, token.lower()), 0)

    def _content_changes(self, chain_id: int, token: str) -> None:
        key = (chain_id, token.lower())
        self._changed[key] = self._changed.get(key, 0) + 1

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._engine.dialect.name

    def close(self) -> None:
        self._engine.dispose()

    @contextmanager
    def transaction(self, operation: str, writes: bool = False) -> Iterator[Connection]:
        """One transaction for the store's sibling modules (``store.keys``), errors mapped.

        ``operation`` names it in a StoreError; ``writes`` takes SQLite's write lock at BEGIN.
        """
        with self._transaction(operation, writes) as conn:
            yield conn

    @contextmanager
    def _transaction(self, operation: str, writes: bool = False) -> Iterator[Connection]:
        """One transaction; ``writes`` makes SQLite take its write lock at BEGIN."""
        try:
            with self._engine.connect() as conn:
                conn.info[_WRITES] = writes
                with conn.begin():
                    yield conn
        except StoreError:
            raise
        except SQLAlchemyError as exc:
            raise StoreError(f"store: {operation} failed ({exc.__class__.__name__})") from exc
        except self._driver_error as exc:  # a statement run by the driver itself (_driver)
            raise StoreError(f"store: {operation} failed ({exc.__class__.__name__})") from exc
        except ValueError as exc:  # an amount outside NUMERIC(78, 0), from amount_param
            raise StoreError(f"store: {operation} failed (value out of range)") from exc

    # SCHEMA

    def create_all(self) -> None:
        """Apply the migrations this database lacks (idempotent); see the module docstring.

        On PostgreSQL an advisory lock serialises workers that start together, which
        would otherwise race on CREATE TABLE.  On SQLite a worker's first connection
        switches the file to WAL, which fails at once ("database is locked") while another
        worker is doing the same; a few short retries let the workers settle.
        """
        attempts = 5 if self._engine.dialect.name == "sqlite" else 1
        for attempt in range(attempts):
            try:
                return self._create_schema()
            except SchemaTooNew:
                raise
            except StoreError:
                if attempt + 1 == attempts:
                    raise
                time.sleep(0.05 * 2**attempt)

    def _create_schema(self) -> None:
        with self._transaction("migrate schema", writes=True) as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK_ID)))
            schema_table.create(conn, checkfirst=True)
            current = _schema_version(conn)
            if current > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"store: the database schema is version {current}, newer than this "
                    f"tokenrisk ({SCHEMA_VERSION}); upgrade tokenrisk"
                )
            for migration in MIGRATIONS:
                if migration.version > current:
                    migration.apply(conn)
                    conn.execute(
                        insert(schema_table).values(
                            version=migration.version,
                            description=migration.description,
                            applied_at=time.time(),
                        )
                    )

    def schema_version(self) -> int:
        """The newest migration applied to this database (0: none)."""
        with self._transaction("read schema version") as conn:
            return _schema_version(conn)

    def drop_all(self) -> None:
        """Drop every tokenrisk table (tests, ``tokenrisk store reset``)."""
        self.generation += 1
        self._epoch += 1
        with self._transaction("drop schema", writes=True) as conn:
            metadata.drop_all(conn, checkfirst=True)

    # CURSOR

    def get_cursor(self, chain_id: int, token: str) -> Cursor | None:
        with self._transaction("read cursor") as conn:
            return _read_cursor(conn, chain_id, token.lower())

    def checkpoints(self, chain_id: int, token: str) -> list[tuple[int, str]]:
        """Stored (block, hash) pairs of recent commits, newest first."""
        query = (
            select(checkpoint_table.c.block, checkpoint_table.c.block_hash)
            .where(_key(checkpoint_table, chain_id, token.lower()))
            .order_by(checkpoint_table.c.block.desc())
        )
        with self._transaction("read checkpoints") as conn:
            return [(int(b), str(h)) for b, h in conn.execute(query)]

    # WRITES

    def apply_window(
        self,
        chain_id: int,
        token: str,
        *,
        expected: Cursor | None,
        new: Cursor,
        logs: Sequence[TransferLog],
    ) -> None:
        """Record ``logs`` (all Transfer logs up to ``new.last_block``) atomically.

        ``expected`` is the cursor the caller read (None for a token never indexed).
        Raises StoreConflict when the stored cursor differs, StoreError otherwise.
        """
        self.generation += 1
        if logs:
            self._content_changes(chain_id, token)
        token = token.lower()
        with self._transaction("apply window", writes=True) as conn:
            _move_cursor(conn, chain_id, token, expected, new)
            _insert_transfers(conn, chain_id, token, logs)
            _apply_deltas(conn, chain_id, token, balance_deltas(logs))
            _add_checkpoint(conn, chain_id, token, new)

    def rollback(self, chain_id: int, token: str, *, expected: Cursor, to: Cursor) -> int:
        """Undo every transfer after ``to.last_block`` (a reorg); returns how many.

        Balances are reverted exactly from the stored transfers, in one transaction.
        """
        self.generation += 1
        self._content_changes(chain_id, token)
        token = token.lower()
        newer = _key(transfer_table, chain_id, token) & (transfer_table.c.block > to.last_block)
        with self._transaction("roll back", writes=True) as conn:
            _move_cursor(conn, chain_id, token, expected, to)
            undone = [
                _transfer_log(row) for row in conn.execute(select(transfer_table).where(newer))
            ]
            conn.execute(delete(transfer_table).where(newer))
            _apply_deltas(conn, chain_id, token, balance_deltas(undone, sign=-1))
            conn.execute(
                delete(checkpoint_table).where(
                    _key(checkpoint_table, chain_id, token)
                    & (checkpoint_table.c.block > to.last_block)
                )
            )
            if to.last_block_hash is not None:
                _add_checkpoint(conn, chain_id, token, to)
            return len(undone)

    def reset_token(self, chain_id: int, token: str) -> None:
        """Forget everything indexed for one token (it is re-indexed from scratch)."""
        self.generation += 1
        self._content_changes(chain_id, token)
        token = token.lower()
        with self._transaction("reset token", writes=True) as conn:
            for table in (transfer_table, balance_table, checkpoint_table, cursor_table):
                conn.execute(delete(table).where(_key(table, chain_id, token)))

    # QUERIES

    def top_holders(self, chain_id: int, token: str, limit: int = 50) -> list[tuple[str, int]]:
        """Holders with a positive balance, largest first, ties by address (checksummed)."""
        query = (
            select(balance_table.c.holder, balance_table.c.balance)
            .where(_positive(chain_id, token.lower()))
            .order_by(balance_table.c.balance.desc(), balance_table.c.holder.asc())
            .limit(limit)
        )
        with self._transaction("read top holders") as conn:
            return [(checksum(h), int(b)) for h, b in conn.execute(query)]

    def holder_count(self, chain_id: int, token: str) -> int:
        """Addresses with a positive balance (the zero address is never counted)."""
        query = (
            select(func.count())
            .select_from(balance_table)
            .where(_positive(chain_id, token.lower()))
        )
        with self._transaction("count holders") as conn:
            return int(conn.execute(query).scalar_one())

    def balances(self, chain_id: int, token: str) -> dict[str, int]:
        """Every non-zero balance (negative ones too: see docs/holders.md), lowercase keys."""
        query = select(balance_table.c.holder, balance_table.c.balance).where(
            _key(balance_table, chain_id, token.lower())
        )
        with self._transaction("read balances") as conn:
            return {str(h): int(b) for h, b in conn.execute(query)}

    def outgoing_transfers(
        self, chain_id: int, token: str, holders: Iterable[str], per_holder: int = 50
    ) -> list[TransferLog]:
        """The newest ``per_holder`` transfers sent by each holder, oldest first."""
        wanted = sorted({h.lower() for h in holders})
        found: list[TransferLog] = []
        with self._transaction("read transfers") as conn:
            for chunk in _chunks(wanted):
                found += _newest_outgoing(conn, chain_id, token.lower(), chunk, per_holder)
        return sorted(found, key=lambda x: (x.block, x.log_index))

    def transfers_sent(
        self,
        chain_id: int,
        token: str,
        senders: Iterable[str],
        last_block: int | None = None,
        limit: int = 100_000,
    ) -> list[TransferLog]:
        """Transfers sent by any of ``senders`` up to ``last_block``, oldest first.

        At most ``limit`` rows (the oldest), so a busy token cannot make one request
        read its whole history: launch analysis only needs the first blocks.
        """
        wanted = sorted({s.lower() for s in senders})
        where = _key(transfer_table, chain_id, token.lower()) & transfer_table.c.sender.in_(wanted)
        if last_block is not None:
            where = where & (transfer_table.c.block <= last_block)
        order = (transfer_table.c.block.asc(), transfer_table.c.log_index.asc())
        query = select(transfer_table).where(where).order_by(*order).limit(limit)
        with self._transaction("read sent transfers") as conn:
            return [_transfer_log(row) for row in conn.execute(query)]

    def transfer_count(self, chain_id: int, token: str) -> int:
        query = (
            select(func.count())
            .select_from(transfer_table)
            .where(_key(transfer_table, chain_id, token.lower()))
        )
        with self._transaction("count transfers") as conn:
            return int(conn.execute(query).scalar_one())


# HELPERS (all run inside a caller's transaction)


def _schema_version(conn: Connection) -> int:
    return int(conn.execute(select(func.max(schema_table.c.version))).scalar() or 0)


def _key(table: Table, chain_id: int, token: str) -> Any:
    return and_(table.c.chain_id == chain_id, table.c.token == token)


def _positive(chain_id: int, token: str) -> Any:
    return (
        _key(balance_table, chain_id, token)
        & (balance_table.c.balance > 0)
        & (balance_table.c.holder != ZERO_ADDRESS)
    )


def upsert(conn: Connection, table: Table) -> Any:
    """A dialect INSERT that supports ``on_conflict_do_update``."""
    name = conn.dialect.name
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise StoreError(f"store: unsupported database backend {name!r}")


# The cursor and checkpoint statements every indexed block runs (at a new head, a
# window without logs is nothing else) are written out for the driver: building them
# with SQLAlchemy's expression language cost ~4x SQLite's own work.  ``{m}`` is the
# driver's placeholder (``_mark``).
_READ_CURSOR = (
    "SELECT start_block, last_block, last_block_hash FROM index_cursors"
    " WHERE chain_id = {m} AND token = {m}"
)
_MOVE_CURSOR = (
    "UPDATE index_cursors SET start_block = {m}, last_block = {m}, last_block_hash = {m},"
    " updated_at = {m} WHERE chain_id = {m} AND token = {m} AND last_block = {m}"
    " AND last_block_hash {same}"
)
_DROP_LATER_CHECKPOINTS = (
    "DELETE FROM index_checkpoints WHERE chain_id = {m} AND token = {m} AND block >= {m}"
)
_ADD_CHECKPOINT = (
    "INSERT INTO index_checkpoints (chain_id, token, block, block_hash) VALUES ({m}, {m}, {m}, {m})"
)
# a NULL from the subquery (fewer than CHECKPOINTS_KEPT rows) deletes nothing
_PRUNE_CHECKPOINTS = (
    "DELETE FROM index_checkpoints WHERE chain_id = {m} AND token = {m} AND block <"
    " (SELECT block FROM index_checkpoints WHERE chain_id = {m} AND token = {m}"
    " ORDER BY block DESC LIMIT 1 OFFSET {m})"
)


def _mark(conn: Connection) -> str:
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def _read_cursor(conn: Connection, chain_id: int, token: str) -> Cursor | None:
    sql = _READ_CURSOR.format(m=_mark(conn))
    cursor = _driver(conn, sql, (chain_id, token))
    row = cursor.fetchone()
    cursor.close()
    if row is None:
        return None
    return Cursor(int(row[0]), int(row[1]), row[2])


def _move_cursor(
    conn: Connection, chain_id: int, token: str, expected: Cursor | None, new: Cursor
) -> None:
    """Compare-and-set the cursor; also takes the row lock that serialises writers."""
    values = {
        "start_block": new.start_block,
        "last_block": new.last_block,
        "last_block_hash": new.last_block_hash,
        "updated_at": time.time(),
    }
    if expected is None:
        try:
            conn.execute(insert(cursor_table).values(chain_id=chain_id, token=token, **values))
        except IntegrityError as exc:
            raise StoreConflict("store: token is already being indexed") from exc
        return
    mark = _mark(conn)
    moved = (new.start_block, new.last_block, new.last_block_hash, values["updated_at"])
    where: tuple[Any, ...] = (chain_id, token, expected.last_block)
    if expected.last_block_hash is None:
        sql = _MOVE_CURSOR.format(m=mark, same="IS NULL")
    else:
        sql = _MOVE_CURSOR.format(m=mark, same=f"= {mark}")
        where += (expected.last_block_hash,)
    result = _driver(conn, sql, moved + where)
    moved_rows = result.rowcount
    result.close()
    if moved_rows != 1:
        raise StoreConflict("store: the index cursor moved; another indexer is running")


def _add_checkpoint(conn: Connection, chain_id: int, token: str, cursor: Cursor) -> None:
    if cursor.last_block_hash is None:
        return
    mark = _mark(conn)
    key = (chain_id, token)
    added = (*key, cursor.last_block, cursor.last_block_hash)
    _driver(conn, _DROP_LATER_CHECKPOINTS.format(m=mark), (*key, cursor.last_block)).close()
    _driver(conn, _ADD_CHECKPOINT.format(m=mark), added).close()
    pruned = (*key, *key, CHECKPOINTS_KEPT - 1)
    _driver(conn, _PRUNE_CHECKPOINTS.format(m=mark), pruned).close()


def _insert_transfers(
    conn: Connection, chain_id: int, token: str, logs: Sequence[TransferLog]
) -> None:
    """Bulk insert through the driver's executemany.

    The hot path of indexing: SQLAlchemy's per-row parameter processing cost more than
    SQLite's own work, so rows are prepared here (amounts via ``amount_param``).
    """
    if not logs:
        return
    backend = conn.dialect.name
    rows = [
        (
            chain_id,
            token,
            x.block,
            x.log_index,
            x.tx_hash,
            x.sender,
            x.recipient,
            amount_param(backend, x.amount),
        )
        for x in logs
    ]
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    columns = ", ".join(c.name for c in transfer_table.columns)
    sql = (
        f"INSERT INTO {transfer_table.name} ({columns}) VALUES ({', '.join([mark] * len(rows[0]))})"
    )
    conn.exec_driver_sql(sql, rows)


def _transfer_log(row: Any) -> TransferLog:
    return TransferLog(
        int(row.block), int(row.log_index), row.tx_hash, row.sender, row.recipient, int(row.amount)
    )


def _apply_deltas(conn: Connection, chain_id: int, token: str, deltas: dict[str, int]) -> None:
    """Add ``deltas`` to stored balances: read the touched rows, upsert, drop zeros.

    Arithmetic happens in Python because SQLite stores amounts as text.
    """
    holders = sorted(deltas)
    current: dict[str, int] = {}
    for chunk in _chunks(holders):
        query = select(balance_table.c.holder, balance_table.c.balance).where(
            _key(balance_table, chain_id, token) & balance_table.c.holder.in_(chunk)
        )
        current.update((str(h), int(b)) for h, b in conn.execute(query))
    updated = {h: current.get(h, 0) + deltas[h] for h in holders}
    rows = [
        {"chain_id": chain_id, "token": token, "holder": h, "balance": b}
        for h, b in updated.items()
        if b != 0
    ]
    if rows:
        stmt = upsert(conn, balance_table)
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=["chain_id", "token", "holder"],
                set_={"balance": stmt.excluded.balance},
            ),
            rows,
        )
    emptied = [h for h, b in updated.items() if b == 0 and h in current]
    for chunk in _chunks(emptied):
        conn.execute(
            delete(balance_table).where(
                _key(balance_table, chain_id, token) & balance_table.c.holder.in_(chunk)
            )
        )


def _newest_outgoing(
    conn: Connection, chain_id: int, token: str, holders: Sequence[str], per_holder: int
) -> list[TransferLog]:
    rank = (
        func.row_number()
        .over(
            partition_by=transfer_table.c.sender,
            order_by=(transfer_table.c.block.desc(), transfer_table.c.log_index.desc()),
        )
        .label("rank")
    )
    ranked = (
        select(transfer_table, rank)
        .where(_key(transfer_table, chain_id, token) & transfer_table.c.sender.in_(holders))
        .subquery()
    )
    query = select(ranked).where(ranked.c.rank <= per_holder)
    return [_transfer_log(row) for row in conn.execute(query)]

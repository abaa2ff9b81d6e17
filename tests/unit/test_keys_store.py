"""API keys in the store, on SQLite and PostgreSQL: lifecycle, lookups, usage counts, and
that no key is ever stored in clear.  Also the versioned schema they arrived with."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, make_url, select, text

from tokenrisk.errors import KeyNameError, SchemaTooNew, StoreError, UnknownKeyName
from tokenrisk.store.engine import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Cursor,
    Store,
    api_key_table,
    create_store,
    key_usage_table,
    metadata,
    retired_key_table,
    schema_table,
)
from tokenrisk.store.keys import (
    KEY_PREFIX,
    Keyring,
    Lookup,
    config_key_name,
    plain_digest,
    utc_day,
)

DAY = 1_780_000_000.0  # 2026-05-28 UTC


class Clock:
    def __init__(self) -> None:
        self.now = DAY

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ring(store: Store, clock: Clock) -> Keyring:
    return Keyring(store, clock=clock)


def _all_text(store: Store) -> str:
    """Every value of every key table, as one string."""
    with store.transaction("dump") as conn:
        rows = [
            row
            for table in (api_key_table, retired_key_table, key_usage_table)
            for row in conn.execute(select(table))
        ]
    return repr(rows)


# LIFECYCLE


def test_created_key_works_and_is_random(ring: Keyring) -> None:
    key = ring.create("alice", "pro")
    other = ring.create("bob", "free")
    assert key.startswith(KEY_PREFIX) and len(key) == len(KEY_PREFIX) + 43
    assert re.fullmatch(r"trk_[A-Za-z0-9_-]{43}", key) and key != other
    assert ring.use(key, "/v1/GetPairs") == Lookup("active", "alice", "pro")
    assert ring.use(other, "/v1/GetPairs") == Lookup("active", "bob", "free")
    assert ring.use("trk_" + "A" * 43, "/v1/GetPairs") == Lookup("unknown")


def test_the_store_holds_no_key_in_clear(ring: Keyring, store: Store) -> None:
    first = ring.create("alice", "pro")
    second = ring.reset("alice")
    third = ring.create("carol", "pro")
    ring.revoke("carol")
    ring.use(second, "/v1/TopHolders")
    dump = _all_text(store)
    for key in (first, second, third):
        assert key not in dump and key[len(KEY_PREFIX) :] not in dump
    assert plain_digest(second) in dump  # what is stored instead


def test_reset_rejects_the_old_key_at_once(ring: Keyring, clock: Clock) -> None:
    old = ring.create("alice", "pro")
    clock.now += 60
    new = ring.reset("alice")
    assert new != old
    assert ring.use(old, "/v1/GetPairs") == Lookup("reset", "alice")
    assert ring.use(new, "/v1/GetPairs") == Lookup("active", "alice", "pro")
    newest = ring.reset("alice")
    assert ring.use(new, "/v1/GetPairs") == Lookup("reset", "alice")
    assert ring.use(newest, "/v1/GetPairs").status == "active"
    (info,) = ring.keys()
    assert info.reset_at == clock.now and info.created_at == DAY


def test_revoke_is_final(ring: Keyring) -> None:
    key = ring.create("alice", "pro")
    ring.revoke("alice")
    assert ring.use(key, "/v1/GetPairs") == Lookup("revoked", "alice")
    with pytest.raises(KeyNameError, match="revoked"):
        ring.reset("alice")
    with pytest.raises(KeyNameError, match="revoked"):
        ring.revoke("alice")
    with pytest.raises(KeyNameError, match="already exists"):
        ring.create("alice", "pro")
    (info,) = ring.keys()
    assert info.status == "revoked"


def test_a_reset_then_revoked_key_reports_both_old_keys(ring: Keyring) -> None:
    first = ring.create("alice", "pro")
    second = ring.reset("alice")
    ring.revoke("alice")
    assert ring.use(first, "/x").status == "reset"
    assert ring.use(second, "/x").status == "revoked"


def test_names_are_checked(ring: Keyring) -> None:
    for bad in ("", "-x", "a b", "a" * 65, "config:abc", "ünï"):
        with pytest.raises(KeyNameError):
            ring.create(bad, "pro")
    with pytest.raises(KeyNameError, match="tier"):
        ring.create("alice", "no tier")
    with pytest.raises(UnknownKeyName):
        ring.reset("nobody")
    with pytest.raises(UnknownKeyName):
        ring.revoke("nobody")
    assert UnknownKeyName("x").status == 404 and KeyNameError("x").status == 400


def test_keys_are_listed_without_the_key(ring: Keyring, clock: Clock) -> None:
    key = ring.create("bob", "free")
    ring.create("alice", "pro")
    clock.now += 3600
    ring.use(key, "/v2/IsHoneypot")
    listed = ring.keys()
    assert [k.name for k in listed] == ["alice", "bob"]
    assert listed[0].last_used_at is None and listed[1].last_used_at == DAY + 3600
    assert key not in repr(listed)
    assert [k.status for k in listed] == ["active", "active"]


# USAGE


def test_usage_counts_per_key_endpoint_and_day(ring: Keyring, clock: Clock) -> None:
    alice = ring.create("alice", "pro")
    bob = ring.create("bob", "free")
    for _ in range(3):
        ring.use(alice, "/v1/GetPairs")
    ring.use(alice, "/v2/IsHoneypot")
    ring.use(bob, "/v1/GetPairs")
    clock.now += 86_400
    ring.use(alice, "/v1/GetPairs")
    ring.count(config_key_name("from-the-file"), "/v1/TopHolders")
    today, yesterday = utc_day(clock.now), utc_day(DAY)
    assert [(u.day, u.name, u.endpoint, u.requests) for u in ring.usage()] == [
        (today, "alice", "/v1/GetPairs", 1),
        (today, config_key_name("from-the-file"), "/v1/TopHolders", 1),
        (yesterday, "alice", "/v1/GetPairs", 3),
        (yesterday, "alice", "/v2/IsHoneypot", 1),
        (yesterday, "bob", "/v1/GetPairs", 1),
    ]
    assert {u.requests for u in ring.usage("bob")} == {1}
    assert [u.day for u in ring.usage("alice", since=today)] == [today]


def test_rejected_keys_are_not_counted(ring: Keyring) -> None:
    key = ring.create("alice", "pro")
    ring.revoke("alice")
    ring.use(key, "/v1/GetPairs")
    ring.use("trk_nothing", "/v1/GetPairs")
    assert ring.usage() == []


def test_concurrent_requests_are_all_counted(ring: Keyring) -> None:
    key = ring.create("alice", "pro")
    barrier = threading.Barrier(4)
    errors: list[Exception] = []

    def hammer() -> None:
        barrier.wait()
        try:
            for _ in range(10):
                ring.use(key, "/v1/GetPairs")
        except StoreError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [u.requests for u in ring.usage()] == [40]


def test_config_key_names_are_fingerprints() -> None:
    name = config_key_name("secret-from-the-file")
    assert re.fullmatch(r"config:[0-9a-f]{8}", name) and "secret" not in name
    assert name != config_key_name("another")


# PEPPER


def test_pepper_stores_an_hmac_and_keeps_older_keys(store: Store, clock: Clock) -> None:
    plain_ring = Keyring(store, clock=clock)
    before = plain_ring.create("old", "pro")
    peppered = Keyring(store, pepper="server-secret", clock=clock)
    after = peppered.create("new", "pro")
    assert peppered.use(before, "/x").status == "active"  # made before the pepper
    assert peppered.use(after, "/x") == Lookup("active", "new", "pro")
    assert plain_ring.use(after, "/x").status == "unknown"  # needs the pepper
    assert Keyring(store, pepper="other", clock=clock).use(after, "/x").status == "unknown"
    with store.transaction("read") as conn:
        stored = conn.execute(
            select(api_key_table.c.key_hash).where(api_key_table.c.name == "new")
        ).scalar_one()
    assert stored.startswith("hmac-sha256:") and stored != plain_digest(after)
    assert "server-secret" not in _all_text(store)


# SCHEMA VERSIONS


def test_a_new_store_is_at_the_newest_version(store: Store) -> None:
    assert store.schema_version() == SCHEMA_VERSION == len(MIGRATIONS)
    store.create_all()
    assert store.schema_version() == SCHEMA_VERSION
    with store.transaction("read") as conn:
        versions = [r.version for r in conn.execute(select(schema_table))]
    assert versions == [m.version for m in MIGRATIONS]


def test_a_store_from_before_versioning_is_migrated(store_url: str) -> None:
    """A database made by a release without versions: the index and a results cache."""
    if store_url.startswith("sqlite"):
        Path(make_url(store_url).database or "").parent.mkdir(parents=True)
    engine = create_engine(store_url)
    index = [t for t in metadata.sorted_tables if t.name in _INDEX_TABLES]
    with engine.begin() as conn:
        metadata.create_all(conn, tables=index)
        conn.execute(text("CREATE TABLE results_cache (key TEXT PRIMARY KEY, value TEXT)"))
        conn.execute(text(f"INSERT INTO index_cursors VALUES (1, '{TOKEN}', 5, 9, NULL, 0.0)"))
    engine.dispose()
    store = create_store(store_url)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.get_cursor(1, TOKEN) == Cursor(5, 9, None)  # old data kept
    with store.transaction("inspect") as conn:
        assert "results_cache" not in inspect(conn).get_table_names()  # version 2 dropped it
    assert Keyring(store).create("alice", "pro").startswith(KEY_PREFIX)
    store.close()


def test_migrations_apply_only_what_is_missing(store_url: str) -> None:
    store = create_store(store_url)
    with store.transaction("downgrade", writes=True) as conn:
        for table in (key_usage_table, retired_key_table, api_key_table):
            table.drop(conn)
        conn.execute(schema_table.delete().where(schema_table.c.version > 1))
    assert store.schema_version() == 1
    store.create_all()
    assert store.schema_version() == SCHEMA_VERSION
    with store.transaction("inspect") as conn:
        names = set(inspect(conn).get_table_names())
    assert {"api_keys", "api_keys_retired", "api_key_usage"} <= names
    store.close()


def test_a_newer_schema_is_refused(store_url: str) -> None:
    store = create_store(store_url)
    with store.transaction("from the future", writes=True) as conn:
        conn.execute(
            schema_table.insert().values(
                version=SCHEMA_VERSION + 1, description="future", applied_at=0.0
            )
        )
    store.close()
    with pytest.raises(SchemaTooNew, match="newer than this tokenrisk"):
        create_store(store_url)


_INDEX_TABLES = {"index_cursors", "index_checkpoints", "balances", "transfers"}
TOKEN = "0x" + "ab" * 20

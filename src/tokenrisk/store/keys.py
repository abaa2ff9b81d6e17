"""API keys kept in the store: issue, reset, revoke, look up, and count their use.

A key is ``trk_`` + 43 URL-safe characters (32 random bytes from :mod:`secrets`), shown
once when it is made.  The store keeps only a digest of it (``api_keys.key_hash``), and
the digests of keys that were reset or revoked (``api_keys_retired``), so a request with
an old key can be told why it fails.

Why a plain SHA-256 and not a slow password hash (bcrypt, scrypt, argon2): a slow hash
protects low-entropy secrets people choose, whose digests can be attacked by guessing.
A 256-bit random key cannot be guessed, fast hash or not, so stretching would only add
milliseconds to every request.  An operator who wants a stolen database to be useless
even for checking a candidate key sets ``key_pepper``: new keys are then stored as
HMAC-SHA256 under that server secret.  Lookups try the peppered digest first and the
plain one second, so keys made before the pepper was set keep working (reset them to
move them under the pepper); removing or changing the pepper invalidates peppered keys.

Every lookup reads the store: no positive cache, so a reset or revoke made by any
process (the CLI on another host, another worker) holds from the next request on.  The
lookup and the usage count share one short transaction.  A digest found in the store is
compared again with :func:`hmac.compare_digest` before it is accepted.

Usage is counted per key name, UTC day and endpoint path (``api_key_usage``).  Keys
from the config file have no name; they are counted as ``config:`` + the first 8 hex
digits of their SHA-256 (a fingerprint that tells keys apart without revealing them).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection, insert, select, update

from tokenrisk.errors import KeyNameError, UnknownKeyName
from tokenrisk.store.engine import (
    Store,
    api_key_table,
    key_usage_table,
    retired_key_table,
    upsert,
)
from tokenrisk.tiers import NAME

KEY_PREFIX = "trk_"
KEY_BYTES = 32
Status = Literal["active", "reset", "revoked", "unknown"]


@dataclass(frozen=True)
class KeyInfo:
    """What ``keys list`` shows: everything about a key except the key (unix seconds)."""

    name: str
    tier: str
    created_at: float
    last_used_at: float | None
    reset_at: float | None
    revoked_at: float | None

    @property
    def status(self) -> str:
        return "revoked" if self.revoked_at is not None else "active"

    def view(self) -> dict[str, Any]:
        """As ``keys list --json`` and ``/admin/keys`` show it (times ISO 8601 UTC)."""
        return {
            "name": self.name,
            "tier": self.tier,
            "status": self.status,
            "created": iso_time(self.created_at),
            "lastUsed": iso_time(self.last_used_at),
            "reset": iso_time(self.reset_at),
            "revoked": iso_time(self.revoked_at),
        }


@dataclass(frozen=True)
class Usage:
    """Requests of one key to one endpoint on one UTC day."""

    day: str
    name: str
    endpoint: str
    requests: int

    def view(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "name": self.name,
            "endpoint": self.endpoint,
            "requests": self.requests,
        }


@dataclass(frozen=True)
class Lookup:
    """The outcome of presenting a key: ``name`` and ``tier`` are set when it is active."""

    status: Status
    name: str | None = None
    tier: str | None = None


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def plain_digest(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def config_key_name(key: str) -> str:
    """The usage name of a key from the config file (see the module docstring)."""
    return "config:" + hashlib.sha256(key.encode()).hexdigest()[:8]


def utc_day(when: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(when))


def since_day(days: int, now: float) -> str:
    """The first UTC day of the last ``days`` days, today included."""
    return utc_day(now - (days - 1) * 86_400)


def iso_time(stamp: float | None) -> str | None:
    return None if stamp is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def check_name(name: str, what: str = "key name") -> str:
    """``name`` when it is 1-64 of ``A-Z a-z 0-9 . _ -`` (not starting with . _ -)."""
    if not NAME.match(name):
        raise KeyNameError(f"{what} must be 1-64 letters, digits, '.', '_' or '-'")
    return name


class Keyring:
    """Key operations on a :class:`Store`; every method raises StoreError on database failure."""

    def __init__(
        self, store: Store, pepper: str | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self._pepper = pepper.encode() if pepper else None
        self._clock = clock

    def digests(self, key: str) -> list[str]:
        """Digests a stored key may have, the one new keys get first."""
        plain = plain_digest(key)
        if self._pepper is None:
            return [plain]
        peppered = hmac.new(self._pepper, key.encode(), hashlib.sha256).hexdigest()
        return ["hmac-sha256:" + peppered, plain]

    # LIFECYCLE

    def create(self, name: str, tier: str) -> str:
        """Store a new key named ``name``; returns the key (the only time it is known)."""
        check_name(name)
        check_name(tier, "tier name")
        key = new_key()
        with self.store.transaction("create key", writes=True) as conn:
            if _exists(conn, name):
                raise KeyNameError(f"a key named {name!r} already exists (names are never reused)")
            conn.execute(
                insert(api_key_table).values(
                    name=name, tier=tier, key_hash=self.digests(key)[0], created_at=self._clock()
                )
            )
        return key

    def reset(self, name: str) -> str:
        """Replace the key of ``name`` by a new one (returned); the old one fails at once."""
        key = new_key()
        self._retire(name, "reset", key_hash=self.digests(key)[0], reset_at=self._clock())
        return key

    def revoke(self, name: str) -> None:
        """Stop the key of ``name`` for good; its name and usage stay for the record."""
        self._retire(name, "revoked", key_hash=None, revoked_at=self._clock())

    def _retire(self, name: str, reason: str, **values: object) -> None:
        """Move the active digest of ``name`` to the retired ones (``reason``) and set
        ``values`` on its row, in one transaction."""
        verb = reason.removesuffix("d")
        with self.store.transaction(f"{verb} key", writes=True) as conn:
            old = _active_hash(conn, name, verb)
            conn.execute(
                insert(retired_key_table).values(
                    key_hash=old, name=name, reason=reason, retired_at=self._clock()
                )
            )
            conn.execute(update(api_key_table).where(api_key_table.c.name == name).values(**values))

    # QUERIES

    def keys(self) -> list[KeyInfo]:
        """Every key, active or revoked, by name."""
        columns = [c for c in api_key_table.columns if c.name != "key_hash"]
        query = select(*columns).order_by(api_key_table.c.name)
        with self.store.transaction("list keys") as conn:
            return [
                KeyInfo(r.name, r.tier, r.created_at, r.last_used_at, r.reset_at, r.revoked_at)
                for r in conn.execute(query)
            ]

    def usage(self, name: str | None = None, since: str | None = None) -> list[Usage]:
        """Usage rows, newest day first, then by name and endpoint.

        ``name`` limits them to one key, ``since`` (a ``YYYY-MM-DD`` UTC day) to that day on.
        """
        t = key_usage_table
        query = select(t.c.day, t.c.name, t.c.endpoint, t.c.requests).order_by(
            t.c.day.desc(), t.c.name, t.c.endpoint
        )
        if name is not None:
            query = query.where(t.c.name == name)
        if since is not None:
            query = query.where(t.c.day >= since)
        with self.store.transaction("read key usage") as conn:
            return [Usage(r.day, r.name, r.endpoint, int(r.requests)) for r in conn.execute(query)]

    # REQUESTS

    def use(self, key: str, endpoint: str | None) -> Lookup:
        """Look ``key`` up; when it is active, count one request to ``endpoint`` (None:
        only look, nothing is written)."""
        digests = self.digests(key)
        now = self._clock()
        with self.store.transaction("check API key", writes=endpoint is not None) as conn:
            row = conn.execute(
                select(api_key_table.c.name, api_key_table.c.tier, api_key_table.c.key_hash)
                .where(api_key_table.c.key_hash.in_(digests))
                .limit(1)
            ).first()
            if row is None or not _matches(row.key_hash, digests):
                return _retired(conn, digests)
            if endpoint is not None:
                conn.execute(
                    update(api_key_table)
                    .where(api_key_table.c.name == row.name)
                    .values(last_used_at=now)
                )
                _count(conn, row.name, endpoint, utc_day(now))
            return Lookup("active", row.name, row.tier)

    def count(self, name: str, endpoint: str) -> None:
        """Count one request of a key that does not live in the store (config-file keys)."""
        with self.store.transaction("count key usage", writes=True) as conn:
            _count(conn, name, endpoint, utc_day(self._clock()))


# HELPERS (inside a caller's transaction)


def _exists(conn: Connection, name: str) -> bool:
    query = select(api_key_table.c.name).where(api_key_table.c.name == name)
    return conn.execute(query).first() is not None


def _active_hash(conn: Connection, name: str, verb: str) -> str:
    row = conn.execute(
        select(api_key_table.c.key_hash, api_key_table.c.revoked_at).where(
            api_key_table.c.name == name
        )
    ).first()
    if row is None:
        raise UnknownKeyName(f"no key named {name!r}")
    if row.revoked_at is not None or row.key_hash is None:
        raise KeyNameError(f"cannot {verb} {name!r}: the key is revoked (create a new one)")
    return str(row.key_hash)


def _retired(conn: Connection, digests: Sequence[str]) -> Lookup:
    row = conn.execute(
        select(retired_key_table.c.key_hash, retired_key_table.c.name, retired_key_table.c.reason)
        .where(retired_key_table.c.key_hash.in_(digests))
        .limit(1)
    ).first()
    if row is None or not _matches(row.key_hash, digests):
        return Lookup("unknown")
    return Lookup("revoked" if row.reason == "revoked" else "reset", row.name)


def _matches(stored: str, digests: Sequence[str]) -> bool:
    """Constant-time check of a digest the database matched (see the module docstring)."""
    found = [hmac.compare_digest(stored.encode(), d.encode()) for d in digests]
    return any(found)


def _count(conn: Connection, name: str, endpoint: str, day: str) -> None:
    stmt = upsert(conn, key_usage_table)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["name", "day", "endpoint"],
            set_={"requests": key_usage_table.c.requests + stmt.excluded.requests},
        ),
        [{"name": name, "day": day, "endpoint": endpoint, "requests": 1}],
    )

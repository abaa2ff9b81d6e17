"""Webhook endpoints registered by API keys (``watch_key_webhooks``): each key's own
endpoints receive that key's events only (``POST /v2/watch/webhooks``, ``tokenrisk watch
webhook add``), next to the operator's ``[[watch.webhooks]]``, which receive every event.

An endpoint is named by a digest of its key and URL (two keys may register the same URL
and still get their own deliveries and status); the URL and the secret are read only by
the delivery loop, never returned or logged.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

from sqlalchemy import delete, func, select

from tokenrisk.store.engine import Store, key_webhook_table, upsert


def key_endpoint_name(key_name: str, url: str) -> str:
    """The endpoint's name in the store, logs and status (a digest, never the URL)."""
    return hashlib.sha256(f"{key_name}\n{url}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KeyWebhook:
    """One key's endpoint."""

    key_name: str
    endpoint: str
    url: str = field(repr=False)
    secret: str = field(repr=False)


class KeyHooks:
    """Registration and reads of keys' endpoints (synchronous, thread-safe)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, key_name: str, url: str, secret: str, limit: int) -> str | None:
        """Register ``url`` for ``key_name`` (its name returned); None when the key
        already has ``limit`` endpoints.  Registering one again replaces its secret."""
        name = key_endpoint_name(key_name, url)
        c = key_webhook_table.c
        with self.store.transaction("webhook register", writes=True) as conn:
            mine = c.key_name == key_name
            count = conn.execute(select(func.count()).where(mine)).scalar() or 0
            present = conn.execute(select(c.endpoint).where(mine & (c.endpoint == name))).first()
            if present is None and count >= limit:
                return None
            values = {"url": url, "secret": secret, "created_at": time.time()}
            stmt = upsert(conn, key_webhook_table).values(
                key_name=key_name, endpoint=name, **values
            )
            update = {"secret": secret}
            conn.execute(
                stmt.on_conflict_do_update(index_elements=["key_name", "endpoint"], set_=update)
            )
            return name

    def remove(self, key_name: str, endpoint: str) -> bool:
        c = key_webhook_table.c
        where = (c.key_name == key_name) & (c.endpoint == endpoint)
        with self.store.transaction("webhook remove", writes=True) as conn:
            return bool(conn.execute(delete(key_webhook_table).where(where)).rowcount)

    def of(self, key_name: str | None = None) -> list[KeyWebhook]:
        """``key_name``'s endpoints (every key's when None), oldest first."""
        c = key_webhook_table.c
        query = select(key_webhook_table).order_by(c.created_at, c.endpoint)
        if key_name is not None:
            query = query.where(c.key_name == key_name)
        with self.store.transaction("webhook read") as conn:
            rows = conn.execute(query).all()
        return [
            KeyWebhook(str(r.key_name), str(r.endpoint), str(r.url), str(r.secret)) for r in rows
        ]

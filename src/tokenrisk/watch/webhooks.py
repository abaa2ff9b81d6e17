"""Webhook delivery: events, in order, to each endpoint: the operator's
(``[[watch.webhooks]]``) get every event; an endpoint an API key registered
(:mod:`tokenrisk.store.watchhooks`) gets that key's events only, as its SSE stream
(:meth:`WatchStore.visible`): the others move its cursor without a POST.

Each POST carries the event's JSON body and three headers: ``X-Tokenrisk-Event`` (the
event id: a receiver drops an id it has seen, which makes a redelivery after a crash
harmless), ``X-Tokenrisk-Seq`` and ``X-Tokenrisk-Signature: sha256=<hex>``, an
HMAC-SHA256 of the exact body under the endpoint's secret.  A 2xx moves the endpoint's
cursor (kept in the store, so a restarted watcher neither skips nor repeats); anything
else is retried with exponential backoff, and after ``attempts`` tries the event is
recorded as a dead letter and the endpoint moves on.  Status per endpoint:
:meth:`WatchStore.delivery`.  The URL is never logged (it may hold a token): endpoints
are named by a digest of it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass, field

import httpx

from tokenrisk import metrics
from tokenrisk.store.watch import Delivery, StoredEvent, WatchStore, endpoint_name
from tokenrisk.store.watchhooks import KeyHooks, key_endpoint_name

log = logging.getLogger("tokenrisk.watch.webhooks")


@dataclass(frozen=True)
class Endpoint:
    url: str = field(repr=False)  # may hold a token: never printed
    secret: str = field(repr=False)
    key: str | None = None  # the API key that registered it (None: the operator's)

    @property
    def name(self) -> str:
        return (
            endpoint_name(self.url) if self.key is None else key_endpoint_name(self.key, self.url)
        )


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Webhooks:
    """Delivers to ``endpoints``; :meth:`deliver` is one bounded pass."""

    endpoints: tuple[Endpoint, ...]
    store: WatchStore
    attempts: int = 5
    backoff: float = 1.0  # seconds before the second try; doubled each time
    timeout: float = 5.0
    failures: int = 0  # failed POSTs since start
    keyed: bool = True  # also the endpoints API keys registered
    _not_before: dict[str, float] = field(default_factory=dict)

    async def deliver(self, client: httpx.AsyncClient, batch: int = 50) -> int:
        """Send what each endpoint has not had yet (stopping at its first failure);
        returns the events delivered."""
        sent = 0
        for endpoint in self.endpoints + await self._registered():
            if time.monotonic() < self._not_before.get(endpoint.name, 0.0):
                continue
            sent += await self._drain(client, endpoint, batch)
        return sent

    async def _registered(self) -> tuple[Endpoint, ...]:
        if not self.keyed:
            return ()
        rows = await asyncio.to_thread(KeyHooks(self.store.store).of)
        return tuple(Endpoint(r.url, r.secret, r.key_name) for r in rows)

    async def _drain(self, client: httpx.AsyncClient, endpoint: Endpoint, batch: int) -> int:
        state = await asyncio.to_thread(self.store.delivery, endpoint.name)
        pending = await asyncio.to_thread(self.store.events_after, state.delivered_seq, batch)
        sent, passed = 0, state
        for event in pending:
            if not await self._for(endpoint, event):
                passed = Delivery(event.seq, state.attempts, state.last_status)
                continue
            status = await self._post(client, endpoint, event)
            if status != "ok":
                await self._failed(endpoint, event, passed, status)
                return sent
            state = passed = Delivery(event.seq, 0, "ok")
            await asyncio.to_thread(self.store.record_delivery, endpoint.name, state)
            sent += 1
        if passed != state:  # events not this endpoint's: passed over
            await asyncio.to_thread(self.store.record_delivery, endpoint.name, passed)
        return sent

    async def _for(self, endpoint: Endpoint, event: StoredEvent) -> bool:
        if endpoint.key is None or event.kind != "alert":
            return True
        return await asyncio.to_thread(self.store.visible, endpoint.key, event)

    async def _failed(
        self, endpoint: Endpoint, event: StoredEvent, state: Delivery, status: str
    ) -> None:
        self.failures += 1
        metrics.webhook_failed(endpoint.name)
        tries = state.attempts + 1
        if tries >= self.attempts:
            log.warning("webhook %s: event %s dead-lettered (%s)", endpoint.name, event.seq, status)
            dead = Delivery(event.seq, 0, f"dead letter: {status}")
            await asyncio.to_thread(self.store.record_delivery, endpoint.name, dead, status)
            return
        retry = Delivery(state.delivered_seq, tries, status)
        await asyncio.to_thread(self.store.record_delivery, endpoint.name, retry)
        self._not_before[endpoint.name] = time.monotonic() + self.backoff * 2 ** (tries - 1)

    async def _post(self, client: httpx.AsyncClient, endpoint: Endpoint, event: StoredEvent) -> str:
        body = json.dumps(event.body, sort_keys=True).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Tokenrisk-Event": event.event_id,
            "X-Tokenrisk-Seq": str(event.seq),
            "X-Tokenrisk-Signature": signature(endpoint.secret, body),
        }
        try:
            response = await client.post(
                endpoint.url, content=body, headers=headers, timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            return f"unreachable ({exc.__class__.__name__})"
        return "ok" if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"

"""The watchlist and the event stream: ``POST /v2/watch``, ``GET /v2/watch``,
``DELETE /v2/watch/{chainID}/{address}`` and ``GET /v2/watch/events`` (server-sent events).

A watchlist belongs to the caller's API key (callers without a key share the anonymous
list); its size is bounded by the key's tier (``max_watchlist``, 403 past it).
The stream sends every ``new_pool`` and ``retracted`` event and the ``alert`` events of
tokens the key watches, each as ``id: <seq>``, ``event: <kind>``, ``data: <json>``.  A
client that reconnects with ``Last-Event-ID: <seq>`` (or ``?after=<seq>``) gets what it
missed, from the store, in order; a ``: keep-alive`` comment goes out when idle.  The
watcher itself runs in ``tokenrisk watch`` or ``serve --watch`` (docs/watch.md).

A key's own webhook endpoints (below): ``POST /v2/watch/webhooks`` (``{"url", "secret"?}``),
``GET /v2/watch/webhooks`` (each endpoint's delivery status) and
``DELETE /v2/watch/webhooks/{endpoint}``.

An endpoint receives the events its key would see on the SSE stream (every new pool and
retraction, the alerts of the tokens the key watches), signed with the key's secret
(generated and returned once when the request gives none).  Registering needs an API
key, and the key's tier bounds how many (``max_webhooks``).  URLs on loopback, private
or link-local addresses are refused unless the operator allows them
(``[watch] private_webhooks``): the server would otherwise POST into its own network.
Hostnames are not resolved here; an operator whose DNS can point inside should keep the
delivery loop's egress filtered.  URLs and secrets are never returned.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI, Header, Query
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict

from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.params import parse_chain_id, require_address
from tokenrisk.api.runner import Runner
from tokenrisk.errors import Forbidden, InputError, UnknownChain
from tokenrisk.store.watch import StoredEvent, TaskStore, WatchStore, endpoint_name
from tokenrisk.store.watchhooks import KeyHooks

# THE WATCHLIST AND THE EVENT STREAM

POLL = 0.5  # seconds between store reads of an idle stream
KEEPALIVE = 15.0


class WatchRequest(BaseModel):
    """``POST /v2/watch``'s body; validated by the same rules as query parameters."""

    model_config = ConfigDict(extra="forbid")
    address: str | None = None
    chainID: str | int | None = None  # noqa: N815 (the wire's name)


def key_of(caller: Caller) -> str:
    return caller.key_name or ""


def add_watch_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    add_webhook_routes(app, runner, gate)  # first: /v2/watch/webhooks/... before /{chain}/...
    caller_of = Depends(gate)

    def store() -> WatchStore:
        return WatchStore(runner.service.store)

    @app.post("/v2/watch", status_code=201, responses=ERRORS, summary="Watch a token")
    async def watch(body: WatchRequest, caller: Caller = caller_of) -> JSONResponse:
        token = require_address("address", body.address)
        chain_id = _chain(runner, _text(body.chainID))
        limit = caller.tier.max_watchlist
        added = await asyncio.to_thread(store().add, key_of(caller), chain_id, token, limit)
        if not added:
            raise Forbidden(f"this key's tier may watch at most {limit} tokens")
        return JSONResponse({"address": token, "chainID": chain_id}, status_code=201)

    @app.get("/v2/watch", responses=ERRORS, summary="The tokens this key watches")
    async def watched(caller: Caller = caller_of) -> JSONResponse:
        return JSONResponse(
            {"watching": await asyncio.to_thread(_listing, store(), key_of(caller))}
        )

    @app.delete("/v2/watch/{chain}/{address}", responses=ERRORS, summary="Stop watching")
    async def unwatch(chain: str, address: str, caller: Caller = caller_of) -> JSONResponse:
        token, chain_id = require_address("address", address), _chain(runner, chain)
        removed = await asyncio.to_thread(store().remove, key_of(caller), chain_id, token)
        return JSONResponse({"address": token, "chainID": chain_id, "removed": removed})

    @app.get("/v2/watch/status", responses=ERRORS, summary="Watcher lag and webhook status")
    async def status(caller: Caller = caller_of) -> JSONResponse:
        chains = {}
        for chain_id in runner.service.nodes:
            node = runner.service.nodes.node(chain_id)
            head = int(await node.rpc.call("eth_blockNumber", []), 16)
            chains[str(chain_id)] = await asyncio.to_thread(_progress, store(), chain_id, head)
        urls = [hook.url for hook in runner.service.settings.watch.webhooks]
        hooks = await asyncio.to_thread(_hooks, store(), urls)
        return JSONResponse({"chains": chains, "webhooks": hooks})

    @app.get(
        "/v2/watch/events",
        response_class=StreamingResponse,
        responses={
            200: {
                "description": "Server-sent events, one per watch event, until the client "
                "leaves (or maxEvents were sent).",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **ERRORS,
        },
        summary="Watch events (server-sent)",
    )
    async def stream(
        caller: Caller = caller_of,
        last_event_id: str | None = Header(None, alias="Last-Event-ID"),
        after: str | None = Query(None, description="resume after this event number"),
        max_events: int | None = Query(
            None, alias="maxEvents", ge=1, description="close after this many events"
        ),
    ) -> StreamingResponse:
        start = _seq(last_event_id if last_event_id is not None else after)
        frames = _frames(store(), key_of(caller), start, max_events)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(frames, media_type="text/event-stream", headers=headers)


def _progress(store: WatchStore, chain_id: int, head: int) -> dict[str, Any]:
    """The committed block, the checks not done yet and the lag: from the head to the
    oldest block with a check not done (the committed block when there is none)."""
    cursor = store.cursor(chain_id)
    queued, oldest = TaskStore(store.store).waiting(chain_id)
    block = None if cursor is None else cursor.block
    done = block if oldest is None or block is None else min(block, oldest - 1)
    lag = None if done is None else max(head - done, 0)
    return {"head": head, "block": block, "watch_lag_blocks": lag, "queuedChecks": queued}


def _listing(store: WatchStore, key: str) -> list[dict[str, Any]]:
    """The key's tokens, each with the watcher's last answer once it has one."""
    rows = []
    for chain_id, token in store.listed(key):
        row: dict[str, Any] = {"address": _cs(token), "chainID": chain_id}
        answer = store.snapshot(chain_id, token)
        if answer is not None and not answer.get("pending"):
            row["answer"] = answer
        rows.append(row)
    return rows


def _hooks(store: WatchStore, urls: Sequence[str]) -> list[dict[str, Any]]:
    """Delivery status per endpoint, named by its digest (never its URL)."""
    rows = []
    for url in urls:
        name = endpoint_name(url)
        state = store.delivery(name)
        rows.append(
            {
                "endpoint": name,
                "deliveredSeq": state.delivered_seq,
                "attempts": state.attempts,
                "lastStatus": state.last_status,
                "deadLetters": len(store.dead_letters(name)),
            }
        )
    return rows


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _cs(token: str) -> str:
    return require_address("address", token)


def _chain(runner: Runner, raw: str | None) -> int:
    chain_id = parse_chain_id(raw)
    if chain_id is None:
        raise InputError("chainID is required")
    if chain_id not in runner.service.nodes:
        raise UnknownChain(f"chain {chain_id} is not configured")
    return chain_id


def _seq(raw: str | None) -> int:
    if raw is None or raw == "":
        return 0
    if not (raw.isascii() and raw.isdigit()):
        raise InputError("Last-Event-ID must be an event number")
    return int(raw)


async def _frames(store: WatchStore, key: str, after: int, limit: int | None) -> AsyncIterator[str]:
    """The stream: events after ``after`` as they are committed (``limit``: then stop)."""
    sent, idle = 0, 0.0
    yield "retry: 2000\n\n"
    while limit is None or sent < limit:
        batch = await asyncio.to_thread(store.events_after, after)
        for event in batch:
            after = event.seq
            if await _visible(store, key, event):
                yield _frame(event)
                sent += 1
                if limit is not None and sent >= limit:
                    return
        if batch:
            idle = 0.0
            continue
        await asyncio.sleep(POLL)
        idle += POLL
        if idle >= KEEPALIVE:
            idle = 0.0
            yield ": keep-alive\n\n"


async def _visible(store: WatchStore, key: str, event: StoredEvent) -> bool:
    return event.kind != "alert" or await asyncio.to_thread(store.visible, key, event)


def _frame(event: StoredEvent) -> str:
    data = json.dumps(event.body, sort_keys=True)
    return f"id: {event.seq}\nevent: {event.kind}\ndata: {data}\n\n"


# A KEY'S WEBHOOK ENDPOINTS

MAX_URL = 2048


class WebhookRequest(BaseModel):
    """``POST /v2/watch/webhooks``'s body."""

    model_config = ConfigDict(extra="forbid")
    url: str | None = None
    secret: str | None = None


def add_webhook_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)

    def hooks() -> KeyHooks:
        return KeyHooks(runner.service.store)

    @app.post("/v2/watch/webhooks", status_code=201, responses=ERRORS, summary="Add a webhook")
    async def register(body: WebhookRequest, caller: Caller = caller_of) -> JSONResponse:
        key = _key(caller)
        url = valid_url(body.url, runner.service.settings.watch.private_webhooks)
        secret = body.secret if body.secret is not None else secrets.token_hex(32)
        if not 16 <= len(secret) <= 128:
            raise InputError("secret must be 16 to 128 characters")
        limit = caller.tier.max_webhooks
        name = await asyncio.to_thread(hooks().add, key, url, secret, limit)
        if name is None:
            raise Forbidden(f"this key's tier may register at most {limit} webhooks")
        answer = {"endpoint": name, **({} if body.secret is not None else {"secret": secret})}
        return JSONResponse(answer, status_code=201)

    @app.get("/v2/watch/webhooks", responses=ERRORS, summary="This key's webhooks and status")
    async def listed(caller: Caller = caller_of) -> JSONResponse:
        rows = await asyncio.to_thread(_status, runner, _key(caller))
        return JSONResponse({"webhooks": rows})

    @app.delete("/v2/watch/webhooks/{endpoint}", responses=ERRORS, summary="Remove a webhook")
    async def remove(endpoint: str, caller: Caller = caller_of) -> JSONResponse:
        removed = await asyncio.to_thread(hooks().remove, _key(caller), endpoint)
        return JSONResponse({"endpoint": endpoint, "removed": removed})


def _key(caller: Caller) -> str:
    if not caller.key_name:
        raise Forbidden("webhooks belong to an API key: send one (X-API-KEY)")
    return caller.key_name


def valid_url(raw: str | None, private: bool) -> str:
    """``raw`` when it is an http(s) URL with a host (not a private one unless
    ``private``); InputError otherwise."""
    if not raw or len(raw) > MAX_URL:
        raise InputError(f"url is required (http or https, at most {MAX_URL} characters)")
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("url must be an http or https URL with a host")
    if not private and _private(parts.hostname):
        raise InputError("url must not point at a loopback, private or link-local address")
    return raw


def _private(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: not resolved here (module docstring)
    return not address.is_global or address.is_multicast


def _status(runner: Runner, key: str) -> list[dict[str, Any]]:
    """Delivery status per endpoint of ``key``: named by digest, with the host only."""
    store = WatchStore(runner.service.store)
    rows = []
    for hook in KeyHooks(runner.service.store).of(key):
        state = store.delivery(hook.endpoint)
        rows.append(
            {
                "endpoint": hook.endpoint,
                "host": urlsplit(hook.url).hostname,
                "deliveredSeq": state.delivered_seq,
                "attempts": state.attempts,
                "lastStatus": state.last_status,
                "deadLetters": len(store.dead_letters(hook.endpoint)),
            }
        )
    return rows

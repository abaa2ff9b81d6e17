"""A key's own webhook endpoints: ``POST /v2/watch/webhooks`` (``{"url", "secret"?}``),
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
import secrets
from typing import Any
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from tokenrisk.api.access import Caller
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.gate import Gate
from tokenrisk.api.runner import Runner
from tokenrisk.errors import Forbidden, InputError
from tokenrisk.store.watch import WatchStore
from tokenrisk.store.watchhooks import KeyHooks

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

"""Operator endpoints: the keys and their usage over HTTP, for dashboards and scripts.

They exist only when ``operator_key`` is configured, answer only a request whose
``X-OPERATOR-KEY`` header equals it (constant-time comparison; wrong attempts count
against the same per-client throttle as wrong API keys), and are left out of the public
OpenAPI document.  They show what ``tokenrisk keys list`` and ``keys usage --json`` show,
and never a key: the store holds none.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Callable

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse

from tokenrisk.api.access import KeyGate, client_address
from tokenrisk.api.params import parse_limit
from tokenrisk.errors import AuthError
from tokenrisk.store.keys import Keyring, since_day

HEADER = "x-operator-key"
DAYS_DEFAULT = 30


def add_admin(
    app: FastAPI, operator_key: str, gate: KeyGate, keyring: Callable[[], Keyring]
) -> None:
    """Register ``/admin/keys`` and ``/admin/usage`` guarded by ``operator_key``."""
    expected = operator_key.encode()

    def admit(request: Request) -> None:
        address = f"ip:{client_address(request, gate.trusted)}"
        gate.failures.check(address)
        offered = (request.headers.get(HEADER) or "").encode()
        if not hmac.compare_digest(offered, expected):
            gate.failures.take(address)
            raise AuthError("the operator key is required (X-OPERATOR-KEY header)")

    @app.get("/admin/keys", include_in_schema=False)
    async def admin_keys(request: Request) -> JSONResponse:
        admit(request)
        keys = await asyncio.to_thread(keyring().keys)
        return JSONResponse([k.view() for k in keys])

    @app.get("/admin/usage", include_in_schema=False)
    async def admin_usage(
        request: Request,
        name: str | None = Query(None),
        days: str | None = Query(None),
    ) -> JSONResponse:
        admit(request)
        since = since_day(parse_limit(days, DAYS_DEFAULT, "days"), time.time())
        rows = await asyncio.to_thread(keyring().usage, name or None, since)
        return JSONResponse([u.view() for u in rows])

"""HTTP behaviour every route shares: HEAD like GET, and CORS for browser pages.

* **HEAD** is answered wherever GET is, with GET's status and headers (Content-Length
  included) and no body, as RFC 9110 asks.  It runs the GET handler, so it costs what a
  GET costs (answers are cached per chain head all the same).
* **CORS**: browser dashboards call the live API from other origins, and it answers with
  permissive CORS headers.  ``cors_origins`` (config) lists the allowed origins; the
  default ``["*"]`` allows every origin without credentials, an empty list turns CORS
  off.  Preflight ``OPTIONS`` requests are answered here, before the API-key check
  (browsers send no key on a preflight), and ``Retry-After`` is readable by the page.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from fastapi import FastAPI
from fastapi.responses import Response
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tokenrisk import metrics

CORS_METHODS = ("GET", "HEAD", "OPTIONS")
CORS_MAX_AGE = 600  # seconds a browser may cache a preflight answer


class HeadAsGet:
    """ASGI middleware: run a HEAD request as GET and send only status and headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)


def install(app: FastAPI, cors_origins: Sequence[str]) -> None:
    """Add CORS (unless ``cors_origins`` is empty) and HEAD handling to ``app``.

    HEAD is outermost, so a cross-origin HEAD gets the same CORS headers as a GET.
    """
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=list(CORS_METHODS),
            allow_headers=["*"],
            expose_headers=["Retry-After"],
            max_age=CORS_MAX_AGE,
        )
    app.add_middleware(HeadAsGet)


class RequestMetrics:
    """Counts and times every HTTP answer by route template, method and status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # unless a response starts

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            endpoint = getattr(scope.get("route"), "path", None) or "unmatched"
            metrics.http_request(endpoint, scope["method"], status, time.perf_counter() - started)


class SlashRedirect:
    """``/v2/IsHoneypot/`` -> 307 to ``/v2/IsHoneypot`` with a relative Location.

    Only paths that are a known route plus trailing slashes are redirected, and the
    Location is a path (never built from the Host header, never ``//host``).
    """

    def __init__(self, app: ASGIApp, paths: frozenset[str]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        target = path.rstrip("/")
        if path.endswith("/") and target and target in self.paths:
            query = scope.get("query_string", b"").decode("latin-1")
            location = target + (f"?{query}" if query else "")
            await Response(status_code=307, headers={"location": location})(scope, receive, send)
            return
        await self.app(scope, receive, send)

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

from collections.abc import Sequence

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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

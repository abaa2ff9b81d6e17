"""Every failure is one JSON shape, ``{"code": <status>, "error": "<message>"}``; no stack
trace, node text or RPC URL reaches a client.  "No pairs found" (404) adds ``reason``
and ``token``; 429 and load-shedding 503s carry ``Retry-After``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from tokenrisk.api import wire
from tokenrisk.errors import NoPairsFound, Overloaded, RateLimited, TokenRiskError

log = logging.getLogger("tokenrisk.api")

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": wire.ErrorBody, "description": text}
    for status, text in {
        400: "Invalid address, missing/unknown chainID, bad boolean or missing parameter.",
        401: "The key is missing or wrong (keys required), or it was reset or revoked.",
        403: "The caller's tier does not allow this (TopHolders limit above its allowance).",
        404: 'No contract at this address, or (IsHoneypot) "No pairs found" with a reason.',
        429: "Rate limit exceeded; see the Retry-After header (seconds).",
        502: "The node answered with an error or with something that is not JSON-RPC.",
        503: "The node cannot be reached, or the service is at capacity (see Retry-After).",
        504: "The check did not finish within the deadline.",
    }.items()
}
"""The error answers every check route may give, for the OpenAPI document."""


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        wire.dump(wire.error_body(status, message)), status_code=status, headers=headers
    )


def no_pairs_response(exc: NoPairsFound) -> JSONResponse:
    """404 ``{"code": 404, "error": "No pairs found"}`` plus ``reason`` and ``token``."""
    body = wire.error_body(exc.status, exc.message, exc.reason, exc.token)
    return JSONResponse(wire.dump(body), status_code=exc.status)


def install(app: FastAPI) -> None:
    """Turn every exception into the one error shape (500 "internal error" for a bug)."""

    @app.exception_handler(TokenRiskError)
    async def on_error(request: Request, exc: TokenRiskError) -> JSONResponse:
        if isinstance(exc, NoPairsFound):
            return no_pairs_response(exc)
        headers = (
            {"Retry-After": str(exc.retry_after)}
            if isinstance(exc, RateLimited | Overloaded)
            else None
        )
        # the class and our own words, never the node's text; load shedding (Overloaded)
        # is counted by app.state.admission, not logged once per refused request
        if exc.status >= 500 and not isinstance(exc, Overloaded):
            log.warning(
                "%s %s -> %s %s: %s",
                request.method,
                request.url.path,
                exc.status,
                type(exc).__name__,
                exc.public,
            )
        return error_response(exc.status, exc.public, headers)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "not found" if exc.status_code == 404 else str(exc.detail)
        return error_response(exc.status_code, message, dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, "invalid request parameters")

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return error_response(500, "internal error")

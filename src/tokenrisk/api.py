"""HTTP API: routes, parameter validation, API keys, rate limits, error bodies.

Every failure is one JSON shape, ``{"code": <status>, "error": "<message>"}``; no stack
trace or RPC URL reaches a client.  Each request runs under the configured deadline
(504 when exceeded).  Keys are optional until the operator configures some; then the
``X-API-KEY`` header (or ``apiKey`` query/form parameter) must match one, compared in
constant time.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from tokenrisk import checks, wire
from tokenrisk.config import Settings
from tokenrisk.errors import (
    AuthError,
    DeadlineExceeded,
    InputError,
    MissingParameter,
    RateLimited,
    TokenRiskError,
)
from tokenrisk.service import Service, open_service

log = logging.getLogger("tokenrisk.api")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def parse_bool(name: str, value: str | None) -> bool:
    if value is None or value == "":
        return False
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InputError(f"{name} must be true or false")


def parse_chain_id(value: str | None, required: bool = False) -> int | None:
    if value is None or value == "":
        if required:
            raise MissingParameter("chainID is required")
        return None
    if not value.isdigit() or len(value) > 12:
        raise InputError("chainID must be a positive integer")
    return int(value)


def _liquidity_mode(simulate: bool, force: bool) -> str:
    return "always" if force else "if_missing" if simulate else "never"


def _require(name: str, value: str | None) -> str:
    if value is None or value == "":
        raise MissingParameter(f"{name} is required")
    return value


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        wire.dump(wire.error_body(status, message)), status_code=status, headers=headers
    )


class KeyGate:
    """API-key check and a fixed-window per-key rate limit."""

    def __init__(self, keys: frozenset[str], per_minute: int) -> None:
        self.keys = tuple(k.encode() for k in keys)
        self.per_minute = per_minute
        self.windows: dict[str, tuple[int, int]] = {}

    def check(self, request: Request) -> None:
        key = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        if self.keys:
            offered = (key or "").encode()
            # compare against every key, always, so timing says nothing about which matched
            matched = [hmac.compare_digest(offered, k) for k in self.keys]
            if not key or not any(matched):
                raise AuthError("a valid API key is required (X-API-KEY header)")
        self._count(key or (request.client.host if request.client else "anonymous"))

    def _count(self, who: str) -> None:
        if self.per_minute <= 0:
            return
        window = int(time.time() // 60)
        start, count = self.windows.get(who, (window, 0))
        count = count + 1 if start == window else 1
        self.windows[who] = (window, count)
        if count > self.per_minute:
            raise RateLimited("rate limit exceeded", retry_after=60 - int(time.time() % 60))


def create_app(settings: Settings, service: Service | None = None) -> FastAPI:
    """The ASGI app.  ``service`` may be given (tests); otherwise it is opened at start-up."""
    holder: dict[str, Service] = {} if service is None else {"svc": service}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc: Service = (
            service if service is not None else await asyncio.to_thread(open_service, settings)
        )
        holder["svc"] = svc
        yield
        if service is None:
            await svc.close()

    app = FastAPI(
        title="tokenrisk",
        version="0.1.0",
        lifespan=lifespan,
        description="Token risk (honeypot) checks computed in your own node.",
    )
    gate = KeyGate(settings.api_keys, settings.rate_limit_per_minute)
    _install_errors(app)

    async def run(request: Request, work: Callable[[Service], Awaitable[Any]]) -> Any:
        gate.check(request)
        try:
            async with asyncio.timeout(settings.deadline):
                return await work(holder["svc"])
        except TimeoutError:
            raise DeadlineExceeded("the check did not finish within the deadline") from None

    @app.get(
        "/v2/IsHoneypot",
        summary="Can this token be sold after buying it, and at what cost?",
        response_model=wire.IsHoneypotResponse,
        response_model_exclude_none=True,
    )
    async def is_honeypot(
        request: Request,
        address: str | None = Query(None, description="token or pair/pool address"),
        chainID: str | None = Query(None, description="chain id; all chains when omitted"),  # noqa: N803
        pair: str | None = Query(None, description="pair to use; deepest when omitted"),
        simulateLiquidity: str | None = Query(None, description="simulate a pool when none exists"),  # noqa: N803
        forceSimulateLiquidity: str | None = Query(None, description="always simulate a pool"),  # noqa: N803
    ) -> JSONResponse:
        addr = _require("address", address)
        chain_id = parse_chain_id(chainID)
        simulate = parse_bool("simulateLiquidity", simulateLiquidity)
        force = parse_bool("forceSimulateLiquidity", forceSimulateLiquidity)
        if (simulate or force) and chain_id is None:
            raise MissingParameter(
                "chainID is required with simulateLiquidity/forceSimulateLiquidity"
            )
        body = await run(
            request,
            lambda svc: checks.is_honeypot(
                svc, addr, chain_id, pair, _liquidity_mode(simulate, force)
            ),
        )
        return JSONResponse(body)

    @app.get(
        "/v2/GetContractVerification",
        summary="Is the contract and everything it calls open source?",
        response_model=wire.ContractVerificationResponse,
        response_model_exclude_none=True,
    )
    async def contract_verification(
        request: Request,
        address: str | None = Query(None, description="root contract"),
        chainID: str | None = Query(None, description="chain id"),  # noqa: N803
    ) -> JSONResponse:
        addr = _require("address", address)
        chain_id = parse_chain_id(chainID)
        return JSONResponse(
            await run(request, lambda svc: checks.contract_verification(svc, addr, chain_id))
        )

    @app.get(
        "/v1/GetPairs",
        summary="Pairs of a token, deepest first (at most 10)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
    )
    async def get_pairs(
        request: Request,
        address: str | None = Query(None, description="token address"),
        chainID: str | None = Query(None, description="chain id; all chains when omitted"),  # noqa: N803
    ) -> JSONResponse:
        addr = _require("address", address)
        chain_id = parse_chain_id(chainID)
        return JSONResponse(await run(request, lambda svc: checks.get_pairs(svc, addr, chain_id)))

    _add_holders_route(app, run)
    return app


def _add_holders_route(
    app: FastAPI, run: Callable[[Request, Callable[[Service], Awaitable[Any]]], Awaitable[Any]]
) -> None:
    @app.get(
        "/v1/TopHolders",
        summary="Top 50 holders from the Transfer-log index",
        response_model=wire.TopHoldersResponse,
        response_model_exclude_none=True,
    )
    async def top_holders(
        request: Request,
        address: str | None = Query(None, description="token address"),
        chainID: str | None = Query(None, description="chain id (required)"),  # noqa: N803
    ) -> JSONResponse:
        from tokenrisk import holders_check

        addr = _require("address", address)
        chain_id = parse_chain_id(chainID, required=True)
        assert chain_id is not None
        return JSONResponse(
            await run(request, lambda svc: holders_check.top_holders(svc, addr, chain_id))
        )


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(TokenRiskError)
    async def on_error(request: Request, exc: TokenRiskError) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
        if exc.status >= 500:
            log.warning(
                "%s %s -> %s: %s", request.method, request.url.path, exc.status, exc.message
            )
        return error_response(exc.status, exc.message, headers)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "not found" if exc.status_code == 404 else str(exc.detail)
        return error_response(exc.status_code, message)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, "invalid request parameters")

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return error_response(500, "internal error")

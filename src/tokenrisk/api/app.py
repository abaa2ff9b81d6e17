"""HTTP API: routes, parameter validation, API keys, rate limits, cache, error bodies.

Every failure is one JSON shape, ``{"code": <status>, "error": "<message>"}``; no stack
trace or RPC URL reaches a client.  Each request runs under the configured deadline
(504 when exceeded).  Keys are optional until the operator configures some; then the
``X-API-KEY`` header (or ``apiKey`` query parameter) must match one, compared in
constant time.  The rate limit is a token bucket per key (per client address when keys
are off).  IsHoneypot, GetPairs and TopHolders answers are cached per chain head (see
:mod:`tokenrisk.api.cache`); GetContractVerification is always computed fresh.
``/health``, ``/docs`` and ``/openapi.json`` need no key and are not rate limited.

Request order: key and rate limit, then parameters (400), then the cached or fresh
check under the deadline.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import Depends, FastAPI, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, APIKeyQuery
from starlette.exceptions import HTTPException as StarletteHTTPException

from tokenrisk.api import wire
from tokenrisk.api.cache import ResultCache, chain_heads
from tokenrisk.api.health import HealthReport, check_health
from tokenrisk.chain.abi import parse_address
from tokenrisk.checks import holders as holders_check
from tokenrisk.checks import honeypot as checks
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
_MAX_RATE_CLIENTS = 10_000

Work = Callable[[Service], Awaitable[Any]]

_HEADER_KEY = APIKeyHeader(
    name="X-API-KEY", auto_error=False, description="API key (recommended way to send it)."
)
_QUERY_KEY = APIKeyQuery(
    name="apiKey", auto_error=False, description="API key as a query parameter."
)

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": wire.ErrorBody, "description": text}
    for status, text in {
        400: "Invalid address, missing/unknown chainID, bad boolean or missing parameter.",
        401: "API keys are configured and the key is missing or wrong.",
        404: "No contract at this address on the configured chain(s).",
        429: "Rate limit exceeded; see the Retry-After header (seconds).",
        502: "The node answered with an error or with something that is not JSON-RPC.",
        503: "The node cannot be reached.",
        504: "The check did not finish within the deadline.",
    }.items()
}


# PARAMETERS


def parse_bool(name: str, value: str | None) -> bool:
    """``true/1/yes`` or ``false/0/no`` (any case); absent or empty means false."""
    if value is None or value == "":
        return False
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InputError(f"{name} must be true or false")


def parse_chain_id(value: str | None) -> int | None:
    """An optional decimal chain id (ASCII digits only); None when absent or empty."""
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 12:
        raise InputError("chainID must be a positive integer")
    return int(value)


def require_chain_id(value: str | None) -> int:
    """Like :func:`parse_chain_id` for endpoints where chainID is mandatory."""
    chain_id = parse_chain_id(value)
    if chain_id is None:
        raise MissingParameter("chainID is required")
    return chain_id


def liquidity_mode(simulate: bool, force: bool) -> str:
    """The ``checks.analyse`` liquidity mode for the two IsHoneypot flags (force wins)."""
    return "always" if force else "if_missing" if simulate else "never"


def require_address(name: str, value: str | None) -> str:
    """A present, valid address (EIP-55 checked when mixed case), returned checksummed."""
    if value is None or value == "":
        raise MissingParameter(f"{name} is required")
    return parse_address(value)


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        wire.dump(wire.error_body(status, message)), status_code=status, headers=headers
    )


# KEYS AND RATE LIMIT


class RateLimiter:
    """Token bucket per client: ``per_minute`` requests of burst, refilled continuously.

    No fixed window, so there is no double burst at a minute boundary.  At most
    ``max_clients`` buckets are kept; the least recently seen are forgotten first (a
    forgotten client simply starts again with a full bucket).  ``per_minute <= 0`` is off.
    """

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = _MAX_RATE_CLIENTS,
    ) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, who: str) -> None:
        """Spend one request of ``who``'s allowance; raises RateLimited when empty."""
        if self.capacity <= 0:
            return
        now = self._clock()
        tokens, seen = self._buckets.pop(who, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - seen) * self.rate)
        if tokens < 1.0:
            self._buckets[who] = (tokens, now)
            retry = max(1, math.ceil((1.0 - tokens) / self.rate))
            raise RateLimited("rate limit exceeded", retry_after=retry)
        self._buckets[who] = (tokens - 1.0, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)


class KeyGate:
    """FastAPI dependency: API-key check (when keys are configured), then the rate limit."""

    def __init__(self, keys: frozenset[str], limiter: RateLimiter) -> None:
        self.keys = tuple(k.encode() for k in keys)
        self.limiter = limiter

    async def __call__(
        self,
        request: Request,
        header_key: str | None = Security(_HEADER_KEY),
        query_key: str | None = Security(_QUERY_KEY),
    ) -> None:
        key = header_key or query_key
        if self.keys:
            self.authenticate(key)
            self.limiter.take(f"key:{key}")
        else:
            self.limiter.take(f"ip:{request.client.host if request.client else 'unknown'}")

    def authenticate(self, key: str | None) -> None:
        """Raises AuthError unless ``key`` is one of the configured keys."""
        offered = (key or "").encode()
        # compare against every key, always, so timing says nothing about which matched
        matched = [hmac.compare_digest(offered, k) for k in self.keys]
        if not key or not any(matched):
            raise AuthError("a valid API key is required (X-API-KEY header)")


# RUNNING CHECKS


@dataclass
class Runner:
    """Runs a check under the request deadline, through the results cache when asked."""

    deadline: float
    cache: ResultCache
    services: dict[str, Service] = field(default_factory=dict)

    @property
    def service(self) -> Service:
        return self.services["svc"]

    async def fresh(self, work: Work) -> Any:
        """Compute without the cache (GetContractVerification)."""
        return await self._timed(lambda: work(self.service))

    async def cached(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> Any:
        """Answer from the cache when the chain head(s) still match, else compute and store.

        The head read (one per chain) counts against the deadline too.
        """
        return await self._timed(lambda: self._lookup(endpoint, chain_id, params, work))

    async def _lookup(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> Any:
        svc = self.service
        heads = await chain_heads(svc, chain_id) if self.cache.enabled else None
        if heads is None:
            return await work(svc)
        key = (endpoint, heads, params)
        hit, value = self.cache.get(key)
        if hit:
            return value
        value = await work(svc)
        self.cache.put(key, value)
        return value

    async def _timed(self, start: Callable[[], Awaitable[Any]]) -> Any:
        try:
            async with asyncio.timeout(self.deadline):
                return await start()
        except TimeoutError:
            raise DeadlineExceeded("the check did not finish within the deadline") from None


# APPLICATION


def create_app(settings: Settings, service: Service | None = None) -> FastAPI:
    """The ASGI app.  ``service`` may be given (tests); otherwise it is opened at start-up.

    ``app.state.cache`` is the results cache (its ``stats`` count hits and misses).
    """
    runner = Runner(settings.deadline, ResultCache(settings.cache_ttl))
    if service is not None:
        runner.services["svc"] = service

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if service is not None:
            yield
            return
        svc = await asyncio.to_thread(open_service, settings)
        runner.services["svc"] = svc
        try:
            yield
        finally:
            await svc.close()

    app = FastAPI(
        title="tokenrisk",
        version="0.1.0",
        lifespan=lifespan,
        description="Token risk (honeypot) checks computed in your own node. "
        'Every error body is {"code": <status>, "error": "<message>"}.',
    )
    app.state.cache = runner.cache
    gate = KeyGate(settings.api_keys, RateLimiter(settings.rate_limit_per_minute))
    _install_errors(app)
    _add_honeypot_route(app, runner, gate)
    _add_verification_route(app, runner, gate)
    _add_pairs_route(app, runner, gate)
    _add_holders_route(app, runner, gate)
    _add_health_route(app, runner, min(settings.deadline, settings.rpc_timeout))
    return app


def _add_honeypot_route(app: FastAPI, runner: Runner, gate: KeyGate) -> None:
    @app.get(
        "/v2/IsHoneypot",
        summary="Can this token be sold after buying it, and at what cost?",
        response_model=wire.IsHoneypotResponse,
        response_model_exclude_none=True,
        responses=_ERRORS,
        dependencies=[Depends(gate)],
    )
    async def is_honeypot(
        address: str | None = Query(None, description="Token or pair/pool address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description="Pair to use; the deepest when omitted."),
        simulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: simulate a pool when none exists; needs chainID."
        ),
        forceSimulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: always simulate a pool; needs chainID."
        ),
    ) -> JSONResponse:
        token = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address = parse_address(pair) if pair else None
        simulate = parse_bool("simulateLiquidity", simulateLiquidity)
        force = parse_bool("forceSimulateLiquidity", forceSimulateLiquidity)
        if (simulate or force) and chain_id is None:
            raise MissingParameter(
                "chainID is required with simulateLiquidity/forceSimulateLiquidity"
            )
        mode = liquidity_mode(simulate, force)
        params = (token, pair_address, mode)
        body = await runner.cached(
            "IsHoneypot",
            chain_id,
            params,
            lambda svc: checks.is_honeypot(svc, token, chain_id, pair_address, mode),
        )
        return JSONResponse(body)


def _add_verification_route(app: FastAPI, runner: Runner, gate: KeyGate) -> None:
    @app.get(
        "/v2/GetContractVerification",
        summary="Is the contract and everything it calls open source? (never cached)",
        response_model=wire.ContractVerificationResponse,
        response_model_exclude_none=True,
        responses=_ERRORS,
        dependencies=[Depends(gate)],
    )
    async def contract_verification(
        address: str | None = Query(None, description="Root contract (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
    ) -> JSONResponse:
        root = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        body = await runner.fresh(lambda svc: checks.contract_verification(svc, root, chain_id))
        return JSONResponse(body)


def _add_pairs_route(app: FastAPI, runner: Runner, gate: KeyGate) -> None:
    @app.get(
        "/v1/GetPairs",
        summary="Pairs of a token, by USD liquidity descending (at most 10)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
        responses=_ERRORS,
        dependencies=[Depends(gate)],
    )
    async def get_pairs(
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
    ) -> JSONResponse:
        token = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        body = await runner.cached(
            "GetPairs", chain_id, (token,), lambda svc: checks.get_pairs(svc, token, chain_id)
        )
        return JSONResponse(body)


def _add_holders_route(app: FastAPI, runner: Runner, gate: KeyGate) -> None:
    @app.get(
        "/v1/TopHolders",
        summary="Top 50 holders by balance (descending, ties by address)",
        response_model=wire.TopHoldersResponse,
        response_model_exclude_none=True,
        responses=_ERRORS,
        dependencies=[Depends(gate)],
    )
    async def top_holders(
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id (required here)."),  # noqa: N803
    ) -> JSONResponse:
        token = require_address("address", address)
        chain_id = require_chain_id(chainID)
        body = await runner.cached(
            "TopHolders",
            chain_id,
            (token,),
            lambda svc: holders_check.top_holders(svc, token, chain_id),
        )
        return JSONResponse(body)


def _add_health_route(app: FastAPI, runner: Runner, timeout: float) -> None:
    @app.get(
        "/health",
        summary="Node reachability and head block age of every configured chain",
        response_model=HealthReport,
        response_model_exclude_none=True,
        responses={503: {"model": HealthReport, "description": "A node is unreachable."}},
    )
    async def health() -> JSONResponse:
        svc = runner.service
        report = await check_health(svc.chains, svc.clients, timeout)
        return JSONResponse(wire.dump(report), status_code=200 if report.healthy else 503)


# ERRORS


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(TokenRiskError)
    async def on_error(request: Request, exc: TokenRiskError) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
        if exc.status >= 500:  # the class and our own words, never the node's text
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

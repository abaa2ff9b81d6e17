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
import ipaddress
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
from fastapi.responses import JSONResponse, Response
from fastapi.security import APIKeyHeader, APIKeyQuery
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from tokenrisk import redaction
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

    def check(self, who: str) -> None:
        """Raise RateLimited when ``who`` has nothing left, without spending anything."""
        if self.capacity <= 0 or who not in self._buckets:
            return
        tokens, seen = self._buckets[who]
        tokens = min(self.capacity, tokens + (self._clock() - seen) * self.rate)
        if tokens < 1.0:
            raise RateLimited("too many attempts", max(1, math.ceil((1.0 - tokens) / self.rate)))


Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address: str, trusted: Networks) -> bool:
    ip = _ip(address)
    return ip is not None and any(ip in network for network in trusted)


def client_address(request: Request, trusted: Networks) -> str:
    """Who is asking, for rate limits and failed-key throttling.

    The peer address, unless the peer is a configured trusted proxy: then the nearest
    ``X-Forwarded-For`` hop that is not itself trusted (proxies append, so hops on the
    left are the client's own claims and only the right end is vouched for).
    """
    peer = request.client.host if request.client else "unknown"
    if not _trusted(peer, trusted):
        return peer
    hops = [h for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if _ip(hop) is None:
            break  # garbage in the chain: do not believe anything left of it
        if not _trusted(hop, trusted):
            return str(_ip(hop))
    return peer


class OpenGate:
    """FastAPI dependency without keys: the rate limit per client address.

    Declares no security scheme, so the OpenAPI document offers none when keys are off.
    """

    def __init__(self, limiter: RateLimiter, trusted: Networks = ()) -> None:
        self.limiter = limiter
        self.trusted = trusted

    async def __call__(self, request: Request) -> None:
        self.limiter.take(f"ip:{client_address(request, self.trusted)}")


class KeyGate:
    """FastAPI dependency: API-key check, then the rate limit per key.

    Wrong keys are throttled per client address (``failures``): once a client has
    spent its allowance of failed attempts it gets 429 before its key is even looked
    at, so keys cannot be guessed at speed.
    """

    def __init__(
        self,
        keys: frozenset[str],
        limiter: RateLimiter,
        failures: RateLimiter | None = None,
        trusted: Networks = (),
    ) -> None:
        self.keys = tuple(k.encode() for k in keys)
        self.limiter = limiter
        self.failures = failures or RateLimiter(0)
        self.trusted = trusted

    async def __call__(
        self,
        request: Request,
        header_key: str | None = Security(_HEADER_KEY),
        query_key: str | None = Security(_QUERY_KEY),
    ) -> None:
        key = header_key or query_key
        who = f"ip:{client_address(request, self.trusted)}"
        self.failures.check(who)
        try:
            self.authenticate(key)
        except AuthError:
            self.failures.take(who)
            raise
        self.limiter.take(f"key:{key}")

    def valid(self, key: str | None) -> bool:
        offered = (key or "").encode()
        # compare against every key, always, so timing says nothing about which matched
        matched = [hmac.compare_digest(offered, k) for k in self.keys]
        return bool(key) and any(matched)

    def authenticate(self, key: str | None) -> None:
        """Raises AuthError unless ``key`` is one of the configured keys."""
        if not self.valid(key):
            raise AuthError("a valid API key is required (X-API-KEY header)")


Gate = OpenGate | KeyGate


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

    redaction.install(_secrets(settings))
    app = FastAPI(
        title="tokenrisk",
        version="0.1.0",
        lifespan=lifespan,
        redirect_slashes=False,  # Starlette's would build the Location from the Host header
        description="Token risk (honeypot) checks computed in your own node. "
        'Every error body is {"code": <status>, "error": "<message>"}.',
    )
    app.state.cache = runner.cache
    gate = _gate(settings)
    _install_errors(app)
    _add_honeypot_route(app, runner, gate)
    _add_verification_route(app, runner, gate)
    _add_pairs_route(app, runner, gate)
    _add_holders_route(app, runner, gate)
    timeout = min(settings.deadline, settings.rpc_timeout)
    probe = HealthProbe(runner, timeout, settings.server.health_cache_ttl)
    _add_health_route(app, probe, gate if isinstance(gate, KeyGate) else None)
    app.add_middleware(SlashRedirect, paths=frozenset(r.path for r in app.routes))  # type: ignore[attr-defined]
    _truthful_openapi(app, keys=bool(settings.api_keys))
    return app


def _secrets(settings: Settings) -> set[str]:
    urls = [u for n in settings.nodes for u in (n.rpc_url, n.fork_url)] + [settings.store_url]
    return redaction.configured_secrets(
        settings.api_keys, urls, {"etherscan_key": settings.verification.etherscan_key}
    )


def _gate(settings: Settings) -> OpenGate | KeyGate:
    trusted = tuple(ipaddress.ip_network(n, strict=False) for n in settings.server.trusted_proxies)
    limiter = RateLimiter(settings.rate_limit_per_minute)
    if not settings.api_keys:
        return OpenGate(limiter, trusted)
    failures = RateLimiter(settings.server.auth_failures_per_minute)
    return KeyGate(settings.api_keys, limiter, failures, trusted)


def _add_honeypot_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
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


def _add_verification_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
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


def _add_pairs_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
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


def _add_holders_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
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


class HealthProbe:
    """One probe of every node, reused for ``ttl`` seconds and shared by concurrent
    callers, so ``/health`` costs the nodes at most one request per chain per ``ttl``."""

    def __init__(
        self,
        runner: Runner,
        timeout: float,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.runner = runner
        self.timeout = timeout
        self.ttl = ttl
        self.probes = 0
        self._clock = clock
        self._lock = asyncio.Lock()
        self._report: tuple[float, HealthReport] | None = None

    async def report(self) -> HealthReport:
        async with self._lock:
            if self._report is None or self._report[0] <= self._clock():
                svc = self.runner.service
                fresh = await check_health(svc.chains, svc.clients, self.timeout)
                self.probes += 1
                self._report = (self._clock() + self.ttl, fresh)
            return self._report[1]


def _add_health_route(app: FastAPI, probe: HealthProbe, keys: KeyGate | None) -> None:
    @app.get(
        "/health",
        summary="Node reachability and head block age of every configured chain",
        description="Cached for a second.  With API keys on, the per-chain detail is "
        "shown only to a request with a valid key (X-API-KEY header or apiKey).",
        response_model=HealthReport,
        response_model_exclude_none=True,
        responses={503: {"model": HealthReport, "description": "A node is unreachable."}},
    )
    async def health(request: Request) -> JSONResponse:
        report = await probe.report()
        status = 200 if report.healthy else 503
        offered = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        if keys is not None and not keys.valid(offered):
            report = HealthReport(status=report.status)
        return JSONResponse(wire.dump(report), status_code=status)


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


# OPENAPI

_ADDRESS_SCHEMA = {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$"}
_PARAMETERS: dict[str, dict[str, Any]] = {
    "address": _ADDRESS_SCHEMA,
    "pair": _ADDRESS_SCHEMA,
    "chainID": {"type": "integer", "minimum": 1, "maximum": 999_999_999_999},
    "simulateLiquidity": {"type": "boolean"},
    "forceSimulateLiquidity": {"type": "boolean"},
}
_REQUIRED = {"address": "*", "chainID": "/v1/TopHolders"}
"""Parameter -> the paths where it is required ("*": everywhere it appears)."""


def _truthful_openapi(app: FastAPI, keys: bool) -> None:
    """Make the generated document say what the handlers enforce.

    The handlers parse parameters themselves (to answer our own 400 messages), so
    FastAPI sees optional strings; the document instead states the real contract:
    required parameters, the address pattern, integer chain ids, booleans.  FastAPI's
    422 is never sent (validation errors are 400), and 401 exists only with keys on.
    """
    make = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = make()
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                _fix_operation(path, operation, keys)
        schema.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
        schema.get("components", {}).get("schemas", {}).pop("ValidationError", None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _fix_operation(path: str, operation: dict[str, Any], keys: bool) -> None:
    for param in operation.get("parameters", []):
        name = param.get("name")
        if param.get("in") == "query" and name in _PARAMETERS:
            param["schema"] = {**_PARAMETERS[name], "description": param.get("description", "")}
            param["schema"].pop("description")
            where = _REQUIRED.get(name)
            param["required"] = where == "*" or where == path
    responses = operation.get("responses", {})
    responses.pop("422", None)
    if not keys:
        responses.pop("401", None)


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

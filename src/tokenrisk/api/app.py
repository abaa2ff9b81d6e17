"""HTTP API: the FastAPI app, its routes, health and error bodies.

Parameters are parsed in :mod:`.params`, keys and rate limits checked in :mod:`.gate`,
checks run by :mod:`.runner` (deadline, results cache) and rendered by :mod:`.wire`.

Every failure is one JSON shape, ``{"code": <status>, "error": "<message>"}``; no stack
trace or RPC URL reaches a client.  Each request runs under the configured deadline
(504 when exceeded).  The ``X-API-KEY`` header (or ``apiKey`` query parameter) selects
the caller's tier (:mod:`.access`); keys are optional unless the operator requires them.
The rate limit is a token bucket per key (per client address without one), sized by the
tier.  IsHoneypot, GetPairs and TopHolders answers are cached per chain head (see
:mod:`tokenrisk.api.cache`); GetContractVerification is always computed fresh.
``/health``, ``/docs``, ``/redoc``, ``/openapi.json`` and the page (``/``, ``/token/...``)
need no key and are not rate limited; the page's own API calls do.

Compatibility with clients of the live API (docs/api.md "Compatibility"): the v1 paths
``/v1/IsHoneypot`` and ``/v1/GetContractVerification`` answer like their v2 forms;
``router`` and ``pair`` are accepted on both; HEAD is answered wherever GET is, and CORS
(permissive unless ``cors_origins`` says otherwise) lets browser pages on other origins
call the API (see :mod:`tokenrisk.api.middleware`).

Request order: key and rate limit, then parameters (400), then what the tier allows
(the ``limit`` parameters), then the cached or fresh check under the deadline.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tokenrisk import metrics, redaction
from tokenrisk.api import middleware, page, wire
from tokenrisk.api.access import Access, Caller, Policy
from tokenrisk.api.admin import add_admin
from tokenrisk.api.admission import Admission
from tokenrisk.api.batch import add_batch_route
from tokenrisk.api.gate import Gate, KeyGate, OpenGate, RateLimiter
from tokenrisk.api.health import HealthReport, check_health
from tokenrisk.api.params import (
    liquidity_mode,
    optional_address,
    parse_bool,
    parse_chain_id,
    parse_limit,
    require_address,
    require_chain_id,
)
from tokenrisk.api.runner import Runner
from tokenrisk.api.shared import LocalState, SharedState, shared_state
from tokenrisk.checks import holders as holders_check
from tokenrisk.checks import honeypot as checks
from tokenrisk.checks.search import skipped_chains
from tokenrisk.config import Settings
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.errors import (
    AuthError,
    Forbidden,
    InputError,
    MissingParameter,
    NoPairsFound,
    Overloaded,
    RateLimited,
    TokenRiskError,
)
from tokenrisk.jobs import open_queue
from tokenrisk.service import Service, open_service
from tokenrisk.store.keys import Keyring
from tokenrisk.tiers import PAIRS_DEFAULT, TOP_HOLDERS_DEFAULT, Tier

log = logging.getLogger("tokenrisk.api")
SKIPPED_HEADER = "X-Skipped-Chains"

_ERRORS: dict[int | str, dict[str, Any]] = {
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


# ERROR BODIES


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


# KEYS AND RATE LIMIT


# APPLICATION


def create_app(settings: Settings, service: Service | None = None) -> FastAPI:
    """The ASGI app.  ``service`` may be given (tests); otherwise it is opened at start-up.

    ``app.state.shared`` is the shared state (its ``stats`` count cache hits and misses),
    in Redis when ``redis_url`` is set; without Redis ``app.state.cache`` is the
    in-process results cache.
    """
    state = shared_state(settings)
    runner = Runner(settings.deadline, state, Admission(settings.admission_limit))
    if service is not None:
        runner.services["svc"] = service

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc = service if service is not None else await asyncio.to_thread(open_service, settings)
        runner.services["svc"] = svc
        runner.supervisor = NodeSupervisor(svc.nodes)
        runner.supervisor.start()
        queue = await open_queue(settings)
        svc.index_queue = queue
        try:
            yield
        finally:
            await runner.supervisor.stop()
            svc.index_queue = None
            if queue is not None:
                await queue.aclose()
            await state.aclose()
            if service is None:
                await svc.close()

    redaction.install(_secrets(settings))
    app = FastAPI(
        title="tokenrisk",
        version="0.1.0",
        lifespan=lifespan,
        redirect_slashes=False,  # Starlette's would build the Location from the Host header
        docs_url=None,  # served from bundled assets by page.add_docs
        redoc_url=None,
        description="Token risk (honeypot) checks computed in your own node. "
        'Every error body is {"code": <status>, "error": "<message>"}.',
    )
    app.state.shared = state
    app.state.admission = runner.admission
    if isinstance(state, LocalState):
        app.state.cache = state.cache
    middleware.install(app, settings.cors_origins)
    gate = _gate(settings, runner, state)
    _install_errors(app)
    _add_honeypot_route(app, runner, gate)
    _add_verification_route(app, runner, gate)
    _add_pairs_route(app, runner, gate)
    _add_holders_route(app, runner, gate)
    add_batch_route(app, runner, gate, _ERRORS, check_options)
    timeout = min(settings.deadline, settings.rpc_timeout)
    probe = HealthProbe(runner, timeout, settings.server.health_cache_ttl)
    _add_health_route(app, probe, gate if settings.keys_required else None)
    if settings.operator_key:
        add_admin(app, settings.operator_key, gate, _keyring(settings, runner))
    _add_metrics_route(app, gate if settings.keys_required else None)
    page.add_docs(app)
    page.add_page(app, lambda: [(c.id, c.name) for c in runner.service.chains.values()])
    app.add_middleware(SlashRedirect, paths=frozenset(r.path for r in app.routes))  # type: ignore[attr-defined]
    tiers = settings.tier_table().values()
    caps = {
        "GetPairs": max(t.max_pairs for t in tiers),
        "TopHolders": max(t.max_top_holders for t in tiers),
    }
    _truthful_openapi(app, _keys_matter(settings), lambda: sorted(runner.service.chains), caps)
    app.add_middleware(RequestMetrics)  # added last: outermost, so it sees every answer
    return app


def _secrets(settings: Settings) -> set[str]:
    urls = [u for n in settings.nodes for u in (n.rpc_url, n.fork_url)] + [settings.store_url]
    return redaction.configured_secrets(
        [*settings.api_keys, *(k for k in (settings.key_pepper, settings.operator_key) if k)],
        urls,
        {"etherscan_key": settings.verification.etherscan_key},
    )


def _keyring(settings: Settings, runner: Runner) -> Callable[[], Keyring]:
    """The key store of the running service (opened at start-up, so looked up per call)."""
    return lambda: Keyring(runner.service.store, settings.key_pepper)


def _keys_matter(settings: Settings) -> bool:
    """Keys are required, or select a tier: the document then describes them (and 401)."""
    return settings.keys_required or bool(settings.tiers)


def _gate(settings: Settings, runner: Runner, state: SharedState) -> Gate:
    """A limiter per tier (in Redis when configured, so every worker spends from the same
    buckets), and keys looked up in the runner's store (once it is open)."""
    trusted = tuple(ipaddress.ip_network(n, strict=False) for n in settings.server.trusted_proxies)
    policy = Policy.of(settings)
    limiters = {name: state.limiter(t.rate_limit_per_minute) for name, t in policy.tiers.items()}
    access = Access(policy, _keyring(settings, runner))
    failures = RateLimiter(settings.server.auth_failures_per_minute)
    kind = KeyGate if _keys_matter(settings) else OpenGate
    return kind(access, limiters, failures, trusted)


def check_options(tier: Tier) -> checks.Options:
    """The analyses ``tier`` switches on or off."""
    return checks.Options(holder_analysis=tier.holder_analysis, owner_powers=tier.owner_powers)


_PAIR_DOC = "Pair/pool to use (0x + 40 hex); the deepest when omitted."
_ROUTER_DOC = "Only pools traded through this router (0x + 40 hex); any when omitted."


def _add_honeypot_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    async def is_honeypot(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token or pair/pool address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=_PAIR_DOC),
        router: str | None = Query(None, description=_ROUTER_DOC),
        simulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: simulate a pool when none exists; needs chainID."
        ),
        forceSimulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: always simulate a pool; needs chainID."
        ),
        ownerPowers: str | None = Query(  # noqa: N803
            None, description="true/false: run the owner-power scan (default true)."
        ),
    ) -> Response:
        token = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        simulate = parse_bool("simulateLiquidity", simulateLiquidity)
        force = parse_bool("forceSimulateLiquidity", forceSimulateLiquidity)
        if (simulate or force) and chain_id is None:
            raise MissingParameter(
                "chainID is required with simulateLiquidity/forceSimulateLiquidity"
            )
        mode = liquidity_mode(simulate, force)
        options = check_options(caller.tier)
        if ownerPowers not in (None, "") and not parse_bool("ownerPowers", ownerPowers):
            options = replace(options, owner_powers=False)
        params = (token, pair_address, router_address, mode, options)
        with skipped_chains() as skipped:
            body = await runner.cached(
                "IsHoneypot",
                chain_id,
                params,
                lambda svc: checks.is_honeypot(
                    svc, token, chain_id, pair_address, mode, options, router_address
                ),
            )
        return searched(body, skipped)

    summary = "Can this token be sold after buying it, and at what cost?"
    _add_v2_and_v1(app, "IsHoneypot", summary, wire.IsHoneypotResponse, [], is_honeypot)


def _add_verification_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    async def contract_verification(
        address: str | None = Query(None, description="Root contract (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=_PAIR_DOC),
        router: str | None = Query(None, description=_ROUTER_DOC),
    ) -> Response:
        root = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        with skipped_chains() as skipped:
            body = await runner.fresh(
                chain_id,
                lambda svc: checks.contract_verification(
                    svc, root, chain_id, pair_address, router_address
                ),
            )
        return searched(body, skipped)

    summary = "Is the contract and everything it calls open source? (never cached)"
    model = wire.ContractVerificationResponse
    guard = [Depends(gate)]
    _add_v2_and_v1(app, "GetContractVerification", summary, model, guard, contract_verification)


def _add_v2_and_v1(
    app: FastAPI,
    name: str,
    summary: str,
    model: type[wire.WireModel],
    guard: list[Any],
    endpoint: Callable[..., Awaitable[Response]],
) -> None:
    """Serve ``endpoint`` at ``/v2/<name>`` and at the ``/v1/<name>`` older clients call
    (marked deprecated in the OpenAPI document, answered the same).  ``guard``: route
    dependencies (the gate, unless the endpoint takes the caller as a parameter)."""
    for path, legacy in ((f"/v2/{name}", False), (f"/v1/{name}", True)):
        app.get(
            path,
            summary=summary + (f" (v1 alias of /v2/{name})" if legacy else ""),
            response_model=model,
            response_model_exclude_none=True,
            responses=_ERRORS,
            dependencies=guard,
            deprecated=legacy,
        )(endpoint)


def _add_pairs_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    async def pairs(address: str | None, chain: str | None, limit: int) -> Response:
        token = require_address("address", address)
        chain_id = parse_chain_id(chain)
        with skipped_chains() as skipped:
            body = await runner.cached(
                "GetPairs",
                chain_id,
                (token, limit),
                lambda svc: checks.get_pairs(svc, token, chain_id, limit),
            )
        return searched(body, skipped)

    @app.get(
        "/v1/GetPairs",
        summary="Pairs of a token, by USD liquidity descending (at most 10)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
        responses=_ERRORS,
    )
    async def get_pairs(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
    ) -> Response:
        return await pairs(address, chainID, min(PAIRS_DEFAULT, caller.tier.max_pairs))

    @app.get(
        "/v2/GetPairs",
        summary="Pairs of a token, by USD liquidity descending, then creation time (limit)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
        responses=_ERRORS,
    )
    async def get_pairs_v2(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        limit: str | None = Query(
            None, description="Most pairs to return: 1 to the tier's maximum; default 10."
        ),
    ) -> Response:
        allowed = caller.tier.max_pairs
        count = parse_limit(limit, min(PAIRS_DEFAULT, allowed))
        if count > allowed:
            raise InputError(f"limit must be at most {allowed} for this tier")
        return await pairs(address, chainID, count)


def searched(response: Response, skipped: set[int]) -> Response:
    """A search's answer; ``X-Skipped-Chains`` names the chains whose node was down.

    A request that waited for another's identical computation (single flight) shares
    its body but not this header."""
    if skipped:
        response.headers[SKIPPED_HEADER] = ",".join(str(c) for c in sorted(skipped))
    return response


def _add_holders_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    @app.get(
        "/v1/TopHolders",
        summary="Top holders by balance (descending, ties by address); 50 unless limit",
        response_model=wire.TopHoldersResponse,
        response_model_exclude_none=True,
        responses=_ERRORS,
    )
    async def top_holders(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id (required here)."),  # noqa: N803
        limit: str | None = Query(
            None, description="Most holders to return: 1 to the tier's allowance; default 50."
        ),
    ) -> Response:
        token = require_address("address", address)
        chain_id = require_chain_id(chainID)
        allowed = caller.tier.max_top_holders
        count = parse_limit(limit, min(TOP_HOLDERS_DEFAULT, allowed))
        if count > allowed:
            raise Forbidden(f"limit {count} is above this tier's allowance of {allowed} holders")
        body = await runner.cached(
            "TopHolders",
            chain_id,
            (token, count),
            lambda svc: holders_check.top_holders(svc, token, chain_id, count),
        )
        return body


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
                svc, watching = self.runner.service, self.runner.supervisor
                local = watching.by_chain() if watching is not None else None
                fresh = await check_health(svc.chains, svc.clients, self.timeout, local)
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
        if keys is not None and not await keys.valid(offered):
            report = HealthReport(status=report.status)
        return JSONResponse(wire.dump(report), status_code=status)


def _add_metrics_route(app: FastAPI, keys: KeyGate | None) -> None:
    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        """Prometheus text format; with API keys on, a valid key is required (no rate
        limit, so scraping never competes with checks)."""
        offered = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        if keys is not None and not await keys.valid(offered):
            raise AuthError("a valid API key is required (X-API-KEY header)")
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)


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


# OPENAPI

_ADDRESS_SCHEMA = {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$"}
_PARAMETERS: dict[str, dict[str, Any]] = {
    "address": _ADDRESS_SCHEMA,
    "pair": _ADDRESS_SCHEMA,
    "router": _ADDRESS_SCHEMA,
    "chainID": {"type": "integer", "minimum": 1, "maximum": 999_999_999_999},
    "simulateLiquidity": {"type": "boolean"},
    "forceSimulateLiquidity": {"type": "boolean"},
    "ownerPowers": {"type": "boolean"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 999_999_999},
}
_REQUIRED = {"address": "*", "chainID": "/v1/TopHolders"}
"""Parameter -> the paths where it is required ("*": everywhere it appears)."""


def _truthful_openapi(
    app: FastAPI, keys: bool, chain_ids: Callable[[], list[int]], caps: dict[str, int]
) -> None:
    """Make the generated document say what the handlers enforce.

    The handlers parse parameters themselves (to answer our own 400 messages), so
    FastAPI sees optional strings; the document instead states the real contract:
    required parameters, the address pattern, integer chain ids (an enum of the
    configured chains: any other is a 400), booleans.  FastAPI's 422 is never sent
    (validation errors are 400), and 401 exists only with keys on.  Built on first
    request, once the service (and so its chains) exists.
    """
    make = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = make()
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                _fix_operation(path, operation, keys, chain_ids(), caps)
        schema.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
        schema.get("components", {}).get("schemas", {}).pop("ValidationError", None)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _fix_operation(
    path: str, operation: dict[str, Any], keys: bool, chains: list[int], caps: dict[str, int]
) -> None:
    """``caps``: the largest ``limit`` any tier allows, by endpoint name."""
    for param in operation.get("parameters", []):
        name = param.get("name")
        if param.get("in") == "query" and name in _PARAMETERS:
            param["schema"] = dict(_PARAMETERS[name])
            if name == "chainID":
                param["schema"]["enum"] = chains
            if name == "limit":
                param["schema"]["maximum"] = caps[path.rsplit("/", 1)[-1]]
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

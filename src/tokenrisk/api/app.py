"""HTTP API: the FastAPI app, its routes, health and error bodies.

Parameters are parsed in :mod:`.params`, keys and rate limits checked in :mod:`.access`,
checks run by :mod:`.check_routes` through :mod:`.runner` (deadline, results cache) and
rendered by :mod:`.wire`.

Every failure is one JSON shape, ``{"code": <status>, "error": "<message>"}``; no stack
trace or RPC URL reaches a client.  Each request runs under the configured deadline
(504 when exceeded).  The ``X-API-KEY`` header (or ``apiKey`` query parameter) selects
the caller's tier (:mod:`.access`); keys are optional unless the operator requires them.
The rate limit is a token bucket per key (per client address without one), sized by the
tier.  IsHoneypot, GetPairs and TopHolders answers are cached per chain head (see
:mod:`tokenrisk.api.shared_state`); GetContractVerification is always computed fresh.
``/health``, ``/docs``, ``/redoc``, ``/openapi.json`` and the page (``/``, ``/token/...``)
need no key and are not rate limited; the page's own API calls do.

Compatibility with clients of the live API (docs/api.md "Compatibility"): the v1 paths
``/v1/IsHoneypot`` and ``/v1/GetContractVerification`` run their v2 checks and answer
the legacy v1 shapes older clients read (:mod:`.compat.legacy`); GoPlus's ``token_security``
and the MCP tools at ``/mcp`` are served too (:mod:`.compat`);
``router`` and ``pair`` are accepted on both; HEAD is answered wherever GET is, and CORS
(permissive unless ``cors_origins`` says otherwise) lets browser pages on other origins
call the API (see :mod:`tokenrisk.api.middleware`).

The app is assembled in :mod:`.assembly` (its table of contents: every route module, the
gate of :mod:`.access`, the errors of :mod:`.failures`); the service is opened in
:mod:`.lifespan`.
"""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk import redaction
from tokenrisk.api.assembly import assemble
from tokenrisk.api.lifespan import lifespan_of
from tokenrisk.api.runner import Admission, Runner
from tokenrisk.api.shared_state import LocalState, shared_state
from tokenrisk.config import Settings
from tokenrisk.service import Service


def create_app(settings: Settings, service: Service | None = None) -> FastAPI:
    """The ASGI app.  ``service`` may be given (tests); otherwise it is opened at start-up.

    ``app.state.shared`` is the shared state (its ``stats`` count cache hits and misses),
    in Redis when ``redis_url`` is set; without Redis ``app.state.cache`` is the
    in-process results cache.
    """
    state = shared_state(settings)
    runner = Runner(settings.deadline, state, Admission(settings.admission_limit), service)
    runner.head_reuse = settings.head_reuse
    redaction.install(_secrets(settings))
    app = FastAPI(
        title="tokenrisk",
        version="0.1.0",
        lifespan=lifespan_of(settings, runner, service),
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
    assemble(app, settings, runner)
    return app


def _secrets(settings: Settings) -> set[str]:
    urls = [u for n in settings.nodes for u in (n.rpc_url, n.fork_url)] + [settings.store_url]
    return redaction.configured_secrets(
        [*settings.api_keys, *(k for k in (settings.key_pepper, settings.operator_key) if k)],
        urls,
        {"etherscan_key": settings.verification.etherscan_key},
    )

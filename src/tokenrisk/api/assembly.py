"""Putting the app together, the one table of contents of the HTTP API: middleware, the
gate, error bodies, every route (the checks in :mod:`.check_routes`, the watchlist in
:mod:`.watch_routes`, the drop-ins of :mod:`.compat`; beside them ``/health`` and
``/metrics`` (:mod:`.health`), the operator's key admin (:mod:`.access`), the page and the
bundled API docs) and a truthful OpenAPI document.

The routes beside the checks are not rate limited; with keys required, ``/health``
details and ``/metrics`` need a valid key.
"""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api import failures, middleware, page
from tokenrisk.api.access import Gate, add_admin, build_gate, keyring, keys_matter
from tokenrisk.api.check_routes import (
    add_batch_route,
    add_holders_route,
    add_honeypot_route,
    add_pairs_routes,
    add_verification_route,
)
from tokenrisk.api.compat import add_compat_routes
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.health import HealthProbe, add_health_route, add_metrics_route
from tokenrisk.api.openapi import truthful_openapi
from tokenrisk.api.runner import Runner
from tokenrisk.api.watch_routes import add_watch_routes
from tokenrisk.config import Settings

# THE APP


def assemble(app: FastAPI, settings: Settings, runner: Runner) -> None:
    middleware.install(app, settings.cors_origins)
    keys = keyring(settings, lambda: runner.service.store)
    gate = build_gate(settings, runner.state.limiter, keys)
    failures.install(app)
    add_check_routes(app, runner, gate, mcp_http=settings.mcp_http)
    add_operations(app, settings, runner, gate)
    paths = frozenset(r.path for r in app.routes)  # type: ignore[attr-defined]
    app.add_middleware(middleware.SlashRedirect, paths=paths)
    tiers = settings.tier_table().values()
    caps = {
        "GetPairs": max(t.max_pairs for t in tiers),
        "TopHolders": max(t.max_top_holders for t in tiers),
    }
    chain_ids = lambda: sorted(runner.service.nodes)  # noqa: E731 (built on first request)
    truthful_openapi(app, keys_matter(settings), chain_ids, caps)
    app.add_middleware(middleware.RequestMetrics)  # added last: outermost, sees every answer


# THE CHECK ROUTES


def add_check_routes(app: FastAPI, runner: Runner, gate: Gate, mcp_http: bool = True) -> None:
    """Every check route, its drop-ins for other ecosystems and the watchlist."""
    add_honeypot_route(app, runner, gate)
    add_verification_route(app, runner, gate)
    add_pairs_routes(app, runner, gate)
    add_holders_route(app, runner, gate)
    add_batch_route(app, runner, gate, ERRORS)
    add_compat_routes(app, runner, gate, mcp_http)
    add_watch_routes(app, runner, gate)


# THE ROUTES BESIDE THE CHECKS


def add_operations(app: FastAPI, settings: Settings, runner: Runner, gate: Gate) -> None:
    """``/health``, ``/metrics``, the operator's key admin, the page and the API docs."""
    timeout = min(settings.deadline, settings.rpc_timeout)
    probe = HealthProbe(runner, timeout, settings.server.health_cache_ttl)
    valid_key = gate.valid if settings.keys_required else None
    add_health_route(app, probe, valid_key)
    if settings.operator_key:
        add_admin(app, settings.operator_key, gate, keyring(settings, lambda: runner.service.store))
    add_metrics_route(app, valid_key)
    page.add_docs(app)
    page.add_page(
        app,
        lambda: [(n.id, n.chain.name) for n in runner.service.nodes.values()],
        lambda: page.watcher_follows(
            settings.watch.embedded, runner.service.store, runner.service.nodes
        ),
    )

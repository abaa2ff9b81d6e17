"""Putting the app together: middleware, the gate, error bodies, the check routes, the
operational routes and a truthful OpenAPI document."""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api import failures, middleware
from tokenrisk.api.access import build_gate, keyring, keys_matter
from tokenrisk.api.openapi import truthful_openapi
from tokenrisk.api.operations import add_operations
from tokenrisk.api.routes import add_check_routes
from tokenrisk.api.runner import Runner
from tokenrisk.config import Settings


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

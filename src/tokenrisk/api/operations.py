"""The routes beside the checks: ``/health``, ``/metrics``, the operator's key admin, the
page and the bundled API docs.  None is rate limited; with keys required, ``/health``
details and ``/metrics`` need a valid key."""

from __future__ import annotations

from fastapi import FastAPI

from tokenrisk.api import page
from tokenrisk.api.admin import add_admin
from tokenrisk.api.gate import Gate
from tokenrisk.api.gating import keyring
from tokenrisk.api.health import HealthProbe, add_health_route, add_metrics_route
from tokenrisk.api.runner import Runner
from tokenrisk.config import Settings


def add_operations(app: FastAPI, settings: Settings, runner: Runner, gate: Gate) -> None:
    timeout = min(settings.deadline, settings.rpc_timeout)
    probe = HealthProbe(runner, timeout, settings.server.health_cache_ttl)
    valid_key = gate.valid if settings.keys_required else None
    add_health_route(app, probe, valid_key)
    if settings.operator_key:
        add_admin(app, settings.operator_key, gate, keyring(settings, runner))
    add_metrics_route(app, valid_key)
    page.add_docs(app)
    page.add_page(
        app,
        lambda: [(n.id, n.chain.name) for n in runner.service.nodes.values()],
        lambda: page.watcher_follows(
            settings.watch.embedded, runner.service.store, runner.service.nodes
        ),
    )

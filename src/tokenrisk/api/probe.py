"""``/health`` (node reachability and head age, probed at most once a ``ttl``) and
``/metrics`` (Prometheus text)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tokenrisk import metrics
from tokenrisk.api import wire
from tokenrisk.api.gate import KeyGate
from tokenrisk.api.health import HealthReport, check_health
from tokenrisk.api.runner import Runner
from tokenrisk.caching import MemoryCache
from tokenrisk.errors import AuthError


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
        self._lock = asyncio.Lock()
        self._report: MemoryCache[str, HealthReport] = MemoryCache(1, ttl, clock)

    async def report(self) -> HealthReport:
        async with self._lock:
            cached = self._report.value("report")
            if cached is not None:
                return cached
            nodes, watching = self.runner.service.nodes, self.runner.supervisor
            local = watching.by_chain() if watching is not None else None
            fresh = await check_health(nodes, self.timeout, local)
            self.probes += 1
            self._report.put("report", fresh)
            return fresh


def add_health_route(app: FastAPI, probe: HealthProbe, keys: KeyGate | None) -> None:
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
        elif (watch := getattr(request.app.state, "watch", None)) is not None:
            report = report.model_copy(update=_watching(watch.status()))
        return JSONResponse(wire.dump(report), status_code=status)


def add_metrics_route(app: FastAPI, keys: KeyGate | None) -> None:
    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        """Prometheus text format; with API keys on, a valid key is required (no rate
        limit, so scraping never competes with checks)."""
        offered = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        if keys is not None and not await keys.valid(offered):
            raise AuthError("a valid API key is required (X-API-KEY header)")
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)


def _watching(status: dict[str, Any]) -> dict[str, Any]:
    """The embedded watcher's figures (``WatchProcess.status``) as /health fields."""
    return {
        "watchLagBlocks": {str(c): n for c, n in status["watch_lag_blocks"].items()},
        "watchQueuedChecks": {str(c): n for c, n in status["queued_checks"].items()},
        "watchChecksPerSecond": status["checks_per_second"],
        "watchEvents": status["events"],
        "watchWebhookFailures": status["webhook_failures"],
    }

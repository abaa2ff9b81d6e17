"""``/health``: can each configured chain's node be reached, and how old is its head
block (probed at most once a ``ttl``); and ``/metrics`` (Prometheus text).

``/health`` reads ``eth_getBlockByNumber("latest")`` from every node concurrently, each
under its own time limit, and reports reachability plus the age of the head block
(wall clock now minus the block's timestamp).  The report never contains an RPC URL:
failures are described by the RPC client's error messages, which name nodes by label.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from tokenrisk import metrics
from tokenrisk.api import wire
from tokenrisk.api.runner import Runner
from tokenrisk.caching import MemoryCache
from tokenrisk.chain.head import read_head
from tokenrisk.chain.node import Node
from tokenrisk.errors import AuthError, ChainMismatch, DeadlineExceeded, TokenRiskError

if TYPE_CHECKING:
    from tokenrisk.devnet.supervisor import NodeWatch


class ChainHealth(wire.WireModel):
    """One chain's line in the health report; head fields are absent when unreachable."""

    chainId: int = Field(description="Numeric chain id.")
    name: str = Field(description="Chain name from the registry.")
    reachable: bool = Field(description="The node answered eth_getBlockByNumber in time.")
    headBlock: int | None = Field(default=None, description="Latest block number.")
    headTimestamp: int | None = Field(default=None, description="Latest block's unix time.")
    headAgeSeconds: float | None = Field(
        default=None,
        description="Now minus the head block's timestamp, in seconds (negative when the "
        "node's clock is ahead, e.g. a devnet with a pinned clock).",
    )
    error: str | None = Field(default=None, description="Why the node is unreachable.")
    localNode: str | None = Field(
        default=None,
        description="For a node this service runs itself (devnet, fork): running, "
        "restarting or down; it is restarted with its state when it dies.",
    )
    localNodeRestarts: int | None = Field(
        default=None, description="How often that local node was restarted."
    )
    nodeChainId: int | None = Field(
        default=None,
        description="The chain id the node reports, when it is not the configured one "
        "(the chain then answers 503 until its node serves it).",
    )
    forkBlock: int | None = Field(
        default=None,
        description="Fork mode: the upstream block the local fork was made at (it forks "
        "again at the upstream head when older than the configured fork_max_age).",
    )
    forkAgeSeconds: float | None = Field(
        default=None, description="Fork mode: seconds since that fork was made."
    )


class HealthReport(wire.WireModel):
    """The ``/health`` body: ``ok`` when every node is reachable, else ``degraded``."""

    status: str = Field(description="ok or degraded.")
    chains: list[ChainHealth] | None = Field(
        default=None,
        description="One entry per configured chain, by id (with API keys on: only for a "
        "request that sends a valid key).",
    )
    watchLagBlocks: dict[str, int] | None = Field(  # noqa: N815 (the wire's name)
        default=None,
        description="With the watcher in this process (`serve --watch`): blocks it is "
        "behind each chain's head: to the oldest block with a check not done yet "
        "(docs/watch.md).",
    )
    watchQueuedChecks: dict[str, int] | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: checks found and not done yet, by chain."
    )
    watchChecksPerSecond: float | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: checks this process ran per second."
    )
    watchEvents: int | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: events this process committed."
    )
    watchWebhookFailures: int | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: webhook POSTs that failed (each retry)."
    )

    @property
    def healthy(self) -> bool:
        return self.status == "ok"


async def chain_health(
    node: Node, timeout: float, now: Callable[[], float] = time.time
) -> ChainHealth:
    """Probe one node; never raises for node failures (they become ``reachable: false``)."""
    chain = node.chain
    try:
        async with asyncio.timeout(timeout):
            head = await read_head(node.rpc)
    except TimeoutError:
        return _down(chain, DeadlineExceeded(f"no answer within {timeout:g} s"))
    except TokenRiskError as exc:
        return _down(chain, exc)
    return ChainHealth(
        chainId=chain.id,
        name=chain.name,
        reachable=True,
        headBlock=head.number,
        headTimestamp=head.timestamp,
        headAgeSeconds=round(now() - head.timestamp, 1),
    )


def _down(chain: Any, exc: TokenRiskError) -> ChainHealth:
    served = exc.served if isinstance(exc, ChainMismatch) else None
    return ChainHealth(
        chainId=chain.id, name=chain.name, reachable=False, error=exc.public, nodeChainId=served
    )


def _local(watch: NodeWatch) -> dict[str, Any]:
    """The health fields of a node this service runs (state, restarts, fork)."""
    fields: dict[str, Any] = {"localNode": watch.state, "localNodeRestarts": watch.restarts}
    fork = watch.node.fork
    if fork is not None and fork.block is not None:
        fields["forkBlock"] = fork.block
        fields["forkAgeSeconds"] = round(fork.age(), 1)
    return fields


async def check_health(
    nodes: Mapping[int, Node],
    timeout: float,
    local: Mapping[int, NodeWatch] | None = None,
) -> HealthReport:
    """Probe every configured chain concurrently, each under ``timeout`` seconds;
    ``local``: the supervisor's view of the nodes this service runs, by chain id."""
    ids = sorted(nodes)
    lines = await asyncio.gather(*(chain_health(nodes[i], timeout) for i in ids))
    watches = local or {}
    lines = [
        line.model_copy(update=_local(watches[i])) if i in watches else line
        for i, line in zip(ids, lines, strict=True)
    ]
    status = "ok" if all(line.reachable for line in lines) else "degraded"
    return HealthReport(status=status, chains=list(lines))


KeyCheck = Callable[[str | None], Awaitable[bool]]
"""Whether an offered API key is valid (the gate's ``valid``): with keys on, the detail
of ``/health`` and all of ``/metrics`` are for key holders only."""


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


def add_health_route(app: FastAPI, probe: HealthProbe, valid_key: KeyCheck | None) -> None:
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
        if valid_key is not None and not await valid_key(offered):
            report = HealthReport(status=report.status)
        elif (watch := getattr(request.app.state, "watch", None)) is not None:
            report = report.model_copy(update=_watching(watch.status()))
        return JSONResponse(wire.dump(report), status_code=status)


def add_metrics_route(app: FastAPI, valid_key: KeyCheck | None) -> None:
    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        """Prometheus text format; with API keys on, a valid key is required (no rate
        limit, so scraping never competes with checks)."""
        offered = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        if valid_key is not None and not await valid_key(offered):
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

"""Prometheus metrics of one tokenrisk process (``GET /metrics``, docs/operations.md).

Every metric is defined here, once, in a registry of this process; the modules that
observe something call the small functions below, so none of them imports
prometheus-client.  Labels are bounded: endpoints are route templates (never raw
paths), chains are configured chain ids, errors are exception class names.  With
several worker processes each has its own numbers (scrape each, or run one worker).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
CONTENT_TYPE = CONTENT_TYPE_LATEST

_Labelled = TypeVar("_Labelled", Counter, Gauge)
"""A labelled metric whose children :func:`_child` remembers."""

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0)

HTTP_REQUESTS = Counter(
    "tokenrisk_http_requests",
    "HTTP requests answered, by route template, method and status.",
    ["endpoint", "method", "status"],
    registry=REGISTRY,
)
HTTP_SECONDS = Histogram(
    "tokenrisk_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template, method and status.",
    ["endpoint", "method", "status"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
SIMULATIONS = Counter(
    "tokenrisk_simulations",
    "Buy -> transfer -> sell simulations, by chain and outcome "
    "(sold, blocked: a step reverted, not_run: could not be simulated).",
    ["chain", "outcome"],
    registry=REGISTRY,
)
NODE_REQUESTS = Counter(
    "tokenrisk_node_requests",
    "JSON-RPC requests (a batch counts once) sent to a chain's node.",
    ["chain"],
    registry=REGISTRY,
)
NODE_ERRORS = Counter(
    "tokenrisk_node_errors",
    "JSON-RPC requests to a chain's node that failed in transport, by error class.",
    ["chain", "error"],
    registry=REGISTRY,
)
NODE_SECONDS = Histogram(
    "tokenrisk_node_request_duration_seconds",
    "Round trip of one JSON-RPC request (or batch) to a chain's node.",
    ["chain"],
    buckets=_SECONDS,
    registry=REGISTRY,
)
CACHE_LOOKUPS = Counter(
    "tokenrisk_cache_lookups",
    "Results-cache lookups, by result (hit or miss).",
    ["result"],
    registry=REGISTRY,
)
HEADS_ASSUMED = Counter(
    "tokenrisk_heads_assumed",
    "Checks planned at a remembered head beside the read that confirms it, by chain and "
    "outcome (used: the head was still that block; wasted: a block came meanwhile, the "
    "node work sent at the old head was dropped and the check ran again).",
    ["chain", "outcome"],
    registry=REGISTRY,
)
INDEX_LAG = Gauge(
    "tokenrisk_holder_index_lag_blocks",
    "Blocks the holder index of the last refreshed token was behind the head when it "
    "was refreshed, by chain.",
    ["chain"],
    registry=REGISTRY,
)
INDEX_REFRESHES = Counter(
    "tokenrisk_holder_index_refreshes",
    "Holder index refreshes (bringing one token's index up to the head), by chain.",
    ["chain"],
    registry=REGISTRY,
)
WATCH_LAG = Gauge(
    "tokenrisk_watch_lag_blocks",
    "Blocks the watcher is behind the head after its last step, by chain.",
    ["chain"],
    registry=REGISTRY,
)
WATCH_QUEUED = Gauge(
    "tokenrisk_watch_queued_checks",
    "Checks the watcher found and has not done yet (the per-block cap queues), by chain.",
    ["chain"],
    registry=REGISTRY,
)
WATCH_CHECKS = Counter(
    "tokenrisk_watch_checks", "Checks the watcher ran, by chain.", ["chain"], registry=REGISTRY
)
WATCH_EVENTS = Counter(
    "tokenrisk_watch_events",
    "Watch events committed (new_pool, alert, retracted), by chain and kind.",
    ["chain", "kind"],
    registry=REGISTRY,
)
WEBHOOK_FAILURES = Counter(
    "tokenrisk_watch_webhook_failures",
    "Webhook POSTs that failed (each retry counts), by endpoint digest.",
    ["endpoint"],
    registry=REGISTRY,
)
SENT_AHEAD = Counter(
    "tokenrisk_sent_ahead",
    "Simulations sent before the amounts they were planned with were known, by what "
    "planned them (remembered, curve, after_buy: the journey; scan_trials: the "
    "owner-power scan's trials; scan_pairs, scan_dumps: its two-step trials and mint "
    "dumps; holders, holder_alone, holder_retry, holder_suspect: the holders' sells) "
    "and result (used, dropped: node work spent for nothing).",
    ["planned", "result"],
    registry=REGISTRY,
)


def exposition() -> bytes:
    """The text format Prometheus scrapes."""
    return generate_latest(REGISTRY)


def _pair(counter: Counter, histogram: Histogram, *labels: str) -> tuple[Counter, Histogram]:
    """The (counter, histogram) children for ``labels`` of the per-request metrics,
    remembered: a ``labels()`` lookup takes the metric's lock and checks every value,
    and a recomputed check sends ~9 node requests and one HTTP answer (issue #27).  A
    metric's child for some labels is always the same object (children are never
    removed), and the label sets are bounded (route templates, configured chains)."""
    return _children(counter, histogram, labels)


@lru_cache(maxsize=1024)
def _children(
    counter: Counter, histogram: Histogram, labels: tuple[str, ...]
) -> tuple[Counter, Histogram]:
    return counter.labels(*labels), histogram.labels(*labels)


@lru_cache(maxsize=1024)
def _child(metric: _Labelled, *labels: str) -> _Labelled:
    """``metric.labels(*labels)``, remembered as :func:`_pair` remembers its two: the
    per-check counters (a simulation's outcome, the cache lookup, the head assumed, the
    steps sent ahead) and gauges (the index's lag) are set a few times per check with a
    handful of label values."""
    return metric.labels(*labels)


def http_request(endpoint: str, method: str, status: int, seconds: float) -> None:
    count, timing = _pair(HTTP_REQUESTS, HTTP_SECONDS, endpoint, method, str(status))
    count.inc()
    timing.observe(seconds)


def simulation(chain_id: int, outcome: str) -> None:
    _child(SIMULATIONS, str(chain_id), outcome).inc()


def node_request(chain: str, seconds: float, error: BaseException | None) -> None:
    count, timing = _pair(NODE_REQUESTS, NODE_SECONDS, chain)
    count.inc()
    timing.observe(seconds)
    if error is not None:
        NODE_ERRORS.labels(chain, type(error).__name__).inc()


def cache_lookup(hit: bool) -> None:
    _child(CACHE_LOOKUPS, "hit" if hit else "miss").inc()


def head_assumed(chain_id: int, used: bool) -> None:
    _child(HEADS_ASSUMED, str(chain_id), "used" if used else "wasted").inc()


def index_refreshed(chain_id: int, blocks_behind: int) -> None:
    chain = str(chain_id)
    _child(INDEX_REFRESHES, chain).inc()
    _child(INDEX_LAG, chain).set(blocks_behind)  # twice per check (the token, its pair's base)


def watch_step(chain_id: int, lag_blocks: int, queued: int = 0) -> None:
    WATCH_LAG.labels(chain=str(chain_id)).set(lag_blocks)
    WATCH_QUEUED.labels(chain=str(chain_id)).set(queued)


def watch_check(chain_id: int) -> None:
    WATCH_CHECKS.labels(chain=str(chain_id)).inc()


def watch_event(chain_id: int, kind: str) -> None:
    WATCH_EVENTS.labels(chain=str(chain_id), kind=kind).inc()


def webhook_failed(endpoint: str) -> None:
    WEBHOOK_FAILURES.labels(endpoint=endpoint).inc()


def sent_ahead(planned: str, used: bool) -> None:
    _child(SENT_AHEAD, planned, "used" if used else "dropped").inc()

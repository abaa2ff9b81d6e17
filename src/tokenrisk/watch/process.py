"""The watch process: the watcher and the webhook deliveries, run together until stopped.

``tokenrisk watch`` runs it on its own service; ``tokenrisk serve --watch`` runs it inside
the server's lifespan.  Several may run: they coordinate through the store (each chain's
cursor moves by compare-and-set, so a range is committed once; each queued check is
committed once; webhook cursors are per endpoint) and, with Redis, through leases (one
follower per chain, one sender of webhooks) and the job queue (``enqueue``: the checks
run on any worker).  Every check goes through the same bundle and simulation limit as
the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

import httpx
from redis.asyncio import Redis

from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.config import WatchConfig
from tokenrisk.errors import TokenRiskError
from tokenrisk.store.engine import Store
from tokenrisk.store.watch import WatchStore
from tokenrisk.watch.lease import Lease
from tokenrisk.watch.watcher import Bounds, Enqueue, Watcher
from tokenrisk.watch.webhooks import Endpoint, Webhooks

log = logging.getLogger("tokenrisk.watch")


@dataclass
class WatchProcess:
    """A configured watcher and its webhooks (``status`` for /health and the CLI)."""

    watcher: Watcher
    webhooks: Webhooks
    chains: list[int]
    poll: float
    lease: Lease | None = None  # with Redis: chains shared among watchers

    started: float = field(default_factory=time.monotonic)

    def status(self) -> dict[str, object]:
        """``watch_lag_blocks`` and queued checks per chain; checks, checks per second,
        events and webhook failures since start (of this process)."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        return {
            "watch_lag_blocks": dict(self.watcher.lag),
            "queued_checks": dict(self.watcher.queued),
            "checks": self.watcher.checks,
            "checks_per_second": round(self.watcher.checks / elapsed, 3),
            "events": self.watcher.committed,
            "webhook_failures": self.webhooks.failures,
        }

    async def run(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient() as client:
            await asyncio.gather(
                follow(self.watcher, self.chains, self.poll, stop, self.lease),
                self._deliver(client, stop),
            )

    async def _deliver(self, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                if self.lease is None or await self.lease.holds("webhooks"):
                    await self.webhooks.deliver(client)
            except TokenRiskError as exc:  # the store is down: the next pass retries
                log.warning("webhook deliveries wait (%s)", exc.__class__.__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll / 2)


async def follow(
    watcher: Watcher,
    chains: list[int],
    poll: float,
    stop: asyncio.Event,
    lease: Lease | None = None,
) -> None:
    """Step every chain (whose ``lease`` this watcher holds, with Redis) until ``stop`` is
    set; a failing chain is logged and retried on the next poll (its cursor did not move)."""
    while not stop.is_set():
        busy = False
        for chain_id in chains:
            try:
                if lease is not None and not await lease.holds(chain_id):
                    continue
                await watcher.step(chain_id)
                busy = busy or watcher.lag.get(chain_id, 0) > 0
            except TokenRiskError as exc:
                log.warning("chain %s: watch step failed (%s)", chain_id, exc.__class__.__name__)
            except Exception:  # a bug must not stop every chain's watch: logged, retried
                log.exception("chain %s: watch step failed", chain_id)
        if not busy:
            try:
                await asyncio.wait_for(stop.wait(), poll)
            except TimeoutError:
                pass


def watch_process(
    deps: HoneypotDeps,
    store: Store,
    config: WatchConfig,
    redis: Redis | None = None,
    enqueue: Enqueue | None = None,
) -> WatchProcess:
    """The process for ``config`` over the chains of ``deps.nodes``; ``redis`` (the job
    queue's connection): chains are leased, so N watchers share them; ``enqueue``: the
    checks go to the job queue (without it this process runs them)."""
    watch_store = WatchStore(store)
    bounds = Bounds(
        config.blocks_per_step,
        config.max_checks_per_step,
        config.interval_blocks,
        config.tax_threshold,
        config.liquidity_threshold,
        config.max_checks_per_block,
    )
    endpoints = tuple(Endpoint(w.url, w.secret) for w in config.webhooks)
    hooks = Webhooks(endpoints, watch_store, config.webhook_attempts, config.webhook_backoff)
    chains = list(config.chains) or list(deps.nodes)
    lease = None if redis is None else Lease(redis, ttl=max(3.0, config.poll_interval * 10))
    watcher = Watcher(deps, watch_store, bounds, enqueue)
    return WatchProcess(watcher, hooks, chains, config.poll_interval, lease)


Running = tuple[asyncio.Event, "asyncio.Task[None]"]


def start_embedded(
    config: WatchConfig, deps: HoneypotDeps, store: Store, redis: Redis | None
) -> tuple[WatchProcess, Running]:
    """``serve --watch``: the process as a task of the server's loop; stop it with
    :func:`stop_embedded`."""
    process = watch_process(deps, store, config, redis)
    stop = asyncio.Event()
    return process, (stop, asyncio.create_task(process.run(stop)))


async def stop_embedded(running: Running) -> None:
    stop, task = running
    stop.set()
    await task

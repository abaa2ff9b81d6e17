"""The watch process: the watcher and the webhook deliveries, run together until stopped.

``tokenrisk watch`` runs it on its own service; ``tokenrisk serve --watch`` runs it inside
the server's lifespan.  Several may run: they coordinate through the store (each chain's
cursor moves by compare-and-set, so a range is committed once; webhook cursors are per
endpoint), and every check goes through the same bundle and simulation limit as the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

import httpx

from tokenrisk.checks.deps import HoneypotDeps
from tokenrisk.config import WatchConfig
from tokenrisk.store.engine import Store
from tokenrisk.store.watch import WatchStore
from tokenrisk.watch.watcher import Bounds, Watcher, follow
from tokenrisk.watch.webhooks import Endpoint, Webhooks

log = logging.getLogger("tokenrisk.watch")


@dataclass
class WatchProcess:
    """A configured watcher and its webhooks (``status`` for /health and the CLI)."""

    watcher: Watcher
    webhooks: Webhooks
    chains: list[int]
    poll: float

    def status(self) -> dict[str, object]:
        """``watch_lag_blocks`` per chain, checks and events since start, webhook failures."""
        return {
            "watch_lag_blocks": dict(self.watcher.lag),
            "checks": self.watcher.checks,
            "events": self.watcher.committed,
            "webhook_failures": self.webhooks.failures,
        }

    async def run(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient() as client:
            await asyncio.gather(
                follow(self.watcher, self.chains, self.poll, stop), self._deliver(client, stop)
            )

    async def _deliver(self, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if self.webhooks.endpoints:
                await self.webhooks.deliver(client)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll / 2)


def watch_process(deps: HoneypotDeps, store: Store, config: WatchConfig) -> WatchProcess:
    """The process for ``config`` over the chains of ``deps.nodes``."""
    watch_store = WatchStore(store)
    bounds = Bounds(
        config.blocks_per_step,
        config.max_checks_per_step,
        config.interval_blocks,
        config.tax_threshold,
    )
    endpoints = tuple(Endpoint(w.url, w.secret) for w in config.webhooks)
    hooks = Webhooks(endpoints, watch_store, config.webhook_attempts, config.webhook_backoff)
    chains = list(config.chains) or list(deps.nodes)
    return WatchProcess(Watcher(deps, watch_store, bounds), hooks, chains, config.poll_interval)

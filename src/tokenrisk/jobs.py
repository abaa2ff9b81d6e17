"""Holder indexing as background jobs on a Redis queue (arq), run by ``tokenrisk worker``.

Indexing a token with a long history reads many ``eth_getLogs`` windows and writes many
rows: minutes for a large mainnet token, far past a request's deadline.  With
``redis_url`` configured, an API worker indexes inline only when the token's index is
at most ``index_inline_blocks`` blocks behind the head; otherwise it enqueues one
``index_holders`` job and answers from the index as stored (``totalHolders`` and the
holder analysis then cover what is indexed so far; a later check picks up the rest).

Jobs are keyed ``index:<chain>:<token>``, so a token waits in the queue at most once
however many requests ask for it; results are not kept, so the next enqueue after a
job finished is accepted.  The job runs the same resumable, crash-safe indexer as the
inline path (see :mod:`tokenrisk.holders.index`) against the shared store (PostgreSQL
when several hosts run workers).  Without Redis there is no queue and every index
refresh is inline, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.worker import Worker, func

from tokenrisk.config import Settings

log = logging.getLogger("tokenrisk.jobs")
JOB = "index_holders"
JOB_TIMEOUT = 3_600.0


def job_id(chain_id: int, token: str) -> str:
    return f"index:{chain_id}:{token.lower()}"


@dataclass
class IndexQueue:
    """The API side of the queue: decides inline or background, and enqueues."""

    pool: ArqRedis
    inline_blocks: int

    async def enqueue(self, chain_id: int, token: str) -> bool:
        """Queue an index job for ``token``; False when one is already waiting or running."""
        job = await self.pool.enqueue_job(JOB, chain_id, token, _job_id=job_id(chain_id, token))
        return job is not None

    async def aclose(self) -> None:
        await self.pool.aclose()


async def open_queue(settings: Settings) -> IndexQueue | None:
    if not settings.redis_url:
        return None
    pool = await create_pool(RedisSettings.from_dsn(settings.redis_url))
    return IndexQueue(pool, settings.index_inline_blocks)


async def index_holders(ctx: dict[str, Any], chain_id: int, token: str) -> None:
    """The job: bring ``token``'s holder index up to the head (the worker's service has
    no queue, so :func:`refresh_index` indexes inline here)."""
    from tokenrisk.checks.indexing import refresh_index

    index, nodes = ctx["index"], ctx["nodes"]
    await refresh_index(index, nodes.node(chain_id), token)
    log.info("indexed %s on chain %s", token, chain_id)


def build_worker(settings: Settings, burst: bool = False) -> Worker:
    """An arq worker running index jobs with its own service (nodes, store)."""
    from tokenrisk.service import open_service

    async def startup(ctx: dict[str, Any]) -> None:
        service = await asyncio.to_thread(open_service, settings)
        ctx["service"] = service  # closed on shutdown
        ctx["index"], ctx["nodes"] = service.index, service.nodes  # what the jobs use

    async def shutdown(ctx: dict[str, Any]) -> None:
        service = ctx.get("service")
        if service is not None:
            await service.close()

    return Worker(
        functions=[func(index_holders, name=JOB, keep_result=0, timeout=JOB_TIMEOUT)],
        redis_settings=RedisSettings.from_dsn(settings.redis_url or ""),
        on_startup=startup,
        on_shutdown=shutdown,
        burst=burst,
        max_jobs=settings.index_jobs,
        handle_signals=True,
    )


async def run_watch(
    settings: Settings, stop: asyncio.Event, started: Callable[[list[int]], None]
) -> None:
    """``tokenrisk watch``: the watcher (:mod:`tokenrisk.watch`) on a service of its own
    until ``stop`` is set; ``started`` is told the chains it follows."""
    from tokenrisk.service import start_service
    from tokenrisk.watch.process import watch_process

    service = await start_service(settings)
    queue = await open_queue(settings)  # with Redis: chains leased among watchers
    try:
        redis = None if queue is None else queue.pool
        process = watch_process(service.honeypot, service.store, settings.watch, redis)
        started(process.chains)
        await process.run(stop)
    finally:
        if queue is not None:
            await queue.aclose()
        await service.close()

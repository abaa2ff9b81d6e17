"""Background jobs on a Redis queue (arq), run by ``tokenrisk worker``: holder indexing,
and the watcher's checks (run by every ``tokenrisk watch`` too).

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

The watcher's head follower queues its checks in the store and puts one
``watch_checks`` job per token with checks to run, keyed ``watch:<chain>:<token>:<period>``
(so a token's checks run one at a time, in order, by whichever worker takes the job); a job
lost with Redis is put back by the follower's next step, since the checks themselves
stay in the store until done (:mod:`tokenrisk.watch.checker`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.worker import Worker, func
from redis.exceptions import RedisError

from tokenrisk.config import Settings

log = logging.getLogger("tokenrisk.jobs")
JOB = "index_holders"
JOB_TIMEOUT = 3_600.0
WATCH_JOB = "watch_checks"
WATCH_JOB_TIMEOUT = 300.0
WATCH_JOB_SECONDS = 120.0  # a job starts no check after this long (the rest: a next job)
WATCH_JOB_EPOCH = 300.0


def job_id(chain_id: int, token: str) -> str:
    return f"index:{chain_id}:{token.lower()}"


def watch_job_id(chain_id: int, token: str, now: float | None = None) -> str:
    """One job per token at a time; the id also names a period of ``WATCH_JOB_EPOCH``
    seconds, so a job whose worker died holding it (arq keeps it "in progress" for the
    longest job timeout of that worker: an hour with index jobs) is replaced by a new one
    in the next period.  Two runs on one token are safe, only wasted: each check commits
    once (:mod:`tokenrisk.watch.checker`)."""
    period = int((time.time() if now is None else now) // WATCH_JOB_EPOCH)
    return f"watch:{chain_id}:{token.lower()}:{period}"


@dataclass
class IndexQueue:
    """The API side of the queue: decides inline or background, and enqueues."""

    pool: ArqRedis
    inline_blocks: int

    async def enqueue(self, chain_id: int, token: str) -> bool:
        """Queue an index job for ``token``; False when one is already waiting or running."""
        job = await self.pool.enqueue_job(JOB, chain_id, token, _job_id=job_id(chain_id, token))
        return job is not None

    async def enqueue_checks(self, chain_id: int, token: str) -> bool:
        """Queue a run of ``token``'s watch checks; False when one is already waiting
        (a running one takes the checks handed out since, or the next step re-queues)."""
        job_id = watch_job_id(chain_id, token)
        job = await self.pool.enqueue_job(WATCH_JOB, chain_id, token, _job_id=job_id)
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
    from tokenrisk.checks.top_holders import refresh_index

    index, nodes = ctx["index"], ctx["nodes"]
    await refresh_index(index, nodes.node(chain_id), token)
    log.info("indexed %s on chain %s", token, chain_id)


async def watch_checks(ctx: dict[str, Any], chain_id: int, token: str) -> None:
    """The job: run ``token``'s handed-out watch checks.  A node or store that is down
    leaves them queued in the store: the follower's next step enqueues them again."""
    from tokenrisk.watch.checker import RETRY_LATER

    try:
        await ctx["checker"].run(chain_id, token, seconds=WATCH_JOB_SECONDS)
    except RETRY_LATER as exc:
        log.warning("chain %s: watch checks wait (%s)", chain_id, exc.__class__.__name__)


def _watch_function() -> Any:
    return func(watch_checks, name=WATCH_JOB, keep_result=0, timeout=WATCH_JOB_TIMEOUT)


def build_worker(settings: Settings, burst: bool = False) -> Worker:
    """An arq worker running index and watch jobs with its own service (nodes, store)."""
    from tokenrisk.service import open_service
    from tokenrisk.store.watch import WatchStore
    from tokenrisk.watch.checker import Checker

    async def startup(ctx: dict[str, Any]) -> None:
        service = await asyncio.to_thread(open_service, settings)
        ctx["service"] = service  # closed on shutdown
        ctx["index"], ctx["nodes"] = service.index, service.nodes  # what the jobs use
        store, threshold = WatchStore(service.store), settings.watch.tax_threshold
        ctx["checker"] = Checker(service.honeypot, store, threshold)

    async def shutdown(ctx: dict[str, Any]) -> None:
        service = ctx.get("service")
        if service is not None:
            await service.close()

    return Worker(
        functions=[
            func(index_holders, name=JOB, keep_result=0, timeout=JOB_TIMEOUT),
            _watch_function(),
        ],
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
    until ``stop`` is set; ``started`` is told the chains it follows.  With Redis the
    chains are leased among watchers, the checks go through the job queue, and this
    process is also one of the queue's workers."""
    from tokenrisk.service import start_service
    from tokenrisk.watch.process import watch_process

    service = await start_service(settings)
    queue = await open_queue(settings)
    try:
        redis = None if queue is None else queue.pool
        enqueue = None if queue is None else queue.enqueue_checks
        process = watch_process(service.honeypot, service.store, settings.watch, redis, enqueue)
        started(process.chains)
        work = [] if queue is None else [_work_queue(settings, process.watcher.checker, stop)]
        await asyncio.gather(process.run(stop), *work)
    finally:
        if queue is not None:
            await queue.aclose()
        await service.close()


async def _work_queue(settings: Settings, checker: Any, stop: asyncio.Event) -> None:
    """This watcher as a worker of the watch jobs until ``stop``; a worker that loses
    Redis is started again after a pause (the jobs it held are put back by a follower)."""
    while not stop.is_set():
        worker = Worker(
            functions=[_watch_function()],
            redis_settings=RedisSettings.from_dsn(settings.redis_url or ""),
            ctx={"checker": checker},
            handle_signals=False,
            max_jobs=settings.watch.max_checks_per_step,
            poll_delay=min(settings.watch.poll_interval, 0.5),
            log_results=False,
        )
        running = asyncio.create_task(worker.async_run())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        await _end(worker, running)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.watch.poll_interval)


async def _end(worker: Worker, running: asyncio.Task[None]) -> None:
    """Stop an in-process worker: its jobs are cancelled (their checks stay in the store
    and are put back on the queue by a follower) and its connections closed."""
    if running.done() and not running.cancelled() and running.exception() is not None:
        log.warning("watch worker stopped (%s)", type(running.exception()).__name__)
    for task in [*worker.tasks.values(), running]:
        task.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.gather(*worker.tasks.values(), running, return_exceptions=True)
    if worker._pool is not None:  # noqa: SLF001 (arq's close() uses a deprecated call)
        with contextlib.suppress(RedisError):
            await worker.pool.aclose()

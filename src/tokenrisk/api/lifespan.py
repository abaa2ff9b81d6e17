"""What the app does while it serves: open the service (unless one was given), watch its
local nodes, connect the index job queue; and undo it all on the way out."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from tokenrisk.api.runner import Runner
from tokenrisk.checks.trade import warm_nodes
from tokenrisk.config import Settings
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.jobs import open_queue
from tokenrisk.service import Service, start_service
from tokenrisk.simulate import bytecode
from tokenrisk.watch.process import start_embedded, stop_embedded

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]

YOUNG_COLLECTION = 10_000
"""Container allocations between two young-generation collections (CPython: 700)."""


def tune_collector() -> None:
    """Garbage-collector settings for a serving process (idempotent).

    A check parses node replies into many small dicts and lists (a 1,000-holder
    analysis about 7 MB of JSON, a few hundred thousand containers).  With CPython's
    defaults that allocation runs hundreds of young collections per check, and the
    older generations' collections walk every object the process created at start
    (modules, the app, the service).  ``gc.freeze`` moves those start-up objects out of
    the collector's reach, and a young generation of ``YOUNG_COLLECTION`` objects makes
    its collections rarer; reply objects hold no cycles and are freed by reference
    counting anyway.  Frozen once per process; cyclic garbage is still collected.
    Measured (docs/performance.md): a 1,000-holder IsHoneypot's process CPU ~290 ->
    ~180 ms.
    """
    if gc.get_freeze_count() == 0:  # once: a test process opens many apps
        gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(YOUNG_COLLECTION, young), older, oldest)


def lifespan_of(settings: Settings, runner: Runner, given: Service | None) -> Lifespan:
    """The app's lifespan; ``given``: a service opened by the caller (tests), which the
    caller closes."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc = given if given is not None else await start_service(settings)
        # a first check's connections and base-token balance slots, beside the start
        # (a node down waits no one)
        warming = asyncio.ensure_future(warm_nodes(svc.nodes, svc.honeypot.trading))
        tune_collector()
        bytecode.LAYOUTS.open()  # evmole's worker process, started before the first check
        runner.opened = svc
        runner.supervisor = NodeSupervisor(svc.processes)
        runner.supervisor.start()
        queue = await open_queue(settings)
        svc.index.queue = queue
        svc.honeypot.powers.cache.shared = runner.state.facts()  # Redis: every worker's scans
        watching = None
        if settings.watch.embedded:  # serve --watch (docs/watch.md)
            redis = queue.pool if queue is not None else None
            app.state.watch, watching = start_embedded(
                settings.watch, svc.honeypot, svc.store, redis
            )
        try:
            yield
        finally:
            warming.cancel()
            if watching is not None:
                await stop_embedded(watching)
            await runner.supervisor.stop()
            svc.index.queue = None
            svc.honeypot.powers.cache.shared = None
            if queue is not None:
                await queue.aclose()
            await runner.state.aclose()
            if given is None:
                await svc.close()
            await asyncio.to_thread(bytecode.LAYOUTS.close)

    return lifespan

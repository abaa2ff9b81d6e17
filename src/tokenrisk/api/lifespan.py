"""What the app does while it serves: open the service (unless one was given), watch its
local nodes, connect the index job queue; and undo it all on the way out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from tokenrisk.api.runner import Runner
from tokenrisk.config import Settings
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.jobs import open_queue
from tokenrisk.service import Service, open_service

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def lifespan_of(settings: Settings, runner: Runner, given: Service | None) -> Lifespan:
    """The app's lifespan; ``given``: a service opened by the caller (tests), which the
    caller closes."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc = given if given is not None else await asyncio.to_thread(open_service, settings)
        runner.opened = svc
        runner.supervisor = NodeSupervisor(svc.processes)
        runner.supervisor.start()
        queue = await open_queue(settings)
        svc.index.queue = queue
        try:
            yield
        finally:
            await runner.supervisor.stop()
            svc.index.queue = None
            if queue is not None:
                await queue.aclose()
            await runner.state.aclose()
            if given is None:
                await svc.close()

    return lifespan

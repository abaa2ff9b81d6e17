"""Small helpers for the concurrent steps of a check."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

T = TypeVar("T")


async def given(value: T) -> T:
    """``value`` as an awaitable, to sit in an ``asyncio.gather`` beside real reads."""
    return value


async def settled(task: asyncio.Task[Any]) -> None:
    """Wait for ``task`` to end, whatever its outcome (its exception marked retrieved).
    A task already done is only read: no gather, no turn of the loop (most are done by
    the time a check looks, and each gather costs a future and a callback)."""
    if task.done():
        if not task.cancelled():
            task.exception()
        return
    await asyncio.gather(task, return_exceptions=True)


async def finish(task: asyncio.Task[Any]) -> None:
    """Wait for a background task on the way out (cancelling it when it was not needed),
    so nothing outlives the request."""
    if not task.done():
        task.cancel()
    await settled(task)

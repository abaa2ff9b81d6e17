"""Small helpers for the concurrent steps of a check."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

T = TypeVar("T")


async def given(value: T) -> T:
    """``value`` as an awaitable, to sit in an ``asyncio.gather`` beside real reads."""
    return value


async def finish(task: asyncio.Task[Any]) -> None:
    """Wait for a background task on the way out (cancelling it when it was not needed),
    so nothing outlives the request."""
    if not task.done():
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)

"""Small helpers for the concurrent steps of a check."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


_SENT_AHEAD: ContextVar[dict[Hashable, asyncio.Task[Any]] | None] = ContextVar(
    "tokenrisk_sent_ahead", default=None
)


@contextmanager
def reads_ahead() -> Iterator[dict[Hashable, asyncio.Task[Any]]]:
    """Within this block (and the tasks started in it), reads a caller sent before the
    step that needs them (:func:`send_ahead`) are found by that step (:func:`sent_ahead`);
    yields them, so the caller can drop what no step took."""
    sent: dict[Hashable, asyncio.Task[Any]] = {}
    token = _SENT_AHEAD.set(sent)
    try:
        yield sent
    finally:
        _SENT_AHEAD.reset(token)


def send_ahead(key: Hashable, read: Coroutine[Any, Any, Any]) -> None:
    """Start ``read`` now for the step that would make it under ``key`` (inside
    :func:`reads_ahead`; outside, nobody would take it: it is not started)."""
    sent = _SENT_AHEAD.get()
    if sent is None:
        read.close()
    else:
        sent[key] = asyncio.create_task(read)


def sent_ahead(key: Hashable) -> asyncio.Task[Any] | None:
    """The read sent ahead under ``key``, taken (each is used once); None when none was."""
    sent = _SENT_AHEAD.get()
    return sent.pop(key, None) if sent is not None else None

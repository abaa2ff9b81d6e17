"""A small in-memory TTL cache for verification answers.

Verification status changes rarely (a contract gets verified once, and stays so), so
answers are kept for a while; "not verified" is kept for less time than "verified",
because that is the answer that can change.  Per process and bounded: when full, the
oldest entry goes first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class TtlCache(Generic[V]):
    """Maps keys to values that expire ``ttl`` seconds after being stored.

    ``clock`` returns seconds (monotonic by default; tests pass a fake one).
    """

    def __init__(self, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic):
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._clock = clock
        self._entries: dict[Hashable, tuple[float, V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> tuple[bool, V | None]:
        """(True, value) for a live entry; (False, None) when absent or expired."""
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        expires, value = entry
        if self._clock() >= expires:
            del self._entries[key]
            return False, None
        return True, value

    def put(self, key: Hashable, value: V, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds; a ttl of 0 or less stores nothing."""
        self._entries.pop(key, None)
        if ttl <= 0:
            return
        self._entries[key] = (self._clock() + ttl, value)
        while len(self._entries) > self._max:
            del self._entries[next(iter(self._entries))]

    def clear(self) -> None:
        self._entries.clear()

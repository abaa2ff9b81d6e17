"""The one in-process cache: bounded, least recently used out, entries that expire.

Every in-process cache of the project is a :class:`MemoryCache` (the API's results cache,
the verifier's answers, balance layouts by code hash); the results cache shared by
several workers has a Redis backend behind the same asynchronous interface
(:mod:`tokenrisk.api.shared_state`).  A hit moves the entry to the most recent end; a put past
``max_entries`` drops the least recently used; an entry older than its ``ttl`` is a miss
and goes.  ``clock`` must be monotonic (tests pass a fake one).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedBytes(Protocol):
    """Bytes every worker of a deployment can read (Redis): facts that are costly to find
    and safe to reuse.  A miss, a failure or an unreadable value is only a miss."""

    async def get_bytes(self, key: str) -> bytes | None: ...

    async def put_bytes(self, key: str, value: bytes, ttl: float) -> None: ...


@dataclass
class CacheStats:
    """Counters for tests and operators: lookups that hit, missed, entries evicted."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0


class MemoryCache(Generic[K, V]):
    """A bounded LRU map whose entries expire ``ttl`` seconds after being stored.

    ``ttl`` is the default lifetime (``math.inf``: never expires); ``put`` may give its
    own.  A lifetime of 0 or less stores nothing, so ``ttl <= 0`` turns the cache off.
    Values are stored as given: callers treat them as immutable.
    """

    def __init__(
        self,
        max_entries: int,
        ttl: float = math.inf,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.ttl = ttl
        self.stats = CacheStats()
        self._clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.ttl > 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> tuple[bool, V | None]:
        """``(True, value)`` for a live entry, else ``(False, None)``; expired entries go.
        (The flag tells a stored None from a miss.)"""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            if entry is not None:
                del self._entries[key]
            self.stats.misses += 1
            return False, None
        self._entries.move_to_end(key)
        self.stats.hits += 1
        return True, entry[1]

    def value(self, key: K) -> V | None:
        """The live value, or None (for caches that never store None)."""
        return self.get(key)[1]

    def put(self, key: K, value: V, ttl: float | None = None) -> None:
        """Store ``value`` for ``ttl`` seconds (the cache's default when None), evicting
        the least recently used entry when full; a ttl of 0 or less stores nothing."""
        lifetime = self.ttl if ttl is None else ttl
        self._entries.pop(key, None)
        if lifetime <= 0:
            return
        self._entries[key] = (self._clock() + lifetime, value)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
            self.stats.evictions += 1

    def forget(self, key: K) -> None:
        """Drop ``key``'s entry, if any (a value found to be stale)."""
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

"""The one in-process cache (:class:`tokenrisk.caching.MemoryCache`) that the results
cache, the verifier, balance layouts, base tokens and /health are instances of."""

from __future__ import annotations

import pytest

from tokenrisk.caching import MemoryCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_stored_none_is_a_hit_not_a_miss() -> None:
    cache: MemoryCache[str, int | None] = MemoryCache(4)
    cache.put("none", None)
    assert cache.get("none") == (True, None) and cache.get("absent") == (False, None)
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)


def test_default_lifetime_never_expires_and_put_may_override_it() -> None:
    clock = Clock()
    cache: MemoryCache[str, int] = MemoryCache(4, clock=clock)
    cache.put("forever", 1)
    cache.put("brief", 2, ttl=5)
    clock.now += 5
    assert cache.value("forever") == 1 and cache.value("brief") is None
    cache.put("nothing", 3, ttl=0)  # a lifetime of 0 stores nothing (and drops what was)
    cache.put("forever", 4, ttl=-1)
    assert len(cache) == 0


def test_bounded_least_recently_used_out() -> None:
    cache: MemoryCache[str, int] = MemoryCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.value("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.value("b") is None and cache.stats.evictions == 1
    with pytest.raises(ValueError):
        MemoryCache(0)

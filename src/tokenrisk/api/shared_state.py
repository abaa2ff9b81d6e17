"""State the API workers share: answers, computations in progress, rate-limit buckets.

Two backends with one interface (:class:`SharedState`):

* :class:`LocalState` (the embedded default, no Redis): the in-memory LRU
  :class:`ResultCache`, single flight with in-process futures and the
  in-process token bucket.  Correct for one worker process only.
* :class:`RedisState` (``redis_url`` configured): the same three things in Redis, so any
  number of worker processes (``tokenrisk serve --workers N``, several hosts) behave as
  one service:

  - **answers** are ``SET key value PX ttl`` of the response bytes;
  - **single flight**: the first worker to ``SET flight:key NX PX lease`` computes; the
    others (and, inside a worker, other coroutines on the same key, which wait on an
    in-process future first) poll for the answer every ``poll`` seconds.  When the lease
    holder fails or dies, its lease is released or expires and a waiter takes over, so a
    crash costs a retry, never a hang (the request deadline bounds every wait);
  - **rate limits**: a token bucket per client in a Redis hash, updated by one Lua script
    that reads Redis' own clock, so every worker spends from the same bucket with the
    same arithmetic as the in-process :class:`~tokenrisk.api.access.RateLimiter`; one
    limiter per tier (:meth:`SharedState.limiter`).

Keys are ``<prefix><kind>:<sha256 of the cache key>``; values are the JSON bytes of an
answer, served as they are (no re-serialisation on a hit).  Single flight applies while
the results cache is on: with ``cache_ttl=0`` every request computes, as configured.

The results cache keys recent answers on the chain heads they were computed at.  A key is
``(endpoint, heads, parameters)`` where ``heads`` holds, for every chain the request may
touch, ``(chain id, head block number, head block hash)``.  Nothing is ever keyed on
"latest": a new block (or a reorg, or a devnet ``evm_revert`` that reuses a block number
with different contents) gives a new key, so an entry can only be reused while the chain
still shows the head it was computed at, and at most ``ttl`` seconds.

The in-process cache (:class:`ResultCache`) is bounded: the least recently used entry is
dropped when ``max_entries`` is reached.  Values are stored as given and must be
treated as immutable by callers (the API stores JSON-ready values it never mutates).
Only successful results are stored; errors are always recomputed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from tokenrisk.api.access import Limiter, RateLimiter
from tokenrisk.caching import CacheStats, MemoryCache, SharedBytes
from tokenrisk.chain.node import Node
from tokenrisk.config import Settings
from tokenrisk.errors import RateLimited, TokenRiskError, UnknownChain

log = logging.getLogger("tokenrisk")

Compute = Callable[[], Awaitable[bytes]]

_BUCKET = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'seen')
local tokens = tonumber(state[1]) or capacity
local seen = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - seen) * rate)
local wait = 0
if tokens < 1 then wait = (1 - tokens) / rate else tokens = tokens - 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'seen', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return tostring(wait)
"""
"""Token bucket: spend one request of KEYS[1]; returns seconds to wait (0: allowed)."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
"""Delete a lease only if it is still ours (it may have expired and been retaken)."""


def key_text(key: Hashable) -> str:
    """A stable text name for a cache key (tuples of str/int/None/tuples)."""
    return hashlib.sha256(repr(key).encode()).hexdigest()


class SharedState(Protocol):
    """What the API's runner and key gate need, whatever holds the state."""

    stats: CacheStats

    @property
    def caching(self) -> bool: ...

    async def get(self, key: str) -> bytes | None: ...

    async def flight(self, key: str, compute: Compute) -> bytes: ...

    def limiter(self, per_minute: int) -> Limiter:
        """A rate limiter of ``per_minute`` requests per client (one per tier)."""
        ...

    def facts(self) -> SharedBytes | None:
        """Where workers share costly facts (owner-power scans); None: nowhere."""
        ...

    async def aclose(self) -> None: ...


class Flights:
    """In-process single flight: one computation per key at a time; the others await it."""

    def __init__(self) -> None:
        self._running: dict[str, asyncio.Future[bytes]] = {}

    async def run(self, key: str, compute: Compute) -> bytes:
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            value = await compute()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody may be waiting
            raise
        finally:
            del self._running[key]
        future.set_result(value)
        return value


class LocalState:
    """One process: LRU cache, in-process single flight and token buckets."""

    def __init__(self, cache: ResultCache) -> None:
        self.cache = cache
        self.stats = cache.stats
        self._flights = Flights()

    @property
    def caching(self) -> bool:
        return self.cache.enabled

    async def get(self, key: str) -> bytes | None:
        hit, value = self.cache.get(key)
        return value if hit and isinstance(value, bytes) else None

    async def flight(self, key: str, compute: Compute) -> bytes:
        async def compute_and_store() -> bytes:
            value = await compute()
            self.cache.put(key, value)
            return value

        return await self._flights.run(key, compute_and_store)

    def limiter(self, per_minute: int) -> Limiter:
        return RateLimiter(per_minute)

    def facts(self) -> SharedBytes | None:
        return None  # one process: its own caches are all there is

    async def aclose(self) -> None:
        return None


class RedisState:
    """Answers, single flight and token buckets in Redis, shared by every worker."""

    def __init__(
        self,
        redis: Redis,
        ttl: float,
        prefix: str = "tokenrisk:",
        lease: float = 30.0,
        poll: float = 0.01,
    ) -> None:
        self.redis = redis
        self.ttl = ttl
        self.prefix = prefix
        self.lease = lease
        self.poll = poll
        self.stats = CacheStats()
        self._flights = Flights()
        self._release = redis.register_script(_RELEASE)

    @property
    def caching(self) -> bool:
        return self.ttl > 0

    async def get(self, key: str) -> bytes | None:
        value = await self.redis.get(self.prefix + "answer:" + key)
        if value is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return bytes(value)

    async def flight(self, key: str, compute: Compute) -> bytes:
        return await self._flights.run(key, lambda: self._shared_flight(key, compute))

    async def _shared_flight(self, key: str, compute: Compute) -> bytes:
        answer, lease = self.prefix + "answer:" + key, self.prefix + "flight:" + key
        me = os.urandom(16).hex()
        while True:
            if await self.redis.set(lease, me, nx=True, px=math.ceil(self.lease * 1000)):
                try:
                    value = await compute()
                    await self.redis.set(answer, value, px=math.ceil(self.ttl * 1000))
                    return value
                finally:
                    await self._release(keys=[lease], args=[me])
            waited = await self._wait(answer, lease)
            if waited is not None:
                self.stats.hits += 1
                return waited

    async def _wait(self, answer: str, lease: str) -> bytes | None:
        """The answer once the lease holder stores it; None when the lease is gone without
        one (the holder failed): the caller then tries to take the lease itself."""
        while True:
            await asyncio.sleep(self.poll)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(answer)
                pipe.exists(lease)
                value, holder = await pipe.execute()
            if value is not None:
                return bytes(value)
            if not holder:
                return None

    def limiter(self, per_minute: int) -> Limiter:
        return RedisRateLimiter(self.redis, per_minute, self.prefix)

    def facts(self) -> SharedBytes | None:
        return RedisFacts(self.redis, self.prefix + "facts:")

    async def aclose(self) -> None:
        await self.redis.aclose()


class RedisFacts:
    """Costly facts in Redis (``SET key value PX ttl``).  Redis failing never fails a
    check: a read is then a miss and a write is skipped (logged by kind, at most once a
    minute)."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._warned = -math.inf

    async def get_bytes(self, key: str) -> bytes | None:
        try:
            value = await self.redis.get(self.prefix + key)
        except RedisError as exc:
            self._warn(exc)
            return None
        return bytes(value) if value is not None else None

    async def put_bytes(self, key: str, value: bytes, ttl: float) -> None:
        try:
            await self.redis.set(self.prefix + key, value, px=max(1, math.ceil(ttl * 1000)))
        except RedisError as exc:
            self._warn(exc)

    def _warn(self, exc: RedisError) -> None:
        now = time.monotonic()
        if now - self._warned >= 60:
            self._warned = now
            log.warning(
                "shared facts unavailable (%s): each worker computes its own", type(exc).__name__
            )


class RedisRateLimiter:
    """Token buckets in Redis: one per client and limit, spent by one Lua script that
    reads Redis' own clock, so every worker spends from the same bucket."""

    def __init__(self, redis: Redis, per_minute: int, prefix: str = "tokenrisk:") -> None:
        self.per_minute = per_minute
        self.prefix = f"{prefix}rate:{per_minute}:"
        self._bucket = redis.register_script(_BUCKET)

    async def acquire(self, who: str) -> None:
        if self.per_minute <= 0:
            return
        rate = self.per_minute / 60.0
        key = self.prefix + hashlib.sha256(who.encode()).hexdigest()
        wait = float(await self._bucket(keys=[key], args=[self.per_minute, repr(rate)]))
        if wait > 0:
            raise RateLimited("rate limit exceeded", retry_after=max(1, math.ceil(wait)))


def shared_state(settings: Settings) -> SharedState:
    """Redis when ``redis_url`` is configured, else this process's own memory."""
    if settings.redis_url:
        return RedisState(Redis.from_url(settings.redis_url), settings.cache_ttl)
    return LocalState(ResultCache(settings.cache_ttl))


# THE RESULTS CACHE AND ITS KEYS

DEFAULT_MAX_ENTRIES = 2048

Heads = tuple[tuple[int, int, str], ...]
"""Sorted ``(chain id, head block number, head block hash)`` of every chain in a key."""


class ResultCache(MemoryCache[Hashable, object]):
    """The in-process results cache: a :class:`~tokenrisk.caching.MemoryCache` whose
    entries live ``ttl`` seconds (``ttl <= 0`` disables it: every ``get`` misses, ``put``
    stores nothing).  ``clock`` is injectable for tests; it must be monotonic.
    """

    def __init__(
        self,
        ttl: float,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(max_entries, ttl, clock)


async def chain_heads(
    nodes: Mapping[int, Node], chain_id: int | None, max_age: float = 0.0
) -> Heads | None:
    """The heads part of a key: the given chain, or every configured chain (sorted).

    One ``eth_getBlockByNumber("latest")`` per chain, concurrently, unless the Node read
    its head at most ``max_age`` seconds ago (:meth:`~tokenrisk.chain.node.Node.head`).
    Returns None when some but not all chains failed to answer: the request then runs
    uncached and the check itself decides what a partial outage means.  Raises the first
    chain's error when every chain failed (UnknownChain for an unconfigured ``chain_id``).
    """
    ids = [chain_id] if chain_id is not None else sorted(nodes)
    if not ids:
        return ()
    if chain_id is not None and chain_id not in nodes:
        raise UnknownChain(f"chain {chain_id} is not configured")
    replies = await asyncio.gather(*(nodes[i].head(max_age) for i in ids), return_exceptions=True)
    heads: list[tuple[int, int, str]] = []
    failures: list[BaseException] = []
    for chain, reply in zip(ids, replies, strict=True):
        if isinstance(reply, BaseException):
            failures.append(reply)
        else:
            heads.append((chain, reply.number, reply.hash))
    unexpected = [f for f in failures if not isinstance(f, TokenRiskError)]
    if unexpected or not heads:
        raise (unexpected or failures)[0]
    return None if failures else tuple(heads)

"""The gate in front of every check: API keys, rate limits, who the client is.

The ``X-API-KEY`` header (or ``apiKey`` query parameter) selects the caller's tier
(:mod:`tokenrisk.api.access`: config-file keys, keys in the store, keyless requests);
keys are optional unless the operator requires them.  The rate limit is a token bucket
per key (per client address without one), sized by the caller's tier; wrong keys are
throttled per client address.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Protocol

from fastapi import Request, Security
from fastapi.security import APIKeyHeader, APIKeyQuery

from tokenrisk.api.access import Access, Caller
from tokenrisk.errors import AuthError, RateLimited

_MAX_RATE_CLIENTS = 10_000

_HEADER_KEY = APIKeyHeader(
    name="X-API-KEY", auto_error=False, description="API key (recommended way to send it)."
)

_QUERY_KEY = APIKeyQuery(
    name="apiKey", auto_error=False, description="API key as a query parameter."
)


class Limiter(Protocol):
    """A rate limiter: spend one request of ``who``'s allowance or raise RateLimited
    (:class:`RateLimiter` in one process, ``tokenrisk.api.shared.RedisRateLimiter``
    shared by every worker)."""

    async def acquire(self, who: str) -> None: ...


class RateLimiter:
    """Token bucket per client: ``per_minute`` requests of burst, refilled continuously.

    No fixed window, so there is no double burst at a minute boundary.  At most
    ``max_clients`` buckets are kept; the least recently seen are forgotten first (a
    forgotten client simply starts again with a full bucket).  ``per_minute <= 0`` is off.
    """

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = _MAX_RATE_CLIENTS,
    ) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    async def acquire(self, who: str) -> None:
        """:meth:`take`, as the gate calls every :class:`Limiter`."""
        self.take(who)

    def take(self, who: str) -> None:
        """Spend one request of ``who``'s allowance; raises RateLimited when empty."""
        if self.capacity <= 0:
            return
        now = self._clock()
        tokens, seen = self._buckets.pop(who, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - seen) * self.rate)
        if tokens < 1.0:
            self._buckets[who] = (tokens, now)
            retry = max(1, math.ceil((1.0 - tokens) / self.rate))
            raise RateLimited("rate limit exceeded", retry_after=retry)
        self._buckets[who] = (tokens - 1.0, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)

    def check(self, who: str) -> None:
        """Raise RateLimited when ``who`` has nothing left, without spending anything."""
        if self.capacity <= 0 or who not in self._buckets:
            return
        tokens, seen = self._buckets[who]
        tokens = min(self.capacity, tokens + (self._clock() - seen) * self.rate)
        if tokens < 1.0:
            raise RateLimited("too many attempts", max(1, math.ceil((1.0 - tokens) / self.rate)))


Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address: str, trusted: Networks) -> bool:
    ip = _ip(address)
    return ip is not None and any(ip in network for network in trusted)


def client_address(request: Request, trusted: Networks) -> str:
    """Who is asking, for rate limits and failed-key throttling.

    The peer address, unless the peer is a configured trusted proxy: then the nearest
    ``X-Forwarded-For`` hop that is not itself trusted (proxies append, so hops on the
    left are the client's own claims and only the right end is vouched for).
    """
    peer = request.client.host if request.client else "unknown"
    if not _trusted(peer, trusted):
        return peer
    hops = [h for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if _ip(hop) is None:
            break  # garbage in the chain: do not believe anything left of it
        if not _trusted(hop, trusted):
            return str(_ip(hop))
    return peer


class KeyGate:
    """FastAPI dependency: who is asking (:mod:`tokenrisk.api.access`), then the rate
    limit of their tier; answers the :class:`Caller` the route serves.

    Wrong keys are throttled per client address (``failures``): once a client has
    spent its allowance of failed attempts it gets 429 before its key is even looked
    at, so keys cannot be guessed at speed.  This class declares the key as an OpenAPI
    security scheme; :class:`OpenGate` is the same gate without it.
    """

    def __init__(
        self,
        access: Access,
        limiters: Mapping[str, Limiter],
        failures: RateLimiter | None = None,
        trusted: Networks = (),
    ) -> None:
        self.access = access
        self.limiters = limiters  # one per tier name
        self.failures = failures or RateLimiter(0)
        self.trusted = trusted

    async def __call__(
        self,
        request: Request,
        header_key: str | None = Security(_HEADER_KEY),
        query_key: str | None = Security(_QUERY_KEY),
    ) -> Caller:
        return await self.admit(request, header_key or query_key)

    async def admit(self, request: Request, key: str | None) -> Caller:
        """The caller of ``request``, or AuthError / Forbidden / RateLimited."""
        address = f"ip:{client_address(request, self.trusted)}"
        self.failures.check(address)
        try:
            caller = await self.access.identify(key, request.url.path)
        except AuthError:
            self.failures.take(address)
            raise
        await self.limiters[caller.tier_name].acquire(self._subject(request, caller))
        return caller

    async def charge(self, request: Request, caller: Caller, cost: int) -> None:
        """Spend ``cost`` more requests of ``caller``'s allowance (a batch's extra
        tokens); raises RateLimited when it runs out (what was spent stays spent)."""
        who = self._subject(request, caller)
        for _ in range(cost):
            await self.limiters[caller.tier_name].acquire(who)

    def _subject(self, request: Request, caller: Caller) -> str:
        """Whose allowance: the key's, or the client address's without one."""
        if caller.key_name is not None:
            return f"key:{caller.key_name}"
        return f"ip:{client_address(request, self.trusted)}"

    async def valid(self, key: str | None) -> bool:
        """Whether ``key`` is a working key (nothing is counted or rate limited)."""
        return bool(key) and await self.access.valid(key or "")


class OpenGate(KeyGate):
    """The gate of a server where keys change nothing a client must know about (not
    required, no tiers): keys are still read, but no security scheme is declared, so
    the OpenAPI document offers none."""

    async def __call__(self, request: Request) -> Caller:  # type: ignore[override]
        key = request.headers.get("x-api-key") or request.query_params.get("apiKey")
        return await self.admit(request, key)


Gate = KeyGate  # OpenGate is a KeyGate too

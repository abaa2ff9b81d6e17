"""The gate in front of every check: API keys, rate limits, who the client is.

Keys are optional until the operator configures some; then the ``X-API-KEY`` header (or
``apiKey`` query parameter) must match one, compared in constant time.  The rate limit is
a token bucket per key (per client address when keys are off); wrong keys are throttled
per client address.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from fastapi import Request, Security
from fastapi.security import APIKeyHeader, APIKeyQuery

from tokenrisk.errors import AuthError, RateLimited

_MAX_RATE_CLIENTS = 10_000

_HEADER_KEY = APIKeyHeader(
    name="X-API-KEY", auto_error=False, description="API key (recommended way to send it)."
)

_QUERY_KEY = APIKeyQuery(
    name="apiKey", auto_error=False, description="API key as a query parameter."
)


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


class OpenGate:
    """FastAPI dependency without keys: the rate limit per client address.

    Declares no security scheme, so the OpenAPI document offers none when keys are off.
    """

    def __init__(self, limiter: RateLimiter, trusted: Networks = ()) -> None:
        self.limiter = limiter
        self.trusted = trusted

    async def __call__(self, request: Request) -> None:
        self.limiter.take(f"ip:{client_address(request, self.trusted)}")


class KeyGate:
    """FastAPI dependency: API-key check, then the rate limit per key.

    Wrong keys are throttled per client address (``failures``): once a client has
    spent its allowance of failed attempts it gets 429 before its key is even looked
    at, so keys cannot be guessed at speed.
    """

    def __init__(
        self,
        keys: frozenset[str],
        limiter: RateLimiter,
        failures: RateLimiter | None = None,
        trusted: Networks = (),
    ) -> None:
        self.keys = tuple(k.encode() for k in keys)
        self.limiter = limiter
        self.failures = failures or RateLimiter(0)
        self.trusted = trusted

    async def __call__(
        self,
        request: Request,
        header_key: str | None = Security(_HEADER_KEY),
        query_key: str | None = Security(_QUERY_KEY),
    ) -> None:
        key = header_key or query_key
        who = f"ip:{client_address(request, self.trusted)}"
        self.failures.check(who)
        try:
            self.authenticate(key)
        except AuthError:
            self.failures.take(who)
            raise
        self.limiter.take(f"key:{key}")

    def valid(self, key: str | None) -> bool:
        offered = (key or "").encode()
        # compare against every key, always, so timing says nothing about which matched
        matched = [hmac.compare_digest(offered, k) for k in self.keys]
        return bool(key) and any(matched)

    def authenticate(self, key: str | None) -> None:
        """Raises AuthError unless ``key`` is one of the configured keys."""
        if not self.valid(key):
            raise AuthError("a valid API key is required (X-API-KEY header)")


Gate = OpenGate | KeyGate

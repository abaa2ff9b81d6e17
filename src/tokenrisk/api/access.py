"""The gate in front of every check route: who is asking, which tier they get, and how
often they may ask; and the operator's endpoints for the keys (``/admin/``).

The ``X-API-KEY`` header (or ``apiKey`` query parameter) selects the caller's tier;
keys are optional unless the operator requires them.  The rate limit is a token bucket
per key (per client address without one), sized by the caller's tier; wrong keys are
throttled per client address.  With Redis configured the buckets live there
(:mod:`tokenrisk.api.shared_state`), so every worker spends from the same ones.

**Who is asking.**
A key is looked for among the config file's ``api_keys`` first (compared in constant
time with every one of them), then in the store (:mod:`tokenrisk.store.keys`: one
indexed lookup per request and no cache, so a reset or revocation made by the CLI or
any worker holds from the very next request everywhere).

=============================  =====================  ==============================
request                        keys required          keys not required (default)
=============================  =====================  ==============================
no key                         401                    ``default_tier``
a config-file key              ``api_keys_tier``      ``api_keys_tier``
an active store key            the key's tier         the key's tier
a reset or revoked store key   401 saying which       401 saying which
any other key                  401                    ``default_tier`` (ignored)
=============================  =====================  ==============================

An unknown key on a server that does not require keys is ignored, as it always was: a
client written for the hosted service keeps working against an open tokenrisk.  A key
the store knows to be reset or revoked is refused everywhere, so its owner learns it.
Every request made with a valid key is counted (``keys usage``), whatever its outcome.

**The operator's endpoints** show the keys and their usage over HTTP, for dashboards
and scripts.  They exist only when ``operator_key`` is configured, answer only a request whose
``X-OPERATOR-KEY`` header equals it (constant-time comparison; wrong attempts count
against the same per-client throttle as wrong API keys), and are left out of the public
OpenAPI document.  They show what ``tokenrisk keys list`` and ``keys usage --json`` show,
and never a key: the store holds none.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from fastapi import FastAPI, Query, Request, Security
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, APIKeyQuery

from tokenrisk.api.params import parse_limit
from tokenrisk.config import Settings
from tokenrisk.errors import AuthError, Forbidden, RateLimited
from tokenrisk.store.engine import Store
from tokenrisk.store.keys import Keyring, config_key_name, since_day
from tokenrisk.tiers import Tier

MISSING = "a valid API key is required (X-API-KEY header)"
RESET = "this API key was reset and no longer works; use the new key issued for it"
REVOKED = "this API key was revoked"


@dataclass(frozen=True)
class Caller:
    """The tier a request is served under; ``key_name`` names its key (None: no key)."""

    tier_name: str
    tier: Tier
    key_name: str | None = None


@dataclass(frozen=True)
class Policy:
    """The settings the gate reads, resolved once."""

    config_keys: tuple[str, ...]
    tiers: Mapping[str, Tier]
    default_tier: str
    config_tier: str
    required: bool

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(
            config_keys=tuple(sorted(settings.api_keys)),
            tiers=settings.tier_table(),
            default_tier=settings.default_tier,
            config_tier=settings.api_keys_tier or settings.default_tier,
            required=settings.keys_required,
        )


class Access:
    """Turns the key of a request into a :class:`Caller`; ``keyring`` opens the key store."""

    def __init__(self, policy: Policy, keyring: Callable[[], Keyring]) -> None:
        self.policy = policy
        self._keyring = keyring

    async def identify(self, key: str | None, endpoint: str) -> Caller:
        """Raises AuthError (401) for a refused key, Forbidden (403) for a key whose tier
        is no longer configured, StoreError (503) when the key store cannot be read."""
        if not key:
            return self._anonymous()
        config_name = self.config_key(key)
        if config_name is not None:
            await asyncio.to_thread(self._keyring().count, config_name, endpoint)
            return self._caller(self.policy.config_tier, config_name)
        found = await asyncio.to_thread(self._keyring().use, key, endpoint)
        if found.status == "active" and found.tier is not None:
            return self._caller(found.tier, found.name)
        if found.status == "reset":
            raise AuthError(RESET)
        if found.status == "revoked":
            raise AuthError(REVOKED)
        return self._anonymous()

    async def valid(self, key: str) -> bool:
        """Whether ``key`` is a config-file key or an active store key (not counted)."""
        if self.config_key(key) is not None:
            return True
        found = await asyncio.to_thread(self._keyring().use, key, None)
        return found.status == "active"

    def config_key(self, key: str) -> str | None:
        """The usage name of ``key`` when it is a config-file key, else None.

        Compared with every configured key, always, so timing says nothing about which
        one matched or how much of a key was right.
        """
        offered = key.encode()
        matched = [hmac.compare_digest(offered, k.encode()) for k in self.policy.config_keys]
        hits = [k for k, same in zip(self.policy.config_keys, matched, strict=True) if same]
        return config_key_name(hits[0]) if hits else None

    def _anonymous(self) -> Caller:
        if self.policy.required:
            raise AuthError(MISSING)
        return self._caller(self.policy.default_tier, None)

    def _caller(self, tier_name: str, key_name: str | None) -> Caller:
        tier = self.policy.tiers.get(tier_name)
        if tier is None:
            raise Forbidden(f"this key's tier {tier_name!r} is not configured on this server")
        return Caller(tier_name, tier, key_name)


# THE GATE: rate limits, the client's address, keys checked per request


_MAX_RATE_CLIENTS = 10_000

_HEADER_KEY = APIKeyHeader(
    name="X-API-KEY", auto_error=False, description="API key (recommended way to send it)."
)

_QUERY_KEY = APIKeyQuery(
    name="apiKey", auto_error=False, description="API key as a query parameter."
)


class Limiter(Protocol):
    """A rate limiter: spend one request of ``who``'s allowance or raise RateLimited
    (:class:`RateLimiter` in one process, ``tokenrisk.api.shared_state.RedisRateLimiter``
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
    if not trusted:  # the default: no proxy is trusted, so no address needs parsing
        return False
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

    async def of(self, request: Request) -> Caller:
        """The gate called by a route itself (as the first thing it does) instead of as a
        FastAPI dependency: the same key, read the same way (the header, else the
        query), for the hot check routes, where FastAPI's solving of this dependency and
        its two security parameters was ~0.3 ms of every request (issue #27).  Such a
        route declares :attr:`security` in its document itself."""
        return await self.admit(request, key_of(request))

    @property
    def security(self) -> list[dict[str, list[str]]]:
        """The OpenAPI security requirement of a route that calls :meth:`of` (as
        FastAPI writes it for the dependency: either scheme)."""
        return [{_HEADER_KEY.scheme_name: []}, {_QUERY_KEY.scheme_name: []}]

    async def admit(self, request: Request, key: str | None) -> Caller:
        """The caller of ``request``, or AuthError / Forbidden / RateLimited."""
        address = f"ip:{client_address(request, self.trusted)}"
        self.failures.check(address)
        try:  # the path counts a key's use (none without a key: no URL built for it)
            caller = await self.access.identify(key, request.url.path if key else "")
        except AuthError:
            self.failures.take(address)
            raise
        await self.limiters[caller.tier_name].acquire(self._subject(caller, address))
        return caller

    async def charge(self, request: Request, caller: Caller, cost: int) -> None:
        """Spend ``cost`` more requests of ``caller``'s allowance (a batch's extra
        tokens); raises RateLimited when it runs out (what was spent stays spent)."""
        who = self._subject(caller, f"ip:{client_address(request, self.trusted)}")
        for _ in range(cost):
            await self.limiters[caller.tier_name].acquire(who)

    def _subject(self, caller: Caller, address: str) -> str:
        """Whose allowance: the key's, or the client ``address``'s without one."""
        if caller.key_name is not None:
            return f"key:{caller.key_name}"
        return address

    async def valid(self, key: str | None) -> bool:
        """Whether ``key`` is a working key (nothing is counted or rate limited)."""
        return bool(key) and await self.access.valid(key or "")


class OpenGate(KeyGate):
    """The gate of a server where keys change nothing a client must know about (not
    required, no tiers): keys are still read, but no security scheme is declared, so
    the OpenAPI document offers none."""

    async def __call__(self, request: Request) -> Caller:  # type: ignore[override]
        return await self.admit(request, key_of(request))

    @property
    def security(self) -> list[dict[str, list[str]]]:
        return []


def key_of(request: Request) -> str | None:
    """The API key a request sends: its header, else its query parameter (as the
    security schemes declare them), None without one."""
    key = request.headers.get(_HEADER_KEY.model.name) or request.query_params.get(
        _QUERY_KEY.model.name
    )
    return key or None


Gate = KeyGate  # OpenGate is a KeyGate too


# ASSEMBLED FROM THE SETTINGS


def keyring(settings: Settings, store_of: Callable[[], Store]) -> Callable[[], Keyring]:
    """The key store of the running service (opened at start-up, so looked up per call)."""
    return lambda: Keyring(store_of(), settings.key_pepper)


def keys_matter(settings: Settings) -> bool:
    """Keys are required, or select a tier: the document then describes them (and 401)."""
    return settings.keys_required or bool(settings.tiers)


def build_gate(
    settings: Settings, limiter_of: Callable[[int], Limiter], keys: Callable[[], Keyring]
) -> Gate:
    """A limiter per tier (``limiter_of``: per minute -> the shared state's limiter), and
    keys looked up in the service's key store (``keys``, once it is open)."""
    trusted = tuple(ipaddress.ip_network(n, strict=False) for n in settings.server.trusted_proxies)
    policy = Policy.of(settings)
    limiters = {name: limiter_of(t.rate_limit_per_minute) for name, t in policy.tiers.items()}
    access = Access(policy, keys)
    failures = RateLimiter(settings.server.auth_failures_per_minute)
    kind = KeyGate if keys_matter(settings) else OpenGate
    return kind(access, limiters, failures, trusted)


# THE OPERATOR'S ENDPOINTS

HEADER = "x-operator-key"
DAYS_DEFAULT = 30


def add_admin(
    app: FastAPI, operator_key: str, gate: KeyGate, keyring: Callable[[], Keyring]
) -> None:
    """Register ``/admin/keys`` and ``/admin/usage`` guarded by ``operator_key``."""
    expected = operator_key.encode()

    def admit(request: Request) -> None:
        address = f"ip:{client_address(request, gate.trusted)}"
        gate.failures.check(address)
        offered = (request.headers.get(HEADER) or "").encode()
        if not hmac.compare_digest(offered, expected):
            gate.failures.take(address)
            raise AuthError("the operator key is required (X-OPERATOR-KEY header)")

    @app.get("/admin/keys", include_in_schema=False)
    async def admin_keys(request: Request) -> JSONResponse:
        admit(request)
        keys = await asyncio.to_thread(keyring().keys)
        return JSONResponse([k.view() for k in keys])

    @app.get("/admin/usage", include_in_schema=False)
    async def admin_usage(
        request: Request,
        name: str | None = Query(None),
        days: str | None = Query(None),
    ) -> JSONResponse:
        admit(request)
        since = since_day(parse_limit(days, DAYS_DEFAULT, "days"), time.time())
        rows = await asyncio.to_thread(keyring().usage, name or None, since)
        return JSONResponse([u.view() for u in rows])

"""Who is asking, and which tier they get: the API-key half of the request gate.

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
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tokenrisk.config import Settings
from tokenrisk.errors import AuthError, Forbidden
from tokenrisk.store.keys import Keyring, config_key_name
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

"""Assembling the gate every check route passes: API keys to tiers, one rate-limit bucket
per key (in Redis when configured, so every worker spends from the same buckets)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from tokenrisk.api.access import Access, Policy
from tokenrisk.api.gate import Gate, KeyGate, OpenGate, RateLimiter
from tokenrisk.api.runner import Runner
from tokenrisk.config import Settings
from tokenrisk.store.keys import Keyring


def keyring(settings: Settings, runner: Runner) -> Callable[[], Keyring]:
    """The key store of the running service (opened at start-up, so looked up per call)."""
    return lambda: Keyring(runner.service.store, settings.key_pepper)


def keys_matter(settings: Settings) -> bool:
    """Keys are required, or select a tier: the document then describes them (and 401)."""
    return settings.keys_required or bool(settings.tiers)


def build_gate(settings: Settings, runner: Runner) -> Gate:
    """A limiter per tier, and keys looked up in the runner's store (once it is open)."""
    trusted = tuple(ipaddress.ip_network(n, strict=False) for n in settings.server.trusted_proxies)
    policy = Policy.of(settings)
    limiters = {
        name: runner.state.limiter(t.rate_limit_per_minute) for name, t in policy.tiers.items()
    }
    access = Access(policy, keyring(settings, runner))
    failures = RateLimiter(settings.server.auth_failures_per_minute)
    kind = KeyGate if keys_matter(settings) else OpenGate
    return kind(access, limiters, failures, trusted)

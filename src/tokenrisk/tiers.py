"""Tiers: what a class of clients may ask for, and what the service does for them.

A tier is defined by the operator (``[tiers.NAME]`` in the config file) and named by each
key in the store; keyless requests, when keys are not required, get ``default_tier``.
Without any ``[tiers]`` table there is one tier, ``default``, which is exactly the
service as it was before tiers: the global ``rate_limit_per_minute``, 10 pairs, 50
holders, every analysis on.  A ``[tiers.default]`` table replaces it.

The ceilings bound what an operator can grant: every holder beyond the first 50 costs a
``balanceOf`` and an ``extcodesize`` read per request, and no DEX registry has more than
a few dozen pools per token.  Every watched token is re-read each block and every
webhook endpoint is a delivery loop of its own: both are bounded per key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_TIER = "default"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # of a tier, and of a key (store.keys)
TOP_HOLDERS_DEFAULT = 50
TOP_HOLDERS_CEILING = 1000
PAIRS_DEFAULT = 10
PAIRS_CEILING = 100
WATCHLIST_DEFAULT = 100
WATCHLIST_CEILING = 100_000
WEBHOOKS_DEFAULT = 2
WEBHOOKS_CEILING = 100


class Tier(BaseModel):
    """One ``[tiers.NAME]`` table; every key may be left out (the value shown is used)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_limit_per_minute: int = Field(
        default=0, ge=0, description="requests per key per minute (token bucket); 0 = unlimited"
    )
    max_top_holders: int = Field(
        default=TOP_HOLDERS_DEFAULT,
        ge=1,
        le=TOP_HOLDERS_CEILING,
        description="largest `limit` of /v1/TopHolders (above it: 403)",
    )
    max_pairs: int = Field(
        default=PAIRS_DEFAULT,
        ge=1,
        le=PAIRS_CEILING,
        description="largest `limit` of /v2/GetPairs (above it: 400)",
    )
    holder_analysis: bool = Field(
        default=True, description="IsHoneypot simulates real holders selling (`holderAnalysis`)"
    )
    owner_powers: bool = Field(default=True, description="IsHoneypot runs the owner-power scan")
    max_watchlist: int = Field(
        default=WATCHLIST_DEFAULT,
        ge=0,
        le=WATCHLIST_CEILING,
        description="tokens one key may watch (`POST /v2/watch`; above it: 403)",
    )
    max_webhooks: int = Field(
        default=WEBHOOKS_DEFAULT,
        ge=0,
        le=WEBHOOKS_CEILING,
        description="webhook endpoints one key may register (`POST /v2/watch/webhooks`)",
    )


def tier_table(configured: Mapping[str, Tier], legacy_rate_limit: int) -> dict[str, Tier]:
    """Every tier by name: the built-in ``default`` (rate limit from the legacy global
    ``rate_limit_per_minute``) overridden or extended by the configured tables."""
    table = {DEFAULT_TIER: Tier(rate_limit_per_minute=legacy_rate_limit)}
    table.update(configured)
    return table

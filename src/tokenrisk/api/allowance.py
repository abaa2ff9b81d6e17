"""What the caller's tier allows a request: the analyses a check may run and the largest
``limit`` of the list endpoints (``tokenrisk.tiers``)."""

from __future__ import annotations

from dataclasses import replace

from tokenrisk.api.params import parse_bool, parse_limit
from tokenrisk.checks.deps import Options
from tokenrisk.errors import Forbidden, InputError
from tokenrisk.tiers import PAIRS_DEFAULT, TOP_HOLDERS_DEFAULT, Tier


def check_options(tier: Tier) -> Options:
    """The analyses ``tier`` switches on or off."""
    return Options(holder_analysis=tier.holder_analysis, owner_powers=tier.owner_powers)


def honeypot_options(tier: Tier, owner_powers: str | None) -> Options:
    """The tier's analyses, less the owner-power scan when ``?ownerPowers=false``."""
    options = check_options(tier)
    if owner_powers not in (None, "") and not parse_bool("ownerPowers", owner_powers):
        options = replace(options, owner_powers=False)
    return options


def pairs_limit(limit: str | None, tier: Tier) -> int:
    """GetPairs' ``limit``: 1 to the tier's maximum (400 above it); default 10."""
    allowed = tier.max_pairs
    count = parse_limit(limit, min(PAIRS_DEFAULT, allowed))
    if count > allowed:
        raise InputError(f"limit must be at most {allowed} for this tier")
    return count


def v1_pairs_limit(tier: Tier) -> int:
    """The v1 GetPairs answer: the default count, capped by the tier."""
    return min(PAIRS_DEFAULT, tier.max_pairs)


def holders_limit(limit: str | None, tier: Tier) -> int:
    """TopHolders' ``limit``: 1 to the tier's allowance (403 above it); default 50."""
    allowed = tier.max_top_holders
    count = parse_limit(limit, min(TOP_HOLDERS_DEFAULT, allowed))
    if count > allowed:
        raise Forbidden(f"limit {count} is above this tier's allowance of {allowed} holders")
    return count

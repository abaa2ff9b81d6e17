"""Request parameters: the SPEC's query strings turned into typed values or InputErrors,
and what the caller's tier (``tokenrisk.tiers``) allows of them.

Booleans accept ``true/1/yes`` and ``false/0/no`` in any case; chain ids are ASCII
digits; addresses must be valid (EIP-55 checked when mixed case) and come back
checksummed.  Each failure is an :class:`~tokenrisk.errors.InputError` (400).

What the tier allows: the analyses a check may run and the largest ``limit`` of the
list endpoints.
"""

from __future__ import annotations

from dataclasses import replace

from tokenrisk.chain.abi import parse_address
from tokenrisk.checks.deps import Options
from tokenrisk.errors import Forbidden, InputError, MissingParameter
from tokenrisk.tiers import PAIRS_DEFAULT, TOP_HOLDERS_DEFAULT, Tier

# QUERY STRINGS TO TYPED VALUES

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


PAIR_DOC = "Pair/pool to use (0x + 40 hex); the deepest when omitted."
ROUTER_DOC = "Only pools traded through this router (0x + 40 hex); any when omitted."
"""Descriptions of IsHoneypot's ``pair`` and ``router`` (v2 and the legacy v1 route)."""


def parse_bool(name: str, value: str | None) -> bool:
    """``true/1/yes`` or ``false/0/no`` (any case); absent or empty means false."""
    if value is None or value == "":
        return False
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InputError(f"{name} must be true or false")


def parse_chain_id(value: str | None) -> int | None:
    """An optional decimal chain id (ASCII digits only); None when absent or empty."""
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 12:
        raise InputError("chainID must be a positive integer")
    return int(value)


def require_chain_id(value: str | None) -> int:
    """Like :func:`parse_chain_id` for endpoints where chainID is mandatory."""
    chain_id = parse_chain_id(value)
    if chain_id is None:
        raise MissingParameter("chainID is required")
    return chain_id


def parse_limit(value: str | None, default: int, name: str = "limit") -> int:
    """An optional count of at least 1 (ASCII digits); ``default`` when absent or empty."""
    if value is None or value == "":
        return default
    if not (value.isascii() and value.isdigit()) or len(value) > 9 or int(value) < 1:
        raise InputError(f"{name} must be a positive integer")
    return int(value)


def liquidity_mode(simulate: bool, force: bool) -> str:
    """The liquidity mode (``checks.venue.ready_pool``) of the two IsHoneypot flags (force wins)."""
    return "always" if force else "if_missing" if simulate else "never"


def require_address(name: str, value: str | None) -> str:
    """A present, valid address (EIP-55 checked when mixed case), returned checksummed."""
    if value is None or value == "":
        raise MissingParameter(f"{name} is required")
    return parse_address(value)


def optional_address(value: str | None) -> str | None:
    """An optional address parameter (``pair``, ``router``): None when absent or empty."""
    return parse_address(value) if value else None


def honeypot_liquidity(simulate: str | None, force: str | None, chain_id: int | None) -> str:
    """The liquidity mode of IsHoneypot's ``simulateLiquidity`` / ``forceSimulateLiquidity``
    flags; both need ``chainID`` (a pool is simulated on one chain)."""
    wanted = parse_bool("simulateLiquidity", simulate)
    forced = parse_bool("forceSimulateLiquidity", force)
    if (wanted or forced) and chain_id is None:
        raise MissingParameter("chainID is required with simulateLiquidity/forceSimulateLiquidity")
    return liquidity_mode(wanted, forced)


# WHAT THE TIER ALLOWS


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

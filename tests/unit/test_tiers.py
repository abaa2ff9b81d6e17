"""Tiers: the built-in default is the service as it was, and tables are validated."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tokenrisk.tiers import DEFAULT_TIER, TOP_HOLDERS_CEILING, Tier, tier_table


def test_without_tables_there_is_the_legacy_default() -> None:
    table = tier_table({}, legacy_rate_limit=7)
    assert list(table) == [DEFAULT_TIER]
    default = table[DEFAULT_TIER]
    assert default.rate_limit_per_minute == 7
    assert (default.max_top_holders, default.max_pairs) == (50, 10)
    assert default.holder_analysis and default.owner_powers


def test_tables_extend_and_replace_the_default() -> None:
    pro = Tier(max_top_holders=500, max_pairs=25, rate_limit_per_minute=600)
    free = Tier(holder_analysis=False, owner_powers=False, rate_limit_per_minute=5)
    table = tier_table({"pro": pro, DEFAULT_TIER: free}, legacy_rate_limit=60)
    assert table == {DEFAULT_TIER: free, "pro": pro}


@pytest.mark.parametrize(
    "values",
    [
        {"max_top_holders": 0},
        {"max_top_holders": TOP_HOLDERS_CEILING + 1},
        {"max_pairs": 101},
        {"rate_limit_per_minute": -1},
        {"holder_analysis": "perhaps"},
        {"max_holders": 5},
    ],
)
def test_bad_tables_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Tier.model_validate(values)

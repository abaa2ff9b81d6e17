"""Tiers: the built-in default is the service as it was, and tables are validated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from tokenrisk.config import ConfigError, Settings, load_settings
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


# CONFIG


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Settings:
    path = tmp_path / "tokenrisk.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path, env=env or {})


def test_tiers_from_the_config_file(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        'default_tier = "free"\napi_keys_tier = "pro"\napi_keys = ["k"]\n'
        "rate_limit_per_minute = 30\n"
        "[tiers.free]\nrate_limit_per_minute = 5\nholder_analysis = false\n"
        "[tiers.pro]\nmax_top_holders = 500\nmax_pairs = 25\n",
    )
    table = settings.tier_table()
    assert set(table) == {"default", "free", "pro"}
    assert table["default"].rate_limit_per_minute == 30  # the legacy key sizes the default
    assert table["free"] == Tier(rate_limit_per_minute=5, holder_analysis=False)
    assert table["pro"].max_top_holders == 500 and table["pro"].rate_limit_per_minute == 0
    assert settings.keys_required


def test_tiers_from_the_environment(tmp_path: Path) -> None:
    env = {"TOKENRISK_TIERS": '{"pro": {"max_pairs": 40}}', "TOKENRISK_DEFAULT_TIER": "pro"}
    settings = _load(tmp_path, "", env)
    assert settings.tier_table()["pro"].max_pairs == 40 and settings.default_tier == "pro"
    assert not settings.keys_required


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('default_tier = "gold"\n', "default_tier: no tier named 'gold'"),
        ('api_keys_tier = "gold"\n', "api_keys_tier: no tier named 'gold'"),
        ('[tiers."a b"]\n', "tier name 'a b'"),
        ("[tiers.pro]\nmax_top_holders = 5000\n", "tiers.pro.max_top_holders"),
        ("[tiers.pro]\nmax_holders = 5\n", "tiers.pro.max_holders: unknown key"),
    ],
)
def test_bad_tier_configuration_is_named(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        _load(tmp_path, text)


def test_keys_can_be_required_without_config_keys(tmp_path: Path) -> None:
    assert _load(tmp_path, "require_api_key = true\n").keys_required
    assert not _load(tmp_path, 'api_keys = ["k"]\nrequire_api_key = false\n').keys_required

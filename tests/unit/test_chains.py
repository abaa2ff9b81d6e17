"""The shipped chain registry (data/chains.toml) and the operator override rules.

The data file is checked as text too: every address must be written EIP-55
checksummed and sit under a comment that cites its public source, because a wrong
address here silently turns every check on that chain into nonsense.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
from eth_utils import to_checksum_address

from tokenrisk.chain.registry import (
    DATA_FILE,
    Chain,
    apply_overrides,
    chain_from_dict,
    load_registry,
    merge_chain,
)

ADDRESS = re.compile(r'"(0x[0-9a-fA-F]{40})"')
HASH = re.compile(r"^0x[0-9a-f]{64}$")
REQUIRED_CHAINS = {1: "ETH", 56: "BNB", 8453: "ETH", 42161: "ETH", 137: "POL", 10: "ETH"}


@pytest.fixture(scope="module")
def registry() -> dict[int, Chain]:
    return load_registry()


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return tomllib.loads(DATA_FILE.read_text(encoding="utf-8"))


def test_registry_holds_the_required_chains(registry: dict[int, Chain]) -> None:
    assert set(REQUIRED_CHAINS) <= set(registry)
    for chain_id, currency in REQUIRED_CHAINS.items():
        assert registry[chain_id].currency == currency


def test_every_address_is_checksummed() -> None:
    text = DATA_FILE.read_text(encoding="utf-8")
    addresses = ADDRESS.findall(text)
    assert len(addresses) > 50
    wrong = [a for a in addresses if a != to_checksum_address(a)]
    assert wrong == []


def _cited(lines: list[str], index: int) -> bool:
    """Whether the comment block right above an address's table cites a URL.

    Walks up over the entry's own lines (its keys and table header) to the first
    comment block; a blank line ends the entry, so each entry needs its own comment.
    """
    i = index - 1
    while i >= 0 and lines[i].strip() and not lines[i].lstrip().startswith("#"):
        i -= 1
    block = []
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.append(lines[i])
        i -= 1
    return any("https://" in line for line in block)


def test_every_address_cites_a_public_source() -> None:
    lines = DATA_FILE.read_text(encoding="utf-8").splitlines()
    uncited = [
        line.strip()
        for i, line in enumerate(lines)
        if ADDRESS.search(line) and not line.lstrip().startswith("#") and not _cited(lines, i)
    ]
    assert uncited == []


@pytest.mark.parametrize("chain_id", sorted(REQUIRED_CHAINS))
def test_every_chain_is_complete(registry: dict[int, Chain], chain_id: int) -> None:
    chain = registry[chain_id]
    assert chain.name and chain.short_name and chain.currency
    assert chain.wrapped_native.decimals == 18
    assert chain.stablecoins and all(coin.stable for coin in chain.stablecoins)
    assert chain.dexes
    addresses = [b.address.lower() for b in chain.base_tokens]
    assert len(addresses) == len(set(addresses))
    assert len({coin.symbol for coin in chain.stablecoins}) == len(chain.stablecoins)
    assert len({(d.name, d.version) for d in chain.dexes}) == len(chain.dexes)


def test_v2_dexes_have_an_init_code_hash(registry: dict[int, Chain]) -> None:
    v2 = [d for chain in registry.values() for d in chain.dexes if d.version == "V2"]
    assert v2
    for dex in v2:
        assert dex.init_code_hash is not None and HASH.match(dex.init_code_hash), dex
        assert dex.quoter is None and dex.fee_tiers == ()


def test_v3_dexes_have_a_quoter_and_fee_tiers(registry: dict[int, Chain]) -> None:
    v3 = [d for chain in registry.values() for d in chain.dexes if d.version == "V3"]
    assert v3
    for dex in v3:
        assert dex.quoter is not None, dex
        assert dex.fee_tiers and all(0 < fee < 1_000_000 for fee in dex.fee_tiers), dex


def test_pancakeswap_v3_uses_its_own_fee_tiers(registry: dict[int, Chain]) -> None:
    pancake = next(d for d in registry[56].dexes if (d.name, d.version) == ("PancakeSwap", "V3"))
    assert pancake.fee_tiers == (100, 500, 2500, 10000)


def test_bnb_chain_stablecoins_have_18_decimals(registry: dict[int, Chain]) -> None:
    assert {coin.symbol: coin.decimals for coin in registry[56].stablecoins} == {
        "USDT": 18,
        "USDC": 18,
        "DAI": 18,
    }


def test_raw_entries_use_only_known_keys(raw: dict[str, Any]) -> None:
    chain_keys = {"id", "name", "short_name", "currency", "wrapped_native", "stablecoins", "dexes"}
    chain_keys.add("uniswap_v4")
    dex_keys = {
        "name",
        "version",
        "factory",
        "router",
        "init_code_hash",
        "quoter",
        "fee_tiers",
        "deployer",
        "display_name",
    }
    v4_keys = {"pool_manager", "universal_router", "permit2", "state_view", "quoter"}
    v4_keys |= {"deployed_block", "log_windows"}
    for entry in raw["chains"]:
        assert set(entry) <= chain_keys, entry["id"]
        assert set(entry.get("uniswap_v4", {})) <= v4_keys, entry["id"]
        for dex in entry["dexes"]:
            assert set(dex) <= dex_keys, (entry["id"], dex)


# OVERRIDES

SUSHI_V3 = {
    "name": "SushiSwap",
    "version": "V3",
    "factory": "0x00000000000000000000000000000000000000f1",
    "router": "0x00000000000000000000000000000000000000f2",
    "quoter": "0x00000000000000000000000000000000000000f3",
}


def test_partial_entry_adds_a_dex_and_keeps_the_rest(registry: dict[int, Chain]) -> None:
    merged = merge_chain(registry[1], {"id": 1, "dexes": [SUSHI_V3]})
    assert merged.dexes[: len(registry[1].dexes)] == registry[1].dexes
    added = merged.dexes[-1]
    assert (added.name, added.version) == ("SushiSwap", "V3")
    assert added.fee_tiers == (100, 500, 3000, 10000)  # V3 default when not given
    assert added.router == "0x00000000000000000000000000000000000000F2"  # checksummed
    assert merged.stablecoins == registry[1].stablecoins


def test_partial_entry_repoints_a_dex_of_the_same_name_and_version(
    registry: dict[int, Chain],
) -> None:
    uni = next(d for d in registry[1].dexes if (d.name, d.version) == ("Uniswap", "V2"))
    repointed = {
        "name": "Uniswap",
        "version": "V2",
        "factory": uni.factory,
        "router": SUSHI_V3["router"],
    }
    merged = merge_chain(registry[1], {"id": 1, "dexes": [repointed], "name": "Mainnet"})
    assert merged.name == "Mainnet"
    assert len(merged.dexes) == len(registry[1].dexes)
    new = next(d for d in merged.dexes if (d.name, d.version) == ("Uniswap", "V2"))
    assert new.router == to_checksum_address(SUSHI_V3["router"])


def test_replace_true_replaces_the_whole_chain(registry: dict[int, Chain]) -> None:
    entry = _full_entry(1)
    merged = apply_overrides(registry, [{**entry, "replace": True}])
    assert merged[1] == chain_from_dict(entry)
    assert merged[56] == registry[56]


def test_a_new_chain_needs_a_complete_entry(registry: dict[int, Chain]) -> None:
    merged = apply_overrides(registry, [_full_entry(4242)])
    assert merged[4242].name == "Test chain"
    with pytest.raises(ValueError, match="chain entry 4243"):
        apply_overrides(registry, [{"id": 4243, "name": "half"}])


def test_an_invalid_dex_version_is_rejected(registry: dict[int, Chain]) -> None:
    bad = {**SUSHI_V3, "version": "V4"}
    with pytest.raises(ValueError, match="chain entry 1"):
        apply_overrides(registry, [{"id": 1, "dexes": [bad]}])


def _full_entry(chain_id: int) -> dict[str, Any]:
    return {
        "id": chain_id,
        "name": "Test chain",
        "short_name": "TEST",
        "currency": "TST",
        "wrapped_native": {
            "address": "0x00000000000000000000000000000000000000a1",
            "symbol": "WTST",
            "decimals": 18,
        },
        "stablecoins": [
            {
                "address": "0x00000000000000000000000000000000000000a2",
                "symbol": "USDC",
                "decimals": 6,
            }
        ],
        "dexes": [SUSHI_V3],
    }


def test_ethereum_has_uniswap_v4(registry: dict[int, Chain]) -> None:
    v4 = registry[1].uniswap_v4
    assert v4 is not None
    assert v4.pool_manager == "0x000000000004444c5dc75cB358380D2e3dE08A90"
    assert v4.permit2 == "0x000000000022D473030F116dDEE9F6B43aC78BA3"

"""Operator configuration: nodes from the file and the environment, chain overrides, and
how the service merges ``[[chains]]`` and ``[whitelist]`` into the shipped registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokenrisk.chains import load_registry
from tokenrisk.config import ChainNode, ConfigError, Settings, load_settings
from tokenrisk.service import _whitelisted, chain_registry

CONFIG = """
[[nodes]]
id = 8453
fork_url = "https://user:secret-key@base.example/rpc"
fork_block = 123

[[chains]]                     # extend Base with a stablecoin and a V3 DEX
id = 8453

[[chains.stablecoins]]
address = "0x00000000000000000000000000000000000000b1"
symbol = "USDX"
decimals = 6

[[chains.dexes]]
name = "Uniswap"
version = "V3"
factory = "0x00000000000000000000000000000000000000c1"
router = "0x00000000000000000000000000000000000000c2"
quoter = "0x00000000000000000000000000000000000000c3"

[[chains]]                     # a chain the registry does not ship
id = 4242
name = "Local L2"
short_name = "L2"
currency = "ETH"

[chains.wrapped_native]
address = "0x00000000000000000000000000000000000000a1"
symbol = "WETH"
decimals = 18

[[chains.stablecoins]]
address = "0x00000000000000000000000000000000000000a2"
symbol = "USDC"
decimals = 6

[[chains.dexes]]
name = "Uniswap"
version = "V2"
factory = "0x00000000000000000000000000000000000000a3"
router = "0x00000000000000000000000000000000000000a4"
init_code_hash = "0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f"

[whitelist]
1 = ["0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"]
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokenrisk.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_nodes_come_from_the_file(config_file: Path) -> None:
    settings = load_settings(config_file, env={})
    assert settings.nodes == (
        ChainNode(8453, None, "https://user:secret-key@base.example/rpc", 123),
    )
    assert settings.devnet is False  # a configured node turns the embedded devnet off


def test_rpc_url_env_sets_a_direct_node() -> None:
    settings = load_settings(None, env={"TOKENRISK_RPC_URL_1": "http://127.0.0.1:8545"})
    assert settings.nodes == (ChainNode(1, rpc_url="http://127.0.0.1:8545"),)
    assert settings.devnet is False


def test_fork_url_env_adds_to_the_file_nodes(config_file: Path) -> None:
    env = {"TOKENRISK_FORK_URL_10": "http://upstream.example", "TOKENRISK_RPC_URL_8453": "http://b"}
    nodes = {n.chain_id: n for n in load_settings(config_file, env=env).nodes}
    assert nodes[10] == ChainNode(10, fork_url="http://upstream.example")
    assert nodes[8453].rpc_url == "http://b"  # env wins, the file's fork_url stays
    assert nodes[8453].fork_url == "https://user:secret-key@base.example/rpc"


def test_node_urls_never_show_in_repr(config_file: Path) -> None:
    assert "secret-key" not in repr(load_settings(config_file, env={}))


def test_a_node_without_url_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[[nodes]]\nid = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="rpc_url or fork_url"):
        load_settings(path, env={})


def test_chain_entries_extend_and_add_to_the_registry(config_file: Path) -> None:
    shipped = load_registry()
    registry = chain_registry(load_settings(config_file, env={}))
    base = registry[8453]
    assert base.dexes[: len(shipped[8453].dexes)] == shipped[8453].dexes
    assert ("Uniswap", "V3") in {(d.name, d.version) for d in base.dexes}
    assert "USDX" in {coin.symbol for coin in base.stablecoins}
    assert base.wrapped_native == shipped[8453].wrapped_native
    assert registry[4242].name == "Local L2"
    assert registry[1] == shipped[1]


def test_an_incomplete_new_chain_is_reported_by_id() -> None:
    settings = Settings(chains=({"id": 999, "name": "half"},))
    with pytest.raises(ValueError, match="chain entry 999"):
        chain_registry(settings)


def test_whitelist_is_added_to_its_chain(config_file: Path) -> None:
    settings = load_settings(config_file, env={})
    chains = _whitelisted(chain_registry(settings), settings)
    assert "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" in chains[1].whitelist
    assert chains[56].whitelist == frozenset()

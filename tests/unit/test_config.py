"""Operator configuration: one schema for the file and the environment, errors that name the
key and its line, paths relative to the file, the documented key table, nodes from both
sources, and how the service merges ``[[chains]]`` and ``[whitelist]`` into the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tokenrisk.chain.registry import load_registry
from tokenrisk.cli.main import app
from tokenrisk.config import (
    ChainNode,
    Settings,
    VerificationConfig,
    load_settings,
    reference_markdown,
)
from tokenrisk.errors import ConfigError
from tokenrisk.verification import VerificationSettings
from tokenrisk.wiring import chain_registry
from tokenrisk.wiring import whitelisted as _whitelisted

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

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
        ChainNode(id=8453, fork_url="https://user:secret-key@base.example/rpc", fork_block=123),
    )
    assert settings.devnet is False  # a configured node turns the embedded devnet off


def test_rpc_url_env_sets_a_direct_node() -> None:
    settings = load_settings(None, env={"TOKENRISK_RPC_URL_1": "http://127.0.0.1:8545"})
    assert settings.nodes == (ChainNode(id=1, rpc_url="http://127.0.0.1:8545"),)
    assert settings.devnet is False


def test_fork_url_env_adds_to_the_file_nodes(config_file: Path) -> None:
    env = {"TOKENRISK_FORK_URL_10": "http://upstream.example", "TOKENRISK_RPC_URL_8453": "http://b"}
    nodes = {n.chain_id: n for n in load_settings(config_file, env=env).nodes}
    assert nodes[10] == ChainNode(id=10, fork_url="http://upstream.example")
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


def test_an_incomplete_new_chain_is_reported_by_id(tmp_path: Path) -> None:
    path = _write(tmp_path, '[[chains]]\nid = 999\nname = "half"\n')
    with pytest.raises(ConfigError, match="chain entry 999"):
        load_settings(path, env={})


def test_whitelist_is_added_to_its_chain(config_file: Path) -> None:
    settings = load_settings(config_file, env={})
    chains = _whitelisted(chain_registry(settings), settings)
    assert "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" in chains[1].whitelist
    assert chains[56].whitelist == frozenset()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokenrisk.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path | None, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env or {})
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_unknown_keys_are_named_with_their_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'port = 9000\nprot = 9001\n\n[[nodes]]\nid = 1\nrpc_url = "http://a"\n\n'
        '[[nodes]]\nid = 2\nrpc_ur = "http://b"\n\n[verification]\netherscan_kee = "k"\n',
    )
    message = _error(path)
    assert f"prot: unknown key ({path}, line 2)" in message
    assert f"nodes[1].rpc_ur: unknown key ({path}, line 10)" in message
    assert f"verification.etherscan_kee: unknown key ({path}, line 13)" in message


def test_unknown_keys_in_a_chain_entry_are_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "[[chains]]\nid = 1\n\n[[chains.dexes]]\nnmae = 'x'\n")
    assert f"chains[0].dexes[0].nmae: unknown key ({path}, line 5)" in _error(path)


def test_a_bad_file_value_names_key_and_line_not_the_value(tmp_path: Path) -> None:
    path = _write(tmp_path, 'host = "h"\nport = "hunter2"\n')
    message = _error(path)
    assert message.startswith("invalid configuration: port: ")
    assert f"({path}, line 2)" in message
    assert "hunter2" not in message


def test_a_bad_environment_value_is_one_line_naming_the_variable() -> None:
    message = _error(None, {"TOKENRISK_RPC_TIMEOUT": "soon-secret"})
    assert "rpc_timeout" in message and "(environment TOKENRISK_RPC_TIMEOUT)" in message
    assert "soon-secret" not in message
    message = _error(None, {"TOKENRISK_VERIFICATION__TIMEOUT": "-1"})
    assert "verification.timeout" in message
    assert "environment TOKENRISK_VERIFICATION__TIMEOUT" in message
    assert "TOKENRISK_WHITELIST" in _error(None, {"TOKENRISK_WHITELIST": "{not json"})


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    assert "cannot read config file" in _error(tmp_path / "missing.toml")
    assert "line 1" in _error(_write(tmp_path, "port = = 1\n"))


def test_nested_environment_keys_merge_into_the_file_table(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[verification]\nproviders = ["local", "sourcify"]\n'
        'sourcify_url = "http://s"\ntimeout = 7\n',
    )
    env = {"TOKENRISK_VERIFICATION__TIMEOUT": "3", "TOKENRISK_PORT": "9100"}
    settings = load_settings(path, env=env)
    assert settings.verification.timeout == 3.0
    assert settings.verification.providers == ("local", "sourcify")
    assert settings.port == 9100


def test_the_documented_etherscan_key_variable_is_read() -> None:
    env = {"TOKENRISK_VERIFICATION_ETHERSCAN_KEY": "abc"}
    assert load_settings(None, env=env).verification.etherscan_key == "abc"
    env["TOKENRISK_VERIFICATION__ETHERSCAN_KEY"] = "nested"
    assert load_settings(None, env=env).verification.etherscan_key == "nested"
    settings = load_settings(None, env=env).verification.settings()
    assert settings.etherscan_key == "nested"
    assert "nested" not in repr(load_settings(None, env=env))


def test_api_keys_from_the_environment_comma_separated_or_json() -> None:
    assert load_settings(None, env={"TOKENRISK_API_KEYS": "k1, k2,"}).api_keys == {"k1", "k2"}
    assert load_settings(None, env={"TOKENRISK_API_KEYS": '["k3"]'}).api_keys == {"k3"}
    assert "k1" not in repr(load_settings(None, env={"TOKENRISK_API_KEYS": "k1"}))


def test_relative_paths_in_the_file_are_relative_to_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'data_dir = "state"\n[verification]\n'
        'local_paths = { 1 = "reg/a.json", 10 = ["b.json", "/abs/c.json"] }\n',
    )
    settings = load_settings(path, env={})
    assert settings.data_dir == tmp_path / "state"
    assert settings.verification.local_paths == {
        1: (tmp_path / "reg/a.json",),
        10: (tmp_path / "b.json", Path("/abs/c.json")),
    }
    from_env = load_settings(path, env={"TOKENRISK_DATA_DIR": "here"})
    assert from_env.data_dir == Path("here")  # the environment's are the working directory's


def test_max_concurrent_simulations_is_a_key() -> None:
    env = {"TOKENRISK_MAX_CONCURRENT_SIMULATIONS": "3"}
    assert load_settings(None, env=env).max_concurrent_simulations == 3
    assert "max_concurrent_simulations" in _error(
        None, {"TOKENRISK_MAX_CONCURRENT_SIMULATIONS": "0"}
    )


def test_verification_defaults_match_the_verifier_defaults() -> None:
    assert VerificationConfig().settings() == VerificationSettings()


def test_an_incomplete_provider_setup_is_a_config_error() -> None:
    message = _error(None, {"TOKENRISK_VERIFICATION__PROVIDERS": '["sourcify"]'})
    assert "sourcify provider needs sourcify_url" in message


def test_the_docs_key_table_is_the_schema() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = text.split("<!-- keys:begin -->\n", 1)[1].split("<!-- keys:end -->", 1)[0]
    assert documented == reference_markdown()
    for key in Settings.model_fields:
        assert f"| `{key}` |" in documented


def test_the_cli_reports_a_bad_config_in_one_line_on_stderr(tmp_path: Path) -> None:
    path = _write(tmp_path, "workers = 0\n")
    result = CliRunner().invoke(app, ["check", "0x" + "1" * 40, "--config", str(path)])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert f"workers: Input should be greater than or equal to 1 ({path}, line 1)" in result.stderr
    assert "Traceback" not in result.output


def test_cors_origins_default_to_any_and_read_a_list_from_the_environment() -> None:
    assert load_settings(env={}).cors_origins == ("*",)
    env = {"TOKENRISK_CORS_ORIGINS": "https://a.example, https://b.example"}
    assert load_settings(env=env).cors_origins == ("https://a.example", "https://b.example")
    assert load_settings(env={"TOKENRISK_CORS_ORIGINS": "[]"}).cors_origins == ()


FORK_ENTRY = """[[chains]]
id = 56

[[chains.dexes]]
name = "SomeSwap"
version = "V2"
display_name = "Some Swap"
factory = "0x00000000000000000000000000000000000000e1"
router = "0x00000000000000000000000000000000000000e2"
init_code_hash = "0x1111111111111111111111111111111111111111111111111111111111111111"

[[chains.dexes]]
name = "Pancake Fork"
version = "V3"
factory = "0x00000000000000000000000000000000000000f1"
deployer = "0x00000000000000000000000000000000000000f4"
router = "0x00000000000000000000000000000000000000f2"
quoter = "0x00000000000000000000000000000000000000f3"
init_code_hash = "0x6ce8eb472fa82df5469c6ab6d485f17c3ad13c8cd7af59b3d4a8026c5ce0f7e2"
fee_tiers = [100, 2500]
"""


def test_an_operator_adds_a_fork_with_its_keys(tmp_path: Path) -> None:
    registry = chain_registry(load_settings(_write(tmp_path, FORK_ENTRY), env={}))
    dexes = {(d.name, d.version): d for d in registry[56].dexes}
    some, fork = dexes[("SomeSwap", "V2")], dexes[("Pancake Fork", "V3")]
    assert some.label == "Some Swap"
    assert some.init_code_hash == "0x" + "11" * 32
    assert fork.label == "Pancake Fork V3"  # no display_name: name and version
    assert fork.deployer == "0x00000000000000000000000000000000000000F4"
    assert fork.fee_tiers == (100, 2500)


def test_an_init_code_hash_must_be_32_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path, FORK_ENTRY.replace("0x11111111", "0x11"))
    assert "init_code_hash" in _error(path)


def test_the_request_size_cap_reaches_the_node_client() -> None:
    """rpc_max_request_bytes is the client's cap on a batch body; 0 turns it off."""
    from tokenrisk.wiring import rpc_settings

    assert rpc_settings(Settings()).max_request_bytes == 1024 * 1024
    assert rpc_settings(Settings(rpc_max_request_bytes=4096)).max_request_bytes == 4096
    assert rpc_settings(Settings(rpc_max_request_bytes=0)).max_request_bytes is None

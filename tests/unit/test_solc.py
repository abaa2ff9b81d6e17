"""The Solidity build: one standard-JSON call, reproducible input hash, loud failures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tokenrisk.devnet import layout, solc

REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_RUNTIME_BYTES = 24_576
PRAGMA = "pragma solidity 0.8.37;"


@pytest.fixture(scope="module")
def compiled() -> Path:
    """The repository's contracts compiled where the devnet build keeps them: the build
    (a dependency of ``make test``) ran this very function on the same input hash, so it
    compiles again only when a source changed since (45 s of solc otherwise)."""
    return solc.compile_contracts(REPO_ROOT, layout.devnet_dir(REPO_ROOT) / "solc")


@pytest.fixture
def toy_repo(tmp_path: Path) -> Path:
    """A throwaway repo with its own contracts/ but the real compile script and solc-js."""
    (tmp_path / "contracts").mkdir()
    (tmp_path / "tools").symlink_to(REPO_ROOT / "tools")
    (tmp_path / "node_modules").symlink_to(REPO_ROOT / "node_modules")
    return tmp_path


def write_contract(repo: Path, relative: str, body: str) -> None:
    path = repo / "contracts" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"// SPDX-License-Identifier: MIT\n{PRAGMA}\n\n{body}\n", encoding="utf-8")


def test_compile_writes_artifacts(compiled: Path) -> None:
    data = solc.load_artifacts(compiled)
    assert compiled.name == "artifacts.json"
    assert data["solc"].startswith("0.8.37+commit.")
    assert data["inputHash"] == solc.hash_input(solc.build_standard_input(REPO_ROOT))
    token = data["contracts"]["PlainToken"]
    assert token["source"] == "contracts/tokens/PlainToken.sol"
    assert token["bytecode"].startswith("0x6080")
    assert token["deployedBytecode"].startswith("0x6080")
    assert json.loads(token["metadata"])["settings"]["optimizer"] == {"enabled": True, "runs": 200}
    assert {item.get("name") for item in token["abi"]} >= {"setAmm", "launch", "owner", "transfer"}


def test_every_source_file_is_compiled(compiled: Path) -> None:
    sources = {item["source"] for item in solc.load_artifacts(compiled)["contracts"].values()}
    expected = {p.relative_to(REPO_ROOT).as_posix() for p in solc.find_sources(REPO_ROOT)}
    assert sources == expected


def test_runtime_bytecode_fits_the_size_limit(compiled: Path) -> None:
    for name, artifact in solc.load_artifacts(compiled)["contracts"].items():
        size = (len(artifact["deployedBytecode"]) - 2) // 2
        assert size < MAX_RUNTIME_BYTES, f"{name} runtime is {size} bytes"


@pytest.mark.parametrize("path", solc.find_sources(REPO_ROOT), ids=lambda p: p.name)
def test_source_conventions(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("// SPDX-License-Identifier: ")
    assert re.findall(r"^pragma solidity [^;]+;", text, re.MULTILINE) == [PRAGMA]
    contracts_dir = (REPO_ROOT / "contracts").resolve()
    for target in re.findall(r'^import\s.*"([^"]+)";', text, re.MULTILINE):
        assert target.startswith("."), f"{path.name} imports {target!r}"
        assert (path.parent / target).resolve().is_relative_to(contracts_dir)


def test_input_hash_is_stable() -> None:
    first = solc.build_standard_input(REPO_ROOT)
    second = solc.build_standard_input(REPO_ROOT)
    assert first == second
    assert solc.hash_input(first) == solc.hash_input(second)
    assert json.loads(first)["settings"]["evmVersion"] == "cancun"


def test_second_compile_is_skipped(compiled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = compiled.read_bytes()

    def must_not_run(repo_root: Path, standard_input: str) -> dict[str, Any]:
        raise AssertionError("solc ran although artifacts were up to date")

    monkeypatch.setattr(solc, "run_solc", must_not_run)
    assert solc.compile_contracts(REPO_ROOT, compiled.parent) == compiled
    assert compiled.read_bytes() == before


def test_changed_source_recompiles(toy_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_contract(toy_repo, "A.sol", "contract A { uint256 public x; }")
    first = solc.load_artifacts(solc.compile_contracts(toy_repo, out))
    write_contract(toy_repo, "A.sol", "contract A { uint256 public y; }")
    second = solc.load_artifacts(solc.compile_contracts(toy_repo, out))
    assert first["inputHash"] != second["inputHash"]
    assert [item["name"] for item in second["contracts"]["A"]["abi"]] == ["y"]


def test_duplicate_contract_names_fail(toy_repo: Path, tmp_path: Path) -> None:
    write_contract(toy_repo, "one/Same.sol", "contract Same {}")
    write_contract(toy_repo, "two/Same.sol", "contract Same {}")
    with pytest.raises(solc.SolcError, match="'Same' is defined in both"):
        solc.compile_contracts(toy_repo, tmp_path / "out")


def test_compile_error_is_raised_with_solc_message(
    toy_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(toy_repo, "Broken.sol", "contract Broken { function f( }")
    with pytest.raises(solc.SolcError, match="ParserError") as raised:
        solc.compile_contracts(toy_repo, tmp_path / "out")
    assert "Broken.sol" in str(raised.value)
    assert "ParserError" in capsys.readouterr().err
    assert not (tmp_path / "out" / "artifacts.json").exists()


def test_load_artifacts_rejects_garbage(tmp_path: Path) -> None:
    path = tmp_path / "artifacts.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(solc.SolcError):
        solc.load_artifacts(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(solc.SolcError):
        solc.load_artifacts(path)

"""The committed probe and reader artifacts are exactly what the pinned compiler makes of
their sources."""

from __future__ import annotations

import json
from pathlib import Path

from tokenrisk.chain.reader import READER_FILE, reader_code
from tokenrisk.devnet.node import repo_root
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.simulate.probe import PROBE_FILE, probe_artifact


def test_probe_artifact_matches_a_fresh_compile(tmp_path: Path) -> None:
    root = repo_root()
    fresh = load_artifacts(compile_contracts(root, root / "build" / "devnet" / "solc"))
    compiled = fresh["contracts"]["TokenRiskProbe"]
    committed = json.loads(PROBE_FILE.read_text())
    assert committed["deployedBytecode"] == compiled["deployedBytecode"], (
        "src/tokenrisk/data/probe.json is stale: regenerate it with "
        "`python -m tokenrisk.devnet.probe_export`"
    )
    assert committed["abi"] == compiled["abi"]
    assert committed["solc"] == fresh["solc"]


def test_probe_artifact_has_runtime_code() -> None:
    code = probe_artifact()["deployedBytecode"]
    assert code.startswith("0x") and len(code) > 1000


def test_reader_artifact_matches_a_fresh_compile() -> None:
    root = repo_root()
    fresh = load_artifacts(compile_contracts(root, root / "build" / "devnet" / "solc"))
    compiled = fresh["contracts"]["TokenRiskReader"]
    committed = json.loads(READER_FILE.read_text())
    assert committed["deployedBytecode"] == compiled["deployedBytecode"], (
        "src/tokenrisk/data/reader.json is stale: regenerate it with "
        "`python -m tokenrisk.devnet.probe_export`"
    )
    assert committed["abi"] == compiled["abi"]
    assert reader_code() == compiled["deployedBytecode"]

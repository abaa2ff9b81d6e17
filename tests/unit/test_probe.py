"""The committed probe and reader artifacts are exactly what the pinned compiler makes of
their sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokenrisk.chain.reader import READER_FILE, reader_code
from tokenrisk.devnet.node import repo_root
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.simulate.emulation import RUNNER_FILE, runner_code
from tokenrisk.simulate.probe import PROBE_FILE, probe_artifact


@pytest.mark.parametrize(
    ("contract", "committed_file"),
    [
        ("TokenRiskProbe", PROBE_FILE),
        ("TokenRiskReader", READER_FILE),
        ("TokenRiskRunner", RUNNER_FILE),
    ],
)
def test_artifact_matches_a_fresh_compile(contract: str, committed_file: Path) -> None:
    root = repo_root()
    fresh = load_artifacts(compile_contracts(root, root / "build" / "devnet" / "solc"))
    compiled = fresh["contracts"][contract]
    committed = json.loads(committed_file.read_text())
    assert committed["deployedBytecode"] == compiled["deployedBytecode"], (
        f"src/tokenrisk/data/{committed_file.name} is stale: regenerate it with "
        "`python -m tokenrisk.devnet.probe_export`"
    )
    assert committed["abi"] == compiled["abi"]
    assert committed["solc"] == fresh["solc"]


def test_the_service_reads_the_runtime_code() -> None:
    for code in (probe_artifact()["deployedBytecode"], reader_code(), runner_code()):
        assert code.startswith("0x") and len(code) > 1000

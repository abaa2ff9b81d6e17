"""Regenerate ``data/probe.json``, ``data/reader.json`` and ``data/runner.json`` from
``contracts/probe/``.

Run ``python -m tokenrisk.devnet.probe_export`` after changing the probe or the reader
contract; a unit test compares the committed artifacts with a fresh compile.  A build
tool: the service only reads the committed artifacts (:mod:`tokenrisk.simulate.probe`,
:mod:`tokenrisk.chain.reader`), so the wheel carries them.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenrisk.chain.reader import READER_FILE
from tokenrisk.devnet.node import repo_root
from tokenrisk.devnet.solc import compile_contracts
from tokenrisk.simulate.emulation import RUNNER_FILE
from tokenrisk.simulate.probe import PROBE_FILE

EXPORTS = (
    ("TokenRiskProbe", PROBE_FILE),
    ("TokenRiskReader", READER_FILE),
    ("TokenRiskRunner", RUNNER_FILE),
)


def export_artifact(artifacts_path: Path, contract: str, out: Path) -> None:
    """Write one contract's runtime code and ABI from a compile's artifacts.json."""
    data = json.loads(artifacts_path.read_text(encoding="utf-8"))
    compiled = data["contracts"][contract]
    fields = {"contract": contract, "source": compiled["source"], "solc": data["solc"]}
    fields |= {"abi": compiled["abi"], "deployedBytecode": compiled["deployedBytecode"]}
    out.write_text(json.dumps(fields, indent=1) + "\n", encoding="utf-8")


def export_all(artifacts_path: Path) -> None:
    for contract, out in EXPORTS:
        export_artifact(artifacts_path, contract, out)


if __name__ == "__main__":
    root = repo_root()
    export_all(compile_contracts(root, root / "build" / "devnet" / "solc"))

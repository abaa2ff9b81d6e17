"""Regenerate ``data/probe.json`` from ``contracts/probe/TokenRiskProbe.sol``.

Run ``python -m tokenrisk.devnet.probe_export`` after changing the probe contract; a unit
test compares the committed artifact with a fresh compile.  A build tool: the service
only reads the committed artifact (:mod:`tokenrisk.simulate.probe`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenrisk.devnet.node import repo_root
from tokenrisk.devnet.solc import compile_contracts
from tokenrisk.simulate.probe import PROBE_FILE


def export_artifact(artifacts_path: Path, out: Path = PROBE_FILE) -> None:
    """Write the probe's runtime code and ABI from a compile's artifacts.json."""
    data = json.loads(artifacts_path.read_text(encoding="utf-8"))
    probe = data["contracts"]["TokenRiskProbe"]
    fields = {"contract": "TokenRiskProbe", "source": probe["source"], "solc": data["solc"]}
    fields |= {"abi": probe["abi"], "deployedBytecode": probe["deployedBytecode"]}
    out.write_text(json.dumps(fields, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    root = repo_root()
    export_artifact(compile_contracts(root, root / "build" / "devnet" / "solc"))

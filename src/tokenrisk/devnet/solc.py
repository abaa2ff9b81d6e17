"""Compile the devnet's Solidity with the pinned solc-js, through ``tools/solc-compile.js``.

Every ``.sol`` file under ``contracts/`` goes into ONE standard-JSON call (optimizer on,
200 runs, EVM version cancun). The result is ``artifacts.json``::

    {"solc": "0.8.37+commit...", "inputHash": "<sha256 of the standard-JSON input>",
     "contracts": {"<Name>": {"source": "contracts/x.sol", "abi": [...],
                              "bytecode": "0x...", "deployedBytecode": "0x...",
                              "metadata": "<json string>"}}}

Contract names are the keys, so they must be unique across files. The input hash covers
every source byte and every setting, so an artifacts file whose hash matches the current
input is up to date and is not rebuilt. Abstract contracts and interfaces are kept too
(with ``"0x"`` bytecode): their ABIs are handy, e.g. ``ScenarioCore`` for ``setAmm``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tokenrisk.devnet import layout
from tokenrisk.errors import SolcError

CONTRACTS_DIR = "contracts"
COMPILE_SCRIPT = Path("tools") / "solc-compile.js"
ARTIFACTS_FILE = "artifacts.json"
SOLC_TIMEOUT_S = 300.0
OUTPUT_SELECTION = ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "metadata"]
SETTINGS: dict[str, Any] = {
    "optimizer": {"enabled": True, "runs": 200},
    "evmVersion": "cancun",
    "outputSelection": {"*": {"*": OUTPUT_SELECTION}},
}

logger = logging.getLogger(__name__)


def compile_contracts(repo_root: Path, out_dir: Path) -> Path:
    """Compile ``repo_root/contracts/**/*.sol`` and return the path of ``artifacts.json``.

    Skips the compiler when ``out_dir/artifacts.json`` already has the current input hash.
    Raises ``SolcError`` on compile errors, duplicate contract names, or when node/solc-js
    cannot be run.
    """
    standard_input = build_standard_input(repo_root)
    input_hash = hash_input(standard_input)
    target = out_dir / ARTIFACTS_FILE
    if is_current(target, input_hash):
        logger.debug("solc: %s is up to date", target)
        return target
    output = run_solc(repo_root, standard_input)
    check_errors(output)
    artifacts = {
        "solc": compiler_version(output, repo_root),
        "inputHash": input_hash,
        "contracts": collect_contracts(output),
    }
    write_json(target, artifacts)
    return target


def load_artifacts(path: Path) -> dict[str, Any]:
    """Read an ``artifacts.json`` written by ``compile_contracts``.

    Raises ``SolcError`` when the file is missing, not JSON, or has no contracts.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SolcError(f"cannot read artifacts {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("contracts"), dict):
        raise SolcError(f"artifacts {path} have no 'contracts' object")
    return data


def build_standard_input(repo_root: Path) -> str:
    """Return the standard-JSON input, serialised deterministically (the hashed bytes)."""
    sources = {
        path.relative_to(repo_root).as_posix(): {"content": path.read_text(encoding="utf-8")}
        for path in find_sources(repo_root)
    }
    if not sources:
        raise SolcError(f"no .sol files under {repo_root / CONTRACTS_DIR}")
    document = {"language": "Solidity", "sources": sources, "settings": SETTINGS}
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def find_sources(repo_root: Path) -> list[Path]:
    """All ``.sol`` files under ``contracts/``, sorted so the input is reproducible."""
    return sorted((repo_root / CONTRACTS_DIR).rglob("*.sol"))


def hash_input(standard_input: str) -> str:
    """SHA-256 hex digest of the standard-JSON input text (UTF-8)."""
    return hashlib.sha256(standard_input.encode("utf-8")).hexdigest()


def is_current(target: Path, input_hash: str) -> bool:
    """True when ``target`` is a readable artifacts file built from exactly this input."""
    if not target.is_file():
        return False
    try:
        return load_artifacts(target).get("inputHash") == input_hash
    except SolcError:
        return False


def run_solc(repo_root: Path, standard_input: str) -> dict[str, Any]:
    """Run the node compile script on ``standard_input`` and return the parsed output."""
    stdout = run_node(repo_root, [], standard_input)
    try:
        output = json.loads(stdout)
    except ValueError as exc:
        raise SolcError(f"solc-js printed something that is not JSON: {stdout[:200]!r}") from exc
    if not isinstance(output, dict):
        raise SolcError("solc-js output is not a JSON object")
    return output


def run_node(repo_root: Path, args: list[str], stdin: str) -> str:
    """Run ``node tools/solc-compile.js ARGS`` with a timeout; return its stdout."""
    node = shutil.which("node")
    if node is None:
        raise SolcError("node is not on PATH; it is needed to run solc-js")
    script = repo_root / COMPILE_SCRIPT
    try:
        done = subprocess.run(
            [node, str(script), *args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo_root,
            env={**os.environ, "NODE_PATH": str(layout.node_modules(repo_root))},
            timeout=SOLC_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SolcError(f"solc-js did not finish within {SOLC_TIMEOUT_S:.0f} s") from exc
    if done.returncode != 0:
        raise SolcError(f"{script} failed (exit {done.returncode}): {done.stderr.strip()}")
    return done.stdout


def check_errors(output: dict[str, Any]) -> None:
    """Log warnings; print and raise on any error-severity diagnostic."""
    errors: list[str] = []
    for item in output.get("errors", []):
        message = str(item.get("formattedMessage") or item.get("message", item))
        if item.get("severity") == "error":
            errors.append(message)
        else:
            logger.warning("solc: %s", message)
    if errors:
        report = "\n".join(errors)
        print(report, file=sys.stderr)
        raise SolcError(f"solc reported {len(errors)} error(s):\n{report}")


def collect_contracts(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Flatten solc's ``contracts`` into ``{name: artifact}``; raise on a duplicate name."""
    contracts: dict[str, dict[str, Any]] = {}
    for source, by_name in sorted(output.get("contracts", {}).items()):
        for name, compiled in sorted(by_name.items()):
            if name in contracts:
                first = contracts[name]["source"]
                raise SolcError(f"contract name {name!r} is defined in both {first} and {source}")
            contracts[name] = to_artifact(source, compiled)
    return contracts


def to_artifact(source: str, compiled: dict[str, Any]) -> dict[str, Any]:
    """One contract's artifact entry, bytecode as ``0x``-prefixed hex."""
    evm = compiled.get("evm", {})
    return {
        "source": source,
        "abi": compiled.get("abi", []),
        "bytecode": "0x" + evm.get("bytecode", {}).get("object", ""),
        "deployedBytecode": "0x" + evm.get("deployedBytecode", {}).get("object", ""),
        "metadata": compiled.get("metadata", ""),
    }


def compiler_version(output: dict[str, Any], repo_root: Path) -> str:
    """The full compiler version, from contract metadata or else by asking solc-js."""
    for by_name in output.get("contracts", {}).values():
        for compiled in by_name.values():
            metadata = compiled.get("metadata")
            if metadata:
                return str(json.loads(metadata)["compiler"]["version"])
    return run_node(repo_root, ["--version"], "").strip()


def write_json(target: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (temp file, then rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, target)

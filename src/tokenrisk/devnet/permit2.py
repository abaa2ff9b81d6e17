"""Permit2, built from the sources ``@uniswap/v4-periphery`` ships under ``lib/permit2``.

No npm package publishes Permit2's build artifacts, so the build compiles its sources
with the compiler and settings of its own ``foundry.toml`` (solc 0.8.17 from the pinned
``solc-0.8.17`` npm alias, via-IR, 1,000,000 optimizer runs, no metadata hash) and places
the runtime at the canonical address like the Uniswap contracts (:mod:`.uniswap`).

Permit2's EIP-712 domain separator is an immutable computed in its constructor from
``address(this)``; the copy at the canonical address gets the separator of that address
(replaced in the runtime code, the occurrences counted), so signed permits verify there
as on mainnet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import encode_args, to_bytes
from tokenrisk.devnet import layout
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.npm_artifacts import NpmArtifact
from tokenrisk.devnet.solc import check_errors, run_node
from tokenrisk.errors import DevnetBuildError, SolcError

PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
SOURCES = "@uniswap/v4-periphery/lib/permit2"
COMPILER_MODULE = "solc-0.8.17"
SETTINGS: dict[str, Any] = {
    "remappings": ["solmate/=lib/solmate/"],
    "optimizer": {"enabled": True, "runs": 1_000_000},
    "viaIR": True,
    "evmVersion": "london",
    "metadata": {"bytecodeHash": "none"},
    "outputSelection": {"src/Permit2.sol": {"Permit2": ["abi", "evm.bytecode.object", "metadata"]}},
}
_SOLMATE = ("src/tokens/ERC20.sol", "src/utils/SafeTransferLib.sol")
_DOMAIN_TYPE = b"EIP712Domain(string name,uint256 chainId,address verifyingContract)"


def standard_input(root: Path) -> str:
    """The standard-JSON input: Permit2's ``src`` and the two solmate files it imports."""
    base = layout.node_modules(root) / SOURCES
    sources = {
        "src/" + p.relative_to(base / "src").as_posix(): {"content": p.read_text()}
        for p in sorted((base / "src").rglob("*.sol"))
    }
    for rel in _SOLMATE:
        sources[f"lib/solmate/{rel}"] = {"content": (base / "lib/solmate" / rel).read_text()}
    document = {"language": "Solidity", "sources": sources, "settings": SETTINGS}
    return json.dumps(document, sort_keys=True)


def source_artifact(root: Path) -> NpmArtifact:
    """Permit2's source and settings for the verification registry (no bytecode)."""
    source = layout.node_modules(root) / SOURCES / "src/Permit2.sol"
    return NpmArtifact(
        name="Permit2",
        bytecode="0x",
        abi=[],
        source_path=f"{SOURCES}/src/Permit2.sol",
        source=source.read_text(),
        compiler="solc-0.8.17",
        optimizer=dict(SETTINGS["optimizer"]),
        metadata=None,
    )


def compile_permit2(root: Path) -> NpmArtifact:
    """Compile Permit2; raises SolcError on a compile error or unreadable output."""
    stdout = run_node(root, ["--module", COMPILER_MODULE], standard_input(root))
    try:
        output = json.loads(stdout)
        check_errors(output)
        compiled = output["contracts"]["src/Permit2.sol"]["Permit2"]
    except (ValueError, KeyError) as exc:
        raise SolcError(f"Permit2 did not compile: {exc!r}") from exc
    source = layout.node_modules(root) / SOURCES / "src/Permit2.sol"
    return NpmArtifact(
        name="Permit2",
        bytecode="0x" + compiled["evm"]["bytecode"]["object"],
        abi=list(compiled["abi"]),
        source_path=f"{SOURCES}/src/Permit2.sol",
        source=source.read_text(),
        compiler="solc-0.8.17",
        optimizer=dict(SETTINGS["optimizer"]),
        metadata=compiled.get("metadata") or None,
    )


def domain_separator(chain_id: int, address: str) -> bytes:
    """Permit2's EIP-712 domain separator at ``address`` on ``chain_id``."""
    fields = (keccak(_DOMAIN_TYPE), keccak(b"Permit2"), chain_id, address)
    return bytes(keccak(encode_args(["bytes32", "bytes32", "uint256", "address"], fields)))


async def place_permit2(chain: Chain, root: Path, deployer: str) -> NpmArtifact:
    """Deploy Permit2, move its runtime to the canonical address, wipe the temporary copy."""
    artifact = compile_permit2(root)
    outcome = await chain.deploy_tx(deployer, artifact.bytecode, b"", "deploy Permit2")
    temporary = outcome.contract_address
    chain_id = int(await chain.cheat("eth_chainId"), 16)
    old, new = domain_separator(chain_id, temporary), domain_separator(chain_id, PERMIT2)
    runtime = to_bytes(await chain.code(temporary))
    if runtime.count(old) < 1:
        raise DevnetBuildError("Permit2's runtime does not embed its domain separator")
    await chain.cheat("hardhat_setCode", PERMIT2, "0x" + runtime.replace(old, new).hex())
    await chain.cheat("hardhat_setNonce", PERMIT2, "0x1")
    await chain.cheat("hardhat_setCode", temporary, "0x")
    return artifact

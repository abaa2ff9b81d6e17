"""The official WETH9 and Uniswap V2/V3 build artifacts shipped in ``node_modules``.

Only the bytes from the npm packages are used (never recompiled), so the devnet runs the
exact code that runs on mainnet and pair/pool init-code hashes come out canonical.
The packages also ship part of the Solidity sources; where they do, the source text goes
into the local verification registry.  V2 artifacts carry the compiler version in
their metadata; hardhat (V3) artifacts do not, so it is read from the CBOR trailer
that solc appends to the bytecode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import to_bytes
from tokenrisk.devnet import layout
from tokenrisk.errors import DevnetBuildError

_PANCAKE_V2 = "@pancakeswap-libs/pancake-swap-core"
_PANCAKE_CORE = "@pancakeswap/v3-core/artifacts/contracts"
_PANCAKE_PERIPHERY = "@pancakeswap/v3-periphery/artifacts/contracts"
_V2_CORE = "@uniswap/v2-core"
_V2_PERIPHERY = "@uniswap/v2-periphery"
_V3_CORE = "@uniswap/v3-core"
_V3_PERIPHERY = "@uniswap/v3-periphery"
_V4_CORE = "@uniswap/v4-core"
_V4_PERIPHERY = "@uniswap/v4-periphery"
_UR = "@uniswap/universal-router"

ARTIFACT_FILES: dict[str, tuple[str, str]] = {
    "WETH9": (f"{_V2_PERIPHERY}/build/WETH9.json", f"{_V2_PERIPHERY}/contracts/test/WETH9.sol"),
    "UniswapV2Factory": (
        f"{_V2_CORE}/build/UniswapV2Factory.json",
        f"{_V2_CORE}/contracts/UniswapV2Factory.sol",
    ),
    "UniswapV2Pair": (
        f"{_V2_CORE}/build/UniswapV2Pair.json",
        f"{_V2_CORE}/contracts/UniswapV2Pair.sol",
    ),
    "UniswapV2Router02": (
        f"{_V2_PERIPHERY}/build/UniswapV2Router02.json",
        f"{_V2_PERIPHERY}/contracts/UniswapV2Router02.sol",
    ),
    # PancakeSwap's V2 core (Waffle build, solc 0.5.16): the devnet's V2 fork
    "PancakeFactory": (
        f"{_PANCAKE_V2}/build/PancakeFactory.json",
        f"{_PANCAKE_V2}/contracts/PancakeFactory.sol",
    ),
    "PancakePair": (
        f"{_PANCAKE_V2}/build/PancakePair.json",
        f"{_PANCAKE_V2}/contracts/PancakePair.sol",
    ),
    # PancakeSwap V3: the packages ship no .sol of these (only interfaces and libraries)
    "PancakeV3Factory": (
        f"{_PANCAKE_CORE}/PancakeV3Factory.sol/PancakeV3Factory.json",
        "@pancakeswap/v3-core/contracts/PancakeV3Factory.sol",
    ),
    "PancakeV3Pool": (
        f"{_PANCAKE_CORE}/PancakeV3Pool.sol/PancakeV3Pool.json",
        "@pancakeswap/v3-core/contracts/PancakeV3Pool.sol",
    ),
    "PancakeSwapRouter": (
        f"{_PANCAKE_PERIPHERY}/SwapRouter.sol/SwapRouter.json",
        "@pancakeswap/v3-periphery/contracts/SwapRouter.sol",
    ),
    "PancakeQuoterV2": (
        f"{_PANCAKE_PERIPHERY}/lens/QuoterV2.sol/QuoterV2.json",
        "@pancakeswap/v3-periphery/contracts/lens/QuoterV2.sol",
    ),
    "PancakeNonfungiblePositionManager": (
        f"{_PANCAKE_PERIPHERY}/NonfungiblePositionManager.sol/NonfungiblePositionManager.json",
        "@pancakeswap/v3-periphery/contracts/NonfungiblePositionManager.sol",
    ),
    "UniswapV3Factory": (
        f"{_V3_CORE}/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
        f"{_V3_CORE}/contracts/UniswapV3Factory.sol",
    ),
    "UniswapV3Pool": (
        f"{_V3_CORE}/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
        f"{_V3_CORE}/contracts/UniswapV3Pool.sol",
    ),
    "SwapRouter": (
        f"{_V3_PERIPHERY}/artifacts/contracts/SwapRouter.sol/SwapRouter.json",
        f"{_V3_PERIPHERY}/contracts/SwapRouter.sol",
    ),
    "QuoterV2": (
        f"{_V3_PERIPHERY}/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json",
        f"{_V3_PERIPHERY}/contracts/lens/QuoterV2.sol",
    ),
    "NonfungiblePositionManager": (
        f"{_V3_PERIPHERY}/artifacts/contracts/NonfungiblePositionManager.sol/"
        "NonfungiblePositionManager.json",
        f"{_V3_PERIPHERY}/contracts/NonfungiblePositionManager.sol",
    ),
    "PoolManager": (
        f"{_V4_CORE}/out/PoolManager.sol/PoolManager.json",
        f"{_V4_CORE}/src/PoolManager.sol",
    ),
    "StateView": (
        f"{_V4_PERIPHERY}/foundry-out/StateView.sol/StateView.json",
        f"{_V4_PERIPHERY}/src/lens/StateView.sol",
    ),
    "V4Quoter": (
        f"{_V4_PERIPHERY}/foundry-out/V4Quoter.sol/V4Quoter.json",
        f"{_V4_PERIPHERY}/src/lens/V4Quoter.sol",
    ),
    "UniversalRouter": (
        f"{_UR}/artifacts/contracts/UniversalRouter.sol/UniversalRouter.json",
        f"{_UR}/contracts/UniversalRouter.sol",
    ),
}
"""contract name -> (artifact JSON, Solidity source), both relative to node_modules.

V4 core and periphery ship Foundry artifacts (``bytecode.object``, ``rawMetadata``);
the others Hardhat or Waffle ones (``bytecode`` as a string)."""

FORK_ROUTERS: dict[str, tuple[str, str, str]] = {
    "ForkV2Router02": ("UniswapV2Router02", "UniswapV2Pair", "PancakePair"),
}
"""A V2 fork's router: (published router, the pair its init code hash is of, the fork's
pair).  A V2 fork builds its Router02 from Uniswap's source with one change, the pair
init code hash in ``UniswapV2Library.pairFor``; npm ships no fork router whose baked-in
hash matches its own pair's code, so the devnet's is Uniswap's published Router02 with
that one 32-byte constant replaced by the keccak of the fork's published pair creation
code (checked to occur exactly once)."""

_CBOR_SOLC = bytes.fromhex("64736f6c6343")  # CBOR text "solc" then a 3-byte string


@dataclass(frozen=True)
class NpmArtifact:
    """Creation code and what the verification registry needs about one contract.

    ``source`` is None when the npm package does not ship the ``.sol`` file (the V3
    contracts ship only interfaces and libraries); ``optimizer`` and ``metadata`` are
    None when the artifact does not record them.
    """

    name: str
    bytecode: str
    abi: list[Any]
    source_path: str
    source: str | None
    compiler: str | None
    optimizer: dict[str, Any] | None
    metadata: str | None


def load_npm_artifact(root: Path, name: str) -> NpmArtifact:
    """Read one artifact from ``root/node_modules`` (or derive a fork's router, see
    :data:`FORK_ROUTERS`); raises FileNotFoundError if absent, DevnetBuildError when a
    fork router cannot be derived."""
    if name in FORK_ROUTERS:
        return _fork_router(root, name, *FORK_ROUTERS[name])
    artifact_rel, source_rel = ARTIFACT_FILES[name]
    modules = layout.node_modules(root)
    raw = json.loads((modules / artifact_rel).read_text())
    code = raw["bytecode"]
    bytecode = "0x" + to_bytes(str(code["object"] if isinstance(code, dict) else code)).hex()
    metadata = raw.get("rawMetadata", raw.get("metadata"))
    metadata = metadata if isinstance(metadata, str) else None
    source_file = modules / source_rel
    return NpmArtifact(
        name=name,
        bytecode=bytecode,
        abi=list(raw["abi"]),
        source_path=source_rel,
        source=source_file.read_text() if source_file.exists() else None,
        compiler=_compiler_of(metadata, bytecode),
        optimizer=_optimizer_of(metadata),
        metadata=metadata,
    )


def init_code_hash(root: Path, pair: str) -> bytes:
    """keccak256 of a published pair's creation code (what CREATE2 addresses use)."""
    return bytes(keccak(to_bytes(load_npm_artifact(root, pair).bytecode)))


def _fork_router(root: Path, name: str, router: str, pair: str, fork_pair: str) -> NpmArtifact:
    base = load_npm_artifact(root, router)
    old, new = init_code_hash(root, pair), init_code_hash(root, fork_pair)
    code = to_bytes(base.bytecode)
    if code.count(old) != 1:
        raise DevnetBuildError(f"{router} does not hold {pair}'s init code hash exactly once")
    return replace(base, name=name, bytecode="0x" + code.replace(old, new).hex())


def _compiler_of(metadata: str | None, bytecode: str) -> str | None:
    if metadata:
        version = json.loads(metadata).get("compiler", {}).get("version")
        if isinstance(version, str):
            return f"solc-{version}"
    return solc_version_in_bytecode(to_bytes(bytecode))


def _optimizer_of(metadata: str | None) -> dict[str, Any] | None:
    if not metadata:
        return None
    optimizer = json.loads(metadata).get("settings", {}).get("optimizer")
    return dict(optimizer) if isinstance(optimizer, dict) else None


def solc_version_in_bytecode(code: bytes) -> str | None:
    """``solc-X.Y.Z`` from the CBOR metadata trailer solc appends to code, if present."""
    if len(code) < 2:
        return None
    length = int.from_bytes(code[-2:], "big")
    trailer = code[-2 - length : -2]
    at = trailer.find(_CBOR_SOLC)
    if at < 0 or len(trailer) < at + len(_CBOR_SOLC) + 3:
        return None
    major, minor, patch = trailer[at + len(_CBOR_SOLC) : at + len(_CBOR_SOLC) + 3]
    return f"solc-{major}.{minor}.{patch}"

"""WETH9 and Uniswap V2/V3 at their canonical Ethereum mainnet addresses.

Real token code hard-codes the mainnet router, so the devnet must have it where
mainnet has it.  A contract cannot be deployed to a chosen address, so each one is
deployed normally (its constructor arguments already naming the canonical addresses of
its dependencies, so immutables come out right), then its runtime code and the storage
its constructor wrote (read with the ``prestateTracer`` in diff mode) are copied to the
canonical address and the temporary copy is wiped.

One immutable captures the temporary address itself: UniswapV3Factory's
``NoDelegateCall.original = address(this)``.  The build replaces those bytes in the
runtime code, after checking they occur exactly as often as expected (once in that
factory, never elsewhere), so a changed artifact fails loudly instead of silently
producing a factory that rejects every ``createPool``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, encode_args, to_bytes
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.npm_artifacts import NpmArtifact, load_npm_artifact
from tokenrisk.errors import DevnetBuildError

WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
V2_FACTORY = "0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f"
V2_ROUTER = "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"
V3_FACTORY = "0x1F98431c8aD98523631AE4a59f267346ea31F984"
SWAP_ROUTER = "0xE592427A0AEce92De3Edee1F18E0157C05861564"
QUOTER_V2 = "0x61fFE014bA17989E743c5F6cB21bF9697530B21e"
NPM = "0xC36442b4a4522E871399CD717aBDD847Ab11FE88"

V2_PAIR_INIT_CODE_HASH = "0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f"
V3_POOL_INIT_CODE_HASH = "0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54"


@dataclass(frozen=True)
class Placement:
    """One contract to place: its artifact name, canonical address, constructor."""

    key: str
    artifact: str
    address: str
    ctor_types: tuple[str, ...] = ()
    ctor_args: tuple[Any, ...] = ()
    self_references: int = 0
    """How often the runtime code embeds its own (deploy-time) address as an immutable."""


def placements(fee_to_setter: str) -> list[Placement]:
    """Everything to place, dependencies first (constructor args are canonical)."""
    return [
        Placement("WETH", "WETH9", WETH),
        Placement("V2_FACTORY", "UniswapV2Factory", V2_FACTORY, ("address",), (fee_to_setter,)),
        Placement(
            "V2_ROUTER", "UniswapV2Router02", V2_ROUTER, ("address", "address"), (V2_FACTORY, WETH)
        ),
        Placement("V3_FACTORY", "UniswapV3Factory", V3_FACTORY, self_references=1),
        Placement(
            "SWAP_ROUTER", "SwapRouter", SWAP_ROUTER, ("address", "address"), (V3_FACTORY, WETH)
        ),
        Placement("QUOTER_V2", "QuoterV2", QUOTER_V2, ("address", "address"), (V3_FACTORY, WETH)),
        Placement(
            "NPM",
            "NonfungiblePositionManager",
            NPM,
            ("address", "address", "address"),
            (V3_FACTORY, WETH, ZERO_ADDRESS),
        ),
    ]


async def deploy_uniswap(chain: Chain, root: Path, deployer: str, fee_to_setter: str) -> None:
    """Place WETH9 and Uniswap V2/V3 at their mainnet addresses and check the result.

    Raises DevnetBuildError if an artifact is not what the canonical addresses need
    (wrong init-code hash, unexpected self-reference).
    """
    check_init_code_hashes(root)
    for placement in placements(fee_to_setter):
        artifact = load_npm_artifact(root, placement.artifact)
        await place(chain, artifact, placement, deployer)


def check_init_code_hashes(root: Path) -> None:
    """The pair/pool creation code must hash to what the routers have baked in."""
    for name, expected in (
        ("UniswapV2Pair", V2_PAIR_INIT_CODE_HASH),
        ("UniswapV3Pool", V3_POOL_INIT_CODE_HASH),
    ):
        code = to_bytes(load_npm_artifact(root, name).bytecode)
        actual = "0x" + bytes(keccak(code)).hex()
        if actual != expected:
            raise DevnetBuildError(f"{name} init-code hash {actual} is not canonical {expected}")


async def place(chain: Chain, artifact: NpmArtifact, placement: Placement, deployer: str) -> None:
    """Deploy at a temporary address, then move code and storage to the canonical one."""
    args = encode_args(placement.ctor_types, placement.ctor_args) if placement.ctor_types else b""
    label = f"deploy {artifact.name}"
    outcome = await chain.deploy_tx(deployer, artifact.bytecode, args, label)
    temporary = outcome.contract_address
    storage = await constructor_storage(chain, outcome.receipt["transactionHash"], temporary)
    runtime = to_bytes(await chain.code(temporary))
    runtime = relocate(runtime, temporary, placement.address, placement.self_references)
    target = placement.address
    await chain.cheat("hardhat_setCode", target, "0x" + runtime.hex())
    await chain.cheat("hardhat_setNonce", target, "0x1")
    for slot, value in storage.items():
        await chain.cheat("hardhat_setStorageAt", target, slot, value)
    await wipe(chain, temporary, storage)


async def constructor_storage(chain: Chain, tx_hash: str, address: str) -> dict[str, str]:
    """Storage slots the constructor wrote, from ``prestateTracer`` in diff mode."""
    tracer = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}}
    diff = await chain.cheat("debug_traceTransaction", tx_hash, tracer)
    post = {checksum(a): v for a, v in diff.get("post", {}).items()}
    storage = post.get(checksum(address), {}).get("storage", {})
    return {str(slot): _word(str(value)) for slot, value in storage.items()}


def relocate(runtime: bytes, old: str, new: str, expected: int) -> bytes:
    """Replace the embedded ``old`` address by ``new``, checking the occurrence count."""
    old_bytes, new_bytes = to_bytes(old), to_bytes(new)
    found = runtime.count(old_bytes)
    if found != expected:
        raise DevnetBuildError(
            f"{new}: runtime code embeds its deploy address {found} times, expected {expected}"
        )
    return runtime.replace(old_bytes, new_bytes) if expected else runtime


async def wipe(chain: Chain, address: str, storage: dict[str, str]) -> None:
    """Remove the temporary copy so only the canonical contract remains."""
    await chain.cheat("hardhat_setCode", address, "0x")
    for slot in storage:
        await chain.cheat("hardhat_setStorageAt", address, slot, "0x" + "00" * 32)


def _word(value: str) -> str:
    return "0x" + to_bytes(value).rjust(32, b"\0").hex()


def v2_pair_address(token_a: str, token_b: str) -> str:
    """Where the V2 factory puts the pair of two tokens (CREATE2, canonical init code)."""
    token0, token1 = sorted((token_a, token_b), key=lambda a: int(a, 16))
    salt = keccak(to_bytes(token0) + to_bytes(token1))
    return _create2(V2_FACTORY, salt, V2_PAIR_INIT_CODE_HASH)


def v3_pool_address(token_a: str, token_b: str, fee: int) -> str:
    """Where the V3 factory puts the pool of two tokens and a fee tier (CREATE2)."""
    token0, token1 = sorted((token_a, token_b), key=lambda a: int(a, 16))
    salt = keccak(encode_args(["address", "address", "uint24"], [token0, token1, fee]))
    return _create2(V3_FACTORY, salt, V3_POOL_INIT_CODE_HASH)


def _create2(deployer: str, salt: bytes, init_code_hash: str) -> str:
    digest = keccak(b"\xff" + to_bytes(deployer) + bytes(salt) + to_bytes(init_code_hash))
    return checksum("0x" + bytes(digest)[12:].hex())

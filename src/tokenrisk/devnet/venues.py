"""Where the devnet's pools trade: Uniswap V2/V3, PancakeSwap V3 and a second V2 factory.

A catalogue pool names its family (``dex``: ``v2`` or ``v3``) and, optionally, its
``venue``; without one it is Uniswap's.  Each venue is the real published code:

- ``pancakeswap`` (V3): PancakeV3Factory and PancakeV3Pool from ``@pancakeswap/v3-core``,
  SwapRouter, QuoterV2 and the NonfungiblePositionManager from
  ``@pancakeswap/v3-periphery``, placed where PancakeSwap has them on Ethereum and BNB
  Chain.  Its pools are created by CREATE2 from the PancakeV3PoolDeployer, not the
  factory.  npm ships no artifact of that deployer, so ``contracts/dex/PoolDeployer.sol``
  (written here) plays its part with the published pool creation code: the pools, their
  addresses and the init code hash the periphery has baked in are PancakeSwap's.
- ``fork`` (V2): a V2 fork with its own pair code, named "DevSwap" in the devnet's
  registry: PancakeFactory and PancakePair from ``@pancakeswap-libs/pancake-swap-core``
  (0.2% pair fee), at addresses of its own, so its pairs have their own init code hash
  (keccak of PancakePair's creation code, which the factory also reports as
  ``INIT_CODE_PAIR_HASH``) and are found only by it.  Its router is Uniswap's published
  Router02 with that hash as its ``pairFor`` constant
  (:data:`~tokenrisk.devnet.npm_artifacts.FORK_ROUTERS`: npm ships no fork router whose
  baked-in hash matches its own pair's code; @sushiswap/core ships ABIs only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, encode_call, to_bytes
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.npm_artifacts import NpmArtifact, init_code_hash, load_npm_artifact
from tokenrisk.devnet.uniswap import (
    NPM,
    QUOTER_V2,
    SWAP_ROUTER,
    V2_FACTORY,
    V2_PAIR_INIT_CODE_HASH,
    V2_ROUTER,
    V3_FACTORY,
    V3_POOL_INIT_CODE_HASH,
    WETH,
    Placement,
    place,
)
from tokenrisk.devnet.uniswap import placements as uniswap_placements
from tokenrisk.errors import DevnetBuildError

PANCAKE_V3_FACTORY = "0x0BFbCF9fa4f9C56B0F40a671Ad40E0805A091865"
PANCAKE_V3_DEPLOYER = "0x41ff9AA7e16B8B1a8a8dc4f0eFacd93D02d071c9"
PANCAKE_SWAP_ROUTER = "0x1b81D678ffb9C0263b24A97847620C99d213eB14"
PANCAKE_QUOTER_V2 = "0xB048Bbc1Ee6b733FFfCFb9e9CeF7375518e25997"
PANCAKE_NPM = "0x46A15B0b27311cedF172AB29E4f4766fbE7F4364"
PANCAKE_V3_POOL_INIT_CODE_HASH = (
    "0x6ce8eb472fa82df5469c6ab6d485f17c3ad13c8cd7af59b3d4a8026c5ce0f7e2"
)
PANCAKE_FEE_TIERS = (100, 500, 2500, 10000)


def _devnet_address(what: str) -> str:
    """A fixed address no mainnet contract has: from keccak of a label."""
    return checksum("0x" + keccak(text=f"tokenrisk devnet {what}")[12:].hex())


FORK_V2_FACTORY = _devnet_address("fork V2 factory")
FORK_V2_ROUTER = _devnet_address("fork V2 router")
FORK_V2_PAIR_INIT_CODE_HASH = "0xc5950761a20eb44628c29e94156a05fa21ff1b0975c251e5cf19723e8bd17ca8"
"""keccak256 of PancakePair's creation code in @pancakeswap-libs/pancake-swap-core 0.1.0
(checked at build time against the artifact and the factory's ``INIT_CODE_PAIR_HASH``)."""


@dataclass(frozen=True)
class Venue:
    """One DEX deployment of the devnet: the contracts a pool of it is made and traded with."""

    dex: str  # family: "v2" or "v3"
    factory: str
    router: str  # Router02 (V2) or SwapRouter (V3)
    quoter: str | None = None  # QuoterV2 (V3)
    position_manager: str | None = None  # V3
    pool_artifact: str = "UniswapV2Pair"
    registry: dict[str, Any] = field(default_factory=dict, compare=False)
    """The venue as a registry ``[[chains.dexes]]`` entry (wiring builds the devnet's
    registry from the manifest's copy of these)."""


VENUES: dict[tuple[str, str | None], Venue] = {
    ("v2", None): Venue(
        "v2",
        V2_FACTORY,
        V2_ROUTER,
        registry={"name": "Uniswap", "version": "V2", "init_code_hash": V2_PAIR_INIT_CODE_HASH},
    ),
    ("v3", None): Venue(
        "v3",
        V3_FACTORY,
        SWAP_ROUTER,
        QUOTER_V2,
        NPM,
        "UniswapV3Pool",
        registry={
            "name": "Uniswap",
            "version": "V3",
            "init_code_hash": V3_POOL_INIT_CODE_HASH,
            "fee_tiers": [100, 500, 3000, 10000],
        },
    ),
    ("v2", "fork"): Venue(
        "v2",
        FORK_V2_FACTORY,
        FORK_V2_ROUTER,
        pool_artifact="PancakePair",
        registry={
            "name": "DevSwap",
            "version": "V2",
            "init_code_hash": FORK_V2_PAIR_INIT_CODE_HASH,
            "display_name": "DevSwap V2",
        },
    ),
    ("v3", "pancakeswap"): Venue(
        "v3",
        PANCAKE_V3_FACTORY,
        PANCAKE_SWAP_ROUTER,
        PANCAKE_QUOTER_V2,
        PANCAKE_NPM,
        "PancakeV3Pool",
        registry={
            "name": "PancakeSwap",
            "version": "V3",
            "deployer": PANCAKE_V3_DEPLOYER,
            "init_code_hash": PANCAKE_V3_POOL_INIT_CODE_HASH,
            "fee_tiers": list(PANCAKE_FEE_TIERS),
        },
    ),
}


def venue(dex: str, name: str | None = None) -> Venue:
    """The venue of a catalogue pool; raises DevnetBuildError for an unknown one."""
    try:
        return VENUES[(dex, name)]
    except KeyError:
        raise DevnetBuildError(f"unknown venue {name!r} for dex {dex!r}") from None


def registry_dexes() -> list[dict[str, Any]]:
    """Every venue as a registry DEX entry (addresses included), for the manifest."""
    return [
        v.registry
        | {"factory": v.factory, "router": v.router}
        | ({"quoter": v.quoter} if v.quoter else {})
        for v in VENUES.values()
    ]


def routers() -> frozenset[str]:
    """Every router a devnet trade is sent to."""
    return frozenset(v.router for v in VENUES.values())


def placements(fee_to_setter: str) -> list[Placement]:
    """The fork's V2 contracts and PancakeSwap V3's (its pool deployer apart: it is this
    repository's contract, placed by :func:`deploy_venues`), dependencies first."""
    pancake = (PANCAKE_V3_DEPLOYER, PANCAKE_V3_FACTORY, WETH)
    return [
        Placement(
            "FORK_V2_FACTORY", "PancakeFactory", FORK_V2_FACTORY, ("address",), (fee_to_setter,)
        ),
        Placement(
            "FORK_V2_ROUTER",
            "ForkV2Router02",
            FORK_V2_ROUTER,
            ("address", "address"),
            (FORK_V2_FACTORY, WETH),
        ),
        Placement(
            "PANCAKE_V3_FACTORY",
            "PancakeV3Factory",
            PANCAKE_V3_FACTORY,
            ("address",),
            (PANCAKE_V3_DEPLOYER,),
        ),
        Placement(
            "PANCAKE_SWAP_ROUTER",
            "PancakeSwapRouter",
            PANCAKE_SWAP_ROUTER,
            ("address",) * 3,
            pancake,
        ),
        Placement(
            "PANCAKE_QUOTER_V2", "PancakeQuoterV2", PANCAKE_QUOTER_V2, ("address",) * 3, pancake
        ),
        Placement(
            "PANCAKE_NPM",
            "PancakeNonfungiblePositionManager",
            PANCAKE_NPM,
            ("address",) * 4,
            (*pancake, ZERO_ADDRESS),
        ),
    ]


def infrastructure(fee_to_setter: str) -> list[Placement]:
    """Every placed contract of the devnet: WETH9 and Uniswap's, then the venues'."""
    return [*uniswap_placements(fee_to_setter), *placements(fee_to_setter)]


async def deploy_venues(
    chain: Chain, root: Path, pool_deployer: NpmArtifact, deployer: str, fee_to_setter: str
) -> None:
    """Place the fork's V2 and PancakeSwap V3 (``pool_deployer``: this repository's
    compiled PoolDeployer) and check PancakeSwap's pool creation code is the canonical one.

    Raises DevnetBuildError when an artifact is not what the canonical addresses need.
    """
    pool = load_npm_artifact(root, "PancakeV3Pool")
    actual = "0x" + keccak(to_bytes(pool.bytecode)).hex()
    if actual != PANCAKE_V3_POOL_INIT_CODE_HASH:
        raise DevnetBuildError(f"PancakeV3Pool init-code hash {actual} is not canonical")
    if "0x" + init_code_hash(root, "PancakePair").hex() != FORK_V2_PAIR_INIT_CODE_HASH:
        raise DevnetBuildError("PancakePair's init code hash is not the fork's")
    holder = await _code_holder(chain, deployer, to_bytes(pool.bytecode))
    own = Placement(
        "PANCAKE_V3_DEPLOYER",
        pool_deployer.name,
        PANCAKE_V3_DEPLOYER,
        ("address", "address"),
        (PANCAKE_V3_FACTORY, holder),
    )
    await place(chain, pool_deployer, own, deployer)
    for placement in placements(fee_to_setter):
        await place(chain, load_npm_artifact(root, placement.artifact), placement, deployer)
    reported = await chain.call(FORK_V2_FACTORY, encode_call("INIT_CODE_PAIR_HASH()", []))
    if "0x" + reported.hex() != FORK_V2_PAIR_INIT_CODE_HASH:
        raise DevnetBuildError("the fork's factory reports another pair init code hash")


async def _code_holder(chain: Chain, deployer: str, code: bytes) -> str:
    """A contract whose code is a STOP then ``code`` (so it cannot be called), for the
    pool deployer to copy the pool creation code from: an init code that returns the
    bytes after its 14-byte prefix (PUSH2 n, PUSH1 14, PUSH1 0, CODECOPY, PUSH2 n,
    PUSH1 0, RETURN)."""
    body = b"\x00" + code
    size = len(body).to_bytes(2, "big")
    init = b"\x61" + size + b"\x60\x0e\x60\x00\x39\x61" + size + b"\x60\x00\xf3" + body
    outcome = await chain.deploy_tx(deployer, "0x" + init.hex(), b"", "deploy pool code holder")
    return outcome.contract_address

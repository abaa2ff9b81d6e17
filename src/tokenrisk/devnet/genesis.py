"""The chain every devnet build starts from: funded accounts, WETH9 and Uniswap V2/V3 at
their mainnet addresses, PancakeSwap V3 at its own and a second V2 factory, the
stablecoins with deep WETH pools, and the catalogue's helper contracts and tokens with
their pools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokenrisk.devnet.catalogue import Catalogue
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.deployment import (
    Compiled,
    Devnet,
    deploy_helpers,
    deploy_stablecoins,
    deploy_token,
)
from tokenrisk.devnet.npm_artifacts import NpmArtifact
from tokenrisk.devnet.uniswap import deploy_uniswap
from tokenrisk.devnet.venues import PANCAKE_V3_DEPLOYER, deploy_venues, infrastructure

OWNER_ETH = 100_000

Say = Callable[[str], None]
"""Where a build step reports progress (one line per step)."""


async def set_up(
    chain: Chain, root: Path, artifacts: dict[str, Any], catalogue: Catalogue, say: Say
) -> Devnet:
    owner, infra, keeper = (await chain.accounts())[:3]
    await chain.set_balances({a: OWNER_ETH * 10**18 for a in (owner, infra, keeper)})
    say("placing WETH9 and Uniswap V2/V3 at their mainnet addresses")
    await deploy_uniswap(chain, root, infra, fee_to_setter=owner)
    say("placing PancakeSwap V3 at its mainnet addresses and a second V2 factory")
    compiled = _compiled(artifacts)
    await deploy_venues(chain, root, _as_npm(compiled["PoolDeployer"]), infra, owner)
    addresses = {p.key: p.address for p in infrastructure(owner)} | {
        "PANCAKE_V3_DEPLOYER": PANCAKE_V3_DEPLOYER,
        "OWNER": owner,
        "INFRA": infra,
        "KEEPER": keeper,  # a second controller, e.g. a fee keeper hidden in storage
    }
    devnet = Devnet(chain, compiled, owner, infra, addresses)
    say("deploying stablecoins and their WETH pools")
    await deploy_stablecoins(devnet)
    say(f"deploying {len(catalogue.tokens)} catalogue tokens and their pools")
    await deploy_helpers(devnet, catalogue.contracts)
    for spec in catalogue.tokens:
        await deploy_token(devnet, spec)
    return devnet


def _as_npm(compiled: Compiled) -> NpmArtifact:
    """A contract of this repository in the shape :func:`deploy_venues` places."""
    return NpmArtifact(
        compiled.name,
        compiled.bytecode,
        compiled.abi,
        compiled.source_path,
        None,
        None,
        None,
        compiled.metadata or None,
    )


def _compiled(artifacts: dict[str, Any]) -> dict[str, Compiled]:
    return {
        name: Compiled(
            name=name,
            source_path=str(item["source"]),
            abi=list(item["abi"]),
            bytecode=str(item["bytecode"]),
            metadata=str(item.get("metadata", "")),
        )
        for name, item in artifacts["contracts"].items()
    }

"""What a devnet build writes: the manifest (addresses, tokens, pools, history), the
verification registry (every open-source contract's sources, proxies marked) and the
node's state dump."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import checksum, to_bytes
from tokenrisk.chain.signatures import IMPLEMENTATION_SLOT
from tokenrisk.devnet import manifest as mf
from tokenrisk.devnet.catalogue import Catalogue
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.deployment import ETH_USD, Devnet
from tokenrisk.devnet.npm_artifacts import load_npm_artifact
from tokenrisk.devnet.trading import TokenLog
from tokenrisk.devnet.venues import PANCAKE_V3_DEPLOYER, infrastructure, registry_dexes

CHAIN_ID = 31337


async def dump_state(chain: Chain) -> bytes:
    """The node's state as ``anvil --load-state`` JSON (``anvil_dumpState`` is gzipped hex)."""
    dumped = await chain.cheat("anvil_dumpState")
    return gzip.decompress(to_bytes(str(dumped)))


def manifest_of(
    devnet: Devnet,
    catalogue: Catalogue,
    roles: dict[str, Any],
    logs: dict[str, TokenLog],
    head: dict[str, Any],
) -> dict[str, Any]:
    helpers = [
        {
            "id": h.id,
            "contract": h.contract,
            "address": devnet.helpers[h.id],
            "verified": h.verified,
        }
        for h in catalogue.contracts
    ]
    tokens = [
        mf.token_entry(devnet.tokens[t.id], roles[t.id], logs[t.id]) for t in catalogue.tokens
    ]
    return {
        "chainId": CHAIN_ID,
        "inputHash": "",
        "headBlock": int(head["number"], 16),
        "headTimestamp": int(head["timestamp"], 16),
        "ethUsd": ETH_USD,
        "addresses": dict(devnet.addresses),
        "dexes": registry_dexes(),
        "stablePools": [{"token": s} | mf.pool_entry(p) for s, p in devnet.stable_pools],
        "contracts": helpers,
        "tokens": tokens,
    }


def sources_of(
    root: Path, devnet: Devnet, catalogue: Catalogue, artifacts: dict[str, Any]
) -> dict[str, Any]:
    """The verification registry: every open-source contract, no closed-source one."""
    solc = str(artifacts["solc"])
    registry: dict[str, Any] = {}
    for placement in infrastructure(devnet.owner):
        registry[placement.address] = mf.npm_source(load_npm_artifact(root, placement.artifact))
    deployer = devnet.compiled["PoolDeployer"]
    registry[PANCAKE_V3_DEPLOYER] = mf.compiled_source(root, deployer, solc)
    for pool in mf.all_pools(devnet):
        registry[pool.address] = mf.npm_source(load_npm_artifact(root, mf.pool_artifact_name(pool)))
    stable = devnet.compiled["DevStablecoin"]
    for symbol in ("USDC", "USDT", "DAI"):
        registry[devnet.addresses[symbol]] = mf.compiled_source(root, stable, solc)
    entries: list[tuple[bool | None, str, str]] = [
        (h.verified, h.contract, devnet.helpers[h.id]) for h in catalogue.contracts
    ]
    entries += [(t.verified, t.contract, devnet.tokens[t.id].address) for t in catalogue.tokens]
    for verified, contract, address in entries:
        if verified:
            registry[address] = mf.compiled_source(root, devnet.compiled[contract], solc)
        elif verified is False:
            registry[address] = mf.NOT_VERIFIED  # what an explorer says; None: no entry at all
    return registry


async def mark_proxies(chain: Chain, registry: dict[str, Any]) -> None:
    """Say what an explorer would about EIP-1967 proxies: ``isProxy`` + ``implementation``."""
    calls = [("eth_getStorageAt", [a, IMPLEMENTATION_SLOT, "latest"]) for a in registry]
    for address, word in zip(list(registry), await chain.rpc.batch(calls), strict=True):
        if isinstance(word, str) and int(word, 16) != 0:
            registry[address]["isProxy"] = True
            registry[address]["implementation"] = checksum("0x" + word[-40:])

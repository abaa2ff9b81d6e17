"""The parts the composition root (:mod:`tokenrisk.service`) assembles from the settings:
registry entries, node clients, the verifier's settings.

Pure construction from configuration; nothing here talks to a node.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import checksum
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.registry import (
    BaseToken,
    Chain,
    Dex,
    UniswapV4,
    apply_overrides,
    load_registry,
)
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.config import ChainNode, Settings
from tokenrisk.errors import UnknownChain
from tokenrisk.verification import VerificationSettings, build_verifier
from tokenrisk.verification.verifier import Verifier

DEVNET_ID = 31337


def devnet_chain(manifest: dict[str, Any]) -> Chain:
    """Registry entry of the embedded devnet from its build manifest's infrastructure addresses."""
    a = manifest["addresses"]
    v3 = (100, 500, 3000, 10000)
    listed = tuple(Dex.from_dict(d) for d in manifest.get("dexes", ()))  # every venue
    return Chain(
        id=int(manifest.get("chainId", DEVNET_ID)),
        name="Devnet",
        short_name="DEV",
        currency="ETH",
        wrapped_native=BaseToken(a["WETH"], "WETH", 18),
        stablecoins=(
            BaseToken(a["USDC"], "USDC", 6, True),
            BaseToken(a["USDT"], "USDT", 6, True),
            BaseToken(a["DAI"], "DAI", 18, True),
        ),
        dexes=listed
        or (  # a build from before the manifest listed its DEXes: Uniswap's only
            Dex("Uniswap", "V2", a["V2_FACTORY"], a["V2_ROUTER"]),
            Dex(
                "Uniswap",
                "V3",
                a["V3_FACTORY"],
                a["SWAP_ROUTER"],
                quoter=a["QUOTER_V2"],
                fee_tiers=v3,
            ),
        ),
        uniswap_v4=_devnet_v4(a),
    )


def _devnet_v4(a: dict[str, str]) -> UniswapV4 | None:
    """The devnet's Uniswap V4 (None for a devnet built before it had one)."""
    if "POOL_MANAGER" not in a:
        return None
    return UniswapV4(
        a["POOL_MANAGER"], a["UNIVERSAL_ROUTER"], a["PERMIT2"], a["STATE_VIEW"], a["V4_QUOTER"]
    )


def chain_registry(settings: Settings) -> dict[int, Chain]:
    """The shipped registry with the operator's ``[[chains]]`` entries applied.

    Raises ValueError naming the chain of an invalid entry.
    """
    return apply_overrides(load_registry(), settings.chain_entries())


def whitelisted(chains: dict[int, Chain], settings: Settings) -> dict[int, Chain]:
    """Add the operator's ``[whitelist]`` table to the chains it names."""
    out = dict(chains)
    for chain_id, tokens in settings.whitelist.items():
        if chain_id in out:
            extra = frozenset(checksum(t) for t in tokens)
            out[chain_id] = replace(out[chain_id], whitelist=out[chain_id].whitelist | extra)
    return out


def rpc_settings(settings: Settings, max_batch: int | None = None) -> RpcSettings:
    return RpcSettings(
        timeout=settings.rpc_timeout,
        max_reply_bytes=settings.rpc_max_reply_bytes,
        max_depth=settings.rpc_max_depth,
        max_request_bytes=settings.rpc_max_request_bytes or None,
        max_batch=max_batch,
    )


def registry_entry(registry: dict[int, Chain], node: ChainNode) -> Chain:
    """The registry entry of a configured node's chain; raises UnknownChain without one."""
    chain = registry.get(node.chain_id)
    if chain is None:
        raise UnknownChain(f"chain {node.chain_id} has a node but no registry entry")
    return chain


def client(
    settings: Settings, url: str, chain_id: int, label: str, max_batch: int | None = None
) -> RpcClient:
    """The node client of one chain (concurrent identical reads coalesced); ``label``
    names the node in errors, never its URL.  The client checks that the node serves
    ``chain_id`` before its first request and after every outage (ChainMismatch)."""
    return CoalescingRpc(
        url,
        rpc_settings(settings, max_batch),
        label=label,
        chain_id=chain_id,
        expect_chain_id=chain_id,
    )


def verification_settings(
    settings: Settings, local_paths: dict[int, list[Path]]
) -> VerificationSettings:
    """The operator's [verification] table, plus the devnet's own registry file."""
    config = settings.verification.settings()
    merged = {k: list(v) for k, v in config.local_paths.items()}
    for chain_id, paths in local_paths.items():
        merged.setdefault(chain_id, []).extend(paths)
    return replace(config, local_paths=merged)


def verifier(settings: Settings, local_paths: dict[int, list[Path]]) -> Verifier:
    """The verifier of the operator's [verification] table plus ``local_paths``."""
    return build_verifier(verification_settings(settings, local_paths))

"""The running service: configured chains, one RPC client per node, the verifier.

Built once at start-up from :class:`tokenrisk.config.Settings`.  Starting it may start
local anvil processes (the embedded devnet, fork-mode nodes); ``close()`` stops them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenrisk.chain.abi import checksum
from tokenrisk.chain.capabilities import Capabilities, probe_capabilities
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.registry import BaseToken, Chain, Dex, apply_overrides, load_registry
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import start_devnet
from tokenrisk.devnet.layout import SOURCES_FILE, devnet_dir, read_manifest
from tokenrisk.devnet.node import AnvilNode, fork_from, start_anvil
from tokenrisk.errors import DevnetBuildError, UnknownChain
from tokenrisk.model import TokenInfo
from tokenrisk.simulate.powers import PowerCache
from tokenrisk.simulate.slots import BalanceSlot, SlotCache
from tokenrisk.store.engine import Store, create_store
from tokenrisk.verification import VerificationSettings, build_verifier
from tokenrisk.verification.verifier import Verifier

if TYPE_CHECKING:
    from tokenrisk.jobs import IndexQueue

log = logging.getLogger("tokenrisk")
DEVNET_ID = 31337


def devnet_chain(manifest: dict[str, Any]) -> Chain:
    """Registry entry of the embedded devnet from its build manifest's infrastructure addresses."""
    a = manifest["addresses"]
    v3 = (100, 500, 3000, 10000)
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
        dexes=(
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
    )


@dataclass
class Service:
    settings: Settings
    chains: dict[int, Chain]
    clients: dict[int, RpcClient]
    verifier: Verifier
    store: Store
    nodes: list[AnvilNode] = field(default_factory=list)
    simulations: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(8))
    # one indexer per (chain, token) at a time in this process
    index_locks: dict[tuple[int, str], asyncio.Lock] = field(default_factory=dict)
    base_slots: dict[tuple[int, str], BalanceSlot | None] = field(default_factory=dict)
    slot_cache: SlotCache = field(default_factory=SlotCache)  # token layouts by code hash
    base_infos: dict[tuple[int, str], TokenInfo] = field(default_factory=dict)
    index_queue: IndexQueue | None = None  # set by the API when Redis is configured
    probed: dict[int, Capabilities] = field(default_factory=dict)
    powers: PowerCache = field(default_factory=PowerCache)  # owner-power scans, deployers
    _probing: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    def __post_init__(self) -> None:
        self.powers.ttl = self.settings.owner_powers.cache_ttl

    def client(self, chain_id: int) -> RpcClient:
        try:
            return self.clients[chain_id]
        except KeyError:
            raise UnknownChain(f"chain {chain_id} is not configured") from None

    def chains_for(self, chain_id: int | None) -> list[Chain]:
        """The requested chain, or every configured chain when ``chain_id`` is None."""
        return [self.chain(chain_id)] if chain_id is not None else list(self.chains.values())

    def chain(self, chain_id: int) -> Chain:
        try:
            return self.chains[chain_id]
        except KeyError:
            raise UnknownChain(f"chain {chain_id} is not configured") from None

    async def capabilities(self, chain_id: int) -> Capabilities:
        """The node's capabilities, probed on first use and cached for the process.

        Raises UnknownChain, or the transport errors of the probe (then nothing is
        cached and the next request probes again).
        """
        cached = self.probed.get(chain_id)
        if cached is not None:
            return cached
        async with self._probing:
            if chain_id not in self.probed:
                caps = await probe_capabilities(self.client(chain_id))
                log.info("chain %s node lacks: %s", chain_id, ", ".join(caps.missing()) or "-")
                self.probed[chain_id] = caps
            return self.probed[chain_id]

    async def close(self) -> None:
        for client in self.clients.values():
            await client.aclose()
        await self.verifier.aclose()
        for node in self.nodes:
            node.stop()


def chain_registry(settings: Settings) -> dict[int, Chain]:
    """The shipped registry with the operator's ``[[chains]]`` entries applied.

    Raises ValueError naming the chain of an invalid entry.
    """
    return apply_overrides(load_registry(), settings.chain_entries())


def _whitelisted(chains: dict[int, Chain], settings: Settings) -> dict[int, Chain]:
    """Add the operator's ``[whitelist]`` table to the chains it names."""
    out = dict(chains)
    for chain_id, tokens in settings.whitelist.items():
        if chain_id in out:
            extra = frozenset(checksum(t) for t in tokens)
            out[chain_id] = replace(out[chain_id], whitelist=out[chain_id].whitelist | extra)
    return out


def _rpc_settings(settings: Settings) -> RpcSettings:
    return RpcSettings(
        timeout=settings.rpc_timeout,
        max_reply_bytes=settings.rpc_max_reply_bytes,
        max_depth=settings.rpc_max_depth,
    )


def _start_fork(node: ChainNode, data_dir: Path) -> AnvilNode:
    """A local anvil forking ``node.fork_url``; the URL never appears on its command line."""
    args = ["--chain-id", str(node.chain_id)]
    anvil = start_anvil(args, log_path=data_dir / f"fork-{node.chain_id}.log")
    url, block = node.fork_url or "", node.fork_block
    anvil.after_start = lambda restarted: fork_from(restarted, url, block)
    anvil.after_start(anvil)
    anvil.chain_id = node.chain_id
    return anvil


def connect_devnet(
    settings: Settings, url: str, manifest: dict[str, Any], build_dir: Path
) -> Service:
    """A service on an already running devnet node (tests, benchmarks)."""
    chain = devnet_chain(manifest)
    client = CoalescingRpc(url, _rpc_settings(settings), label="devnet node", chain_id=chain.id)
    verifier = build_verifier(_verification(settings, {chain.id: [build_dir / "sources.json"]}))
    store = create_store(settings.database_url)
    sem = asyncio.Semaphore(settings.max_concurrent_simulations)
    chains = _whitelisted({chain.id: chain}, settings)
    return Service(settings, chains, {chain.id: client}, verifier, store, [], sem)


def open_service(settings: Settings) -> Service:
    """Start nodes and clients for every configured chain (blocking: call before serving)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    registry = chain_registry(settings)
    chains: dict[int, Chain] = {}
    clients: dict[int, RpcClient] = {}
    nodes: list[AnvilNode] = []
    local_paths: dict[int, list[Path]] = {}
    for node_cfg in settings.nodes:
        chain = registry.get(node_cfg.chain_id)
        if chain is None:
            raise UnknownChain(f"chain {node_cfg.chain_id} has a node but no registry entry")
        url = node_cfg.rpc_url
        if node_cfg.fork_url:
            fork = _start_fork(node_cfg, settings.data_dir)
            nodes.append(fork)
            url = fork.url
        chains[chain.id] = chain
        clients[chain.id] = CoalescingRpc(
            url or "", _rpc_settings(settings), label=f"chain {chain.id} node", chain_id=chain.id
        )
    if settings.devnet:
        url, manifest, build_dir = _devnet(settings, nodes)
        chain = devnet_chain(manifest)
        if not settings.devnet_url:  # started here: its supervisor restarts it by chain id
            nodes[-1].chain_id = chain.id
        chains[chain.id] = chain
        clients[chain.id] = CoalescingRpc(
            url, _rpc_settings(settings), label="devnet node", chain_id=chain.id
        )
        local_paths[chain.id] = [build_dir / SOURCES_FILE]
    verifier = build_verifier(_verification(settings, local_paths))
    sem = asyncio.Semaphore(settings.max_concurrent_simulations)
    store = create_store(settings.database_url)
    return Service(settings, _whitelisted(chains, settings), clients, verifier, store, nodes, sem)


def _devnet(settings: Settings, nodes: list[AnvilNode]) -> tuple[str, dict[str, Any], Path]:
    """(URL, manifest, build dir) of the devnet: the running one at ``devnet_url`` (every
    worker of ``serve --workers N`` shares the one the parent started), else a new one."""
    if settings.devnet_url:
        build_dir = devnet_dir()
        manifest = read_manifest(build_dir)
        if manifest is None:
            raise DevnetBuildError(f"no built devnet in {build_dir}")
        return settings.devnet_url, manifest, build_dir
    devnet = start_devnet(log_path=settings.data_dir / "devnet.log")
    nodes.append(devnet.node)
    return devnet.url, devnet.manifest, devnet.build_dir


def _verification(settings: Settings, local_paths: dict[int, list[Path]]) -> VerificationSettings:
    """The operator's [verification] table, plus the devnet's own registry file."""
    config = settings.verification.settings()
    merged = {k: list(v) for k, v in config.local_paths.items()}
    for chain_id, paths in local_paths.items():
        merged.setdefault(chain_id, []).extend(paths)
    return replace(config, local_paths=merged)

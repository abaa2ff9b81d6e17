"""The composition root: configured chains (one Node each), the store, the verifier, the
caches, and the bundle each check is handed.

Built once at start-up from :class:`tokenrisk.config.Settings`.  Starting it may start
local anvil processes (the embedded devnet, fork-mode nodes); ``close()`` stops them.
Nothing below this module receives the service: the API and the CLI pick the bundle of
the check they run (``honeypot``, ``verification``, ``holders``; GetPairs needs only
``nodes``), and the background index jobs its ``index``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenrisk import processes, wiring
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.checks.deps import (
    HolderIndex,
    HoldersDeps,
    HoneypotDeps,
    PowerScan,
    Trading,
    VerificationDeps,
)
from tokenrisk.config import Settings
from tokenrisk.devnet.node import AnvilNode
from tokenrisk.store.engine import Store, create_store
from tokenrisk.verification.verifier import Verifier
from tokenrisk.wiring import DEVNET_ID, chain_registry, devnet_chain

__all__ = ["DEVNET_ID", "Service", "chain_registry", "connect_devnet", "devnet_chain"]


@dataclass
class Service:
    """Everything the running service holds; see the module docstring."""

    settings: Settings
    nodes: Nodes
    verifier: Verifier
    store: Store
    processes: list[AnvilNode] = field(default_factory=list)  # anvils started here
    simulations: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(8))
    index: HolderIndex = field(init=False)
    honeypot: HoneypotDeps = field(init=False)
    verification: VerificationDeps = field(init=False)
    holders: HoldersDeps = field(init=False)

    def __post_init__(self) -> None:
        config, settings = self.settings.owner_powers, self.settings
        self.index = HolderIndex(self.store)
        trading = Trading(self.simulations, ahead=settings.head_ahead)
        powers = PowerScan.configured(
            config.enabled,
            max_functions=config.max_functions,
            max_callers=config.max_callers,
            max_arg_sets=config.max_arg_sets,
            max_trials=config.max_trials,
            # never the reason a check misses its own deadline: the scan gives up first
            deadline=min(config.deadline, settings.deadline / 3),
            cache_ttl=config.cache_ttl,
        )
        self.honeypot = HoneypotDeps(
            self.nodes, trading, self.index, self.verifier, powers, settings.holder_limit
        )
        self.verification = VerificationDeps(self.nodes, trading, self.verifier)
        self.holders = HoldersDeps(self.nodes, self.index)

    async def close(self) -> None:
        await self.nodes.aclose()
        await self.verifier.aclose()
        for process in self.processes:
            process.stop()


def connect_devnet(
    settings: Settings, url: str, manifest: dict[str, Any], build_dir: Path
) -> Service:
    """A service on an already running devnet node (tests, benchmarks)."""
    chain = devnet_chain(manifest)
    client = wiring.client(settings, url, chain.id, "devnet node")
    verifier = wiring.verifier(settings, {chain.id: processes.devnet_sources(build_dir)})
    store = create_store(settings.database_url)
    sem = asyncio.Semaphore(settings.max_concurrent_simulations)
    (entry,) = wiring.whitelisted({chain.id: chain}, settings).values()
    return Service(settings, Nodes({chain.id: Node(entry, client)}), verifier, store, [], sem)


async def start_service(settings: Settings) -> Service:
    """:func:`open_service` (in a thread), then every node's chain id checked: a node
    serving another chain stops the start with ChainMismatch (after closing what was
    opened), naming both chains and never the URL."""
    service = await asyncio.to_thread(open_service, settings)
    try:
        await service.nodes.verify_chains()
    except BaseException:
        await service.close()
        raise
    return service


def open_service(settings: Settings) -> Service:
    """Start nodes and clients for every configured chain (blocking: call before serving)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    registry = chain_registry(settings)
    nodes: dict[int, Node] = {}
    started: list[AnvilNode] = []
    local_paths: dict[int, list[Path]] = {}
    for node_cfg in settings.nodes:
        chain = wiring.registry_entry(registry, node_cfg)
        url, fork = node_cfg.rpc_url, None
        if node_cfg.fork_url:
            anvil = processes.start_fork(node_cfg, settings.data_dir)
            started.append(anvil)
            url, fork = anvil.url, anvil.fork
        label = f"chain {chain.id} node"
        rpc = wiring.client(settings, url or "", chain.id, label, node_cfg.max_batch)
        nodes[chain.id] = Node(chain, rpc, fork=fork)
    if settings.devnet:
        url, manifest, build_dir = processes.devnet_node(settings, started)
        chain = devnet_chain(manifest)
        if not settings.devnet_url:  # started here: its supervisor restarts it by chain id
            started[-1].chain_id = chain.id
        nodes[chain.id] = Node(chain, wiring.client(settings, url, chain.id, "devnet node"))
        local_paths[chain.id] = processes.devnet_sources(build_dir)
    verifier = wiring.verifier(settings, local_paths)
    sem = asyncio.Semaphore(settings.max_concurrent_simulations)
    store = create_store(settings.database_url)
    return Service(settings, _whitelisted(nodes, settings), verifier, store, started, sem)


def _whitelisted(nodes: dict[int, Node], settings: Settings) -> Nodes:
    """The Nodes with the operator's ``[whitelist]`` added to their registry entries."""
    chains = wiring.whitelisted({i: n.chain for i, n in nodes.items()}, settings)
    return Nodes({i: Node(chains[i], n.rpc, fork=n.fork) for i, n in nodes.items()})

"""The local anvil processes a service may start: fork-mode nodes and the embedded devnet.

Only loads and runs a built devnet (``devnet.instance``); it never builds one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import start_devnet
from tokenrisk.devnet.layout import DEVNET_URL_FILE, SOURCES_FILE, devnet_dir, read_manifest
from tokenrisk.devnet.node import AnvilNode, ForkState, fork_from, start_anvil
from tokenrisk.errors import DevnetBuildError


def start_fork(node: ChainNode, data_dir: Path) -> AnvilNode:
    """A local anvil forking ``node.fork_url``; the URL never appears on its command line.

    Raises ChainMismatch when the upstream serves another chain than ``node.id``.  An
    unpinned fork follows the chain: the supervisor forks it again at the upstream head
    once it is ``fork_max_age`` seconds old (:func:`tokenrisk.devnet.node.refork`)."""
    args = ["--chain-id", str(node.chain_id)]
    anvil = start_anvil(args, log_path=data_dir / f"fork-{node.chain_id}.log")
    url, block = node.fork_url or "", node.fork_block
    anvil.fork = ForkState(url, block, node.fork_max_age, node.chain_id)
    anvil.after_start = lambda restarted: fork_from(restarted, url, block)
    anvil.after_start(anvil)
    anvil.chain_id = node.chain_id
    return anvil


def devnet_node(settings: Settings, nodes: list[AnvilNode]) -> tuple[str, dict[str, Any], Path]:
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
    # where `tokenrisk devnet launch` / `arm` find the chain this service runs
    (settings.data_dir / DEVNET_URL_FILE).write_text(json.dumps({"url": devnet.url}))
    return devnet.url, devnet.manifest, devnet.build_dir


def devnet_sources(build_dir: Path) -> list[Path]:
    """The devnet's own source registry (every contract its build deployed is verified)."""
    return [build_dir / SOURCES_FILE]

"""Fixtures of the Hardhat suite: the devnet built on Hardhat's node, and a service on it.

``hardhat_devnet`` (session scope, only for the tests in this directory) starts Hardhat's
node (:mod:`hardhatnode`) and builds the devnet on it with the same builder code path as
on anvil (:func:`tokenrisk.devnet.steps.build_on`, through the ``hardhat_*``/``evm_*``
methods anvil also accepts).  Hardhat's node has no state dump, so the build replays
every time (once per test session); it writes ``manifest.json`` and ``sources.json``
into a temporary build directory, which the service reads as it reads anvil's.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hardhatnode import HardhatNode, start_hardhat

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.devnet import layout
from tokenrisk.devnet import manifest as mf
from tokenrisk.devnet.build import GENESIS_TIMESTAMP
from tokenrisk.devnet.catalogue import load_catalogue
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.devnet.steps import build_on
from tokenrisk.service import Service, connect_devnet


@dataclass
class HardhatDevnet:
    """The devnet on Hardhat's node: ``url``, ``manifest``, the ``build_dir`` holding
    ``manifest.json``/``sources.json``, and ``build_seconds`` (the replayed build)."""

    node: HardhatNode
    manifest: dict[str, Any]
    build_dir: Path
    build_seconds: float

    @property
    def url(self) -> str:
        return self.node.url


def _say(started: float) -> Any:
    def say(message: str) -> None:
        print(f"[hardhat devnet {time.monotonic() - started:5.1f}s] {message}", file=sys.stderr)

    return say


def build_on_hardhat(node: HardhatNode, build_dir: Path) -> tuple[dict[str, Any], float]:
    """Replay the devnet build on ``node``; returns the manifest and the build's seconds."""
    root = layout.sources_root()
    artifacts = load_artifacts(compile_contracts(root, layout.devnet_dir(root) / "solc"))
    catalogue = load_catalogue()
    started = time.monotonic()
    manifest, sources, _ = asyncio.run(
        build_on(node.url, root, artifacts, catalogue, _say(started), dump=False)
    )
    seconds = time.monotonic() - started
    build_dir.mkdir(parents=True, exist_ok=True)
    mf.write_json(build_dir / layout.SOURCES_FILE, sources)
    mf.write_json(build_dir / layout.MANIFEST_FILE, manifest)
    return manifest, seconds


@pytest.fixture(scope="session")
def hardhat_devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HardhatDevnet]:
    """Hardhat's node with the devnet built on it; stopped after the session."""
    workdir = tmp_path_factory.mktemp("hardhat")
    node = start_hardhat(workdir / "project", layout.node_modules(), GENESIS_TIMESTAMP)
    try:
        manifest, seconds = build_on_hardhat(node, workdir / "devnet")
        yield HardhatDevnet(node, manifest, workdir / "devnet", seconds)
    finally:
        node.stop()


@pytest.fixture(scope="session")
async def hardhat_service(
    hardhat_devnet: HardhatDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("hhsvc"), deadline=60.0)
    svc = connect_devnet(
        settings, hardhat_devnet.url, hardhat_devnet.manifest, hardhat_devnet.build_dir
    )
    yield svc
    await svc.close()


@pytest.fixture(scope="session")
async def hardhat_client(hardhat_service: Service) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(hardhat_service.settings, hardhat_service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http

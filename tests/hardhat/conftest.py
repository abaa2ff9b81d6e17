"""Fixtures of the Hardhat suite: the devnet built on Hardhat's node, and a service on it.

``hardhat_devnet`` (session scope, only for the tests in this directory) starts Hardhat's
node (:mod:`hardhatnode`) and builds the devnet on it with the same builder code path as
on anvil (:func:`tokenrisk.devnet.steps.build_on`, through the ``hardhat_*``/``evm_*``
methods anvil also accepts).  Hardhat's node has no state dump, so the build replays
every time (once per test session); it writes ``manifest.json`` and ``sources.json``
into a temporary build directory, which the service reads as it reads anvil's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from hardhatnode import HardhatDevnet, build_on_hardhat, start_hardhat

from tokenrisk.api.app import create_app
from tokenrisk.config import OwnerPowersConfig, Settings
from tokenrisk.devnet import layout
from tokenrisk.devnet.build import GENESIS_TIMESTAMP
from tokenrisk.service import Service, connect_devnet

SCAN_DEADLINE = 20.0
"""The owner-power scan's budget on Hardhat's node (the default is 3 s; see hardhat_service)."""


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
    # Hardhat's node runs one request at a time, so a request's time there includes every
    # request of the check queued ahead of it.  A gas burner's check queues ~2G gas of
    # simulated sells (each burns its whole allotment), 18-21 s on a slow 2-core machine,
    # with single requests waiting up to 10 s: the default 10 s per request would cut
    # a check the node is still serving.  The owner-power scan's 3 s budget is cut the
    # same way on a loaded machine (three latent traps went unfound at load 4-7).  An
    # operator of a node this slow sets the same; these tests are about the verdicts.
    settings = Settings(
        devnet=False,
        data_dir=tmp_path_factory.mktemp("hhsvc"),
        deadline=60.0,
        rpc_timeout=60.0,
        owner_powers=OwnerPowersConfig(deadline=SCAN_DEADLINE),
    )
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

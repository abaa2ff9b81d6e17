"""Fixtures of the reliability suite (load, node faults, hostile input).

Everything runs on loopback against the session ``devnet`` (read-only) or, for the
tests that stop a node, a devnet node of their own.  ``live`` is the real app served by
uvicorn; ``make_service`` builds services on any node URL (a proxy, a node that will be
stopped) for in-process ASGI requests.

Crash safety of the holder index (kill -9 mid-indexing, resume, balances equal
``balanceOf``) is covered by ``tests/integration/test_holders.py::
test_sigkill_mid_index_never_double_counts``; ``test_load`` adds the concurrent case.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from liveserver import LiveServer

from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import Service, connect_devnet


@pytest.fixture(scope="session")
def live(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The app with default settings (results cache on) on uvicorn, for the whole session."""
    # admission control off: the load test's 32 clients must all be answered (the
    # overflow answers are tests/integration/test_admission.py's subject)
    settings = Settings(
        devnet=False, data_dir=tmp_path_factory.mktemp("live"), deadline=60.0, admission_limit=0
    )
    with LiveServer(settings, devnet) as server:
        yield server


@pytest.fixture
async def make_service(
    devnet: RunningDevnet, tmp_path: Path
) -> AsyncIterator[Callable[..., Service]]:
    """``make_service(url, **settings)``: a service on ``url``, closed after the test."""
    made: list[Service] = []

    def make(url: str, **overrides: Any) -> Service:
        data_dir = tmp_path / f"svc-{len(made)}"
        data_dir.mkdir()
        settings = Settings(devnet=False, data_dir=data_dir, **overrides)
        made.append(connect_devnet(settings, url, devnet.manifest, Path(devnet.build_dir)))
        return made[-1]

    yield make
    for service in made:
        await service.close()

"""Two configured chains, one node stopped: the endpoints that search every chain answer
for the chain that is up and name the skipped one (``X-Skipped-Chains``), instead of 503.

Chain 31337 is the session devnet; chain 31338 is a second anvil loaded from the same
devnet state, so both chains hold the same tokens and pools.  A request for the stopped
chain alone still fails with 503.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_modes import devnet_entry

from tokenrisk.api.app import create_app
from tokenrisk.api.check_routes import SKIPPED_HEADER
from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.service import open_service

pytestmark = pytest.mark.integration
UP, DOWN = 31337, 31338


@pytest.fixture
async def two_chains(
    devnet: RunningDevnet, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, RunningDevnet]]:
    second = start_devnet(extra_args=["--chain-id", str(DOWN)])
    settings = Settings(
        devnet=False,
        data_dir=tmp_path,
        deadline=60.0,
        rpc_timeout=5.0,
        head_reuse=0,  # the stop below is seen by the very next request, not 0.25 s later
        nodes=(ChainNode(id=UP, rpc_url=devnet.url), ChainNode(id=DOWN, rpc_url=second.url)),
        chains=(devnet_entry(devnet.manifest), {**devnet_entry(devnet.manifest), "id": DOWN}),
        verification={"local_paths": {UP: [devnet.sources_path], DOWN: [devnet.sources_path]}},
    )
    service = open_service(settings)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            yield http, second
    finally:
        await service.close()
        second.stop()


def plain(devnet: RunningDevnet) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain"))


async def get(http: httpx.AsyncClient, path: str, **params: Any) -> httpx.Response:
    return await http.get(path, params=params, timeout=120)


async def test_get_pairs_answers_for_the_chain_that_is_up(
    two_chains: tuple[httpx.AsyncClient, RunningDevnet], devnet: RunningDevnet
) -> None:
    http, second = two_chains
    both = await get(http, "/v1/GetPairs", address=plain(devnet))
    assert both.status_code == 200
    assert {item["ChainID"] for item in both.json()} == {UP, DOWN}
    assert SKIPPED_HEADER not in both.headers

    second.stop()
    one = await get(http, "/v1/GetPairs", address=plain(devnet))
    assert one.status_code == 200
    assert one.headers[SKIPPED_HEADER] == str(DOWN)
    assert one.json() == [item for item in both.json() if item["ChainID"] == UP]

    alone = await get(http, "/v1/GetPairs", address=plain(devnet), chainID=str(DOWN))
    assert alone.status_code == 503
    scraped = (await http.get("/metrics")).text
    assert re.search(
        rf'tokenrisk_node_errors_total{{chain="{DOWN}",error="NodeUnavailable"}} [1-9]', scraped
    )


async def test_is_honeypot_and_verification_skip_the_stopped_chain(
    two_chains: tuple[httpx.AsyncClient, RunningDevnet], devnet: RunningDevnet
) -> None:
    http, second = two_chains
    second.stop()
    honeypot = await get(http, "/v2/IsHoneypot", address=plain(devnet))
    assert honeypot.status_code == 200
    assert honeypot.json()["chain"]["id"] == str(UP)
    assert honeypot.headers[SKIPPED_HEADER] == str(DOWN)
    verification = await get(http, "/v2/GetContractVerification", address=plain(devnet))
    assert verification.status_code == 200
    assert verification.json()["isContract"] is True
    assert verification.headers[SKIPPED_HEADER] == str(DOWN)
    nothing = await get(http, "/v2/GetContractVerification", address="0x" + "00" * 19 + "07")
    assert nothing.status_code == 503  # "no contract" needs every chain to say so

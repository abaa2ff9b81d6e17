"""The node is who it says it is, and a fork follows the chain, against real anvils.

- A node serving another chain than configured stops the start (ChainMismatch, both
  chain ids named, never the URL).
- A node that goes away and comes back as another chain's node (same URL) makes that
  chain answer 503 naming it, and /health shows the chain id the node serves.
- A fork node (``fork_url`` = a local devnet anvil) is forked again at the upstream's
  head once older than ``fork_max_age``; a pinned fork never moves; an upstream of
  another chain fails the start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_modes import devnet_entry

from tokenrisk.api.app import create_app
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.errors import ChainMismatch
from tokenrisk.processes import start_fork
from tokenrisk.service import start_service

pytestmark = pytest.mark.integration
SERVED, OTHER = 31338, 31339


def _settings(devnet: RunningDevnet, url: str, chain_id: int, tmp: Path) -> Settings:
    return Settings(
        devnet=False,
        data_dir=tmp,
        deadline=60.0,
        rpc_timeout=5.0,
        nodes=(ChainNode(id=chain_id, rpc_url=url),),
        chains=({**devnet_entry(devnet.manifest), "id": chain_id},),
        verification={"local_paths": {chain_id: [devnet.sources_path]}},
    )


async def test_a_node_of_another_chain_stops_the_start(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = _settings(devnet, devnet.url, SERVED, tmp_path)  # the devnet serves 31337
    with pytest.raises(ChainMismatch) as raised:
        await start_service(settings)
    text = raised.value.public
    assert f"chain {SERVED}" in text and "chain 31337" in text
    assert devnet.url not in text and "127.0.0.1" not in text


@pytest.fixture
async def replaced(
    devnet: RunningDevnet, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, RunningDevnet]]:
    node = start_devnet(extra_args=["--chain-id", str(SERVED)])
    settings = _settings(devnet, node.url, SERVED, tmp_path)
    service = await start_service(settings)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            yield http, node
    finally:
        await service.close()
        node.stop()


async def test_a_node_that_comes_back_as_another_chain_answers_503(
    replaced: tuple[httpx.AsyncClient, RunningDevnet], devnet: RunningDevnet
) -> None:
    http, node = replaced
    token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain")
    params: dict[str, Any] = {"address": token, "chainID": SERVED}
    first = await http.get("/v2/IsHoneypot", params=params, timeout=120)
    assert first.status_code == 200, first.text
    port = node.node.port
    node.stop()  # the node goes away ... and another chain's node takes its URL
    other = start_devnet(port=port, extra_args=["--chain-id", str(OTHER)])
    try:
        down = await http.get("/v2/IsHoneypot", params=params, timeout=120)
        # the first request after the outage may meet the closed connection (503 node
        # unreachable); the one after it is refused for the chain, never answered
        again = await http.get("/v2/IsHoneypot", params=params, timeout=120)
        for reply in (down, again):
            assert reply.status_code == 503, reply.text
        body = again.json()
        assert body["code"] == 503
        assert f"chain {SERVED}" in body["error"] and f"chain {OTHER}" in body["error"]
        health = await http.get("/health")
        (line,) = health.json()["chains"]
        assert line["reachable"] is False and line["nodeChainId"] == OTHER
    finally:
        other.stop()


# FORK MODE


@pytest.fixture
def upstream(devnet: RunningDevnet) -> Any:
    """An upstream of its own (its head is advanced here, never the session devnet's)."""
    node = start_devnet()
    yield node
    node.stop()


async def _head(url: str) -> int:
    rpc = RpcClient(url)
    try:
        return int(await rpc.call("eth_blockNumber"), 16)
    finally:
        await rpc.aclose()


async def test_a_fork_follows_the_upstream_head(upstream: RunningDevnet, tmp_path: Path) -> None:
    chain_id = int(upstream.manifest.get("chainId", 31337))
    config = ChainNode(id=chain_id, fork_url=upstream.url, fork_max_age=0.05)
    fork = start_fork(config, tmp_path)
    supervisor = NodeSupervisor([fork], interval=0.02)
    try:
        assert fork.fork is not None
        first = fork.fork.block
        assert first == await _head(upstream.url) == await _head(fork.url)
        rpc = RpcClient(upstream.url)
        await rpc.call("anvil_mine", [hex(3)])
        await rpc.aclose()
        supervisor.start()
        for _ in range(500):  # bounded: the supervisor re-forks within a few intervals
            if fork.fork.block != first:
                break
            await asyncio.sleep(0.02)
        assert fork.fork.block == first + 3
        assert await _head(fork.url) == first + 3
        assert supervisor.watches[0].reforks >= 1
    finally:
        await supervisor.stop()
        fork.stop()


async def test_a_pinned_fork_never_moves(upstream: RunningDevnet, tmp_path: Path) -> None:
    chain_id = int(upstream.manifest.get("chainId", 31337))
    pinned = await _head(upstream.url)  # (the devnet keeps no state of older blocks)
    config = ChainNode(id=chain_id, fork_url=upstream.url, fork_block=pinned, fork_max_age=0.01)
    fork = start_fork(config, tmp_path)
    try:
        assert fork.fork is not None and fork.fork.block == pinned
        assert not fork.fork.due()
    finally:
        fork.stop()


def test_a_fork_of_another_chain_fails_at_start(upstream: RunningDevnet, tmp_path: Path) -> None:
    with pytest.raises(ChainMismatch) as raised:
        start_fork(ChainNode(id=1, fork_url=upstream.url), tmp_path)
    assert "chain 1 " in raised.value.public and upstream.url not in raised.value.public


async def test_a_matching_node_starts_and_is_asked_once(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = _settings(devnet, devnet.url, 31337, tmp_path)
    service = await start_service(settings)
    try:
        node = service.nodes.node(31337)
        assert node.rpc.identity.served == 31337
        assert (await node.head()).number > 0
    finally:
        await service.close()


async def test_a_fork_mode_node_knows_its_fork_block(
    upstream: RunningDevnet, tmp_path: Path
) -> None:
    chain_id = int(upstream.manifest.get("chainId", 31337))
    settings = Settings(
        devnet=False,
        data_dir=tmp_path,
        nodes=(ChainNode(id=chain_id, fork_url=upstream.url),),
        chains=(devnet_entry(upstream.manifest),),
    )
    service = await start_service(settings)
    try:
        node = service.nodes.node(chain_id)
        assert node.fork_block == await _head(upstream.url) == (await node.head()).number
    finally:
        await service.close()


async def test_a_fork_mode_answer_names_its_fork_block(
    upstream: RunningDevnet, tmp_path: Path
) -> None:
    chain_id = int(upstream.manifest.get("chainId", 31337))
    settings = Settings(
        devnet=False,
        data_dir=tmp_path,
        deadline=60.0,
        nodes=(ChainNode(id=chain_id, fork_url=upstream.url),),
        chains=(devnet_entry(upstream.manifest),),
        verification={"local_paths": {chain_id: [upstream.sources_path]}},
    )
    service = await start_service(settings)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    token = next(t["address"] for t in upstream.manifest["tokens"] if t["id"] == "plain")
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            params = {"address": token, "chainID": chain_id}
            reply = await http.get("/v2/IsHoneypot", params=params, timeout=120)
        assert reply.status_code == 200, reply.text
        assert reply.json()["chain"]["forkBlock"] == await _head(upstream.url)
    finally:
        await service.close()

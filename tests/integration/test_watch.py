"""The watcher on the devnet: a launched token makes one "new pool" event with its
verdict; arming a watched token's trap makes one alert naming the arming transaction; a
watcher killed and restarted resumes from the store without losing or repeating an
event; a real webhook receiver gets every event signed, once.

Chain changes are undone with ``evm_snapshot``/``evm_revert`` (the devnet is shared).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.config import Settings
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.launch import arm, launch
from tokenrisk.devnet.liquidity import add_v2_liquidity
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.service import Service, connect_devnet
from tokenrisk.store.engine import Store, create_store
from tokenrisk.store.watch import WatchStore
from tokenrisk.watch import blocks
from tokenrisk.watch.watcher import Bounds, Watcher
from tokenrisk.watch.webhooks import Endpoint, Webhooks

pytestmark = pytest.mark.integration
SECRET = "watch-test-secret-0123456789"
STEPS = 12  # steps each wait loop may take: bounded


@pytest.fixture
async def service(devnet: Any, tmp_path: Path) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path, cache_ttl=0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    snapshot = await svc.nodes.node(31337).rpc.call("evm_snapshot", [])
    yield svc
    await svc.nodes.node(31337).rpc.call("evm_revert", [snapshot])
    await svc.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = create_store(f"sqlite:///{tmp_path / 'watch.db'}")
    yield opened
    opened.close()


class Receiver(BaseHTTPRequestHandler):
    """A real webhook receiver: records each body whose signature checks."""

    received: list[dict[str, Any]] = []
    paths: list[str] = []  # the path of each received body
    fail_next = 0

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        if Receiver.fail_next > 0:
            Receiver.fail_next -= 1
            self.send_response(500)
        elif hmac.compare_digest(expected, self.headers["X-Tokenrisk-Signature"]):
            Receiver.received.append(json.loads(body))
            Receiver.paths.append(self.path)
            self.send_response(204)
        else:
            self.send_response(401)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.received, Receiver.paths = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def _watcher(service: Service, store: Store) -> Watcher:
    return Watcher(service.honeypot, WatchStore(store), Bounds(blocks_per_step=5))


async def _until_caught_up(watcher: Watcher) -> None:
    node = watcher.deps.nodes.node(31337)
    head = int(await node.rpc.call("eth_blockNumber", []), 16)
    for _ in range(STEPS):
        await watcher.step(31337)
        cursor = watcher.store.cursor(31337)
        if cursor is not None and cursor.block >= head:
            return
    raise AssertionError("the watcher did not reach the head")


def _kinds(store: Store) -> list[tuple[str, str]]:
    return [(e.kind, e.token) for e in WatchStore(store).events_after(0)]


async def test_launch_arm_and_restart(
    devnet: Any, service: Service, store: Store, receiver: str
) -> None:
    url, manifest = devnet.url, devnet.manifest
    build_dir = Path(devnet.manifest_path).parent
    first = _watcher(service, store)
    await _until_caught_up(first)  # starts at the head: nothing before it is an event

    launched = await launch(url, manifest, build_dir)
    await _until_caught_up(first)
    events = WatchStore(store).events_after(0)
    assert [(e.kind, e.token) for e in events] == [("new_pool", launched.token.lower())]
    body = events[0].body
    assert body["pool"] == launched.pair and body["answer"]["isHoneypot"] is False

    entry = next(t for t in manifest["tokens"] if t["id"] == "latent-trading-switch")
    token = entry["address"].lower()
    assert WatchStore(store).add("alice", 31337, token, limit=10)
    await first.step(31337)  # the baseline answer, no event
    assert WatchStore(store).snapshot(31337, token)["isHoneypot"] is False

    # the watcher is killed after checking the arming block, before its commit
    tx = await arm(url, manifest, "latent-trading-switch")
    killed = _watcher(service, store)

    def crash(*args: Any) -> int:
        raise asyncio.CancelledError

    killed.store.commit = crash  # type: ignore[method-assign]
    with pytest.raises(asyncio.CancelledError):
        await killed.step(31337)
    assert _kinds(store) == [("new_pool", launched.token.lower())]

    second = _watcher(service, store)  # the restarted watcher
    await _until_caught_up(second)
    await _until_caught_up(_watcher(service, store))  # and once more: nothing new
    events = WatchStore(store).events_after(0)
    assert [(e.kind, e.token) for e in events] == [
        ("new_pool", launched.token.lower()),
        ("alert", token),
    ]
    alert = events[1].body
    assert alert["transaction"] == tx
    assert {"field": "isHoneypot", "before": False, "after": True} in alert["changes"]

    # webhooks: one failure retried, then every event once, in order, signed
    Receiver.fail_next = 1
    hooks = Webhooks((Endpoint(receiver, SECRET),), WatchStore(store), attempts=3, backoff=0.0)
    async with httpx.AsyncClient() as client:
        assert await hooks.deliver(client) == 0 and hooks.failures == 1
        assert await hooks.deliver(client) == 2
        restarted = Webhooks((Endpoint(receiver, SECRET),), WatchStore(store), backoff=0.0)
        assert await restarted.deliver(client) == 0
    assert [r["id"] for r in Receiver.received] == [e.event_id for e in events]
    assert WatchStore(store).delivery(Endpoint(receiver, SECRET).name).last_status == "ok"


async def test_a_reorg_retracts_its_events(devnet: Any, service: Service, store: Store) -> None:
    rpc = service.nodes.node(31337).rpc
    watcher = _watcher(service, store)
    await _until_caught_up(watcher)
    fork_point = await rpc.call("evm_snapshot", [])
    launched = await launch(devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    await _until_caught_up(watcher)
    assert _kinds(store) == [("new_pool", launched.token.lower())]

    await rpc.call("evm_revert", [fork_point])  # the launch leaves the chain
    for _ in range(5):  # and a longer chain without it takes its place
        await rpc.call("evm_mine", [])
    await _until_caught_up(watcher)
    events = WatchStore(store).events_after(0)
    assert [e.kind for e in events] == ["new_pool", "retracted"]
    assert events[1].body["retracts"] == events[0].seq


async def test_a_pool_without_liquidity_waits_for_it(
    devnet: Any, service: Service, store: Store
) -> None:
    """The pair is created, the watcher passes it (pending, no event), liquidity arrives
    in a later block: then the new_pool event, at the liquidity's block."""
    watcher = _watcher(service, store)
    await _until_caught_up(watcher)
    owner = devnet.manifest["addresses"]["OWNER"]
    chain = Chain(devnet.url)
    try:
        launched = await launch(
            devnet.url, devnet.manifest, Path(devnet.manifest_path).parent, liquidity=False
        )
        await _until_caught_up(watcher)
        assert _kinds(store) == []
        assert WatchStore(store).pending(31337) == {launched.token.lower(): launched.pair}
        amounts = (10**26, 10**19)
        await add_v2_liquidity(chain, owner, launched.token, WETH, amounts, "test")
    finally:
        await chain.aclose()
    await _until_caught_up(watcher)
    (event,) = WatchStore(store).events_after(0)
    assert (event.kind, event.token) == ("new_pool", launched.token.lower())
    assert event.block > launched.block and event.body["answer"]["isHoneypot"] is False
    assert WatchStore(store).pending(31337) == {}


def test_devnet_commands_find_the_devnet_serve_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``open_service`` on the embedded devnet records its URL in the data dir, and
    ``tokenrisk devnet launch`` / ``arm`` find it there (no --rpc-url)."""
    from typer.testing import CliRunner

    from tokenrisk.cli.main import app
    from tokenrisk.service import open_service

    monkeypatch.setenv("TOKENRISK_DATA_DIR", str(tmp_path))
    service = open_service(Settings(devnet=True, data_dir=tmp_path))
    try:
        url = service.processes[-1].url
        assert json.loads((tmp_path / "devnet.json").read_text()) == {"url": url}
        launched = CliRunner().invoke(app, ["devnet", "launch"])
        assert launched.exit_code == 0, launched.output
        token = json.loads(launched.stdout)["token"]
        body = {"jsonrpc": "2.0", "id": 1, "method": "eth_getCode", "params": [token, "latest"]}
        assert len(httpx.post(url, json=body).json()["result"]) > 2
        armed = CliRunner().invoke(app, ["devnet", "arm", "latent-pause"])
        assert armed.exit_code == 0 and armed.stdout.strip().startswith("0x")
        unknown = CliRunner().invoke(app, ["devnet", "arm", "plain"])
        assert unknown.exit_code == 3
    finally:
        asyncio.run(service.close())


async def test_v4_pools_are_new_pools_of_the_pool_manager(devnet: Any, service: Service) -> None:
    """The head follower sees Uniswap V4 pools (PoolManager ``Initialize`` events) as it
    sees V2/V3 factories' pools; a native-ETH pool's zero-address currency is not a token."""
    node = service.nodes.node(31337)
    v4 = node.chain.uniswap_v4
    assert v4 is not None
    head = int(await node.rpc.call("eth_blockNumber", []), 16)
    pools = await blocks.new_pools(node, 0, head)
    bases = {b.address.lower() for b in node.chain.base_tokens}
    in_v4 = {
        token.lower()
        for pool in pools
        if pool.pool.lower() == v4.pool_manager.lower()
        for token in blocks.tokens_of(pool, bases)
    }
    expected = {
        t["address"].lower() for t in devnet.manifest["tokens"] if t["id"].startswith("v4-")
    }
    assert len(expected) >= 6
    assert expected <= in_v4
    assert "0x" + "00" * 20 not in in_v4
    # the V2/V3 factories' pools are still found alongside
    plain = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")["address"].lower()
    assert any(plain in (p.token0.lower(), p.token1.lower()) for p in pools)

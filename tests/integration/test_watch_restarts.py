"""The watcher's checks go through the job queue and survive restarts: a launched token
makes exactly one "new pool" event when Redis, the database or the node is stopped and
started again (the real process each time) between the head follower finding the
check and a worker running it.  The per-block cap queues checks and the lag says so.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from arq.connections import RedisSettings
from arq.worker import Worker
from pgserver import start_postgres
from redis.exceptions import RedisError
from test_watch import service, store  # noqa: F401 (fixtures)

from tokenrisk import metrics
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import devnet_args
from tokenrisk.devnet.launch import launch
from tokenrisk.devnet.layout import STATE_FILE
from tokenrisk.devnet.node import start_anvil
from tokenrisk.devnet.redisserver import start_redis
from tokenrisk.errors import StoreError, TokenRiskError
from tokenrisk.jobs import _watch_function, open_queue
from tokenrisk.service import Service, connect_devnet
from tokenrisk.store.engine import Store, create_store
from tokenrisk.store.watch import WatchStore
from tokenrisk.watch.checker import RETRY_LATER, Checker
from tokenrisk.watch.watcher import Bounds, Watcher

pytestmark = pytest.mark.integration
CHAIN = 31337
STEPS = 12  # bounded loops


class Handed:
    """A job queue that only records what it was given (the checks stay to run)."""

    def __init__(self) -> None:
        self.tokens: list[str] = []

    async def __call__(self, chain_id: int, token: str) -> None:
        self.tokens.append(token)


def _new_pools(opened: Store) -> list[tuple[str, str]]:
    return [(e.kind, e.token) for e in WatchStore(opened).events_after(0)]


async def _launch_found(devnet: Any, url: str, watcher: Watcher) -> str:
    """Launch a token and let the follower find it: the check is queued, not run."""
    await watcher.step(CHAIN)  # the first cursor: at the head
    launched = await launch(url, devnet.manifest, Path(devnet.manifest_path).parent)
    await watcher.step(CHAIN)
    token = launched.token.lower()
    assert WatchStore(watcher.store.store).events_after(0) == []
    assert watcher.queued[CHAIN] == 1 and watcher.lag[CHAIN] > 0
    return token


async def test_checks_past_the_cap_queue_and_the_lag_reports_them(
    devnet: Any,
    service: Service,  # noqa: F811
    store: Store,  # noqa: F811
) -> None:
    bounds = Bounds(blocks_per_step=100, max_checks=1, max_checks_per_block=1)
    watcher = Watcher(service.honeypot, WatchStore(store), bounds)
    await watcher.step(CHAIN)
    build_dir = Path(devnet.manifest_path).parent
    tokens = [(await launch(devnet.url, devnet.manifest, build_dir)).token for _ in range(3)]
    await watcher.step(CHAIN)  # every block read; one check run (one in flight at most)
    head = int(await service.nodes.node(CHAIN).rpc.call("eth_blockNumber", []), 16)
    assert WatchStore(store).cursor(CHAIN).block == head  # type: ignore[union-attr]
    assert watcher.queued[CHAIN] == 2 and watcher.lag[CHAIN] > 0
    assert f'tokenrisk_watch_queued_checks{{chain="{CHAIN}"}} 2.0' in _metrics()
    assert f'tokenrisk_watch_lag_blocks{{chain="{CHAIN}"}} {watcher.lag[CHAIN]}.0' in _metrics()
    for _ in range(STEPS):
        if not watcher.queued[CHAIN]:
            break
        await watcher.step(CHAIN)  # the head did not move: one more check a step
    assert watcher.queued[CHAIN] == 0 and watcher.lag[CHAIN] == 0
    assert _new_pools(store) == [("new_pool", t.lower()) for t in tokens]  # in launch order


def _metrics() -> str:
    return metrics.exposition().decode()


@pytest.fixture
async def redis_settings() -> AsyncIterator[Any]:
    server = start_redis()
    if server is None:
        pytest.skip("redis-server is not installed (scripts/with-redis.sh installs it)")
    holder = {"server": server}
    try:
        yield holder
    finally:
        holder["server"].stop()


async def _burst(url: str, checker: Checker) -> None:
    """A real arq worker that runs what is queued, then stops."""
    worker = Worker(
        functions=[_watch_function()],
        redis_settings=RedisSettings.from_dsn(url),
        ctx={"checker": checker},
        burst=True,
        handle_signals=False,
        poll_delay=0.05,
    )
    try:
        await worker.async_run()
    finally:
        await worker.pool.aclose()


async def _reachable(pool: Any) -> None:
    for _ in range(50):
        try:
            await pool.ping()
            return
        except RedisError:  # the pool's connections to the server that stopped
            await asyncio.sleep(0.1)
    raise AssertionError("Redis did not come back")


async def test_a_redis_restart_loses_and_repeats_nothing(
    devnet: Any,
    service: Service,  # noqa: F811
    store: Store,  # noqa: F811
    redis_settings: dict[str, Any],
) -> None:
    server = redis_settings["server"]
    queue = await open_queue(Settings(devnet=False, redis_url=server.url))
    assert queue is not None
    try:
        watch = WatchStore(store)
        watcher = Watcher(
            service.honeypot, watch, Bounds(blocks_per_step=100), queue.enqueue_checks
        )
        token = await _launch_found(devnet, devnet.url, watcher)
        assert await queue.pool.zcard("arq:queue") == 1  # the job: in Redis only

        server.stop()  # no persistence: the job is gone with it
        redis_settings["server"] = server = start_redis(server.port)
        await _reachable(queue.pool)
        assert await queue.pool.zcard("arq:queue") == 0
        await watcher.step(CHAIN)  # the follower puts the job back from the store
        assert await queue.pool.zcard("arq:queue") == 1

        worker = Checker(service.honeypot, watch)  # another process's worker
        await _burst(server.url, worker)
        assert _new_pools(store) == [("new_pool", token)] and worker.checks == 1
        assert await queue.enqueue_checks(CHAIN, token)  # a stray second job: no-op
        await _burst(server.url, worker)
        await watcher.step(CHAIN)
        assert _new_pools(store) == [("new_pool", token)] and watcher.queued[CHAIN] == 0
    finally:
        await queue.aclose()


async def test_a_database_restart_loses_and_repeats_nothing(
    devnet: Any,
    service: Service,  # noqa: F811
) -> None:
    server = start_postgres()
    if server is None:
        pytest.skip("PostgreSQL is not installed (scripts/with-postgres.sh installs it)")
    pg = create_store(server.url)
    try:
        handed = Handed()
        watcher = Watcher(service.honeypot, WatchStore(pg), Bounds(blocks_per_step=100), handed)
        token = await _launch_found(devnet, devnet.url, watcher)
        assert handed.tokens == [token]

        server.stop()  # a crash: no clean shutdown
        with pytest.raises(StoreError):
            await watcher.checker.run(CHAIN, token)
        with pytest.raises(StoreError):
            await watcher.step(CHAIN)
        server.start()

        await watcher.checker.run(CHAIN, token)
        await watcher.checker.run(CHAIN, token)  # nothing left: nothing twice
        await watcher.step(CHAIN)
        assert _new_pools(pg) == [("new_pool", token)] and watcher.queued[CHAIN] == 0
    finally:
        pg.close()
        server.close()


@pytest.fixture
def own_node(devnet: Any, tmp_path: Path) -> Iterator[Any]:
    """A devnet anvil of this test's own that keeps its chain across a restart
    (``--state``: loaded at start, saved at exit), so it can be stopped and started."""
    state = tmp_path / "state.json"
    shutil.copy(Path(devnet.manifest_path).parent / STATE_FILE, state)
    node = start_anvil([*devnet_args(devnet.manifest), "--state", str(state)])
    try:
        yield node
    finally:
        node.stop()


async def test_a_node_restart_loses_and_repeats_nothing(
    devnet: Any,
    own_node: Any,
    tmp_path: Path,
    store: Store,  # noqa: F811
) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, cache_ttl=0)
    build_dir = Path(devnet.manifest_path).parent
    svc = connect_devnet(settings, own_node.url, devnet.manifest, build_dir)
    try:
        handed = Handed()
        watcher = Watcher(svc.honeypot, WatchStore(store), Bounds(blocks_per_step=100), handed)
        token = await _launch_found(devnet, own_node.url, watcher)

        own_node.process.send_signal(signal.SIGINT)  # the node stops (and saves its chain)
        own_node.process.wait(timeout=30)
        with pytest.raises(RETRY_LATER):
            await watcher.checker.run(CHAIN, token)
        with pytest.raises(TokenRiskError):
            await watcher.step(CHAIN)
        own_node.restart()

        await watcher.checker.run(CHAIN, token)
        await watcher.checker.run(CHAIN, token)
        await watcher.step(CHAIN)
        assert _new_pools(store) == [("new_pool", token)] and watcher.queued[CHAIN] == 0
    finally:
        await svc.close()

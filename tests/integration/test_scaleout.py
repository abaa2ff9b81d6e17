"""Scale-out: two API worker processes sharing one real Redis (and one store).

Each worker is a real ``tokenrisk serve`` process on its own loopback port (so a test
knows which worker answered), configured like a deployment through the environment:
``redis_url`` of a throwaway ``redis-server``, the session devnet's node
(``devnet_url``), one store (a fresh PostgreSQL database when the suite runs under
scripts/with-postgres.sh, else one SQLite file), ``index_inline_blocks=0`` so that no
request indexes inline.  Shown here:

- an answer computed by one worker is a cache hit on the other (``X-Cache`` header);
- concurrent requests for one token spread over both workers cause ONE computation;
- the per-key rate limit is one bucket for both workers;
- holder indexing is left to the queue: a real ``tokenrisk worker --burst`` runs the
  job, and a later check (on a new head) reports the holders it indexed.

Requests are API-keyed so each part spends its own rate-limit bucket.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from receipts import node_call
from serving import wait_healthy

from tokenrisk.devnet.node import free_port
from tokenrisk.devnet.redisserver import RedisServer, start_redis

pytestmark = [pytest.mark.integration, pytest.mark.redis]

CHAIN = 31337
KEYS = ["flight", "cache", "limited", "index", "powers"] + [f"k{i}" for i in range(8)]
RATE_PER_MINUTE = 6
_CLI = "from tokenrisk.cli.main import main; main()"


@dataclass
class Cluster:
    workers: list[str]  # base URLs of the two API processes
    env: dict[str, str]


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    server = start_redis()
    if server is None:
        pytest.skip("redis-server is not installed (scripts/with-redis.sh installs it)")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh PostgreSQL database when one is available, else a shared SQLite file."""
    base = os.environ.get("TOKENRISK_TEST_POSTGRES_URL")
    if not base:
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'shared.sqlite3'}"
        return
    import psycopg

    name = f"scaleout_{uuid.uuid4().hex[:12]}"
    plain = base.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield base.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _env(devnet: Any, redis: RedisServer, store: str, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env.update(
        TOKENRISK_DEVNET="true",
        TOKENRISK_DEVNET_URL=devnet.url,
        TOKENRISK_REDIS_URL=redis.url,
        TOKENRISK_STORE_URL=store,
        TOKENRISK_DATA_DIR=str(data_dir),
        TOKENRISK_CACHE_TTL="120",
        TOKENRISK_DEADLINE="60",
        TOKENRISK_API_KEYS=",".join(KEYS),
        TOKENRISK_RATE_LIMIT_PER_MINUTE=str(RATE_PER_MINUTE),
        TOKENRISK_INDEX_INLINE_BLOCKS="0",
        TOKENRISK_HOLDER_LIMIT="5",
    )
    return env


@pytest.fixture(scope="module")
def cluster(
    devnet: Any, redis_server: RedisServer, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    env = _env(devnet, redis_server, store_url, tmp_path_factory.mktemp("data"))
    processes: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for _ in range(2):
            port = free_port()
            command = [sys.executable, "-c", _CLI, "serve", "--port", str(port), "--workers", "1"]
            processes.append(
                subprocess.Popen(
                    command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(urls, processes, strict=True):
            wait_healthy(url, process, None, timeout=60.0, path="/openapi.json")
        yield Cluster(urls, env)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=90.0) as client:
        yield client


def _token(devnet: Any, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


async def _rpc(devnet: Any, method: str, params: list[Any]) -> Any:
    return await node_call(devnet.url, method, params)


async def _honeypot(http: httpx.AsyncClient, worker: str, token: str, key: str) -> httpx.Response:
    return await http.get(
        f"{worker}/v2/IsHoneypot",
        params={"address": token, "chainID": CHAIN},
        headers={"X-API-KEY": key},
    )


async def test_an_answer_computed_by_one_worker_is_a_hit_on_the_other(
    cluster: Cluster, devnet: Any, http: httpx.AsyncClient
) -> None:
    token = _token(devnet, "fot-3")
    first = await _honeypot(http, cluster.workers[0], token, "cache")
    again = await _honeypot(http, cluster.workers[1], token, "cache")
    assert first.status_code == again.status_code == 200
    assert (first.headers["X-Cache"], again.headers["X-Cache"]) == ("miss", "hit")
    assert again.content == first.content


async def test_concurrent_requests_on_both_workers_compute_once(
    cluster: Cluster, devnet: Any, http: httpx.AsyncClient
) -> None:
    token = _token(devnet, "plain")
    replies = await asyncio.gather(
        *(
            _honeypot(http, cluster.workers[i % 2], token, f"k{i}")
            for i in range(8)  # four on each worker, all at once
        )
    )
    assert [r.status_code for r in replies] == [200] * 8
    how = Counter(r.headers["X-Cache"] for r in replies)
    assert how["miss"] == 1, how  # one computation across both workers
    assert how["wait"] >= 1, how  # the others joined it rather than computing again
    computed_on = next(i % 2 for i, r in enumerate(replies) if r.headers["X-Cache"] == "miss")
    other_worker = [r for i, r in enumerate(replies) if i % 2 != computed_on]
    assert all(r.headers["X-Cache"] in ("wait", "hit") for r in other_worker)
    assert len({r.content for r in replies}) == 1


async def test_the_rate_limit_is_one_bucket_for_both_workers(
    cluster: Cluster, devnet: Any, http: httpx.AsyncClient
) -> None:
    params = {"address": _token(devnet, "plain")}
    statuses: list[tuple[int, int, str | None]] = []
    for i in range(2 * RATE_PER_MINUTE):  # each worker alone would allow all of these
        worker = i % 2
        reply = await http.get(
            f"{cluster.workers[worker]}/v1/GetPairs",
            params=params,
            headers={"X-API-KEY": "limited"},
        )
        statuses.append((worker, reply.status_code, reply.headers.get("Retry-After")))
    allowed = [s for s in statuses if s[1] == 200]
    limited = [s for s in statuses if s[1] == 429]
    assert len(allowed) + len(limited) == len(statuses)
    # one shared bucket: its burst, plus what refilled meanwhile (one per 10 s)
    assert RATE_PER_MINUTE <= len(allowed) < 2 * RATE_PER_MINUTE
    assert {worker for worker, _, _ in limited} == {0, 1}
    assert all(retry is not None and int(retry) >= 1 for _, _, retry in limited)


async def test_an_owner_power_scan_made_by_one_worker_serves_the_other(
    cluster: Cluster, devnet: Any, http: httpx.AsyncClient
) -> None:
    token = _token(devnet, "latent-fee")
    first = await _honeypot(http, cluster.workers[0], token, "powers")
    snapshot = await _rpc(devnet, "evm_snapshot", [])
    try:
        await _rpc(devnet, "evm_mine", [])  # a new head: the answer is computed again
        again = await _honeypot(http, cluster.workers[1], token, "powers")
    finally:
        assert await _rpc(devnet, "evm_revert", [snapshot]) is True
    assert first.status_code == again.status_code == 200
    assert again.headers["X-Cache"] == "miss"  # computed by the second worker ...
    scanned, reused = first.json()["ownerPowers"], again.json()["ownerPowers"]
    assert scanned["scanned"] and not scanned["cached"] and scanned["findings"]
    assert reused["cached"]  # ... with the first worker's scan, read from Redis
    assert {k: v for k, v in reused.items() if k != "cached"} == {
        k: v for k, v in scanned.items() if k != "cached"
    }


async def test_holder_indexing_runs_as_a_background_job(
    cluster: Cluster, devnet: Any, http: httpx.AsyncClient
) -> None:
    token = _token(devnet, "high-tax")
    before = await _honeypot(http, cluster.workers[0], token, "index")
    assert before.status_code == 200
    token_summary = before.json()["token"]  # nothing indexed inline: unknown, not 0
    assert (token_summary["totalHolders"], token_summary["totalHoldersStatus"]) == (-1, "unknown")
    worker = subprocess.run(
        [sys.executable, "-c", _CLI, "worker", "--burst"],
        env=cluster.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert worker.returncode == 0, worker.stderr.decode()[-2000:]
    snapshot = await _rpc(devnet, "evm_snapshot", [])
    try:
        await _rpc(devnet, "evm_mine", [])  # a new head: the cached answer no longer applies
        after = await _honeypot(http, cluster.workers[1], token, "index")
    finally:
        assert await _rpc(devnet, "evm_revert", [snapshot]) is True
    assert after.status_code == 200 and after.headers["X-Cache"] == "miss"
    assert after.json()["token"]["totalHolders"] > 0  # the job's index, read by a later check

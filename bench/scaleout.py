"""Scale-out: recomputed IsHoneypot throughput of 1 worker against 2 workers + Redis.

Both are the real ``tokenrisk serve`` on the bench's devnet node (``devnet_url``), with
the results cache off (every request computes) and a SQLite store of their own: one
worker without Redis (the embedded default), then ``--workers 2`` with a throwaway
``redis-server`` (rate limits, single flight and the index queue through Redis).  Each
gets 1 client, then 32 clients over the 30 catalogue tokens.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.cpu import CpuUse, Meter
from bench.load import Throughput, throughput
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.devnet.node import free_port
from tokenrisk.devnet.redisserver import start_redis

CHAIN = 31337
WARM_PASSES = 6
WARM_CLIENTS = 8
_CLI = "from tokenrisk.cli.main import main; main()"


def _start(
    devnet: RunningDevnet, data_dir: Path, workers: int, redis_url: str | None
) -> tuple[subprocess.Popen[bytes], str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env.update(
        TOKENRISK_DEVNET="true",
        TOKENRISK_DEVNET_URL=devnet.url,
        TOKENRISK_DATA_DIR=str(data_dir),
        TOKENRISK_CACHE_TTL="0",
        TOKENRISK_DEADLINE="60",
    )
    if redis_url:
        env["TOKENRISK_REDIS_URL"] = redis_url
    port = free_port()
    command = [sys.executable, "-c", _CLI, "serve", "--port", str(port)]
    command += ["--workers", str(workers)]
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("bench server exited early")
        try:
            if httpx.get(f"{url}/openapi.json", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("bench server did not start")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


async def _runs(url: str, tokens: list[str], meter: Meter) -> list[tuple[int, Throughput, CpuUse]]:
    params: list[dict[str, str | int]] = [{"address": t, "chainID": CHAIN} for t in tokens]
    # warm passes: the holder index, and each worker's own caches (owner-power scans,
    # balance layouts).  A client keeps one connection, so one worker answers it all:
    # WARM_CLIENTS connections spread over the workers, and each token is asked
    # WARM_PASSES times, so a worker misses a token with odds (1/2) ** WARM_PASSES
    warm = WARM_PASSES * len(tokens)
    await throughput(url, "/v2/IsHoneypot", params, WARM_CLIENTS, warm, True)
    out = []
    for clients, requests in ((1, 32), (32, 128)):
        with meter:
            run = await throughput(url, "/v2/IsHoneypot", params, clients, requests, True)
        out.append((clients, run, meter.use(run.samples.statuses[200])))
    return out


Row = tuple[str, Throughput, CpuUse]


async def measure_workers(devnet: RunningDevnet, tokens: list[str], work: Path) -> list[Row]:
    """Rows for 1 worker (no Redis) and 2 workers + Redis, at 1 and 32 clients, each
    with the CPU its answers cost the node, the service and the load generator."""
    rows: list[Row] = []
    anvil = devnet.node.process.pid
    process, url = _start(devnet, work / "one-worker", 1, None)
    try:
        runs = await _runs(url, tokens, Meter(anvil, process.pid))
        rows += [(f"1 worker, {c} clients", t, u) for c, t, u in runs]
    finally:
        _stop(process)
    redis = start_redis()
    if redis is None:
        return rows  # no redis-server here: the 2-worker row is missing, and says so
    try:
        process, url = _start(devnet, work / "two-workers", 2, redis.url)
        try:
            runs = await _runs(url, tokens, Meter(anvil, process.pid))
            rows += [(f"2 workers + Redis, {c} clients", t, u) for c, t, u in runs]
        finally:
            _stop(process)
    finally:
        redis.stop()
    return rows

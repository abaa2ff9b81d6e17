"""The watch feature as a person runs it, every part a real process: ``tokenrisk serve``
(the API and the SSE stream), ``tokenrisk watch`` (killed with SIGKILL and started
again in the middle), ``tokenrisk devnet launch`` and ``tokenrisk devnet arm``, a real
webhook receiver and a real SSE client over TCP.

Done when (issue #28): launching a token produces a "new pool" event with its verdict,
arming a trap on a watched token produces one alert with the causing transaction, and
a killed watcher resumes without losing or repeating an event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serving import wait_healthy
from test_watch import SECRET, Receiver, receiver  # noqa: F401 (fixture)

from tokenrisk.devnet.node import free_port
from tokenrisk.devnet.redisserver import start_redis
from tokenrisk.store.engine import create_store
from tokenrisk.store.watch import WatchStore

pytestmark = pytest.mark.integration
CLI = "from tokenrisk.cli.main import main; main()"
TRAP = "latent-trading-switch"
WAIT = 120.0  # seconds any one wait may take (bounded loops)


def _env(devnet: Any, data_dir: Path, hook: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env.update(
        TOKENRISK_DEVNET="true",
        TOKENRISK_DEVNET_URL=devnet.url,
        TOKENRISK_DATA_DIR=str(data_dir),
        TOKENRISK_DEADLINE="60",
        TOKENRISK_WATCH__POLL_INTERVAL="0.2",
        TOKENRISK_WATCH__WEBHOOKS=json.dumps([{"url": hook, "secret": SECRET}]),
        TOKENRISK_WATCH__WEBHOOK_BACKOFF="0.1",
    )
    return env


def _start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        command = [sys.executable, "-c", CLI, *args]
        return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args], env=env, capture_output=True, timeout=120, check=True
    )
    return done.stdout.decode().strip()


def _until(what: str, probe: Any) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _sse(url: str, last_id: int, limit: int) -> list[dict[str, Any]]:
    """A real SSE client: reads frames until ``limit`` events arrived."""
    events: list[dict[str, Any]] = []
    headers = {"Last-Event-ID": str(last_id), "Accept": "text/event-stream"}
    params = {"maxEvents": str(limit)}
    with httpx.stream(
        "GET", f"{url}/v2/watch/events", headers=headers, params=params, timeout=WAIT
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        frame: dict[str, str] = {}
        for line in r.iter_lines():
            if line == "" and "data" in frame:
                events.append(
                    {
                        **json.loads(frame["data"]),
                        "sseId": int(frame["id"]),
                        "event": frame["event"],
                    }
                )
                frame = {}
            elif ":" in line and not line.startswith(":"):
                name, _, value = line.partition(":")
                frame[name] = value.strip()
    return events


def _rpc(url: str, method: str, *params: Any) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return httpx.post(url, json=body, timeout=30).json()["result"]


def _at_least(store: WatchStore, block: int) -> bool:
    cursor = store.cursor(31337)
    return cursor is not None and cursor.block >= block


@pytest.fixture
def chain(devnet: Any) -> Iterator[None]:
    """The test's transactions are undone afterwards (the devnet is shared)."""
    snapshot = _rpc(devnet.url, "evm_snapshot")
    yield
    _rpc(devnet.url, "evm_revert", snapshot)


@pytest.fixture(params=["one watcher", "two watchers and a job queue"])
def watchers(request: pytest.FixtureRequest) -> Iterator[tuple[int, str | None]]:
    """How many ``tokenrisk watch`` run, and the Redis they share (None: no Redis)."""
    if request.param == "one watcher":
        yield 1, None
        return
    server = start_redis()
    if server is None:
        pytest.skip("redis-server is not installed (scripts/with-redis.sh installs it)")
    try:
        yield 2, server.url
    finally:
        server.stop()


def test_launch_arm_kill_restart(
    devnet: Any,
    chain: None,
    tmp_path: Path,
    receiver: str,  # noqa: F811
    watchers: tuple[int, str | None],
) -> None:
    """With two watchers sharing Redis, one follows the chain and both run checks
    from the job queue; the first is killed and started again in the middle."""
    count, redis_url = watchers
    env = _env(devnet, tmp_path, receiver)
    if redis_url is not None:
        env["TOKENRISK_REDIS_URL"] = redis_url
    log = tmp_path / "processes.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = _start(env, log, "serve", "--port", str(port))
    watch, *others = [_start(env, log, "watch") for _ in range(count)]
    opened = create_store(f"sqlite:///{tmp_path / 'tokenrisk.sqlite3'}")
    store = WatchStore(opened)
    try:
        wait_healthy(url, serve, log)
        _until("the watcher's first cursor", lambda: store.cursor(31337))

        launched = json.loads(_cli(env, "devnet", "launch", "--rpc-url", devnet.url))
        (new_pool,) = _sse(url, 0, 1)
        assert new_pool["event"] == "new_pool" and new_pool["token"] == launched["token"]
        assert new_pool["pool"] == launched["pair"]
        assert new_pool["answer"]["isHoneypot"] is False

        token = next(t for t in devnet.manifest["tokens"] if t["id"] == TRAP)["address"]
        added = httpx.post(f"{url}/v2/watch", json={"address": token, "chainID": 31337})
        assert added.status_code == 201
        listed = lambda: httpx.get(f"{url}/v2/watch").json()["watching"]  # noqa: E731
        _until("the baseline answer", lambda: "answer" in listed()[0])

        watch.kill()  # SIGKILL: no clean shutdown
        watch.wait(timeout=15)
        tx = _cli(env, "devnet", "arm", TRAP, "--rpc-url", devnet.url)
        watch = _start(env, log, "watch")

        assert new_pool["sseId"] == new_pool["seq"]
        (alert,) = _sse(url, new_pool["sseId"], 1)
        assert alert["event"] == "alert" and alert["token"] == token.lower()
        assert alert["transaction"] == tx
        assert {"field": "isHoneypot", "before": False, "after": True} in alert["changes"]

        _until("both webhook deliveries", lambda: len(Receiver.received) >= 2)
        head = int(_rpc(devnet.url, "eth_blockNumber"), 16)
        _until("the watcher at the head", lambda: _at_least(store, head))
        events = store.events_after(0)
        assert [e.kind for e in events] == ["new_pool", "alert"]  # nothing lost or repeated
        assert [r["id"] for r in Receiver.received] == [e.event_id for e in events]
    finally:
        for process in [watch, *others]:
            _stop(process)
        _stop(serve)
        opened.close()


def test_serve_watch_runs_the_watcher_inside_the_server(
    devnet: Any,
    chain: None,
    tmp_path: Path,
    receiver: str,  # noqa: F811
) -> None:
    env = _env(devnet, tmp_path, receiver)
    log = tmp_path / "serve.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = _start(env, log, "serve", "--watch", "--port", str(port))
    try:
        wait_healthy(url, serve, log)
        _until(
            "the watcher's first cursor",
            lambda: httpx.get(f"{url}/v2/watch/status").json()["chains"]["31337"]["block"],
        )
        launched = json.loads(_cli(env, "devnet", "launch", "--rpc-url", devnet.url))
        (new_pool,) = _sse(url, 0, 1)
        assert new_pool["event"] == "new_pool" and new_pool["token"] == launched["token"]
        _until("the webhook delivery", lambda: Receiver.received)
        assert Receiver.received[0]["id"] == new_pool["id"]
        health = httpx.get(f"{url}/health").json()
        assert health["watchLagBlocks"]["31337"] >= 0
        assert health["watchQueuedChecks"]["31337"] >= 0 and health["watchEvents"] >= 1
        assert health["watchChecksPerSecond"] > 0 and health["watchWebhookFailures"] == 0
        scraped = httpx.get(f"{url}/metrics").text
        assert 'tokenrisk_watch_events_total{chain="31337",kind="new_pool"} 1.0' in scraped
    finally:
        _stop(serve)

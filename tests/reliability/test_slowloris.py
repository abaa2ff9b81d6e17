"""Slow clients cannot take the server down (loopback only, bounded in count and time).

A population of slowloris connections (each sends part of a request head, then a
byte now and then, never finishing) is opened against the real server (uvicorn with
the [server] limits of tokenrisk.api.server).  While they are open, ordinary
requests still get their answers; the server drops the slow connections (oldest
first beyond ``max_pending_connections``, all of them after ``header_timeout``); and
the log says so in a few lines, not one line (or traceback) per connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import httpx
import pytest
from liveserver import LiveServer

from tokenrisk.config import ServerConfig, Settings
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

SLOW = 300  # slowloris connections (bounded)
PENDING = 40  # server.max_pending_connections
HEADER_TIMEOUT = 3.0


@pytest.fixture(scope="module")
def guarded(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    limits = ServerConfig(
        max_pending_connections=PENDING, header_timeout=HEADER_TIMEOUT, max_connections=1000
    )
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("slow"), server=limits)
    with LiveServer(settings, devnet, log_level="warning") as server:
        yield server


class Slow:
    """One slowloris connection: a partial request head, then a header line now and then."""

    def __init__(self) -> None:
        self.closed_by_server = False
        self.writer: asyncio.StreamWriter | None = None

    async def run(self, port: int, until: asyncio.Event) -> None:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(b"GET /v1/GetPairs?address=0x HTTP/1.1\r\nHost: x\r\n")
        await self.writer.drain()
        while not until.is_set():
            try:
                data = await asyncio.wait_for(reader.read(1), timeout=0.5)
            except TimeoutError:
                try:
                    self.writer.write(b"X-a: b\r\n")  # never the blank line that ends the head
                    await self.writer.drain()
                except ConnectionError:
                    self.closed_by_server = True
                    return
                continue
            except ConnectionError:
                data = b""
            if not data:
                self.closed_by_server = True
                return

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def test_ordinary_requests_succeed_during_a_slowloris_attack(
    guarded: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tokenrisk.server")
    port = int(guarded.url.rsplit(":", 1)[1])
    stop = asyncio.Event()
    slow = [Slow() for _ in range(SLOW)]
    attack = [asyncio.create_task(s.run(port, stop)) for s in slow]
    try:
        await asyncio.sleep(1.0)  # every slow connection is open and trickling
        async with httpx.AsyncClient(base_url=guarded.url, timeout=20.0) as http:
            for _ in range(10):
                response = await http.get("/openapi.json")
                assert response.status_code == 200
            health = await http.get("/health")
            assert health.status_code == 200, health.text
        dropped_early = sum(s.closed_by_server for s in slow)
        assert dropped_early >= SLOW - PENDING  # beyond the pending cap, oldest first
        await asyncio.wait_for(asyncio.gather(*attack), timeout=HEADER_TIMEOUT + 10)
        assert all(s.closed_by_server for s in slow)  # the rest: header timeout
    finally:
        stop.set()
        for s in slow:
            s.close()
        await asyncio.gather(*attack, return_exceptions=True)
    lines = [r for r in caplog.records if r.name == "tokenrisk.server"]
    assert 1 <= len(lines) <= 4, [r.getMessage() for r in lines]  # one per class, counted
    assert all(r.exc_info is None and r.exc_text is None for r in lines)
    kinds = " ".join(r.getMessage() for r in lines)
    assert "oldest dropped" in kinds and "header_timeout" in kinds

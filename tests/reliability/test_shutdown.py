"""A stopping server does not wait on its event streams.

uvicorn's graceful shutdown lets every response in progress finish, and a watch event
stream (``/v2/watch/events``) never finishes by itself: one open watch page used to hold
a stopping server forever (``tokenrisk serve --watch`` stopped by SIGTERM, the browser
tests' servers for the 20 s their join allowed).  The stream's connection is now closed
when the shutdown starts (its last chunk sent, so the client reads a complete response
and reconnects), while an ordinary request in progress still gets its answer.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from liveserver import LiveServer

from tokenrisk.config import Settings, WatchConfig
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration
BOUND = 5.0  # seconds a shutdown may take here (the stream's store poll is 0.5 s)


def _until_in_progress(server: LiveServer, requests: int) -> None:
    deadline = time.monotonic() + 30
    while server.in_progress < requests:
        assert time.monotonic() < deadline, "the requests never reached the server"
        time.sleep(0.005)


def test_an_open_event_stream_does_not_hold_the_shutdown(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    settings = Settings(
        devnet=False, data_dir=tmp_path, deadline=60.0, watch=WatchConfig(embedded=True)
    )
    server = LiveServer(settings, devnet)
    server.start()
    plain = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    answered: list[int] = []

    def check() -> None:  # an ordinary request in progress when the shutdown starts
        reply = httpx.get(
            f"{server.url}/v2/IsHoneypot", params={"address": plain["address"]}, timeout=60
        )
        answered.append(reply.status_code)

    with httpx.Client(base_url=server.url, timeout=30) as http:
        with http.stream("GET", "/v2/watch/events") as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            assert next(lines) == "retry: 2000"
            checking = threading.Thread(target=check)
            checking.start()
            _until_in_progress(server, 2)  # the stream and the check
            started = time.monotonic()
            server.stop(timeout=BOUND)  # raises if the stream held it
            stopped = time.monotonic() - started
            rest = list(lines)  # a complete response: its last chunk came, then the close
    assert all(line == "" or line.startswith(":") for line in rest), rest
    checking.join(timeout=60)
    assert answered == [200], answered
    assert stopped < BOUND

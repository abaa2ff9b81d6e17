"""At its connection cap the real server answers 503 in the API's JSON error shape.

uvicorn's own ``limit_concurrency`` answers ``Service Unavailable`` as plain text, which
a JSON client (the npm client, the Python examples) cannot parse; the guarded protocol
(:mod:`tokenrisk.api.server`) answers ``{"code": 503, "error": ...}`` with
``Retry-After`` instead, and closes that connection.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from liveserver import LiveServer

from tokenrisk.config import ServerConfig, Settings
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration


@pytest.fixture
def capped(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    limits = ServerConfig(max_connections=2)
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("cap"), server=limits)
    with LiveServer(settings, devnet, log_level="warning") as server:
        yield server


def test_a_request_over_the_cap_gets_a_json_503(capped: LiveServer) -> None:
    with httpx.Client(base_url=capped.url) as first, httpx.Client(base_url=capped.url) as second:
        assert first.get("/v1/GetPairs", params={"address": "0x"}).status_code == 400  # one open
        busy = second.get("/v1/GetPairs", params={"address": "0x"})  # two open: the cap
        assert busy.status_code == 503
        assert busy.headers["content-type"] == "application/json"
        assert busy.headers["retry-after"] == "1"
        assert busy.json() == {
            "code": 503,
            "error": "the server is at its connection limit; retry shortly",
        }
        first.close()  # a connection freed: once the server has seen it go, one is served
        statuses = []
        for _ in range(50):
            with httpx.Client(base_url=capped.url) as third:
                statuses.append(third.get("/v1/GetPairs", params={"address": "0x"}).status_code)
            if statuses[-1] != 503:
                break
            time.sleep(0.02)
        assert statuses[-1] == 400

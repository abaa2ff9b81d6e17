"""Operations: Prometheus ``/metrics`` after real requests on the devnet, and JSON logs."""

from __future__ import annotations

import json
import logging
import logging.config
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.logs import JsonFormatter, uvicorn_log_config
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration


@pytest.fixture
async def client(devnet: RunningDevnet, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, data_dir=tmp_path, deadline=60.0, cache_ttl=60.0)
    service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    transport = httpx.ASGITransport(app=create_app(settings, service))
    async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=120) as http:
        yield http
    await service.close()


async def scrape(http: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    reply = await http.get("/metrics")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(reply.text)
        for sample in family.samples
    }


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_count_what_happened(
    client: httpx.AsyncClient, devnet: RunningDevnet
) -> None:
    plain = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain")
    before = await scrape(client)
    check = {"address": plain, "chainID": "31337"}
    assert (await client.get("/v2/IsHoneypot", params=check)).status_code == 200
    assert (await client.get("/v2/IsHoneypot", params=check)).status_code == 200  # cached
    assert (await client.get("/v2/IsHoneypot", params={"address": "0x12"})).status_code == 400
    assert (await client.get("/v1/TopHolders", params=check)).status_code == 200
    after = await scrape(client)

    def grew(name: str, by: float = 1, **labels: str) -> bool:
        return value(after, name, **labels) - value(before, name, **labels) >= by

    ok = {"endpoint": "/v2/IsHoneypot", "method": "GET", "status": "200"}
    assert grew("tokenrisk_http_requests_total", 2, **ok)
    assert grew("tokenrisk_http_requests_total", 1, **{**ok, "status": "400"})
    assert grew("tokenrisk_http_request_duration_seconds_count", 2, **ok)
    assert grew("tokenrisk_simulations_total", 1, chain="31337", outcome="sold")
    ahead = "tokenrisk_sent_ahead_total"  # first sight: curve; seen before: remembered
    assert grew(ahead, 1, planned="curve", result="used") or grew(
        ahead, 1, planned="remembered", result="used"
    )
    assert grew("tokenrisk_node_requests_total", 5, chain="31337")
    assert grew("tokenrisk_node_request_duration_seconds_count", 5, chain="31337")
    assert grew("tokenrisk_cache_lookups_total", 1, result="hit")
    assert grew("tokenrisk_cache_lookups_total", 1, result="miss")
    assert grew("tokenrisk_holder_index_refreshes_total", 1, chain="31337")
    assert ("tokenrisk_holder_index_lag_blocks", (("chain", "31337"),)) in after
    assert value(after, "process_resident_memory_bytes") > 0


async def test_metrics_need_a_key_when_keys_are_on(devnet: RunningDevnet, tmp_path: Path) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, api_keys=frozenset({"k-metrics-1"}))
    service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            assert (await http.get("/metrics")).status_code == 401
            keyed = await http.get("/metrics", headers={"X-API-KEY": "k-metrics-1"})
            assert keyed.status_code == 200 and "tokenrisk_http_requests_total" in keyed.text
    finally:
        await service.close()


def test_json_logs_are_one_object_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    config = uvicorn_log_config("json")
    assert config is not None and uvicorn_log_config("text") is None
    logging.config.dictConfig(config)
    try:
        access = logging.getLogger("uvicorn.access")
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/health", "1.1", 200)
        logging.getLogger("tokenrisk.api").warning("node %s is slow", "chain 1")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("tokenrisk").exception("crash")
    finally:
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "tokenrisk", "httpx"):
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0]["path"] == "/health" and lines[0]["status"] == 200
    assert lines[0]["logger"] == "uvicorn.access" and lines[0]["level"] == "info"
    assert lines[1]["message"] == "node chain 1 is slow" and lines[1]["level"] == "warning"
    assert "RuntimeError: boom" in lines[2]["exception"]
    assert isinstance(JsonFormatter().format(logging.makeLogRecord({"msg": "x"})), str)

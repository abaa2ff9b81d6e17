"""The watch routes over HTTP: watchlists per key and bounded by tier, the answers' error
shapes, and the SSE stream: what each key sees, resumed with Last-Event-ID."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_watch import SECRET, Receiver, receiver  # noqa: F401 (fixture)

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings, WatchConfig
from tokenrisk.service import Service, connect_devnet
from tokenrisk.store.watch import NewEvent, WatchCursor, WatchStore
from tokenrisk.tiers import Tier
from tokenrisk.watch.events import event_id
from tokenrisk.watch.webhooks import Webhooks

pytestmark = pytest.mark.integration
ALICE, BOB = {"X-API-KEY": "alice-key"}, {"X-API-KEY": "bob-key"}
TOKEN = "0x" + "ab" * 20
OTHER = "0x" + "cd" * 20


@pytest.fixture
async def service(devnet: Any, tmp_path: Path) -> AsyncIterator[Service]:
    settings = Settings(
        devnet=False,
        data_dir=tmp_path,
        api_keys=frozenset({"alice-key", "bob-key"}),
        watch=WatchConfig(private_webhooks=True),  # the test's receiver is on loopback
        tiers={"default": Tier(max_watchlist=1, max_webhooks=1)},
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    yield svc
    await svc.close()


@pytest.fixture
async def http(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as client:
        yield client


def _event(kind: str, token: str, block: int) -> NewEvent:
    ident = event_id(31337, token, kind, block, [])
    return NewEvent(ident, 31337, token, kind, block, "0x", {"kind": kind, "id": ident})


def _frames(text: str) -> list[tuple[int, str]]:
    frames = [f for f in text.split("\n\n") if f.startswith("id:")]
    parsed = [dict(line.split(": ", 1) for line in f.splitlines()) for f in frames]
    return [(int(p["id"]), p["event"]) for p in parsed]


async def test_watchlists_per_key_and_tier(http: httpx.AsyncClient) -> None:
    assert (
        await http.post("/v2/watch", json={"address": TOKEN, "chainID": 31337})
    ).status_code == 401
    added = await http.post("/v2/watch", json={"address": TOKEN, "chainID": "31337"}, headers=ALICE)
    assert added.status_code == 201 and added.json()["chainID"] == 31337
    full = await http.post("/v2/watch", json={"address": OTHER, "chainID": 31337}, headers=ALICE)
    assert full.status_code == 403 and "at most 1" in full.json()["error"]
    bad = await http.post("/v2/watch", json={"address": "0x12", "chainID": 31337}, headers=BOB)
    assert bad.status_code == 400
    unknown = await http.post("/v2/watch", json={"address": TOKEN, "chainID": 5}, headers=BOB)
    assert unknown.status_code == 400 and unknown.json()["code"] == 400
    listed = (await http.get("/v2/watch", headers=ALICE)).json()["watching"]
    assert [(w["address"].lower(), w["chainID"]) for w in listed] == [(TOKEN, 31337)]
    assert (await http.get("/v2/watch", headers=BOB)).json() == {"watching": []}
    gone = await http.delete(f"/v2/watch/31337/{TOKEN}", headers=ALICE)
    assert gone.json()["removed"] is True
    assert (await http.get("/v2/watch", headers=ALICE)).json() == {"watching": []}


async def test_the_stream_shows_each_key_its_alerts_and_resumes(
    http: httpx.AsyncClient, service: Service
) -> None:
    assert (
        await http.post("/v2/watch", json={"address": TOKEN, "chainID": 31337}, headers=ALICE)
    ).status_code == 201
    events = [_event("new_pool", OTHER, 1), _event("alert", TOKEN, 2), _event("new_pool", OTHER, 3)]
    WatchStore(service.store).commit(31337, None, WatchCursor(3, "0x"), events, {})
    alice = await http.get("/v2/watch/events", params={"maxEvents": 3}, headers=ALICE)
    assert alice.headers["content-type"].startswith("text/event-stream")
    assert _frames(alice.text) == [(1, "new_pool"), (2, "alert"), (3, "new_pool")]
    bob = await http.get("/v2/watch/events", params={"maxEvents": 2}, headers=BOB)
    assert _frames(bob.text) == [(1, "new_pool"), (3, "new_pool")]
    resumed = await http.get(
        "/v2/watch/events", params={"maxEvents": 1}, headers={**ALICE, "Last-Event-ID": "1"}
    )
    assert _frames(resumed.text) == [(2, "alert")]
    bad = await http.get("/v2/watch/events", headers={**ALICE, "Last-Event-ID": "x"})
    assert bad.status_code == 400
    status = (await http.get("/v2/watch/status", headers=ALICE)).json()
    assert status["chains"]["31337"]["block"] == 3 and status["webhooks"] == []


async def test_each_key_registers_its_webhooks_and_gets_its_events_only(
    http: httpx.AsyncClient,
    service: Service,
    receiver: str,  # noqa: F811
) -> None:
    """A real receiver: alice's endpoint gets the new pools and her alert, not bob's;
    delivery status is per endpoint; the tier bounds how many endpoints a key has."""
    hook = "/v2/watch/webhooks"
    assert (await http.post(hook, json={"url": receiver}, headers={})).status_code == 401
    for key, token in ((ALICE, TOKEN), (BOB, OTHER)):
        watched = {"address": token, "chainID": 31337}
        assert (await http.post("/v2/watch", json=watched, headers=key)).status_code == 201
    mine = await http.post(hook, json={"url": receiver + "/alice", "secret": SECRET}, headers=ALICE)
    assert mine.status_code == 201 and "secret" not in mine.json()
    made = await http.post(hook, json={"url": receiver + "/bob"}, headers=BOB)
    assert made.status_code == 201 and len(made.json()["secret"]) == 64  # generated, once
    full = await http.post(hook, json={"url": receiver + "/2", "secret": SECRET}, headers=ALICE)
    assert full.status_code == 403 and "at most 1" in full.json()["error"]
    wrong = await http.post(hook, json={"url": "ftp://x", "secret": SECRET}, headers=BOB)
    assert wrong.status_code == 400

    events = [_event("new_pool", OTHER, 1), _event("alert", TOKEN, 2), _event("alert", OTHER, 3)]
    WatchStore(service.store).commit(31337, None, WatchCursor(3, "0x"), events, {})
    hooks = Webhooks((), WatchStore(service.store), backoff=0.0)
    async with httpx.AsyncClient() as client:
        for _ in range(3):  # bounded: each pass sends what is due
            await hooks.deliver(client)
    alice = [
        b["id"]
        for b, p in zip(Receiver.received, Receiver.paths, strict=True)
        if p.endswith("/alice")
    ]
    assert alice == [events[0].event_id, events[1].event_id]  # not bob's alert
    assert len(Receiver.paths) == 2  # bob's signature (not the receiver's secret): 401
    (status,) = (await http.get(hook, headers=ALICE)).json()["webhooks"]
    assert status["deliveredSeq"] == 3 and status["lastStatus"] == "ok"
    assert status["endpoint"] == mine.json()["endpoint"] and "url" not in status
    (bobs,) = (await http.get(hook, headers=BOB)).json()["webhooks"]
    assert bobs["lastStatus"] == "HTTP 401" and bobs["deliveredSeq"] == 0
    gone = await http.delete(f"{hook}/{bobs['endpoint']}", headers=BOB)
    assert gone.json()["removed"] is True
    assert (await http.get(hook, headers=BOB)).json() == {"webhooks": []}

"""The watcher's pure rules (what is a change, event ids) and its store (exactly once:
the cursor's compare-and-set, events kept once, watchlist limits, dead letters)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tokenrisk.cli.main import app
from tokenrisk.errors import StoreConflict
from tokenrisk.jobs import WATCH_JOB_EPOCH, watch_job_id
from tokenrisk.store.engine import Store
from tokenrisk.store.watch import Delivery, NewEvent, Task, TaskStore, WatchCursor, WatchStore
from tokenrisk.watch.blocks import Trigger
from tokenrisk.watch.events import changes, event_id
from tokenrisk.watch.watcher import Bounds, Watcher, _first_per_token
from tokenrisk.watch.webhooks import Endpoint, Webhooks, signature

TOKEN = "0x" + "ab" * 20
OTHER = "0x" + "cd" * 20
BEFORE = {
    "isHoneypot": False,
    "risk": "low",
    "buyTax": 0.0,
    "sellTax": 3.0,
    "transferTax": 0.0,
    "flags": ["a"],
}


def test_equal_answers_make_no_change() -> None:
    assert changes(BEFORE, dict(BEFORE), tax_threshold=5.0) == []


def test_a_tax_must_move_past_the_threshold() -> None:
    assert changes(BEFORE, {**BEFORE, "sellTax": 8.0}, tax_threshold=5.0) == []
    moved = changes(BEFORE, {**BEFORE, "sellTax": 99.0}, tax_threshold=5.0)
    assert moved == [{"field": "sellTax", "before": 3.0, "after": 99.0}]
    unmeasured = changes(BEFORE, {**BEFORE, "sellTax": None}, tax_threshold=5.0)
    assert unmeasured == [{"field": "sellTax", "before": 3.0, "after": None}]


def test_verdict_risk_and_flags_are_reported_before_and_after() -> None:
    after = {**BEFORE, "isHoneypot": True, "risk": "honeypot", "flags": ["b"]}
    assert changes(BEFORE, after, tax_threshold=5.0) == [
        {"field": "isHoneypot", "before": False, "after": True},
        {"field": "risk", "before": "low", "after": "honeypot"},
        {"field": "flag", "before": None, "after": "b"},
        {"field": "flag", "before": "a", "after": None},
    ]


def test_event_ids_depend_on_content_only() -> None:
    assert event_id(1, TOKEN, "alert", 5, [1]) == event_id(1, TOKEN.upper(), "alert", 5, [1])
    assert event_id(1, TOKEN, "alert", 5, [1]) != event_id(1, TOKEN, "alert", 6, [1])


def _event(block: int) -> NewEvent:
    ident = event_id(1, TOKEN, "alert", block, [])
    return NewEvent(ident, 1, TOKEN, "alert", block, "0xh", {"id": ident})


def test_a_range_commits_once(store: Store) -> None:
    watch = WatchStore(store)
    start, moved = WatchCursor(10, "0x10"), WatchCursor(12, "0x12")
    assert watch.commit(1, None, start, [], {}) == 0
    with pytest.raises(StoreConflict):
        watch.commit(1, None, start, [], {})  # a second watcher starting the chain
    assert watch.commit(1, start, moved, [_event(11)], {TOKEN: (11, {"risk": "low"})}) == 1
    with pytest.raises(StoreConflict):  # another watcher's copy of the same range
        watch.commit(1, start, moved, [_event(11)], {})
    assert watch.commit(1, moved, WatchCursor(13, "0x13"), [_event(11)], {}) == 0  # redone
    assert [e.block for e in watch.events_after(0)] == [11]
    assert watch.snapshot(1, TOKEN) == {"risk": "low"}


def test_watchlists_are_per_key_and_bounded(store: Store) -> None:
    watch = WatchStore(store)
    assert watch.add("k", 1, TOKEN, limit=1)
    assert watch.add("k", 1, TOKEN, limit=1)  # already there: still fine
    assert not watch.add("k", 1, "0x" + "cd" * 20, limit=1)
    assert watch.add("other", 1, "0x" + "cd" * 20, limit=1)
    assert watch.listed("k") == [(1, TOKEN)]
    assert watch.watched(1) == {TOKEN, "0x" + "cd" * 20}
    assert watch.remove("k", 1, TOKEN) and not watch.remove("k", 1, TOKEN)


def test_dead_letters_are_kept_per_endpoint(store: Store) -> None:
    watch = WatchStore(store)
    assert watch.delivery("e") == Delivery(0, 0, "never")
    watch.record_delivery("e", Delivery(0, 2, "HTTP 500"))
    watch.record_delivery("e", Delivery(7, 0, "dead letter: HTTP 500"), dead="HTTP 500")
    assert watch.delivery("e").delivered_seq == 7
    assert watch.dead_letters("e") == [(7, "HTTP 500")]


async def test_a_webhook_that_keeps_failing_dead_letters_and_moves_on(store: Store) -> None:
    watch = WatchStore(store)
    watch.commit(1, None, WatchCursor(12, "0x12"), [_event(11), _event(12)], {})
    first, second = (e.event_id for e in watch.events_after(0))
    seen: list[tuple[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        ident = request.headers["X-Tokenrisk-Event"]
        expected = signature("s" * 16, request.content)
        assert request.headers["X-Tokenrisk-Signature"] == expected
        seen.append((ident, "fail" if ident == first else "ok"))
        return httpx.Response(500 if ident == first else 204)

    hooks = Webhooks((Endpoint("http://hook.test/x", "s" * 16),), watch, attempts=2, backoff=0.0)
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        assert await hooks.deliver(client) == 0  # first try fails
        assert await hooks.deliver(client) == 0  # second try fails: dead letter
        assert await hooks.deliver(client) == 1  # the next event goes out
    assert seen == [(first, "fail"), (first, "fail"), (second, "ok")]
    name = Endpoint("http://hook.test/x", "s" * 16).name
    assert watch.dead_letters(name) == [(1, "HTTP 500")]
    assert watch.delivery(name) == Delivery(2, 0, "ok") and hooks.failures == 2
    assert "hook.test" not in name


def _bare(bounds: Bounds) -> Watcher:
    """A watcher for its pure rules only (no node, no store)."""
    return Watcher(deps=None, store=None, bounds=bounds)  # type: ignore[arg-type]


def _task(token: str, block: int, kind: str = "recheck") -> Task:
    return Task(1, token, kind, block, "call", "0x" + f"{block:064x}")


def test_checks_past_the_cap_stay_queued_and_run_in_order(store: Store) -> None:
    """The follower's checks are committed with its cursor, handed out oldest block
    first under the cap, and each finished once (a second worker's copy commits nothing)."""
    watch, tasks = WatchStore(store), TaskStore(store)
    start, moved = WatchCursor(10, "0x10"), WatchCursor(13, "0x13")
    watch.commit(1, None, start, [], {})
    found = [_task(TOKEN, 12), _task(OTHER, 11), _task(TOKEN, 11, "new_pool")]
    watch.commit(1, start, moved, [], {}, found)
    watch.commit(1, moved, moved, [], {}, found)  # found again: kept once
    assert tasks.waiting(1) == (3, 11)
    assert tasks.dispatch(1, budget=2, ceiling=16) == 2  # block 11's two: the rest wait
    assert tasks.dispatch(1, budget=5, ceiling=2) == 0  # two in flight: none more
    assert tasks.open_tokens(1) == sorted([TOKEN, OTHER])
    assert [t.block for t in tasks.taken(1, TOKEN)] == [11]
    assert watch.finish(tasks.taken(1, TOKEN)[0], [_event(11)], {"risk": "low"}) == 1
    with pytest.raises(StoreConflict):  # the same check finished by a second worker
        watch.finish(_task(TOKEN, 11, "new_pool"), [_event(11)], {"risk": "high"})
    assert watch.snapshot(1, TOKEN) == {"risk": "low"}
    assert tasks.dispatch(1, budget=5, ceiling=16) == 1
    assert [(t.kind, t.block) for t in tasks.taken(1, TOKEN)] == [("recheck", 12)]
    watch.commit(1, moved, WatchCursor(11, "0x11"), [], {})  # a reorg back to block 11
    assert tasks.waiting(1) == (1, 11) and tasks.taken(1, TOKEN) == []


def test_interval_rechecks_every_watched_token_once() -> None:
    watcher = _bare(Bounds(interval_blocks=5))
    due = watcher._interval({TOKEN: None}, 11, 16)
    assert [(t.token, t.block, t.why) for t in due] == [(TOKEN, 15, "interval")]
    assert watcher._interval({TOKEN: None}, 11, 14) == []
    assert _bare(Bounds())._interval({TOKEN: None}, 0, 100) == []


def test_one_recheck_per_token_attributed_to_its_first_transaction() -> None:
    found = [
        Trigger(TOKEN, 12, "", "interval"),
        Trigger(TOKEN, 12, "0xb", "call"),
        Trigger(TOKEN, 11, "0xa", "control"),
        Trigger(OTHER, 13, "0xc", "liquidity"),
    ]
    assert [(t.token, t.tx) for t in _first_per_token(found)] == [(TOKEN, "0xa"), (OTHER, "0xc")]


class _Blocks:
    """A node's blocks for the horizon rule: block n has timestamp ``stamp0 + 12 n``."""

    id = 1

    def __init__(self, stamp0: int) -> None:
        self.rpc = self
        self.stamp0 = stamp0
        self.asked: list[int] = []

    async def call(self, method: str, params: list[object]) -> dict[str, str]:
        assert method == "eth_getBlockByNumber"
        number = int(str(params[0]), 16)
        self.asked.append(number)
        return {"number": hex(number), "timestamp": hex(self.stamp0 + 12 * number)}


class _Snapshots:
    def __init__(self, horizons: dict[str, dict[str, int] | None]) -> None:
        self.horizons = horizons

    def watched(self, chain_id: int) -> set[str]:
        return set(self.horizons)

    def snapshot(self, chain_id: int, token: str) -> dict[str, object]:
        return {"isHoneypot": False, "sellsFailFrom": self.horizons[token]}


async def test_a_time_bomb_horizon_rechecks_at_the_first_block_past_it() -> None:
    """By block number or by time, whichever the range passes first; found by bisection
    (a range of thousands of blocks reads a few timestamps)."""
    node = _Blocks(stamp0=1_000_000)
    horizons = {
        TOKEN: {"block": 5_000, "timestamp": 10**12},  # a bomb set by block number
        OTHER: {"block": 10**9, "timestamp": 1_000_000 + 12 * 4_321 - 5},  # by time
        "0x" + "ef" * 20: None,  # nothing fails later
    }
    watcher = Watcher(deps=None, store=_Snapshots(horizons), bounds=Bounds())  # type: ignore[arg-type]
    found = await watcher._horizons(node, 1, 4_000)  # type: ignore[arg-type]
    assert found == []
    found = await watcher._horizons(node, 4_001, 9_000)  # type: ignore[arg-type]
    assert sorted((t.token, t.block, t.tx, t.why) for t in found) == [
        (TOKEN, 5_000, "", "horizon"),
        (OTHER, 4_321, "", "horizon"),
    ]
    assert len(node.asked) < 40


def test_the_cli_manages_a_keys_webhooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKENRISK_DATA_DIR", str(tmp_path))
    cli = CliRunner()
    made = cli.invoke(app, ["watch", "webhook", "add", "http://127.0.0.1:9/h", "--key", "alice"])
    assert made.exit_code == 0, made.output
    added = json.loads(made.output)
    assert len(added["secret"]) == 64
    listed = json.loads(cli.invoke(app, ["watch", "webhook", "list", "--key", "alice"]).output)
    assert listed == [
        {"endpoint": added["endpoint"], "delivered_seq": 0, "attempts": 0, "last_status": "never"}
    ]
    assert cli.invoke(app, ["watch", "webhook", "list", "--key", "bob"]).output.strip() == "[]"
    bad = cli.invoke(app, ["watch", "webhook", "add", "file:///etc/passwd", "--key", "alice"])
    assert bad.exit_code != 0
    gone = cli.invoke(app, ["watch", "webhook", "remove", added["endpoint"], "--key", "alice"])
    assert "removed" in gone.output


def test_a_tokens_job_id_is_one_per_period() -> None:
    """One job per token at a time; a job stuck with a dead worker is replaced later."""
    first = watch_job_id(1, TOKEN.upper(), now=WATCH_JOB_EPOCH * 7)
    assert first == watch_job_id(1, TOKEN, now=WATCH_JOB_EPOCH * 8 - 1)
    assert first != watch_job_id(1, TOKEN, now=WATCH_JOB_EPOCH * 8)
    assert first != watch_job_id(2, TOKEN, now=WATCH_JOB_EPOCH * 7)

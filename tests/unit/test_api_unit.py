"""The API layer without a node: parameters, keys, rate limit, results cache, health.

Chains and nodes are fakes: a node is an object with an async ``call`` that answers
``eth_getBlockByNumber`` from a mutable head, so tests move the head by hand.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tokenrisk.api import handlers, params
from tokenrisk.api.access import RateLimiter
from tokenrisk.api.app import create_app
from tokenrisk.api.cache import ResultCache, chain_heads
from tokenrisk.api.health import chain_health
from tokenrisk.api.params import parse_bool, parse_chain_id
from tokenrisk.chain.head import parse_head
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.checks.deps import HolderIndex
from tokenrisk.config import Settings
from tokenrisk.errors import (
    InputError,
    InvalidAddress,
    MalformedResponse,
    MissingParameter,
    NodeUnavailable,
    RateLimited,
    UnknownChain,
)
from tokenrisk.store.engine import Store, create_store

TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"


# FAKES


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeNode:
    number: int = 100
    timestamp: int = 1_700_000_000
    down: bool = False
    calls: int = 0

    async def call(self, method: str, params: Any = ()) -> Any:
        assert method == "eth_getBlockByNumber"
        self.calls += 1
        if self.down:
            raise NodeUnavailable("chain node is unreachable")
        return {
            "number": hex(self.number),
            "hash": "0x" + f"{self.number:064x}",
            "timestamp": hex(self.timestamp),
        }


@dataclass
class FakeChain:
    id: int
    name: str
    uniswap_v4: None = None  # no V4: nothing a V4 search could have missed


@dataclass
class FakeService:
    """What the API layer uses of a Service: the chains' Nodes (real Node objects around
    the fake clients), a real (in-memory SQLite) store for API keys, the holder index
    (whose job queue the app sets while serving) and no local node processes."""

    clients: dict[int, FakeNode]
    store: Store = field(default_factory=lambda: create_store("sqlite://"))
    processes: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        fakes = {i: Node(FakeChain(i, f"chain {i}"), c) for i, c in self.clients.items()}  # type: ignore[arg-type]
        self.nodes = Nodes(fakes)
        self.index = HolderIndex(self.store)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Replace the checks by counters that answer with how often they ran."""
    runs = {"pairs": 0, "holders": 0, "verify": 0}

    async def get_pairs(runner: Any, address: str, chain_id: int | None, limit: int) -> list[Any]:
        runs["pairs"] += 1
        runs["pairs_limit"] = limit
        return [{"run": runs["pairs"], "address": address}]

    async def top_holders(runner: Any, address: str, chain_id: int, limit: int) -> dict[str, Any]:
        runs["holders"] += 1
        runs["holders_limit"] = limit
        return {"run": runs["holders"]}

    async def verify(runner: Any, address: str, chain_id: int | None, *_: Any) -> dict[str, Any]:
        runs["verify"] += 1
        return {"run": runs["verify"]}

    monkeypatch.setattr(handlers, "pairs_json", get_pairs)
    monkeypatch.setattr(handlers, "holders_json", top_holders)
    monkeypatch.setattr(handlers, "verification_json", verify)
    return runs


@pytest.fixture
def nodes() -> dict[int, FakeNode]:
    return {1: FakeNode(), 8453: FakeNode(number=5000)}


async def _client(
    nodes: dict[int, FakeNode], head_reuse: float
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, cache_ttl=30, head_reuse=head_reuse)
    app = create_app(settings, FakeService(nodes))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


@pytest.fixture
async def http(nodes: dict[int, FakeNode]) -> AsyncIterator[httpx.AsyncClient]:
    """Every cache lookup reads the head (``head_reuse=0``)."""
    async for client in _client(nodes, 0.0):
        yield client


@pytest.fixture
async def reusing(nodes: dict[int, FakeNode]) -> AsyncIterator[httpx.AsyncClient]:
    """Lookups key on a head read in the last 30 s (far longer than any test)."""
    async for client in _client(nodes, 30.0):
        yield client


# PARAMETERS


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, False), ("", False), ("true", True), ("TRUE", True), ("1", True), ("no", False)],
)
def test_parse_bool(raw: str | None, expected: bool) -> None:
    assert parse_bool("flag", raw) is expected


@pytest.mark.parametrize("raw", ["maybe", "2", "tru", "yes please"])
def test_parse_bool_rejects(raw: str) -> None:
    with pytest.raises(InputError, match="flag must be true or false"):
        parse_bool("flag", raw)


def test_parse_chain_id() -> None:
    assert parse_chain_id(None) is None and parse_chain_id("") is None
    assert parse_chain_id("8453") == 8453


@pytest.mark.parametrize("raw", ["-1", "1.0", "0x1", "abc", "١", "1" * 13, " 1"])
def test_parse_chain_id_rejects(raw: str) -> None:
    with pytest.raises(InputError):
        parse_chain_id(raw)


def test_require_chain_id_and_address() -> None:
    with pytest.raises(MissingParameter, match="chainID is required"):
        params.require_chain_id(None)
    with pytest.raises(MissingParameter, match="address is required"):
        params.require_address("address", "")
    assert params.require_address("address", TOKEN.lower()) == TOKEN
    with pytest.raises(InvalidAddress, match="EIP-55"):
        params.require_address("address", TOKEN[:2] + TOKEN[2:].swapcase())


def test_liquidity_mode() -> None:
    assert params.liquidity_mode(False, False) == "never"
    assert params.liquidity_mode(True, False) == "if_missing"
    assert params.liquidity_mode(True, True) == "always"


# KEYS AND RATE LIMIT


def test_rate_limiter_bucket_refills_and_says_when() -> None:
    clock = Clock()
    limiter = RateLimiter(2, clock=clock)
    limiter.take("a")
    limiter.take("a")
    with pytest.raises(RateLimited) as caught:
        limiter.take("a")
    assert caught.value.retry_after == 30  # 2 per minute: one every 30 s
    limiter.take("b")  # buckets are per client
    clock.now += 29.0
    with pytest.raises(RateLimited) as caught:
        limiter.take("a")
    assert caught.value.retry_after == 1
    clock.now += 1.0
    limiter.take("a")


def test_rate_limiter_has_no_minute_boundary_burst() -> None:
    clock = Clock()
    clock.now = 59.9
    limiter = RateLimiter(3, clock=clock)
    for _ in range(3):
        limiter.take("a")
    clock.now = 60.1  # a fixed window would allow 3 more here
    with pytest.raises(RateLimited):
        limiter.take("a")


def test_rate_limiter_off_and_bounded() -> None:
    off = RateLimiter(0)
    for _ in range(1000):
        off.take("a")
    small = RateLimiter(1, clock=Clock(), max_clients=3)
    for who in "abcd":
        small.take(who)
    assert len(small._buckets) == 3
    small.take("a")  # "a" was forgotten first, so it starts with a full bucket again


# CACHE


def test_cache_expires_after_ttl() -> None:
    clock = Clock()
    cache = ResultCache(10, clock=clock)
    cache.put("k", {"v": 1})
    assert cache.get("k") == (True, {"v": 1})
    clock.now += 10.0
    assert cache.get("k") == (False, None)
    assert len(cache) == 0
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)


def test_cache_is_bounded_lru() -> None:
    cache = ResultCache(10, max_entries=2, clock=Clock())
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.get("b") == (False, None)
    assert cache.get("a") == (True, 1) and cache.get("c") == (True, 3)
    assert cache.stats.evictions == 1


def test_cache_disabled_with_zero_ttl() -> None:
    cache = ResultCache(0)
    cache.put("a", 1)
    assert not cache.enabled and cache.get("a") == (False, None)
    with pytest.raises(ValueError):
        ResultCache(10, max_entries=0)


async def test_chain_heads_sorted_partial_and_total_failure(nodes: dict[int, FakeNode]) -> None:
    svc = FakeService({8453: nodes[8453], 1: nodes[1]}).nodes

    def head(n: int) -> str:
        return "0x" + f"{n:064x}"

    assert await chain_heads(svc, None) == (
        (1, 100, head(100)),
        (8453, 5000, head(5000)),
    )
    assert await chain_heads(svc, 1) == ((1, 100, head(100)),)
    nodes[8453].down = True
    assert await chain_heads(svc, None) is None  # one chain down: run uncached
    with pytest.raises(NodeUnavailable):
        await chain_heads(svc, 8453)
    with pytest.raises(UnknownChain):
        await chain_heads(svc, 5)


async def test_pairs_cached_until_the_head_moves(
    http: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    params = {"address": TOKEN, "chainID": "1"}
    first = (await http.get("/v1/GetPairs", params=params)).json()
    again = (await http.get("/v1/GetPairs", params={**params, "address": TOKEN.lower()})).json()
    assert first == again == [{"run": 1, "address": TOKEN}]
    nodes[8453].number += 1  # another chain: not in this key
    assert (await http.get("/v1/GetPairs", params=params)).json()[0]["run"] == 1
    nodes[1].number += 1
    assert (await http.get("/v1/GetPairs", params=params)).json()[0]["run"] == 2


async def test_key_without_chain_covers_every_chain(
    http: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    params = {"address": TOKEN}
    await http.get("/v1/GetPairs", params=params)
    await http.get("/v1/GetPairs", params=params)
    assert counted["pairs"] == 1
    nodes[8453].number += 1
    await http.get("/v1/GetPairs", params=params)
    assert counted["pairs"] == 2
    nodes[8453].down = True  # partial outage: computed every time, never stored
    await http.get("/v1/GetPairs", params=params)
    await http.get("/v1/GetPairs", params=params)
    assert counted["pairs"] == 4


async def test_one_head_read_per_chain_per_request(
    http: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    await http.get("/v1/TopHolders", params={"address": TOKEN, "chainID": "1"})
    assert (nodes[1].calls, nodes[8453].calls) == (1, 0)
    await http.get("/v1/TopHolders", params={"address": TOKEN, "chainID": "1"})
    assert (nodes[1].calls, counted["holders"]) == (2, 1)


async def test_a_hit_keys_on_a_recently_read_head_without_a_node_call(
    reusing: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    params = {"address": TOKEN, "chainID": "1"}
    first = await reusing.get("/v1/GetPairs", params=params)
    again = await reusing.get("/v1/GetPairs", params=params)
    assert first.headers["X-Cache"] == "miss" and again.headers["X-Cache"] == "hit"
    assert (nodes[1].calls, counted["pairs"]) == (1, 1)  # the hit asked the node nothing


async def test_a_miss_reads_the_head_again_and_computes_at_the_latest(
    reusing: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    await reusing.get("/v1/GetPairs", params={"address": TOKEN, "chainID": "1"})
    nodes[1].number += 1  # a new block the Node has not read yet
    other = {"address": TOKEN, "chainID": "1"}
    assert (await reusing.get("/v1/TopHolders", params=other)).headers["X-Cache"] == "miss"
    assert nodes[1].calls == 2  # the remembered head missed: read afresh before computing
    # the first answer was computed at the old head; the Node now knows the new one
    again = await reusing.get("/v1/GetPairs", params={"address": TOKEN, "chainID": "1"})
    assert again.headers["X-Cache"] == "miss" and again.json()[0]["run"] == 2
    assert nodes[1].calls == 3  # a miss always computes at a head read for it


async def test_a_failed_head_read_or_a_new_client_forgets_the_head(
    nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    node = Node(FakeChain(1, "one"), nodes[1])  # type: ignore[arg-type]
    assert (await node.head(30)).number == 100 and nodes[1].calls == 1
    assert (await node.head(30)).number == 100 and nodes[1].calls == 1  # remembered
    assert (await node.head()).number == 100 and nodes[1].calls == 2  # max_age 0: asked
    node.rpc = FakeNode(number=7)  # type: ignore[assignment]
    assert (await node.head(30)).number == 7  # not the old client's head
    node.rpc.down = True  # type: ignore[attr-defined]
    with pytest.raises(NodeUnavailable):
        await node.head()
    with pytest.raises(NodeUnavailable):  # the failure forgot the remembered head
        await node.head(30)
    node.rpc.down = False  # type: ignore[attr-defined]
    assert (await node.head(0.01)).number == 7
    await asyncio.sleep(0.02)
    calls = node.rpc.calls  # type: ignore[attr-defined]
    await node.head(0.01)  # older than max_age: asked again
    assert node.rpc.calls == calls + 1  # type: ignore[attr-defined]


async def test_endpoints_do_not_share_entries(
    http: httpx.AsyncClient, counted: dict[str, int]
) -> None:
    await http.get("/v1/GetPairs", params={"address": TOKEN, "chainID": "1"})
    await http.get("/v1/TopHolders", params={"address": TOKEN, "chainID": "1"})
    assert (counted["pairs"], counted["holders"]) == (1, 1)


async def test_verification_is_cached_per_head(
    http: httpx.AsyncClient, nodes: dict[int, FakeNode], counted: dict[str, int]
) -> None:
    """Like IsHoneypot (issue #27): a repeat at the same head is not computed again, a
    new head computes it afresh; every lookup reads the head."""
    params = {"address": TOKEN, "chainID": "1"}
    for _ in range(3):
        await http.get("/v2/GetContractVerification", params=params)
    assert counted["verify"] == 1 and nodes[1].calls == 3
    nodes[1].number += 1
    await http.get("/v2/GetContractVerification", params=params)
    assert counted["verify"] == 2


async def test_unexpected_error_is_a_plain_500(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(runner: Any, address: str, chain_id: int | None, *_: Any) -> Any:
        raise RuntimeError("secret http://user:key@node.example:8545")

    monkeypatch.setattr(handlers, "verification_json", boom)
    response = await http.get("/v2/GetContractVerification", params={"address": TOKEN})
    assert response.status_code == 500
    assert response.json() == {"code": 500, "error": "internal error"}


# HEALTH


def test_parse_head_rejects_partial_blocks() -> None:
    assert parse_head({"number": "0x10", "hash": "0xAB", "timestamp": "0x5"}).hash == "0xab"
    for bad in (
        None,
        {},
        {"number": "0x10", "hash": "0x1"},
        {"number": "x", "hash": "0x", "timestamp": "0x1"},
    ):
        with pytest.raises(MalformedResponse):
            parse_head(bad)


async def test_chain_health_age_and_failure() -> None:
    node = FakeNode(number=7, timestamp=1000)
    line = await chain_health(Node(FakeChain(1, "one"), node), 1.0, now=lambda: 1012.0)  # type: ignore[arg-type]
    assert line.model_dump(exclude_none=True) == {
        "chainId": 1,
        "name": "one",
        "reachable": True,
        "headBlock": 7,
        "headTimestamp": 1000,
        "headAgeSeconds": 12.0,
    }
    node.down = True
    line = await chain_health(Node(FakeChain(1, "one"), node), 1.0)  # type: ignore[arg-type]
    assert line.model_dump(exclude_none=True) == {
        "chainId": 1,
        "name": "one",
        "reachable": False,
        "error": "the node cannot be reached",
    }


async def test_health_route(http: httpx.AsyncClient, nodes: dict[int, FakeNode]) -> None:
    ok = await http.get("/health")
    assert ok.status_code == 200 and ok.json()["status"] == "ok"
    assert [c["chainId"] for c in ok.json()["chains"]] == [1, 8453]
    nodes[1].down = True
    cached = await http.get("/health")  # within the second: the same probe, no node request
    assert cached.json() == ok.json()
    await asyncio.sleep(1.05)
    degraded = await http.get("/health")
    assert degraded.status_code == 503 and degraded.json()["status"] == "degraded"
    assert [c["reachable"] for c in degraded.json()["chains"]] == [False, True]

"""Where an IsHoneypot request spends its time: node round trips versus Python.

The app runs in this process (``httpx.ASGITransport``) with the results cache off (a
hit is only a head read) and its node client replaced by :class:`TimedRpc`, which
records the interval of every round trip.  For a few requests on a warm holder index it
reports wall time, the union of round-trip intervals (time at least one request was
waiting on the node, including httpx and JSON work around it), process CPU time, and
the JSON-RPC calls by method; then it profiles one more request with cProfile and keeps
the functions with the most own time.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import orjson

from bench.latency import Samples
from bench.proxy import covered, sequential
from bench.replay import Sent, errors_in, replay
from tokenrisk.api.app import create_app
from tokenrisk.api.lifespan import tune_collector
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet

T = TypeVar("T")


class TimedRpc(CoalescingRpc):
    """The service's node client, remembering when each round trip started and ended
    (and, while ``recording`` is a list, every HTTP request's body: :mod:`bench.replay`)."""

    def __init__(self, url: str) -> None:
        super().__init__(url, label="devnet node")
        self.spans: list[tuple[float, float]] = []
        self.methods: Counter[str] = Counter()
        self.recording: list[Sent] | None = None

    async def _exchange(self, payload: Any, typed: Any = None) -> Any:
        started = time.perf_counter()
        reply = await super()._exchange(payload, typed)
        if self.recording is not None:
            body = orjson.dumps(payload)
            self.recording.append(Sent(started, time.perf_counter(), body, errors_in(reply)))
        return reply

    async def _timed(self, work: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await work
        finally:
            self.spans.append((started, time.perf_counter()))

    async def _post_call(self, method: str, params: Sequence[Any] = ()) -> Any:
        self.methods[method] += 1
        return await self._timed(super()._post_call(method, params))

    async def _post_batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        self.methods.update(method for method, _ in calls)
        return await self._timed(super()._post_batch(calls))

    async def _post_typed(self, method: str, params: Sequence[Any], result_type: Any) -> Any:
        self.methods[method] += 1
        return await self._timed(super()._post_typed(method, params, result_type))

    def reset(self) -> None:
        self.spans.clear()
        self.methods.clear()


@dataclass
class Breakdown:
    """Per-request averages over ``requests`` warm IsHoneypot requests."""

    requests: int
    wall: float
    node: float
    cpu: float
    round_trips: float
    sequential: float = 0.0
    methods: Counter[str] = field(default_factory=Counter)
    top: str = ""

    @property
    def calls(self) -> float:
        return sum(self.methods.values()) / self.requests


@asynccontextmanager
async def in_process(
    rpc_url: str,
    manifest: dict[str, Any],
    build_dir: Path,
    data_dir: Path,
    holder_limit: int | None = None,
) -> AsyncIterator[tuple[httpx.AsyncClient, TimedRpc, str]]:
    """The app in this process with its node client a :class:`TimedRpc` (results cache
    off): (client, node client, chain id).  ``holder_limit`` None keeps the default."""
    settings = Settings(devnet=False, data_dir=data_dir, deadline=120.0, cache_ttl=0)
    if holder_limit is not None:
        settings = settings.model_copy(update={"holder_limit": holder_limit})
    service = connect_devnet(settings, rpc_url, manifest, build_dir)
    timed = TimedRpc(rpc_url)
    chain_id = next(iter(service.nodes))
    await service.nodes[chain_id].rpc.aclose()
    service.nodes[chain_id].rpc = timed
    transport = httpx.ASGITransport(app=create_app(settings, service))
    tune_collector()  # as the lifespan does when serving (ASGITransport runs no lifespan)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            yield http, timed, str(chain_id)
    finally:
        await service.close()


@dataclass(frozen=True)
class WorkFloor:
    """A warm check's latency against the node replaying that check's own requests."""

    check: Samples
    replayed: Samples
    requests: int  # HTTP requests to the node in one check

    @property
    def ratio(self) -> float:
        return self.check.p50 / self.replayed.p50


async def work_floor(
    rpc_url: str,
    manifest: dict[str, Any],
    build_dir: Path,
    data_dir: Path,
    token: str,
    holder_limit: int | None = None,
    checks: int = 10,
    replays: int = 20,
) -> WorkFloor:
    """``checks`` warm IsHoneypot (after one that fills the index) and ``replays`` of the
    node requests of the last one (:mod:`bench.replay`)."""
    async with in_process(rpc_url, manifest, build_dir, data_dir, holder_limit) as running:
        http, timed, chain_id = running
        params = {"address": token, "chainID": chain_id}
        (await http.get("/v2/IsHoneypot", params=params)).raise_for_status()
        check = Samples()
        for _ in range(checks):
            timed.recording = []
            started = time.perf_counter()
            response = await http.get("/v2/IsHoneypot", params=params)
            check.add(time.perf_counter() - started, response.status_code)
            response.raise_for_status()
        sent, timed.recording = timed.recording or [], None
    return WorkFloor(check, await replay(rpc_url, sent, replays), len(sent))


async def profile_is_honeypot(
    rpc_url: str,
    manifest: dict[str, Any],
    build_dir: Path,
    data_dir: Path,
    token: str,
    requests: int = 5,
    holder_limit: int | None = None,
    profiler: cProfile.Profile | None = None,
) -> Breakdown:
    """Breakdown of warm IsHoneypot on ``token`` (after one request that fills the index).

    ``holder_limit`` None keeps the Settings default; ``profiler`` (when given) is the
    one the cProfile pass records into, for callers that print its own table.
    """
    async with in_process(rpc_url, manifest, build_dir, data_dir, holder_limit) as running:
        http, timed, chain_id = running
        params = {"address": token, "chainID": chain_id}
        (await http.get("/v2/IsHoneypot", params=params)).raise_for_status()
        breakdown = await _breakdown(http, timed, params, requests=requests)
        breakdown.top = await _profiled(http, params, requests, profiler)
    return breakdown


async def _breakdown(
    http: httpx.AsyncClient, timed: TimedRpc, params: dict[str, str], requests: int
) -> Breakdown:
    timed.reset()
    wall = node = cpu = 0.0
    trips = depth = 0
    for _ in range(requests):
        timed.spans.clear()
        started, cpu_started = time.perf_counter(), time.process_time()
        (await http.get("/v2/IsHoneypot", params=params)).raise_for_status()
        wall += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        node += covered(timed.spans)
        trips += len(timed.spans)
        depth += sequential(timed.spans)
    n = requests
    return Breakdown(n, wall / n, node / n, cpu / n, trips / n, depth / n, Counter(timed.methods))


COMPONENTS = (
    ("waiting for the node (epoll)", ("select.epoll",)),
    ("ABI encoding/decoding (eth_abi)", ("/eth_abi/",)),
    ("addresses, hex (eth_utils)", ("/eth_utils/",)),
    ("keccak (eth_hash, pycryptodome)", ("/eth_hash/", "/Crypto/")),
    ("HTTP client (httpx, httpcore, h11, anyio)", ("/httpx/", "/httpcore/", "/h11/", "/anyio/")),
    ("failed imports (importlib)", ("importlib", "posix.stat")),
    ("JSON", ("/json/",)),
    ("asyncio", ("/asyncio/",)),
    ("store (SQLAlchemy, sqlite3)", ("/sqlalchemy/", "sqlite3")),
    ("web framework (FastAPI, Starlette, pydantic)", ("/fastapi/", "/starlette/", "/pydantic")),
    ("tokenrisk", ("/tokenrisk/",)),
)


def component(filename: str, function: str) -> str:
    """Which part of the stack a profiled function belongs to."""
    where = f"{filename}:{function}"
    for name, needles in COMPONENTS:
        if any(needle in where for needle in needles):
            return name
    return "other (builtins, stdlib)"


async def _profiled(
    http: httpx.AsyncClient,
    params: dict[str, str],
    requests: int = 5,
    profiler: cProfile.Profile | None = None,
) -> str:
    """Own time per request by component, as a Markdown table (cProfile, ``requests`` runs)."""
    profiler = profiler or cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        (await http.get("/v2/IsHoneypot", params=params)).raise_for_status()
    profiler.disable()
    own: Counter[str] = Counter()
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    for (filename, _, function), (_, _, tottime, *_) in stats.items():
        own[component(filename, function)] += tottime
    total = sum(own.values())
    rows = [
        f"| {name} | {seconds / requests * 1000:.1f} | {seconds / total:.0%} |"
        for name, seconds in own.most_common()
    ]
    header = "| component (own time, under cProfile) | ms per request | share |\n|---|---|---|"
    return "\n".join([header, *rows])

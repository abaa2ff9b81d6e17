"""Latency samples: timed HTTP requests and nearest-rank percentiles.

Times are wall-clock seconds measured by the client around the whole request (connect
reuse, server, node), which is what a caller of the API waits for, less what a heavy
client library would add (:mod:`bench.client`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import httpx

from bench.client import BenchClient


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty sample."""
    if not values:
        raise ValueError("percentile of an empty sample")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def status_text(statuses: Counter[int]) -> str:
    """``200x58 404x2``: how many responses had each status."""
    return " ".join(f"{code}x{count}" for code, count in sorted(statuses.items()))


@dataclass
class Samples:
    """Seconds per request and the status codes seen."""

    seconds: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    by_status: dict[int, list[float]] = field(default_factory=dict)

    def add(self, seconds: float, status: int) -> None:
        self.seconds.append(seconds)
        self.statuses[status] += 1
        self.by_status.setdefault(status, []).append(seconds)

    def merge(self, other: Samples) -> None:
        self.seconds += other.seconds
        self.statuses.update(other.statuses)
        for status, seconds in other.by_status.items():
            self.by_status.setdefault(status, []).extend(seconds)

    def only(self, status: int) -> Samples:
        """The samples that got ``status`` (e.g. the 200s of a run with refusals)."""
        out = Samples()
        for seconds in self.by_status.get(status, []):
            out.add(seconds, status)
        return out

    @property
    def n(self) -> int:
        return len(self.seconds)

    @property
    def p50(self) -> float:
        return percentile(self.seconds, 50)

    @property
    def p99(self) -> float:
        return percentile(self.seconds, 99)


async def timed_get(
    http: BenchClient | httpx.AsyncClient, path: str, params: Mapping[str, str | int]
) -> tuple[float, int]:
    """(seconds, status) of one GET; the body is read completely before the clock stops.

    Every figure of the bench is timed through :class:`bench.client.BenchClient`; an
    httpx client is still accepted (its own CPU then counts in the figure).
    """
    started = time.perf_counter()
    if isinstance(http, BenchClient):
        status, _ = await http.get(path, params)
        return time.perf_counter() - started, status
    response = await http.get(path, params=dict(params))
    await response.aread()
    return time.perf_counter() - started, response.status_code

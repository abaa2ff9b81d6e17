"""Throughput: N concurrent clients sending a fixed number of requests to one endpoint.

Each client is a loop on its own connection taking the next request from a shared
queue, so exactly ``requests`` requests are answered whatever the concurrency.  With
``retry_refused`` a client behaves as the API asks of one refused by admission control:
it waits ``RETRY_PAUSE`` (a fraction of the ``Retry-After`` second, so the measured
interval is the server's, not the clients' idle time) and asks again; every 503 is
still recorded (its latency is the "fast 503" figure), and the request counts once it
is answered.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.client import BenchClient
from bench.latency import Samples, timed_get


@dataclass(frozen=True)
class Throughput:
    clients: int
    seconds: float
    samples: Samples

    @property
    def per_second(self) -> float:
        return self.samples.n / self.seconds if self.seconds > 0 else 0.0


RETRY_PAUSE = 0.1


async def _client(
    base_url: str,
    path: str,
    queue: asyncio.Queue[Mapping[str, str | int]],
    out: Samples,
    retry_refused: bool,
) -> None:
    async with BenchClient(base_url) as http:
        while not queue.empty():
            params = queue.get_nowait()
            while True:
                seconds, status = await timed_get(http, path, params)
                out.add(seconds, status)
                if status != 503 or not retry_refused:
                    break
                await asyncio.sleep(RETRY_PAUSE)


async def throughput(
    base_url: str,
    path: str,
    params: Sequence[Mapping[str, str | int]],
    clients: int,
    requests: int,
    retry_refused: bool = False,
) -> Throughput:
    """Send ``requests`` GETs (cycling through ``params``) with ``clients`` at once."""
    queue: asyncio.Queue[Mapping[str, str | int]] = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(params[i % len(params)])
    samples = Samples()
    started = time.perf_counter()
    await asyncio.gather(
        *(_client(base_url, path, queue, samples, retry_refused) for _ in range(clients))
    )
    return Throughput(clients, time.perf_counter() - started, samples)

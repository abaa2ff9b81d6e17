"""The node's own cost of the same work: a check's node requests, replayed.

:mod:`bench.floor` times one prepared simulation -- the least any IsHoneypot could cost.
This module times what the node spends on the work one real check asks of it: every
HTTP request the service sent for one warm IsHoneypot (recorded with its body and when
it started and ended) is sent again, byte for byte, straight to the node, in the same
order and with the same overlap: a request waits for exactly those that had ended before
it started in the recording, and no longer.  Nothing is planned, encoded or decoded
between them, so the replay's wall time is the node's cost of the check's work with the
check's own dependencies; the check's latency divided by it is what the service adds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from bench.latency import Samples
from tokenrisk.chain.http11 import Http11
from tokenrisk.chain.rpc import JSON_HEADERS


@dataclass(frozen=True)
class Sent:
    """One recorded HTTP request to the node: its body and when it started and ended."""

    started: float
    ended: float
    body: bytes
    errors: int = 0  # JSON-RPC error objects in the recorded reply (reverts are answers)


def errors_in(reply: Any) -> int:
    """Error objects in a decoded JSON-RPC reply (one object or a batch)."""
    replies = reply if isinstance(reply, list) else [reply]
    return sum(1 for r in replies if isinstance(r, dict) and "error" in r)


def schedule(sent: Sequence[Sent]) -> list[list[int]]:
    """For each request (in start order), the earlier ones it must wait for: those that
    had ended before it started."""
    ordered = sorted(sent, key=lambda s: s.started)
    return [
        [j for j in range(i) if ordered[j].ended <= ordered[i].started] for i in range(len(ordered))
    ]


async def replay_once(client: Http11, sent: Sequence[Sent], waits: list[list[int]]) -> float:
    """Seconds the node takes for ``sent`` in their recorded order and overlap."""
    ordered = sorted(sent, key=lambda s: s.started)
    tasks: list[asyncio.Task[None]] = []
    replies: list[tuple[int, bytes]] = [(0, b"")] * len(ordered)

    async def one(i: int) -> None:
        if waits[i]:
            await asyncio.gather(*(tasks[j] for j in waits[i]))
        replies[i] = await client.post(ordered[i].body)

    started = time.perf_counter()
    for i in range(len(ordered)):
        tasks.append(asyncio.ensure_future(one(i)))
    await asyncio.gather(*tasks)
    seconds = time.perf_counter() - started
    for (status, reply), recorded in zip(replies, ordered, strict=True):
        if status != 200 or errors_in(orjson.loads(reply)) != recorded.errors:
            raise RuntimeError("the node answered a replayed request otherwise than recorded")
    return seconds


async def replay(url: str, sent: Sequence[Sent], samples: int = 20) -> Samples:
    """``samples`` replays (after one untimed) of one check's node requests."""
    if not sent:
        raise ValueError("nothing was recorded to replay")
    waits = schedule(sent)
    client = Http11(url, "devnet node", 60.0, 1 << 28, max_connections=32, headers=JSON_HEADERS)
    out = Samples()
    try:
        await replay_once(client, sent, waits)
        for _ in range(samples):
            out.add(await replay_once(client, sent, waits), 200)
    finally:
        await client.aclose()
    return out

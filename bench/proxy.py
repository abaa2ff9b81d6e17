"""A node "far away": a JSON-RPC proxy on loopback that delays every message.

The service talks to a provider or a node in the next rack, 5-80 ms away; on loopback
every sequential round trip is free, so a check that waits for the node five times in a
row looks as fast as one that waits twice.  :class:`LatencyProxy` sits between the
service and the devnet node and holds each request for ``delay`` seconds (plus a random
0..``jitter``) before forwarding it, and each reply as long again before handing it
back: one round trip costs ``2 x delay`` on top of the node's own time.  A new
connection's first request waits one round trip more (the TCP handshake a remote node
costs), so a client that opens connections per request pays for it as it would.

It counts what it forwards, per :meth:`window`: every HTTP request as an interval at
the client side (arrival to reply sent) and at the node side (forwarded to reply
read), in the window open when the request arrived (``pending``: the arrival of those
not yet answered).  :func:`sequential` of the client-side intervals is the number of
round trips on the critical path (concurrent ones count once); :func:`covered` of the node-side
intervals is the node's own time for those requests.

HTTP/1.1 only, ``Content-Length`` or chunked bodies, one upstream connection per client
connection (kept alive as long as the client's); it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

HOST = "127.0.0.1"
HEADER_LIMIT = 64 * 1024


@dataclass
class Window:
    """What the proxy forwarded since :meth:`LatencyProxy.window` opened it."""

    client: list[tuple[float, float]] = field(default_factory=list)
    node: list[tuple[float, float]] = field(default_factory=list)
    connections: int = 0
    bodies: list[bytes] | None = None  # every request's body, when asked for (debugging)
    pending: dict[int, float] = field(default_factory=dict)  # requests not yet answered

    def in_flight(self, now: float) -> list[tuple[float, float]]:
        """The client-side spans, those still unanswered ending ``now``."""
        return [*self.client, *((start, now) for start in self.pending.values())]

    @property
    def requests(self) -> int:
        return len(self.client)

    @property
    def round_trips(self) -> int:
        return sequential(self.client)

    @property
    def node_seconds(self) -> float:
        return covered(self.node)


def sequential(spans: Sequence[tuple[float, float]]) -> int:
    """Round trips on the critical path: the most intervals that follow one another
    without overlapping (each starts after the previous one ended)."""
    count, end = 0, float("-inf")
    for start, stop in sorted(spans, key=lambda span: span[1]):
        if start >= end:
            count, end = count + 1, stop
    return count


def covered(spans: Sequence[tuple[float, float]]) -> float:
    """Length of the union of intervals (time at least one request was at the node)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def gap_spans(
    window: tuple[float, float], spans: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """The parts of ``window`` (a check's HTTP request, sent to answered) where none of
    ``spans`` (its requests to the node, at the client side) was at the node or on the
    wire, in order: the first before the first request, the last after the last reply
    (either may be empty), the rest between one round's last reply and the next round's
    first request."""
    start, end = window
    inside = sorted((max(a, start), min(b, end)) for a, b in spans if b > start and a < end)
    if not inside:
        return [(start, end), (end, end)]
    out, reach = [(start, inside[0][0])], inside[0][1]
    for a, b in inside[1:]:
        if a > reach:
            out.append((reach, a))
        reach = max(reach, b)
    return [*out, (reach, end)]


def gaps(window: tuple[float, float], spans: Sequence[tuple[float, float]]) -> Gaps:
    """The service's own time on a check's critical path (:func:`gap_spans`), split into
    before the first request, between requests and after the last reply."""
    found = gap_spans(window, spans)
    between = sum(b - a for a, b in found[1:-1])
    return Gaps(found[0][1] - found[0][0], between, found[-1][1] - found[-1][0])


@dataclass(frozen=True)
class Gaps:
    """Seconds of a check with nothing of it at the node or on the wire (:func:`gaps`)."""

    lead: float  # the HTTP request's arrival to the first request to the node
    between: float  # a reply back to the next request out, summed
    tail: float  # the last reply to the answer

    @property
    def total(self) -> float:
        return self.lead + self.between + self.tail


class LatencyProxy:
    """``async with LatencyProxy(node_url, delay=0.015, jitter=0.002) as proxy:`` then
    point a client at ``proxy.url``; ``proxy.window()`` starts a new count."""

    def __init__(self, upstream: str, delay: float, jitter: float = 0.0, seed: int = 27) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("the proxy forwards plain http")
        self.upstream = (parts.hostname, parts.port or 80)
        self.delay, self.jitter = delay, jitter
        self._random = random.Random(seed)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.current = Window()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        port = self._server.sockets[0].getsockname()[1]
        return f"http://{HOST}:{port}"

    def window(self) -> Window:
        """A fresh count; the previous one is returned by the caller's reference."""
        self.current = Window()
        return self.current

    async def __aenter__(self) -> LatencyProxy:
        self._server = await asyncio.start_server(self._serve, HOST, 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop listening; connections the client has closed end by themselves, the
        rest are cancelled after a second."""
        if self._server is not None:
            self._server.close()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=1.0)
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _one_way(self) -> float:
        return self.delay + (self._random.uniform(0, self.jitter) if self.jitter else 0.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.current.connections += 1
        handshake = 2 * self.delay  # a new connection costs a round trip first
        try:
            while True:
                request = await _message(reader)
                if request is None:
                    return
                arrived, window = time.perf_counter(), self.current
                window.pending[id(request)] = arrived
                await asyncio.sleep(handshake + self._one_way())
                handshake = 0.0
                if upstream is None:
                    upstream = await asyncio.open_connection(*self.upstream)
                sent = time.perf_counter()
                upstream[1].write(request)
                reply = await _message(upstream[0])
                if reply is None:
                    return
                answered = time.perf_counter()
                await asyncio.sleep(self._one_way())
                writer.write(reply)
                await writer.drain()
                if window.bodies is not None:
                    window.bodies.append(request.split(b"\r\n\r\n", 1)[1])
                window.node.append((sent, answered))
                window.client.append((arrived, time.perf_counter()))
                window.pending.pop(id(request), None)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            if upstream is not None:
                upstream[1].close()


async def _message(reader: asyncio.StreamReader) -> bytes | None:
    """One whole HTTP/1.1 message (head and body) as read, or None at a clean EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    if len(head) > HEADER_LIMIT:
        raise ConnectionError("header too long")
    headers = head.lower()
    if b"transfer-encoding: chunked" in headers:
        return head + await _chunks(reader)
    length = 0
    for line in headers.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        line = await reader.readuntil(b"\r\n")
        out += line
        size = int(line.split(b";")[0], 16)
        if size == 0:
            out += await reader.readuntil(b"\r\n")
            return bytes(out)
        out += await reader.readexactly(size + 2)

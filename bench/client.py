"""The bench's own HTTP client: one keep-alive HTTP/1.1 connection, GET only.

httpx costs 0.5-2 ms of the load generator's CPU per request on this kind of machine,
as much as a cached answer takes the service; a latency figure that is mostly the
client says little about the service.  This client writes one request and reads the
status line, the headers and a ``Content-Length`` or chunked body, nothing more -- the
way ``wrk``-style load generators keep themselves out of the measurement.  Every
figure in the bench is timed through it (:func:`bench.latency.timed_get`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import TracebackType
from urllib.parse import urlencode, urlsplit


class BenchClient:
    """``async with BenchClient("http://127.0.0.1:8080") as http: await http.get(...)``.

    One connection, opened on first use and again after the server closes it; requests
    on one client are sequential (the bench gives every simulated user its own client).
    """

    def __init__(self, base_url: str, timeout: float = 120.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("the bench client speaks plain http to a host")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.timeout = timeout
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def __aenter__(self) -> BenchClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def get(
        self, path: str, params: Mapping[str, str | int] | None = None
    ) -> tuple[int, bytes]:
        """(status, body) of one GET; the body is read completely."""
        target = f"{path}?{urlencode(params)}" if params else path
        request = f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode("ascii")
        async with asyncio.timeout(self.timeout):
            try:
                return await self._exchange(request)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.aclose()  # the server closed a kept-alive connection: once more
                return await self._exchange(request)

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await _chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            await self.aclose()
        return status, body

    async def aclose(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            try:
                await writer.wait_closed()
            except ConnectionError:
                pass


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are sent to the bench
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)

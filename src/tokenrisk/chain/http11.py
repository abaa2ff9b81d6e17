"""A small keep-alive HTTP/1.1 client for JSON-RPC POSTs, on asyncio streams.

Why not httpx: per request it costs about 0.9 ms of CPU and two socket writes (headers,
then body); this client writes a request in one ``write`` and parses the reply with a
few ``bytes`` operations, about a tenth of the CPU and a fraction of the latency on
loopback (numbers in docs/performance.md).  It does only what a node client needs, and
keeps every guard the service relies on:

- one overall deadline per request (connect, send, headers and body together):
  :class:`~tokenrisk.errors.DeadlineExceeded`;
- the reply's size is capped while it streams, after decompression (``gzip`` and
  ``deflate``), and an announced ``Content-Length`` over the cap is refused before
  reading: :class:`~tokenrisk.errors.ReplyTooLarge`;
- a corrupt compressed body is :class:`~tokenrisk.errors.MalformedResponse`; a reply
  that is not HTTP, or ends early, or a connection that fails is
  :class:`~tokenrisk.errors.NodeUnavailable` (the caller may retry reads);
- no error message ever holds the URL (it may embed a provider key): the caller's
  ``label`` names the node.

Connections are pooled (at most ``max_connections``) and reused while the node keeps
them open; a reused connection the node closed while idle is replaced once, silently.
A ``greeting`` (set by the JSON-RPC client: an ``eth_chainId`` request and the check
of its reply) is sent first on every new connection, so no request ever goes over a
connection to a node that has not shown who it is, however the connection was
replaced (docs/chains.md).
``http`` and ``https`` (system trust store, SNI) URLs; credentials in the URL are sent
as HTTP basic authentication.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from tokenrisk.errors import (
    DeadlineExceeded,
    MalformedResponse,
    NodeUnavailable,
    ReplyTooLarge,
    RequestTooLarge,
)

REFUSED_BODY_FLOOR = 512 * 1024
"""A request body this large or larger that a node refuses (a lone error object, or the
connection closed before the body was read) is taken as refused for its size."""

Greeting = tuple[bytes, Callable[[int, bytes], None]]
"""A request body sent first on every new connection, and the check of its (status,
body) reply, which raises to refuse the connection."""

HEADER_LIMIT = 64 * 1024
"""Longest status line plus headers accepted (a node never needs more)."""
READ_CHUNK = 256 * 1024


@dataclass(frozen=True)
class Target:
    """Where requests go, parsed once from the URL."""

    host: str
    port: int
    tls: bool
    path: str
    host_header: str
    authorization: str | None

    @classmethod
    def parse(cls, url: str) -> Target:
        """Raises ValueError (never quoting the URL) for anything but http(s)://host."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("node URL must be http:// or https:// with a host")
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.hostname
        shown = f"[{host}]" if ":" in host else host
        default = port == (443 if tls else 80)
        auth = None
        if parts.username is not None:
            secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            auth = "Basic " + base64.b64encode(secret.encode()).decode()
        return cls(host, port, tls, path, shown if default else f"{shown}:{port}", auth)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.used = False  # has carried a request before (a stale close is then expected)

    def close(self) -> None:
        self.writer.close()


class _Stale(NodeUnavailable):
    """A reused connection was closed by the node before any byte of the reply (never
    leaves this module: the request is sent again on a new connection)."""


class Http11:
    """POSTs bodies to one URL; see the module docstring."""

    def __init__(
        self,
        url: str,
        label: str,
        timeout: float,
        max_reply_bytes: int,
        max_connections: int,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.target = Target.parse(url)
        self.label = label
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: list[_Connection] = []
        self.greeting: Greeting | None = None
        self._ssl = ssl.create_default_context() if self.target.tls else None
        fixed = {"Host": self.target.host_header, "Accept-Encoding": "gzip, deflate"}
        if self.target.authorization:
            fixed["Authorization"] = self.target.authorization
        fixed |= headers or {}
        self._head = (
            f"POST {self.target.path} HTTP/1.1\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
            + "Content-Length: "
        ).encode("latin-1")

    async def post(self, body: bytes) -> tuple[int, bytes]:
        """(status, decoded body) of one POST; raises the typed errors above."""
        try:
            async with asyncio.timeout(self.timeout), self._slots:
                return await self._post(body)
        except TimeoutError:
            raise DeadlineExceeded(f"{self.label} did not answer in time") from None

    async def _post(self, body: bytes) -> tuple[int, bytes]:
        request = self._head_for(body)
        for _ in range(2):
            connection = await self._connection()
            try:
                status, reply, keep = await self._exchange(connection, request)
            except _Stale:
                connection.close()
                continue  # the node closed it while idle: once more on a new one
            except BaseException:
                connection.close()  # mid-reply (or cancelled): never reused
                raise
            if keep:
                connection.used = True
                self._idle.append(connection)
            else:
                connection.close()
            return status, reply
        raise NodeUnavailable(f"{self.label} closed the connection")

    async def warm(self, count: int) -> int:
        """Open (and greet) connections now until ``count`` are idle, so that a first
        check's concurrent requests do not each wait for a handshake and a greeting (a
        round trip or two each to a distant node); how many are idle.  A connection that
        cannot be opened is left to the request that needs it."""
        wanted = max(0, count - len(self._idle))

        async def one() -> _Connection:
            async with asyncio.timeout(self.timeout), self._slots:
                return await self._open()

        opened = await asyncio.gather(*(one() for _ in range(wanted)), return_exceptions=True)
        self._idle += [c for c in opened if isinstance(c, _Connection)]
        for failure in opened:
            if isinstance(failure, BaseException) and not isinstance(failure, Exception):
                raise failure  # cancelled: not a node's failure
        return len(self._idle)

    async def _connection(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.close()
        return await self._open()

    async def _open(self) -> _Connection:
        """A new connection, greeted when a greeting is set."""
        try:
            reader, writer = await asyncio.open_connection(
                self.target.host,
                self.target.port,
                ssl=self._ssl,
                server_hostname=self.target.host if self._ssl else None,
                limit=HEADER_LIMIT,
            )
        except (OSError, ssl.SSLError) as exc:
            raise NodeUnavailable(f"{self.label} is unreachable") from exc
        connection = _Connection(reader, writer)
        if self.greeting is not None and not await self._greet(connection, self.greeting):
            return await self._connection()  # greetings stopped: a plain connection
        return connection

    async def _greet(self, connection: _Connection, greeting: Greeting) -> bool:
        """Send the greeting on a new connection; its check raises to refuse the node
        (the connection is then closed).  False when the node closed the connection
        after its reply: such a node cannot be greeted usefully, so greetings stop (the
        client's error-driven checks remain)."""
        body, check = greeting
        try:
            status, reply, keep = await self._exchange(connection, self._head_for(body))
            check(status, reply)
        except BaseException:
            connection.close()
            raise
        if not keep:
            self.greeting = None
            connection.close()
        return keep

    def _head_for(self, body: bytes) -> bytes:
        return self._head + b"%d\r\n\r\n" % len(body) + body

    async def _exchange(self, connection: _Connection, request: bytes) -> tuple[int, bytes, bool]:
        try:
            written: OSError | None = None
            try:
                connection.writer.write(request)
                await connection.writer.drain()
            except OSError as exc:
                written = exc
            status, headers = await self._reply_head(connection, written, len(request))
            keep = written is None and headers.get("connection", "").lower() != "close"
            body = await self._body(connection.reader, headers)
            if "content-length" not in headers and "chunked" not in _codings(headers):
                keep = False  # read until the node closed it
            return status, _decoded(body, headers, self), keep
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError) as exc:
            raise NodeUnavailable(f"{self.label} is unreachable") from exc
        except (asyncio.LimitOverrunError, ValueError) as exc:
            raise NodeUnavailable(f"{self.label} sent a reply that is not HTTP") from exc

    async def _reply_head(
        self, connection: _Connection, written: OSError | None, size: int
    ) -> tuple[int, dict[str, str]]:
        """The reply's status and headers, also when the write failed: a node refusing a
        body over its limit answers at once and closes, so the rest of the write fails
        and its reply may still be read.  With nothing read back: a node that closed an
        idle connection before reading a byte (_Stale, sent again on a new one); a body
        of ``REFUSED_BODY_FLOOR`` bytes or more refused for its size (RequestTooLarge:
        the refusal is lost with the connection, a reset drops unread data; a batch is
        then sent again in halves, and a node that is really gone fails those at
        connecting); else the node is unreachable."""
        try:
            return await self._headers(connection)
        except _Stale:
            raise
        except (OSError, asyncio.IncompleteReadError) as exc:
            if written is not None and connection.used:
                raise _Stale(f"{self.label} closed an idle connection") from written
            partial = isinstance(exc, asyncio.IncompleteReadError) and exc.partial
            if size >= REFUSED_BODY_FLOOR and not partial:
                raise RequestTooLarge(f"{self.label} closed the connection mid-request") from None
            raise (written or exc) from None

    async def _headers(self, connection: _Connection) -> tuple[int, dict[str, str]]:
        reader = connection.reader
        while True:
            try:
                block = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if connection.used and not exc.partial:
                    raise _Stale(f"{self.label} closed an idle connection") from exc
                raise
            lines = block.decode("latin-1").split("\r\n")
            version, _, rest = lines[0].partition(" ")
            if not version.startswith("HTTP/1."):
                raise ValueError("not HTTP/1.x")
            status = int(rest[:3])
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    key = name.strip().lower()
                    value = value.strip()
                    headers[key] = f"{headers[key]}, {value}" if key in headers else value
            if version == "HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
                headers["connection"] = "close"
            if status >= 200:
                return status, headers
            # 1xx: an interim answer, the real one follows

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        cap = self.max_reply_bytes
        if "chunked" in _codings(headers):
            return await self._chunked(reader)
        declared = headers.get("content-length")
        if declared is not None:
            size = int(declared)
            if size > cap:
                raise ReplyTooLarge(f"{self.label} announced a reply of {size} bytes")
            return await reader.readexactly(size)
        parts: list[bytes] = []
        total = 0
        while chunk := await reader.read(READ_CHUNK):
            total += len(chunk)
            if total > cap:
                raise ReplyTooLarge(f"{self.label} sent a reply over {cap} bytes")
            parts.append(chunk)
        return b"".join(parts)

    async def _chunked(self, reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
                return b"".join(parts)
            total += size
            if total > self.max_reply_bytes:
                raise ReplyTooLarge(f"{self.label} sent a reply over {self.max_reply_bytes} bytes")
            parts.append(await reader.readexactly(size))
            if await reader.readexactly(2) != b"\r\n":
                raise ValueError("bad chunk")

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        for connection in idle:
            try:
                await connection.writer.wait_closed()
            except (OSError, ssl.SSLError):
                pass


def _codings(headers: dict[str, str]) -> list[str]:
    return [c.strip().lower() for c in headers.get("transfer-encoding", "").split(",")]


def _decoded(body: bytes, headers: dict[str, str], client: Http11) -> bytes:
    """The body with its content codings undone, capped at ``max_reply_bytes``."""
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",")]
    for coding in reversed([c for c in codings if c and c != "identity"]):
        body = _inflate(body, coding, client)
    return body


def _inflate(body: bytes, coding: str, client: Http11) -> bytes:
    cap = client.max_reply_bytes
    if coding in ("gzip", "x-gzip"):
        wbits = 16 + zlib.MAX_WBITS
    elif coding == "deflate":
        wbits = zlib.MAX_WBITS if body[:1] == b"\x78" else -zlib.MAX_WBITS
    else:
        raise MalformedResponse(f"{client.label} sent an unknown content coding")
    try:
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(body, cap + 1)
    except zlib.error as exc:
        raise MalformedResponse(f"{client.label} sent an undecodable (compressed) reply") from exc
    if len(out) > cap:
        raise ReplyTooLarge(f"{client.label} sent a reply over {cap} bytes")
    if not inflater.eof:
        raise MalformedResponse(f"{client.label} sent an undecodable (compressed) reply")
    return out


__all__ = ["Http11", "Target"]

"""The HTTP server: uvicorn with limits that a slow client population cannot exhaust.

uvicorn on its own lets a connection that never finishes its request head stay open
forever (its keep-alive timer only runs between requests) and has no cap on open
connections, so some thousands of slowloris connections stop it answering.  This
module runs uvicorn's own h11 protocol with these additions, per process:

- **header timeout**: a connection gets ``header_timeout`` seconds to deliver a
  complete request head (counted from connect, and again from the end of each
  response); trickling bytes does not reset it.
- **pending cap**: at most ``max_pending_connections`` connections may be waiting for
  their request head; one more drops the oldest waiting one.  A real client sends its
  head at once, so it is never the oldest; a slowloris client always is.
- **connection cap**: beyond ``max_connections`` open connections a new one is closed
  at once.

- **concurrency cap**: a request arriving while ``max_connections`` connections are
  open, or that many requests are in progress, is answered 503 with the API's JSON
  error body and ``Retry-After`` (uvicorn's own ``limit_concurrency`` does the same
  count but answers in plain text, which JSON clients cannot read).

- **event streams end at shutdown**: uvicorn's graceful shutdown lets every response in
  progress finish, and a server-sent event stream (``/v2/watch/events``) never does, so
  one open watch page held a stopping server forever.  A connection streaming
  ``text/event-stream`` is ended when the shutdown starts: its response gets its last
  chunk and the connection closes (the stream's task is cancelled as for a client that
  left); an EventSource reconnects by itself, with its ``Last-Event-ID``, to whichever
  server answers next.  Other requests still finish.

uvicorn's ``timeout_keep_alive`` and ``h11_max_incomplete_event_size`` (400 for larger
heads) are set from the same ``[server]`` table.  Each rejected class of connection is logged as
one line at most every minute, with a count, never a traceback
(:class:`RejectionLog`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

from tokenrisk.config import ServerConfig, Settings, load_settings
from tokenrisk.errors import ConfigError
from tokenrisk.logs import uvicorn_log_config

log = logging.getLogger("tokenrisk.server")


class RejectionLog:
    """One warning per class of rejected connection per ``interval`` seconds, counted."""

    def __init__(self, interval: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.counts: dict[str, int] = {}
        self._unlogged: dict[str, int] = {}
        self._last: dict[str, float] = {}
        self._clock = clock

    def reject(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self._unlogged[kind] = self._unlogged.get(kind, 0) + 1
        now = self._clock()
        if now - self._last.get(kind, -self.interval) >= self.interval:
            log.warning(
                "closed %d connection(s): %s (at most one such line per %.0f s)",
                self._unlogged[kind],
                kind,
                self.interval,
            )
            self._unlogged[kind] = 0
            self._last[kind] = now


class FloodFilter(logging.Filter):
    """Lets one record per message template through every ``interval`` seconds.

    Installed on uvicorn's error logger and on asyncio's, whose per-connection lines
    ("Invalid HTTP request received.", accept errors when descriptors run out) would
    otherwise repeat once per hostile connection, tracebacks and all.  The next line
    let through says how many were suppressed; repeats carry no traceback.
    """

    def __init__(self, interval: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._seen: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg).split("\n", 1)[0]  # asyncio adds per-socket detail lines
        now = self._clock()
        last, suppressed = self._seen.get(key, (-self.interval, 0))
        if now - last < self.interval:
            self._seen[key] = (last, suppressed + 1)
            return False
        if suppressed:
            record.msg = f"{record.msg} ({suppressed} similar lines suppressed)"
        self._seen[key] = (now, 0)
        return True


def install_flood_filters() -> None:
    """Rate-limit the per-connection warnings of uvicorn and asyncio (once per process)."""
    for name in ("uvicorn.error", "asyncio"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, FloodFilter) for f in logger.filters):
            logger.addFilter(FloodFilter())


_BUSY_BODY = b'{"code":503,"error":"the server is at its connection limit; retry shortly"}'
_BUSY_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_BUSY_BODY)).encode()),
    (b"retry-after", b"1"),
    (b"connection", b"close"),
]


class _Shared:
    """Per-server state of the guard: connections waiting for a head, the log."""

    def __init__(self) -> None:
        self.pending: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.rejections = RejectionLog()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus the header timeout and the two caps (module docstring).

    ``limits`` is read from the configuration (``[server]``) the first time it is
    needed when not set explicitly (uvicorn worker processes import this class by name).
    """

    limits: ServerConfig | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if GuardedH11Protocol.limits is None:  # a worker process: configure it here
            GuardedH11Protocol.limits = load_settings().server
            install_flood_filters()
        self._limits = GuardedH11Protocol.limits
        shared = getattr(self.server_state, "tokenrisk_guard", None)
        if shared is None:
            shared = _Shared()
            self.server_state.tokenrisk_guard = shared  # type: ignore[attr-defined]
        self._shared: _Shared = shared
        self._head_timer: asyncio.TimerHandle | None = None
        self._cycle_seen: Any = None
        self._streaming: Any = None  # the cycle whose response is an event stream
        self._inner_app = self.app
        self.app = self._capped

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > self._limits.max_connections:
            self._reject("connection cap reached (server.max_connections)")
            return
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and self.cycle is not self._cycle_seen:
            self._cycle_seen = self.cycle
            self._head_arrived()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown of this connection, except that an event stream
        still in progress is closed now: it would never finish (module docstring)."""
        cycle = self.cycle
        if cycle is not None and cycle is self._streaming and not cycle.response_complete:
            self._end_stream(cycle)
            return
        super().shutdown()

    def _end_stream(self, cycle: Any) -> None:
        """End the event stream as a complete response (its last chunk), then the
        connection: to the client a stream the server ended, which it resumes elsewhere;
        to the app a client that left (its sends are dropped, its receive says so)."""
        cycle.response_complete = True
        cycle.keep_alive = False
        cycle.disconnected = True
        cycle.message_event.set()
        try:
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            pass  # not between two chunks: the connection's close ends it
        self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        idle = self.cycle is None or self.cycle.response_complete  # not a pipelined request
        if idle and not self.transport.is_closing():
            self._await_head()  # the next request head is under the same timeout

    # the guard

    async def _capped(self, scope: Any, receive: Any, send: Any) -> None:
        """The app, or the JSON 503 when the server is at ``max_connections`` (this
        request's own task is already counted in ``tasks``, hence ``>``)."""
        cap = self._limits.max_connections
        if len(self.connections) >= cap or len(self.tasks) > cap:
            self._shared.rejections.reject("concurrency cap reached (server.max_connections)")
            await send({"type": "http.response.start", "status": 503, "headers": _BUSY_HEADERS})
            await send({"type": "http.response.body", "body": _BUSY_BODY})
            return
        cycle = self.cycle

        async def noting_streams(message: Any) -> None:
            if message["type"] == "http.response.start" and _is_stream(message):
                self._streaming = cycle
            await send(message)

        await self._inner_app(scope, receive, noting_streams)

    def _await_head(self) -> None:
        self._head_arrived()
        self._head_timer = self.loop.call_later(self._limits.header_timeout, self._too_slow)
        pending = self._shared.pending
        pending[self] = None
        while len(pending) > self._limits.max_pending_connections:
            oldest = next(iter(pending))
            oldest._reject("too many connections without a request head (oldest dropped)")

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._shared.pending.pop(self, None)

    def _too_slow(self) -> None:
        self._head_timer = None
        if self.cycle is None or self.cycle.response_complete:
            self._reject("no complete request head in time (server.header_timeout)")

    def _reject(self, kind: str) -> None:
        self._head_arrived()
        self._shared.rejections.reject(kind)
        self.transport.abort()


def _is_stream(start: Any) -> bool:
    """Whether a response start announces a server-sent event stream."""
    for name, value in start.get("headers", ()):
        if name.lower() == b"content-type":
            return bytes(value).startswith(b"text/event-stream")
    return False


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn settings with the ``[server]`` limits (see the module docstring).

    Proxy headers are off: the app itself believes X-Forwarded-For only from
    ``server.trusted_proxies`` (uvicorn's default would trust any loopback peer).
    """
    limits = settings.server
    GuardedH11Protocol.limits = limits
    install_flood_filters()
    return {
        "host": settings.host,
        "port": settings.port,
        "http": GuardedH11Protocol,
        "timeout_keep_alive": limits.keep_alive_timeout,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "proxy_headers": False,
        "server_header": False,
    }


def _raise_file_limit(wanted: int) -> None:
    """Let the process hold ``wanted`` sockets plus its own files, if the hard limit allows;
    warn otherwise (running out of descriptors is what floods logs with accept errors)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + 256
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft < need:
        log.warning("open-file limit %d is below server.max_connections + 256", soft)


@dataclass(frozen=True)
class Listening:
    """A socket bound and listening: connections queue from here on, so it is true to
    say "listening" before the app has started (they are answered once it has)."""

    sock: socket.socket
    host: str

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.sock.getsockname()[1]}"


def listen(host: str, port: int) -> Listening:
    """Bind and listen on ``host:port`` (0: any free port).  Raises ConfigError when the
    address cannot be bound (in use, not local), with the system's reason."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off only on sockets that say
    # they are TCP, and accepted sockets inherit it (with 0, a response written as
    # headers then body waited ~40 ms for the client's delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)  # worker processes serve the same socket
    return Listening(sock, host)


def run(settings: Settings, listening: Listening, **overrides: Any) -> bool:
    """Serve ``tokenrisk.asgi:app`` on ``listening`` (blocking) with the limits of
    ``settings``; False when a single-process server failed to start its app."""
    _raise_file_limit(settings.server.max_connections)
    options = {**server_options(settings), **overrides}
    options.update(host=listening.host, port=listening.sock.getsockname()[1])
    log_config = uvicorn_log_config(settings.log_format, str(options.get("log_level", "info")))
    if log_config is not None:
        options["log_config"] = log_config
    config = uvicorn.Config("tokenrisk.asgi:app", **options)
    if config.workers > 1:
        Multiprocess(config, sockets=[listening.sock]).run()
        return True
    single = uvicorn.Server(config)
    single.run(sockets=[listening.sock])
    return single.started

"""The lean HTTP/1.1 node client against a real loopback server that misbehaves on cue.

Each scenario is a raw HTTP answer written by an asyncio server (no HTTP library on the
server side, so the bytes are exactly what a broken or hostile node could send): the
RpcClient must turn it into the same typed error the httpx path gives (502/503/504
families), never hang past its timeout, never read past its size cap, and reuse its
connection when the node allows.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from tokenrisk.chain.http11 import Http11, Target
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.errors import (
    ChainMismatch,
    DeadlineExceeded,
    MalformedResponse,
    NodeThrottled,
    NodeUnavailable,
    ReplyTooLarge,
    UpstreamError,
)

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]
RESULT = json.dumps({"jsonrpc": "2.0", "id": 1, "result": "0x2a"}).encode()


@dataclass
class RawNode:
    """Reads each request (headers + Content-Length body) and lets ``answer`` reply."""

    answer: Answer
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    sent: int = 0
    server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/rpc?key=secret"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                await self.answer(reader, writer, body)
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def node() -> AsyncIterator[Callable[[Answer], Awaitable[RawNode]]]:
    started: list[RawNode] = []

    async def start(answer: Answer) -> RawNode:
        raw = RawNode(answer)
        raw.server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        started.append(raw)
        return raw

    yield start
    for raw in started:
        assert raw.server is not None
        raw.server.close()


def reply(body: bytes, status: str = "200 OK", headers: str = "") -> Answer:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        given = "chunked" in headers or "Content-Length" in headers
        length = "" if given else f"Content-Length: {len(body)}\r\n"
        writer.write(f"HTTP/1.1 {status}\r\n{headers}{length}\r\n".encode() + body)
        await writer.drain()

    return answer


def client(url: str, **settings: float) -> RpcClient:
    return RpcClient(url, RpcSettings(retries=0, **settings), "test node")  # type: ignore[arg-type]


async def test_a_plain_reply_and_the_connection_is_reused(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    raw = await node(reply(RESULT, headers="Content-Type: application/json\r\n"))
    rpc = client(raw.url)
    assert rpc._lean is not None  # the lean client, not httpx
    try:
        assert [await rpc.call("eth_blockNumber") for _ in range(3)] == ["0x2a"] * 3
    finally:
        await rpc.aclose()
    assert raw.connections == 1
    first = raw.requests[0]
    assert first.startswith(b"POST /rpc?key=secret HTTP/1.1\r\n")
    assert b"Content-Type: application/json\r\n" in first


async def test_gzip_deflate_and_chunked_bodies(node: Callable[..., Awaitable[RawNode]]) -> None:
    packed = gzip.compress(RESULT)
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (packed[:7], packed[7:])) + b"0\r\n\r\n"
    )
    for answer in (
        reply(packed, headers="Content-Encoding: gzip\r\n"),
        reply(zlib.compress(RESULT), headers="Content-Encoding: deflate\r\n"),
        reply(chunked, headers="Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"),
    ):
        raw = await node(answer)
        rpc = client(raw.url)
        try:
            assert await rpc.call("eth_blockNumber") == "0x2a"
        finally:
            await rpc.aclose()


async def test_a_reply_read_until_close(node: Callable[..., Awaitable[RawNode]]) -> None:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        writer.write(b"HTTP/1.0 200 OK\r\n\r\n" + RESULT)
        await writer.drain()
        writer.close()

    raw = await node(answer)
    rpc = client(raw.url)
    try:
        assert [await rpc.call("eth_blockNumber") for _ in range(2)] == ["0x2a"] * 2
    finally:
        await rpc.aclose()
    assert raw.connections == 2


async def test_a_connection_closed_while_idle_is_replaced(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        await reply(RESULT)(_, writer, __)
        writer.close()  # keep-alive announced, then closed anyway

    raw = await node(answer)
    rpc = client(raw.url)
    try:
        assert await rpc.call("eth_blockNumber") == "0x2a"
        await asyncio.sleep(0.05)
        assert await rpc.call("eth_sendRawTransaction", ["0x"]) == "0x2a"  # not a retried read
    finally:
        await rpc.aclose()
    assert raw.connections == 2


async def test_statuses_map_to_typed_errors(node: Callable[..., Awaitable[RawNode]]) -> None:
    cases: list[tuple[Answer, type[Exception]]] = [
        (reply(b"slow down", "429 Too Many Requests"), NodeThrottled),
        (reply(b"oops", "500 Internal Server Error"), NodeUnavailable),
        (reply(b"<html>forbidden</html>", "403 Forbidden"), UpstreamError),
        (reply(b"not json"), MalformedResponse),
        (reply(b"\x1f\x8b garbage", headers="Content-Encoding: gzip\r\n"), MalformedResponse),
        (reply(RESULT, headers="Content-Encoding: br\r\n"), MalformedResponse),
    ]
    for answer, kind in cases:
        raw = await node(answer)
        rpc = client(raw.url)
        try:
            with pytest.raises(kind) as caught:
                await rpc.call("eth_blockNumber")
        finally:
            await rpc.aclose()
        assert "secret" not in str(caught.value) and "127.0.0.1" not in str(caught.value)


async def test_not_http_and_cut_short_are_unavailable(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    async def garbage(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await writer.drain()

    async def short(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + RESULT)
        await writer.drain()
        writer.close()

    async def endless_headers(
        _: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes
    ) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\n" + b"X-Junk: " + b"a" * 200_000)
        await writer.drain()

    for answer in (garbage, short, endless_headers):
        raw = await node(answer)
        rpc = client(raw.url)
        try:
            with pytest.raises(NodeUnavailable):
                await rpc.call("eth_blockNumber")
        finally:
            await rpc.aclose()


async def test_nobody_listening_is_unavailable() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    rpc = client(f"http://127.0.0.1:{port}/")
    try:
        with pytest.raises(NodeUnavailable):
            await rpc.call("eth_blockNumber")
    finally:
        await rpc.aclose()


async def test_a_node_that_never_answers_times_out(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    async def trickle(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        for _ in range(100):  # a byte at a time: each read is quick, the whole is not
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.05)

    raw = await node(trickle)
    rpc = client(raw.url, timeout=0.3)
    try:
        with pytest.raises(DeadlineExceeded):
            await rpc.call("eth_blockNumber")
    finally:
        await rpc.aclose()


async def test_replies_over_the_cap_stop_at_the_cap(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    cap = 64 * 1024
    streamed: list[int] = []

    async def endless(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        sent = 0
        try:
            while sent < 1024 * cap:
                writer.write(b" " * 8192)
                await writer.drain()
                sent += 8192
        except ConnectionError:
            pass
        streamed.append(sent)

    bomb = gzip.compress(b" " * (cap * 20))
    announced = reply(b"", headers="Content-Length: 209715200\r\n")
    for answer in (
        endless,
        reply(bomb, headers="Content-Encoding: gzip\r\n"),
        announced,
    ):
        raw = await node(answer)
        rpc = client(raw.url, max_reply_bytes=cap)
        try:
            with pytest.raises(ReplyTooLarge):
                await rpc.call("eth_getLogs", [{}])
        finally:
            await rpc.aclose()
        await asyncio.sleep(0.05)
    assert streamed and streamed[0] < 1024 * cap  # the client hung up at the cap


def test_targets_are_parsed_without_quoting_the_url() -> None:
    target = Target.parse("https://user:p%40ss@node.example:8545/v3/key?x=1")
    assert (target.host, target.port, target.tls) == ("node.example", 8545, True)
    assert target.path == "/v3/key?x=1" and target.host_header == "node.example:8545"
    assert target.authorization == "Basic dXNlcjpwQHNz"  # user:p@ss
    with pytest.raises(ValueError) as caught:
        Target.parse("ftp://secret-key@node")
    assert "secret" not in str(caught.value)


async def test_the_proxy_environment_routes_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    rpc = RpcClient("http://node.example:8545/")
    try:
        assert rpc._lean is None and rpc._http is not None
    finally:
        await rpc.aclose()


async def test_pool_is_bounded(node: Callable[..., Awaitable[RawNode]]) -> None:
    async def slow(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: bytes) -> None:
        await asyncio.sleep(0.02)
        await reply(RESULT)(_, writer, __)

    raw = await node(slow)
    lean = Http11(raw.url, "test node", timeout=5, max_reply_bytes=1 << 20, max_connections=3)
    try:
        replies = await asyncio.gather(*(lean.post(b"{}") for _ in range(12)))
    finally:
        await lean.aclose()
    assert all(status == 200 and body == RESULT for status, body in replies)
    assert raw.connections == 3


# GREETING: every new connection shows the node's chain id first


def chain_node(chain: list[int], close: bool = False) -> Answer:
    """Answers eth_chainId with ``chain[0]`` (changeable), anything else with 0x2a;
    ``close``: HTTP/1.0-style, the connection closes after each reply."""

    async def answer(r: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> None:
        method = json.loads(body)["method"]
        result = hex(chain[0]) if method == "eth_chainId" else "0x2a"
        payload = json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode()
        headers = "Connection: close\r\n" if close else ""
        await reply(payload, headers=headers)(r, writer, body)
        if close:
            writer.close()

    return answer


def expecting(url: str, chain_id: int) -> RpcClient:
    return RpcClient(url, RpcSettings(retries=0), "test node", expect_chain_id=chain_id)


def methods(raw: RawNode) -> list[str]:
    return [json.loads(r.split(b"\r\n\r\n", 1)[1])["method"] for r in raw.requests]


async def test_each_new_connection_is_greeted_and_a_new_node_refused(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    chain = [1]
    raw = await node(chain_node(chain))
    rpc = expecting(raw.url, 1)
    try:
        assert await rpc.call("eth_blockNumber") == "0x2a"
        assert methods(raw)[0] == "eth_chainId"  # the greeting, before anything else
        assert await rpc.call("eth_blockNumber") == "0x2a"
        assert raw.connections == 1
        assert rpc._lean is not None
        for idle in rpc._lean._idle:  # the node's connections drop; it comes back as chain 5
            idle.writer.close()
        chain[0] = 5
        with pytest.raises(ChainMismatch):
            await rpc.call("eth_sendRawTransaction", ["0x"])  # never sent to chain 5's node
        assert "eth_sendRawTransaction" not in methods(raw)
    finally:
        await rpc.aclose()


async def test_a_node_closing_every_connection_is_not_greeted_again(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    raw = await node(chain_node([1], close=True))
    rpc = expecting(raw.url, 1)
    try:
        assert [await rpc.call("eth_sendRawTransaction", ["0x"]) for _ in range(2)] == ["0x2a"] * 2
    finally:
        await rpc.aclose()
    assert methods(raw).count("eth_sendRawTransaction") == 2
    assert methods(raw).count("eth_chainId") <= 3  # the first check, then no more greetings


async def test_connections_warmed_at_start_are_greeted_and_used(
    node: Callable[..., Awaitable[RawNode]],
) -> None:
    """``warm`` opens and greets connections before any request, so concurrent first
    requests find them ready; nobody listening leaves none, and no error."""
    raw = await node(chain_node([1]))
    rpc = expecting(raw.url, 1)
    try:
        assert await rpc.warm(3) == 3
        assert raw.connections == 3 and methods(raw) == ["eth_chainId"] * 3
        calls = (rpc.call("eth_blockNumber") for _ in range(3))
        assert await asyncio.gather(*calls) == ["0x2a"] * 3
        assert raw.connections == 3  # no new connection, no new greeting
        assert methods(raw).count("eth_chainId") == 3
    finally:
        await rpc.aclose()
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    nobody = client(f"http://127.0.0.1:{port}")
    try:
        assert await nobody.warm(2) == 0
    finally:
        await nobody.aclose()


async def test_a_large_body_cut_off_by_the_node_is_refused_for_its_size() -> None:
    """A node that drops the connection (a reset) while a large request is still coming
    in, its refusal lost with it: RequestTooLarge, so a batch is sent again in halves;
    the same from a small request is an unreachable node."""
    import socket
    import struct

    from tokenrisk.chain.http11 import REFUSED_BODY_FLOOR
    from tokenrisk.errors import RequestTooLarge

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    server = await asyncio.start_server(reset, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = Http11(f"http://127.0.0.1:{port}/", "test node", 5.0, 1 << 20, 4)
    try:
        with pytest.raises(RequestTooLarge):
            await http.post(b"x" * (REFUSED_BODY_FLOOR * 32))
        with pytest.raises(NodeUnavailable) as small:
            await http.post(b"{}")
        assert not isinstance(small.value, RequestTooLarge)
    finally:
        await http.aclose()
        server.close()

"""The strict test node: a loopback JSON-RPC server in front of its own anvil that answers
as the node software of a :class:`~nodeprofiles.Profile` would.

anvil accepts almost anything; production nodes do not.  :class:`StrictNode` refuses the
methods the profile's node does not serve, answers state older than its archive depth
with ``missing trie node``, caps ``eth_getLogs`` ranges and batch sizes, runs
``eth_simulateV1`` under geth's rules (:mod:`gethsim`) and, for a moving-head
profile, mines a block every ``mine_every`` seconds.  Everything else is forwarded.

It runs its event loop in a thread of its own, so synchronous tests and any event loop
can use it; ``refusals`` counts what it refused, by method and JSON-RPC code, so tests
can show a rule was met, and ``zero_randao`` the simulated blocks with calls that left
``prevRandao`` out (geth runs them at a zero RANDAO mix, which a token can tell from a
real block).  Use as ``with StrictNode(profile) as node: ... node.url``.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import msgspec
from gethsim import (
    Base,
    RuleError,
    anvil_validation,
    forwarded,
    gas_limits,
    plan_gas,
    sanitize,
    shape_reply,
    used_gas,
)
from nodeprofiles import Profile

from tokenrisk.devnet.instance import RunningDevnet, start_devnet

STATE_ARG = {
    "eth_call": 1,
    "eth_getCode": 1,
    "eth_getBalance": 1,
    "eth_getStorageAt": 2,
    "eth_getTransactionCount": 1,
    "eth_getProof": 2,
    "eth_createAccessList": 1,
    "eth_estimateGas": 1,
    "debug_traceCall": 1,
}
"""Methods that read state at a block, and the position of their block parameter."""
GAS_CAPPED = ("eth_call", "debug_traceCall", "eth_createAccessList")
"""Calls geth runs with the RPC gas cap as their gas when none is given, and caps at it
(``TransactionArgs.CallDefaults``); anvil gives them the block gas limit, or any gas."""
HEAD_TAGS = ("latest", "pending", "safe", "finalized")
_Pending = tuple[str, list[Any], "asyncio.Future[dict[str, Any]]"]
"""A request waiting for the next batch to anvil: method, params, and its reply's future."""
BEHIND: contextvars.ContextVar[int] = contextvars.ContextVar("behind", default=0)
"""How many blocks the backend answering the current HTTP request lags the head."""


class UpstreamError(Exception):
    """anvil answered with a JSON-RPC error: passed on as it is."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message")))
        self.error = error


class StrictNode:
    """A strict node of ``profile`` on 127.0.0.1, backed by its own devnet anvil."""

    def __init__(self, profile: Profile, devnet: RunningDevnet | None = None) -> None:
        self.profile = profile
        self._own = devnet is None
        self.devnet = devnet
        self.refusals: Counter[tuple[str, int]] = Counter()
        self.last_refusal = ""
        self.requests = 0
        self.zero_randao = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._http: _Upstream | None = None
        self._miner: asyncio.Task[None] | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._pending: dict[bytes, _Pending] = {}
        self._http_requests = 0
        self._flushes: set[asyncio.Future[None]] = set()
        self._stopping = False

    # LIFECYCLE

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    @property
    def upstream(self) -> str:
        assert self.devnet is not None
        return self.devnet.url

    def start(self) -> StrictNode:
        if self.devnet is None:
            self.devnet = start_devnet()
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    async def _start(self) -> None:
        self._http = _Upstream(self.upstream)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        for _ in range(self.profile.lag + 1 if self.profile.lag else 0):
            # anvil keeps no state for its loaded block once it mines past it (see "What the
            # test bed cannot do"): mine past it first, so a lagging backend's head has state
            await self._upstream("evm_mine", [])
        if self.profile.mine_every:
            self._miner = asyncio.create_task(self._mine(self.profile.mine_every))

    def stop(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()
        if self._own and self.devnet is not None:
            self.devnet.stop()

    async def _stop(self) -> None:
        if self._miner is not None:
            self._miner.cancel()
        for flush in list(self._flushes):
            flush.cancel()
        await asyncio.gather(*self._flushes, return_exceptions=True)
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._http is not None:
            self._http.close()

    def __enter__(self) -> StrictNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _mine(self, every: float) -> None:
        """A block every ``every`` seconds, until the node stops (the loop is bounded by it)."""
        while not self._stopping:
            await asyncio.sleep(every)
            try:
                await self._upstream("evm_mine", [])
            except (OSError, asyncio.IncompleteReadError, TimeoutError, UpstreamError):
                return

    # HTTP

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while (body := await _read_request(reader)) is not None:
                status, payload = await self.answer(body)
                head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                head += f"Content-Length: {len(payload)}\r\n\r\n"
                writer.write(head.encode() + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def answer(self, body: bytes) -> tuple[int, bytes]:
        """The HTTP status and body the profile's node answers ``body`` with.

        With a ``lag``, every other HTTP request is answered by a backend that many
        blocks behind, as a load balancer in front of two nodes would.
        """
        self._http_requests += 1
        BEHIND.set(self.profile.lag if self._http_requests % 2 == 0 else 0)
        try:
            message = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return 200, _dump(_error(None, -32700, "parse error"))
        if not isinstance(message, list):
            return 200, _dump(await self.handle(message))
        limit = self.profile.batch_limit
        if not message:
            return 200, _dump(_error(None, -32600, "empty batch"))
        if limit is not None and len(message) > limit:
            return 200, _dump(self._batch_refusal(message, limit))
        return 200, _dump(list(await asyncio.gather(*(self.handle(m) for m in message))))

    def _batch_refusal(self, batch: list[Any], limit: int) -> Any:
        self.refusals[("batch", -32600)] += 1
        if self.profile.batch_style == "geth":
            first = next((m.get("id") for m in batch if isinstance(m, dict) and "id" in m), None)
            return [_error(first, -32600, "batch too large")]
        return _error(None, -32600, f"batch size too large: {len(batch)} > {limit}")

    # ONE REQUEST

    async def handle(self, message: Any) -> dict[str, Any]:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return _error(None, -32600, "invalid request")
        self.requests += 1
        method, ident = message["method"], message.get("id")
        params = list(message.get("params") or [])
        if self.profile.stuck:
            BEHIND.set(0 if _head_read(method, params) else self.profile.lag)
        if not self.profile.serves(method):
            self.refusals[(method, -32601)] += 1
            self.last_refusal = f"{method}: -32601"
            return _error(ident, -32601, f"the method {method} does not exist/is not available")
        handler = self._handlers().get(method, self._read)
        try:
            result = await handler(method, params)
        except RuleError as exc:
            self.refusals[(method, exc.code)] += 1
            self.last_refusal = f"{method}: {exc.code} {exc.message}"
            return _error(ident, exc.code, exc.message)
        except UpstreamError as exc:
            return {"jsonrpc": "2.0", "id": ident, "error": exc.error}
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def _handlers(self) -> dict[str, Callable[[str, list[Any]], Awaitable[Any]]]:
        return {
            "eth_simulateV1": self._simulate,
            "eth_getLogs": self._get_logs,
            "eth_blockNumber": self._block_number,
            "eth_getBlockByNumber": self._block_by_number,
        }

    async def _block_number(self, method: str, params: list[Any]) -> Any:
        return hex(await self.head())

    async def _block_by_number(self, method: str, params: list[Any]) -> Any:
        """A lagging backend knows no block above its head (null, as geth answers)."""
        tag = params[0] if params else "latest"
        number = await self.head() if tag in HEAD_TAGS else await self._number_of(tag)
        if number > await self.head():
            return None
        return await self._upstream(method, [hex(number), *params[1:]])

    async def _read(self, method: str, params: list[Any]) -> Any:
        """Any other method: state reads must be within the archive depth."""
        position = STATE_ARG.get(method)
        if position is not None and len(params) > position:
            if params[position] not in HEAD_TAGS:
                await self._readable(params[position])
            elif BEHIND.get():  # the lagging backend's "latest"
                params = [*params[:position], hex(await self.head()), *params[position + 1 :]]
        if method in GAS_CAPPED and params and isinstance(params[0], dict):
            params = [{**params[0], "gas": hex(self._capped_gas(params[0]))}, *params[1:]]
        return await self._upstream(method, params)

    def _capped_gas(self, call: dict[str, Any]) -> int:
        cap = self.profile.gas_cap
        declared = call.get("gas")
        return cap if declared is None else min(int(declared, 16), cap)

    # STATE AND BLOCKS

    async def head(self) -> int:
        """The head of the backend answering this request."""
        return int(await self._upstream("eth_blockNumber", []), 16) - BEHIND.get()

    async def _number_of(self, tag: Any) -> int:
        """The block number a block parameter names now (tags resolve to the head)."""
        if isinstance(tag, dict):
            if "blockHash" in tag:
                return await self._number_of(tag["blockHash"])
            tag = tag.get("blockNumber", "latest")
        if tag is None or tag in HEAD_TAGS:
            return await self.head()
        if tag == "earliest":
            return 0
        if isinstance(tag, str) and len(tag) == 66:
            block = await self._upstream("eth_getBlockByHash", [tag, False])
            if block is None:
                raise RuleError(-32000, "header for hash not found")
            return int(block["number"], 16)
        return int(tag, 16) if isinstance(tag, str) else int(tag)

    async def _readable(self, tag: Any) -> int:
        """The number of a block whose state this node still has; raises RuleError."""
        head = await self.head()
        number = head if tag is None or tag in HEAD_TAGS else await self._number_of(tag)
        if number > head:
            raise RuleError(-32000, "header not found")
        depth = self.profile.archive_depth
        if depth is not None and head - number >= depth:
            block = await self._upstream("eth_getBlockByNumber", [hex(number), False])
            root = str(block["stateRoot"])
            raise RuleError(
                -32000, f"missing trie node {root[2:]} (path ) state {root} is not available"
            )
        return number

    async def _get_logs(self, method: str, params: list[Any]) -> Any:
        cap = self.profile.logs_range
        query = params[0] if params and isinstance(params[0], dict) else {}
        if cap is not None and "blockHash" not in query:
            low = await self._number_of(query.get("fromBlock", "latest"))
            high = await self._number_of(query.get("toBlock", "latest"))
            if high - low + 1 > cap:
                raise RuleError(-32005, f"eth_getLogs is limited to a {cap:,} block range")
        if "blockHash" not in query:
            await self._in_range(query)
        if BEHIND.get() and "blockHash" not in query:  # the lagging backend's "latest"
            head = hex(await self.head())
            query = {**query, "toBlock": _lagged(query.get("toBlock", "latest"), head)}
            query["fromBlock"] = _lagged(query.get("fromBlock", "latest"), head)
            params = [query, *params[1:]]
        return await self._upstream(method, params)

    async def _in_range(self, query: dict[str, Any]) -> None:
        """A range past this backend's head, or reversed once tags are resolved, is
        refused as ethereum/execution-apis' ``tests/eth_getLogs/filter-error-*`` cases
        show (geth's words)."""
        head = await self.head()
        low = await self._number_of(query.get("fromBlock", "latest"))
        high = await self._number_of(query.get("toBlock", "latest"))
        if query.get("toBlock", "latest") not in HEAD_TAGS and high > head:
            raise RuleError(-32602, "block range extends beyond current head block")
        if low > high:
            raise RuleError(-32602, "invalid block range params")

    # SIMULATE

    async def _simulate(self, method: str, params: list[Any]) -> Any:
        cap = self.profile.simulate_cap
        assert cap is not None
        opts = params[0] if params and isinstance(params[0], dict) else {}
        number = await self._readable(params[1] if len(params) > 1 else "latest")
        header = await self._upstream("eth_getBlockByNumber", [hex(number), False])
        base = Base(number, int(header["timestamp"], 16), int(header["gasLimit"], 16))
        sent_blocks = list(opts.get("blockStateCalls") or [])
        self.zero_randao += sum(
            1
            for block in sent_blocks
            if isinstance(block, dict)
            and block.get("calls")
            and "prevRandao" not in (block.get("blockOverrides") or {})
        )
        blocks = sanitize(sent_blocks, base, cap)
        limits = gas_limits(blocks, base)
        validation = bool(opts.get("validation", False))
        sent = plan_gas(blocks, limits, self.profile.gas_cap)
        for _ in range(sum(len(b["calls"]) for b in blocks) + 1):
            request = {
                **opts,
                "blockStateCalls": forwarded(blocks, limits, sent, validation),
                "validation": anvil_validation(blocks, validation),
            }
            reply = await self._upstream(method, [request, hex(number)])
            used = used_gas(reply)
            again = plan_gas(blocks, limits, self.profile.gas_cap, used, sent)
            if again == sent:
                return shape_reply(reply, blocks, sent)
            sent = again
        raise RuleError(-32603, "gas plan did not settle")

    # UPSTREAM

    async def _upstream(self, method: str, params: list[Any]) -> Any:
        """anvil's answer to one request.

        Requests made in the same turn of the event loop (the members of a client's batch
        reach this point together) go to anvil as one JSON-RPC batch, identical ones
        once, so the test bed costs about what the client's own request would.
        """
        key = msgspec.json.encode([method, params], order="sorted")
        pending = self._pending.get(key)
        if pending is None:
            pending = (method, params, asyncio.get_running_loop().create_future())
            self._pending[key] = pending
            if len(self._pending) == 1:
                asyncio.get_running_loop().call_soon(self._flush)
        reply: dict[str, Any] = await asyncio.shield(pending[2])
        if "error" in reply:
            raise UpstreamError(reply["error"])
        return reply.get("result")

    def _flush(self) -> None:
        batch, self._pending = list(self._pending.values()), {}
        self._flushes.add(asyncio.ensure_future(self._send(batch)))

    async def _send(self, batch: list[_Pending]) -> None:
        assert self._http is not None
        body = msgspec.json.encode(
            [
                {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
                for i, (method, params, _) in enumerate(batch)
            ]
        )
        try:
            replies = msgspec.json.decode(await self._http.post(body))
            by_id = {r["id"]: r for r in replies}
            for i, (_, _, future) in enumerate(batch):
                future.set_result(by_id[i])
        except Exception as exc:  # noqa: BLE001 - every waiter learns the transport failed
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)
                    future.add_done_callback(lambda f: f.exception())  # retrieved: no log noise
        finally:
            self._flushes.discard(asyncio.current_task())  # type: ignore[arg-type]


class _Upstream:
    """anvil over keep-alive HTTP/1.1 connections, one per request in flight.

    A few lines instead of httpx, whose per-request machinery was a fifth of this test
    bed's CPU in the strict suites (it shares the process, and its GIL, with the service
    under test).  anvil answers every request with a ``content-length``.
    """

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None, url
        self._host, self._port = parts.hostname, parts.port
        self._head = f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        self._head += "Content-Type: application/json\r\n"
        self._timeout = timeout
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, body: bytes) -> bytes:
        """The body of anvil's 200 answer to ``body``; raises OSError otherwise."""
        async with asyncio.timeout(self._timeout):
            while True:
                reused = bool(self._idle)
                if reused:
                    reader, writer = self._idle.pop()
                else:
                    reader, writer = await asyncio.open_connection(self._host, self._port)
                try:
                    head = f"{self._head}Content-Length: {len(body)}\r\n\r\n".encode()
                    writer.write(head + body)  # one send, not two
                    await writer.drain()
                    status, length = _response_head(await reader.readuntil(b"\r\n\r\n"))
                    payload = await reader.readexactly(length)
                except (ConnectionError, asyncio.IncompleteReadError):
                    writer.close()
                    if reused:
                        continue  # anvil closed the idle connection: once more on a new one
                    raise
                except BaseException:
                    writer.close()
                    raise
                break
        self._idle.append((reader, writer))
        if status != 200:
            raise OSError(f"upstream answered HTTP {status}")
        return payload

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


def _response_head(head: bytes) -> tuple[int, int]:
    """The status and ``content-length`` of a response head."""
    length = _content_length(head)
    if length is None:
        raise OSError("upstream answer without a content-length")
    return int(head.split(b" ", 2)[1]), length


def _content_length(head: bytes) -> int | None:
    """The ``content-length`` of a request or response head, None when it has none."""
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            return int(value.strip())
    return None


def _head_read(method: str, params: list[Any]) -> bool:
    return method == "eth_blockNumber" or (
        method == "eth_getBlockByNumber" and bool(params) and params[0] in HEAD_TAGS
    )


def _lagged(tag: Any, head: str) -> Any:
    return head if tag in HEAD_TAGS else tag


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _dump(value: Any) -> bytes:
    return msgspec.json.encode(value)


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    """The body of the next request on the connection; None when the client hung up."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return await reader.readexactly(_content_length(head) or 0)

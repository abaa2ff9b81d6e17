"""A fake node for tests: an httpx transport that answers JSON-RPC, or misbehaves.

Two shapes, both plugged into :class:`tokenrisk.chain.rpc.RpcClient` through its
``transport`` argument (no sockets):

- :class:`FakeNode` answers every call from a table ``method -> result`` (a value, a
  callable of the params, or a :class:`Fault`), for unit tests of pure logic.
- :class:`FaultyNode` forwards to a real node (the devnet anvil) and replaces the
  answer of chosen calls with a fault, for end-to-end tests through the API.

Faults that are not JSON-RPC at all (garbage, corrupt gzip, deep nesting, a 200 MB
stream) are whole-response answers: :func:`garbage`, :func:`corrupt_gzip`,
:func:`deeply_nested`, :func:`endless`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from tokenrisk.chain.rpc import RpcClient, RpcSettings

WholeAnswer = Callable[[Any], httpx.Response]
"""Builds the whole HTTP response for a parsed request body."""


@dataclass(frozen=True)
class Fault:
    """A JSON-RPC error object the fake node answers instead of a result."""

    code: int
    message: str
    data: Any = None

    def error(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


RATE_LIMITED = Fault(-32005, "daily request count exceeded, request rate limited")
INTERNAL = Fault(-32603, "internal error")
REVERTED = Fault(3, "execution reverted", "0x")


def _reply(request: dict[str, Any], outcome: Any) -> dict[str, Any]:
    if isinstance(outcome, Fault):
        return {"jsonrpc": "2.0", "id": request.get("id"), "error": outcome.error()}
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": outcome}


def _json(body: Any, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(body).encode(), headers=_JSON)


_JSON = {"content-type": "application/json"}


class FakeNode:
    """Answers from ``results``; unknown methods get -32601 (method not found).

    ``whole`` (when set) answers every HTTP request itself.  ``requests`` counts HTTP
    requests, ``methods`` lists every JSON-RPC method called, in order.
    """

    def __init__(
        self,
        results: Mapping[str, Any] | None = None,
        whole: WholeAnswer | None = None,
    ) -> None:
        self.results: dict[str, Any] = dict(results or {})
        self.whole = whole
        self.requests = 0
        self.methods: list[str] = []

    def client(self, **settings: Any) -> RpcClient:
        rpc_settings = RpcSettings(**{"retries": 0, **settings})
        transport = httpx.MockTransport(self.handle)
        return RpcClient("http://fake.node.test", rpc_settings, "fake node", transport=transport)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        body = json.loads(request.content)
        calls = body if isinstance(body, list) else [body]
        self.methods += [c["method"] for c in calls]
        if self.whole is not None:
            return self.whole(body)
        replies = [_reply(c, self.outcome(c)) for c in calls]
        return _json(replies if isinstance(body, list) else replies[0])

    def outcome(self, call: dict[str, Any]) -> Any:
        if call["method"] not in self.results:
            return Fault(-32601, "the method does not exist/is not available")
        value = self.results[call["method"]]
        return value(call["params"]) if callable(value) else value


Chooser = Callable[[dict[str, Any]], Fault | None]
"""Which fault (if any) replaces the real answer to one call."""


class FaultyNode(httpx.AsyncBaseTransport):
    """Forwards to ``upstream`` (a real node) and replaces chosen answers with faults.

    ``choose`` sees each JSON-RPC call; a Fault it returns is answered instead of the
    node's reply (the call still goes to the node, so batches keep their shape).
    ``whole`` (when set) replaces whole HTTP responses, for the non-JSON-RPC faults.
    ``faulted`` counts replaced calls, so a test can show its fault was exercised.
    """

    def __init__(
        self, upstream: str, choose: Chooser | None = None, whole: WholeAnswer | None = None
    ) -> None:
        self.upstream = upstream
        self.choose = choose or (lambda call: None)
        self.whole = whole
        self.faulted = 0
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(await request.aread())
        if self.whole is not None:
            self.faulted += 1
            return self.whole(body)
        forwarded = httpx.Request("POST", self.upstream, content=json.dumps(body), headers=_JSON)
        response = await self._inner.handle_async_request(forwarded)
        real = json.loads(await response.aread())
        if isinstance(body, list):
            by_id = {r.get("id"): r for r in real}
            return _json([self._replace(c, by_id.get(c["id"])) for c in body])
        return _json(self._replace(body, real))

    def _replace(self, call: dict[str, Any], real: Any) -> Any:
        fault = self.choose(call)
        if fault is None:
            return real
        self.faulted += 1
        return _reply(call, fault)

    async def aclose(self) -> None:
        await self._inner.aclose()


# WHOLE-RESPONSE FAULTS


def garbage(body: Any) -> httpx.Response:
    return httpx.Response(200, content=b"\x00\xffnot json at all<html>", headers=_JSON)


def corrupt_gzip(body: Any) -> httpx.Response:
    """Claims gzip, starts like gzip, then breaks off into noise."""
    broken = gzip.compress(b'{"jsonrpc":"2.0","id":1,"result":"0x"}')[:12] + b"\x13\x37" * 40
    return httpx.Response(200, content=broken, headers={**_JSON, "content-encoding": "gzip"})


def deeply_nested(depth: int) -> WholeAnswer:
    def answer(body: Any) -> httpx.Response:
        text = b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * depth + b"]" * depth + b"}"
        return httpx.Response(200, content=text, headers=_JSON)

    return answer


class Endless:
    """A reply of ``total`` bytes, produced lazily in 1 MiB chunks; ``sent`` counts them."""

    def __init__(self, total: int, declare_length: bool = False) -> None:
        self.total = total
        self.declare_length = declare_length
        self.sent = 0

    async def _chunks(self) -> AsyncIterator[bytes]:
        chunk = b" " * (1 << 20)
        while self.sent < self.total:
            self.sent += len(chunk)
            yield chunk

    def __call__(self, body: Any) -> httpx.Response:
        headers = dict(_JSON)
        if self.declare_length:
            headers["content-length"] = str(self.total)
        return httpx.Response(200, content=self._chunks(), headers=headers)


def endless(total: int, declare_length: bool = False) -> Endless:
    return Endless(total, declare_length)

"""Async JSON-RPC client: one pooled HTTP connection set per node, batches, typed errors.

Every EVM-facing operation of tokenrisk goes through :class:`RpcClient`.  It maps
transport failures to :mod:`tokenrisk.errors` and never lets an RPC URL into an error
message (URLs often embed provider keys).  Only reads named in ``RETRYABLE`` are
retried, a bounded number of times, and only when the node could not be reached.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from tokenrisk.errors import (
    DeadlineExceeded,
    MalformedResponse,
    MethodUnsupported,
    NodeUnavailable,
    RpcError,
    UpstreamError,
)

RETRYABLE = frozenset(
    {
        "eth_chainId",
        "eth_blockNumber",
        "eth_getBlockByNumber",
        "eth_getCode",
        "eth_getBalance",
        "eth_call",
        "eth_getLogs",
        "eth_getTransactionReceipt",
        "eth_getTransactionByHash",
        "eth_simulateV1",
        "debug_traceCall",
    }
)
"""Methods that read state only and so may be sent again after a connection failure."""

# httpx logs every request URL at INFO; node URLs often embed provider keys, so its
# logger never goes below WARNING, whatever the operator's root logging level.
logging.getLogger("httpx").setLevel(logging.WARNING)

_UNSUPPORTED_CODES = frozenset({-32601})
_UNSUPPORTED_TEXT = ("method not found", "not supported", "does not exist", "unsupported method")


@dataclass(frozen=True)
class RpcSettings:
    """Transport settings; the defaults are safe (never 'no timeout')."""

    timeout: float = 10.0
    retries: int = 2
    backoff: float = 0.05
    max_connections: int = 32


def _is_unsupported(code: int, message: str) -> bool:
    lowered = message.lower()
    return code in _UNSUPPORTED_CODES or any(text in lowered for text in _UNSUPPORTED_TEXT)


def error_from_object(error: Any) -> RpcError:
    """Turn a JSON-RPC ``error`` member into a typed exception."""
    if not isinstance(error, dict):
        return RpcError(f"node error: {error!r}"[:300])
    code = error.get("code", 0)
    code = code if isinstance(code, int) else 0
    message = str(error.get("message", "unknown error"))[:500]
    if _is_unsupported(code, message):
        return MethodUnsupported(message, code, error.get("data"))
    return RpcError(message, code, error.get("data"))


HEX_RESULTS = frozenset(
    {
        "eth_call",
        "eth_getCode",
        "eth_getBalance",
        "eth_blockNumber",
        "eth_chainId",
        "eth_getStorageAt",
        "eth_estimateGas",
    }
)
"""Methods whose result is always a 0x-hex string; anything else means a broken node."""


def _checked(method: str, result: Any) -> Any:
    if method in HEX_RESULTS and not _is_hex(result):
        raise MalformedResponse(f"node answered {method} with a malformed result")
    return result


_HEX = re.compile(r"0x[0-9a-fA-F]*")


def _is_hex(value: Any) -> bool:
    return isinstance(value, str) and _HEX.fullmatch(value) is not None


def _result_of(reply: Any) -> Any:
    if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
        raise MalformedResponse("node sent a reply that is not JSON-RPC")
    if "error" in reply and reply["error"] is not None:
        raise error_from_object(reply["error"])
    return reply["result"]


class RpcClient:
    """A JSON-RPC 2.0 client for one node.

    ``label`` names the node in errors and logs instead of its URL.
    """

    def __init__(self, url: str, settings: RpcSettings | None = None, label: str = "node") -> None:
        self.settings = settings or RpcSettings()
        self.label = label
        self._url = url
        self._ids = itertools.count(1)
        limits = httpx.Limits(max_connections=self.settings.max_connections)
        self._http = httpx.AsyncClient(timeout=self.settings.timeout, limits=limits)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        """Send one request and return its ``result``.

        Raises RpcError (node error object), NodeUnavailable, DeadlineExceeded,
        MalformedResponse.
        """
        payload = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        reply = await self._post(payload, retry=method in RETRYABLE)
        return _checked(method, _result_of(reply))

    async def batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Send several requests in one JSON-RPC batch.

        Returns one entry per call, in order: the result, or the RpcError instance for
        that call (a per-call error does not fail the batch).  Transport failures raise.
        """
        if not calls:
            return []
        first = next(self._ids)
        ids = [first + i for i in range(len(calls))]
        for _ in calls[1:]:
            next(self._ids)
        payload = [
            {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            for i, (m, p) in zip(ids, calls, strict=True)
        ]
        retry = all(method in RETRYABLE for method, _ in calls)
        replies = await self._post(payload, retry=retry)
        if not isinstance(replies, list):
            if isinstance(replies, dict) and "error" in replies:
                raise error_from_object(replies["error"])
            raise MalformedResponse("node answered a batch with a non-list")
        by_id = {r.get("id"): r for r in replies if isinstance(r, dict)}
        out: list[Any] = []
        for i, (method, _) in zip(ids, calls, strict=True):
            try:
                out.append(_checked(method, _result_of(by_id.get(i))))
            except RpcError as exc:
                out.append(exc)
        return out

    async def _post(self, payload: Any, retry: bool) -> Any:
        attempts = 1 + (self.settings.retries if retry else 0)
        for attempt in range(attempts):
            try:
                return await self._post_once(payload)
            except NodeUnavailable:
                if attempt + 1 >= attempts:
                    raise
                await asyncio.sleep(self.settings.backoff * (2**attempt))
        raise AssertionError("unreachable")

    async def _post_once(self, payload: Any) -> Any:
        try:
            response = await self._http.post(self._url, json=payload)
        except httpx.TimeoutException as exc:
            raise DeadlineExceeded(f"{self.label} did not answer in time") from exc
        except httpx.TransportError as exc:
            raise NodeUnavailable(f"{self.label} is unreachable") from exc
        if response.status_code >= 500 or response.status_code in (429, 408):
            raise NodeUnavailable(f"{self.label} answered HTTP {response.status_code}")
        try:
            return json.loads(response.content)
        except ValueError as exc:
            if response.status_code >= 400:
                raise UpstreamError(f"{self.label} answered HTTP {response.status_code}") from exc
            raise MalformedResponse(f"{self.label} sent a reply that is not JSON") from exc

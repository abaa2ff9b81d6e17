"""Async JSON-RPC client: one pooled HTTP connection set per node, batches, typed errors.

Every EVM-facing operation of tokenrisk goes through :class:`RpcClient`.  It maps
transport failures to :mod:`tokenrisk.errors` and never lets an RPC URL into an error
message (URLs often embed provider keys).  Only reads named in ``RETRYABLE`` are
retried, a bounded number of times, and only when the node could not be reached.
Reads at a recent block that a lagging backend answers with "header not found" (or a
null block) are sent again too, under the rule of :mod:`tokenrisk.chain.lag`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

import httpx
import msgspec
import orjson

from tokenrisk import metrics
from tokenrisk.chain.http11 import REFUSED_BODY_FLOOR, Http11, Target
from tokenrisk.chain.lag import Lag
from tokenrisk.errors import (
    BatchTooLarge,
    CallReverted,
    ChainMismatch,
    DeadlineExceeded,
    MalformedResponse,
    MethodUnsupported,
    NodeThrottled,
    NodeUnavailable,
    ReplyTooDeep,
    ReplyTooLarge,
    RequestTooLarge,
    RpcError,
    StateUnavailable,
    TokenRiskError,
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

log = logging.getLogger("tokenrisk")

# httpx logs every request URL at INFO; node URLs often embed provider keys, so its
# logger never goes below WARNING, whatever the operator's root logging level.
logging.getLogger("httpx").setLevel(logging.WARNING)

_UNSUPPORTED_CODES = frozenset({-32601})
_UNSUPPORTED_TEXT = ("method not found", "not supported", "does not exist", "unsupported method")
_REVERT_CODES = frozenset({3})
_REVERT_TEXT = (
    "revert",  # geth/anvil "execution reverted", nethermind "revert", hardhat "reverted"
    "invalid opcode",
    "out of gas",
    "stack underflow",
    "stack overflow",
    "invalid jump",
    "vm execution error",
    "evm error",
)
_THROTTLE_TEXT = (
    "rate limit",
    "rate-limit",
    "too many requests",
    "request limit",
    "exceeded the quota",
    "capacity exceeded",
    "throughput",
)
_STATE_TEXT = (
    "missing trie node",  # geth (hash scheme), erigon, nethermind
    "historical state",  # geth (path scheme): "historical state ... is not available"
    "state is not available",
    "state not available",
    "state unavailable",  # besu: "world state unavailable"
    "is pruned",  # reth: "state at block ... is pruned"
    "state histories",
)
"""A node's words for "no state kept for that block" (see StateUnavailable)."""
_BATCH_TEXT = (
    "batch too large",  # geth
    "batch size",  # providers: "batch size too large", "batch size exceeds ..."
    "batch limit",
    "batch request limit",
    "batch is too",
    "maximum batch",
    "max batch",
    "too many requests in batch",
)
_LIMIT_NUMBER = re.compile(r"(?:limit|max(?:imum)?|exceeds?|most|than)\D{0,24}?(\d{1,6})", re.I)


def batch_refusal(message: str, code: int = 0, data: Any = None) -> BatchTooLarge | None:
    """A BatchTooLarge when ``message`` is a node's "batch too large" (with the limit it
    names, if any), else None."""
    if not _has(message, _BATCH_TEXT):
        return None
    named = _LIMIT_NUMBER.search(message)
    limit = int(named.group(1)) if named and int(named.group(1)) > 0 else None
    return BatchTooLarge(message, code, data, limit)


@dataclass(frozen=True)
class RpcSettings:
    """Transport settings; the defaults are safe (never 'no timeout', never unbounded).

    ``max_reply_bytes`` caps one reply after decompression (the download stops there);
    ``max_depth`` caps how deeply a reply's JSON may nest.
    """

    timeout: float = 10.0
    retries: int = 2
    backoff: float = 0.05
    max_connections: int = 32
    max_reply_bytes: int = 32 * 1024 * 1024
    max_depth: int = 256
    max_batch: int | None = None
    """Most requests in one JSON-RPC batch (a provider's cap); None: no cap until a
    node refuses a batch, which then teaches the client one."""
    max_request_bytes: int | None = 1024 * 1024
    """Largest batch body sent at once: a larger one goes as two halves (one call is
    always sent whole).  Nodes cap a request's body (anvil 2 MiB, geth 5 MB, a proxy's
    default 1 MiB), and concurrent checks' calls folded into one batch can pass that;
    None: no cap until a node refuses a body (:class:`~tokenrisk.errors.RequestTooLarge`)."""
    lag_retries: int = 5
    lag_backoff: float = 0.05
    """A read at a recent block answered "header not found" (a lagging backend) is sent
    again up to ``lag_retries`` times: at once, then after ``lag_backoff`` seconds,
    doubling (0.75 s in all by default); then NodeBehind (:mod:`tokenrisk.chain.lag`)."""


def _has(message: str, texts: Sequence[str]) -> bool:
    lowered = message.lower()
    return any(text in lowered for text in texts)


def error_from_object(error: Any) -> TokenRiskError:
    """Turn a JSON-RPC ``error`` member into a typed exception.

    CallReverted only for EVM failures (code 3 or the node's words for them);
    NodeThrottled for rate limits; everything else is a plain RpcError, which no check
    reads as an answer.
    """
    if not isinstance(error, dict):
        return RpcError("node sent an error member that is not an object")
    code = error.get("code", 0)
    code = code if isinstance(code, int) and not isinstance(code, bool) else 0
    message = str(error.get("message", "unknown error"))[:500]
    data = error.get("data")
    if code in _UNSUPPORTED_CODES or _has(message, _UNSUPPORTED_TEXT):
        return MethodUnsupported(message, code, data)
    refused = batch_refusal(message, code, data)
    if refused is not None:
        return refused
    if _has(message, _STATE_TEXT):
        return StateUnavailable(message, code, data)
    if _has(message, _THROTTLE_TEXT):
        return NodeThrottled(f"node refused a request (JSON-RPC code {code})")
    if code in _REVERT_CODES or _has(message, _REVERT_TEXT):
        return CallReverted(message, code, data)
    return RpcError(message, code, data)


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


_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
_STEPS = bytes(1 if c in b"[{" else 255 if c in b"]}" else 0 for c in range(256))
"""Opening brackets step +1, closing ones -1 (255 read as a signed byte)."""


def too_deep(body: bytes, limit: int) -> bool:
    """Does the JSON text ``body`` nest more than ``limit`` arrays/objects deep?

    Checked on the raw bytes, before parsing, so hostile nesting never reaches the
    (recursive) parser.  A body with at most ``limit`` opening brackets cannot be too
    deep (the common case, free).  A large ordinary reply is then proved shallow by
    :func:`_shallow` (a few C-speed byte passes, a third of a parse).  Otherwise
    escaped quotes and backslashes are dropped, everything but brackets and quotes is
    dropped, string contents are dropped (every other quote-separated piece), and the
    deepest prefix sum of the remaining brackets is the depth: about as costly as
    parsing the reply once.
    """
    if len(body) <= limit:
        return False
    skeleton = body.translate(None, _NOT_STRUCTURE)  # one pass; the counts then read less
    if skeleton.count(b"[") + skeleton.count(b"{") <= limit:
        return False
    if _shallow(body, limit, skeleton):
        return False
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = plain.translate(None, _NOT_STRUCTURE)
    if b'"' in skeleton:
        skeleton = b"".join(skeleton.split(b'"')[::2])
    steps = memoryview(skeleton.translate(_STEPS)).cast("b")
    return max(itertools.accumulate(steps), default=0) > limit


_PEEL_ROUNDS = 16


def _shallow(body: bytes, limit: int, skeleton: bytes | None = None) -> bool:
    """A quick proof that ``body`` nests at most ``limit`` deep, for the usual reply: no
    backslash (so no escaped quote) and no bracket inside a string.  False proves
    nothing (:func:`too_deep` then scans exactly).

    The skeleton keeps only quotes and brackets; dropping adjacent quote pairs keeps
    the quotes alternating open/close and every bracket inside a string still inside
    one, so a skeleton left without quotes has only structural brackets.  Each round
    then drops every adjacent ``[]`` and then ``{}``, which removes all pairs of
    height 1 and may expose and remove some of height 2: ``rounds`` rounds that leave
    nothing prove a depth of at most ``2 * rounds``.
    """
    if b"\\" in body:
        return False
    if skeleton is None:  # ``body`` without all but quotes and brackets, if known
        skeleton = body.translate(None, _NOT_STRUCTURE)
    skeleton = skeleton.replace(b'""', b"")
    if b'"' in skeleton:
        return False
    for _ in range(min(_PEEL_ROUNDS, limit // 2)):
        peeled = skeleton.replace(b"[]", b"").replace(b"{}", b"")
        if not peeled:
            return True  # depth <= 2 * rounds <= limit
        if len(peeled) == len(skeleton):
            return False  # unmatched brackets: not JSON, the exact scan and parser say so
        skeleton = peeled
    return False


def decode_reply(body: bytes, max_depth: int) -> Any:
    """Parse a node reply; raises ReplyTooDeep or MalformedResponse (never a parser error)."""
    if too_deep(body, max_depth):
        raise ReplyTooDeep(f"node reply nests deeper than {max_depth} levels")
    try:
        return orjson.loads(body)
    except (ValueError, RecursionError) as exc:  # orjson.JSONDecodeError is a ValueError
        raise MalformedResponse("node sent a reply that is not JSON") from exc


T = TypeVar("T")


NULL = msgspec.Raw(b"null")
"""A member kept as JSON text (``msgspec.Raw``) that is absent or null."""


def raw_json(raw: msgspec.Raw, max_depth: int) -> Any:
    """A member of a typed reply kept as JSON text, parsed as :func:`decode_reply`
    parses a reply (the depth guard first); None when it was absent or null.  Typed
    replies keep their ``error`` members so: one nested past any limit is then refused
    as the whole reply was, and the reply itself needs no scan (:class:`Shallow`)."""
    return None if raw == NULL else decode_reply(bytes(raw), max_depth)


class _Envelope(msgspec.Struct, Generic[T]):
    """A JSON-RPC reply whose result has a known type (other members are ignored)."""

    result: T | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw = NULL  # any error: the plain path reads the reply


@dataclass(frozen=True)
class _Typed:
    """A result decoded into the caller's type (not plain JSON)."""

    result: Any


TypedDecoder = msgspec.json.Decoder[_Envelope[Any]]


@lru_cache(maxsize=32)
def _typed_decoder(result_type: Any) -> TypedDecoder:
    return msgspec.json.Decoder(_Envelope[result_type])


class Shallow:
    """A result type (msgspec types) declared shallow by construction: no struct that
    contains itself, no ``Any``; ``msgspec.Raw`` members allowed (their text is parsed
    only when read, with its own depth guard: :func:`raw_json`, as the envelope's
    errors are).

    A reply decoded typed into such a type needs no depth scan first
    (:meth:`RpcClient._typed`): what the decoder builds cannot nest deeper than the
    type, a reply that does not fit goes the plain path, and the members it skips or
    keeps raw it only steps over (a nesting deeper than Python's recursion limit raises
    ``RecursionError``, read as :class:`ReplyTooDeep`).  The scan was a pass over every
    byte of the simulations' replies (~4 % of a recomputed check's instructions, issue
    #27).  Given to :meth:`RpcClient.call_typed` and :class:`TypedCall` as the type.
    Declared once per type (a module constant): its hash is its identity, cheap for the
    decoders' caches a batch looks up per call."""

    __slots__ = ("type",)

    def __init__(self, result_type: Any) -> None:
        self.type = result_type


def _unwrapped(result_type: Any) -> Any:
    return result_type.type if isinstance(result_type, Shallow) else result_type


@dataclass(frozen=True)
class _SingleFit:
    """One typed result's decoding (:meth:`RpcClient.call_typed`)."""

    decoder: TypedDecoder
    bounded: bool

    def fit(self, body: bytes) -> _Typed | None:
        return _fit(self.decoder, body)


@lru_cache(maxsize=32)
def _single_fit(result_type: Any) -> _SingleFit:
    return _SingleFit(_typed_decoder(_unwrapped(result_type)), isinstance(result_type, Shallow))


def _fit(decoder: TypedDecoder, body: bytes) -> _Typed | None:
    """The body's result in the decoder's type; None for anything else (an error, a
    batch, a result of another shape, not JSON): the plain path then decides."""
    try:
        reply = decoder.decode(body)
    except msgspec.MsgspecError:
        return None
    if reply.error != NULL or isinstance(reply.result, msgspec.UnsetType):
        return None
    return _Typed(reply.result)


class TypedCall(tuple[str, Sequence[Any]]):
    """A ``(method, params)`` call of a batch whose caller takes its result decoded into
    ``result_type`` (msgspec structs, as :meth:`RpcClient.call_typed`) or as plain JSON.

    It is the plain pair to everything that does not look (fakes, wrappers that rebuild
    the calls): those hand back plain JSON, which the caller takes too.
    :meth:`RpcClient.batch` decodes such a call's result typed when the whole reply fits
    (:class:`_BatchFit`): a simulation's reply is mostly block headers and log metadata
    that are then skipped, not built."""

    result_type: Any

    def __new__(cls, method: str, params: Sequence[Any], result_type: Any) -> TypedCall:
        call = super().__new__(cls, (method, params))
        call.result_type = result_type
        return call


class _Entry(msgspec.Struct):
    """One reply of a JSON-RPC batch, its result left undecoded."""

    id: int | str | None = None
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw = NULL


_ENTRIES = msgspec.json.Decoder(list[_Entry])


class _BatchFit:
    """A batch reply's decoding when some calls are :class:`TypedCall`: the replies as
    the plain parse gives them (dicts with ``id``, ``result``, ``error``), those results
    decoded into the call's type where they fit (else plain, as :func:`_fit`)."""

    def __init__(
        self,
        decoders: dict[Any, msgspec.json.Decoder[Any]],
        whole: msgspec.json.Decoder[list[Any]] | None = None,
        depth: int = 256,
        bounded: bool = False,
    ) -> None:
        self.decoders = decoders  # by request id
        self.whole = whole  # every call of one type: the batch decoded in one pass
        self.depth = depth  # the client's cap, for what is parsed plain
        # every typed call's type is Shallow: the body is not scanned first, so each
        # result parsed plain (an untyped call's, one that does not fit its type) is
        # scanned on its own, as each error is (raw_json)
        self.bounded = bounded

    def fit(self, body: bytes) -> list[dict[str, Any]] | None:
        """The replies; None when the body is not a list of reply objects (the plain
        path then decides, with its own errors)."""
        if self.whole is not None:
            try:  # the usual batch of simulations: one pass, typed
                return [_reply(e, e.result, self.depth) for e in self.whole.decode(body)]
            except msgspec.MsgspecError:
                pass  # some result of another shape: each one apart, below
        try:
            entries = _ENTRIES.decode(body)
        except msgspec.MsgspecError:
            return None
        out: list[dict[str, Any]] = []
        for entry in entries:
            result = entry.result
            if not isinstance(result, msgspec.UnsetType):
                result = self._result(entry.id, result)
            out.append(_reply(entry, result, self.depth))
        return out

    def _result(self, request: Any, raw: msgspec.Raw) -> Any:
        decoder = self.decoders.get(request) if isinstance(request, int) else None
        if decoder is not None:
            try:
                return decoder.decode(raw)
            except msgspec.MsgspecError:
                pass  # another shape: plain JSON, as the caller also takes
        if self.bounded:
            return decode_reply(bytes(raw), self.depth)
        try:
            return orjson.loads(memoryview(raw))
        except (ValueError, RecursionError) as exc:
            raise MalformedResponse("node sent a reply that is not JSON") from exc


def _reply(entry: Any, result: Any, max_depth: int) -> dict[str, Any]:
    """A batch entry as the plain parse gives it."""
    reply: dict[str, Any] = {"id": entry.id}
    error = raw_json(entry.error, max_depth)
    if error is not None:
        reply["error"] = error
    if not isinstance(result, msgspec.UnsetType):
        reply["result"] = result
    return reply


@lru_cache(maxsize=32)
def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(_unwrapped(result_type))


class _BatchEnvelope(msgspec.Struct, Generic[T]):
    """One reply of a batch whose results all have a known type."""

    id: int | str | None = None
    result: T | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw = NULL


@lru_cache(maxsize=32)
def _batch_decoder(result_type: Any) -> msgspec.json.Decoder[list[Any]]:
    """A whole batch whose every result is ``result_type``."""
    item = _unwrapped(result_type)
    return msgspec.json.Decoder(list[_BatchEnvelope[item]])  # type: ignore[valid-type]


Watcher = Callable[[str, Sequence[Any], RpcError], None]
Fit = _SingleFit | _BatchFit
"""How a request's reply may be decoded typed (one result, or a batch's)."""


WARM_CONNECTIONS = 16
"""Connections opened at start-up: about as many requests as a first check of a token
has in flight at once."""
LONG_REPLY = 64 * 1024
"""Reply bytes from which decoding it (and the caller's work on it) takes long enough
to hold back requests other tasks have ready: :meth:`RpcClient._before_long_reply`."""


class RpcClient:
    """A JSON-RPC 2.0 client for one node.

    ``label`` names the node in errors and logs instead of its URL; ``chain_id`` labels
    its requests, failures and latency in the metrics.  Requests go through the lean
    HTTP/1.1 client of :mod:`tokenrisk.chain.http11`; ``transport`` replaces the network
    with an httpx transport instead (``httpx.MockTransport`` for a fake node in unit
    tests; used as is, ``max_connections`` does not apply).  httpx also carries the
    requests when the environment configures a proxy for the node's URL.
    """

    def __init__(
        self,
        url: str,
        settings: RpcSettings | None = None,
        label: str = "node",
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        chain_id: int | None = None,
        expect_chain_id: int | None = None,
    ) -> None:
        self.settings = settings or RpcSettings()
        self.label = label
        self.batch_limit = self.settings.max_batch
        """Most requests per JSON-RPC batch, configured or learnt from a refusal."""
        self.identity = ChainIdentity(expect_chain_id)
        self.lag = Lag(self.settings.lag_retries, self.settings.lag_backoff)
        """The heads the node reported, and the retry rule for its lagging backends."""
        self.watcher: Watcher | None = None
        """Shown every node error but reverts (method, params, error): the chain's
        :class:`~tokenrisk.chain.node.Node` learns the node's limits from them."""
        self._metrics_chain = "none" if chain_id is None else str(chain_id)
        self._url = url
        self._ids = itertools.count(1)
        self._lean = _lean_client(url, label, self.settings) if transport is None else None
        if self._lean is not None and expect_chain_id is not None:
            self._lean.greeting = (_CHAIN_ID_REQUEST, self._greeted)
        self._http: httpx.AsyncClient | None = None
        if self._lean is None:
            limits = httpx.Limits(max_connections=self.settings.max_connections)
            self._http = httpx.AsyncClient(
                timeout=self.settings.timeout,
                limits=limits,
                transport=transport,
                headers=JSON_HEADERS,
            )

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        if self._http is not None:
            await self._http.aclose()

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        """Send one request and return its ``result``.

        Raises CallReverted (the EVM failed the call), RpcError (any other node error
        object), NodeUnavailable/NodeThrottled, DeadlineExceeded, MalformedResponse.
        """
        return await self._settled(method, params, lambda: self._call_once(method, params))

    async def _call_once(self, method: str, params: Sequence[Any]) -> Any:
        payload = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        reply = await self._post(payload, retry=method in RETRYABLE)
        return self._result(method, params, reply)

    async def _settled(
        self, method: str, params: Sequence[Any], send: Callable[[], Awaitable[Any]]
    ) -> Any:
        """``send()``'s result, sent again while a lagging backend answers it as a block
        it does not have yet (:mod:`tokenrisk.chain.lag`); raises NodeBehind when the
        lag outlasts the retries, and ``send``'s own errors."""
        for wait in self.lag.waits:
            if wait:
                await asyncio.sleep(wait)
            try:
                result = await send()
            except RpcError as exc:
                if not self.lag.behind(method, params, exc):
                    raise
                self._lagged(1)
                continue
            if not self.lag.behind(method, params, result):
                return result
            self._lagged(1)
        raise self.lag.gave_up(method)

    def _lagged(self, count: int) -> None:
        if self.lag.met(count):
            log.info(
                "%s: a backend is behind a block the node reported; reads sent again", self.label
            )

    def _result(self, method: str, params: Sequence[Any], reply: Any) -> Any:
        """The checked result of one reply; a node error is shown to ``watcher`` first."""
        try:
            result = _checked(method, _result_of(reply))
        except RpcError as exc:
            self._tell(method, params, exc)
            raise
        self.lag.saw(method, params, result)
        return result

    def _tell(self, method: str, params: Sequence[Any], error: RpcError) -> None:
        if self.watcher is not None and not isinstance(error, CallReverted):
            self.watcher(method, params, error)

    async def call_typed(self, method: str, params: Sequence[Any], result_type: Any) -> Any:
        """:meth:`call`, with the ``result`` decoded straight into ``result_type`` (msgspec
        structs): a large reply costs a fraction of the CPU and memory of plain JSON, as
        the fields the caller never reads are skipped, not built.

        A reply that does not fit ``result_type`` (or is an error) is parsed and checked
        exactly as :meth:`call` does, and its plain JSON result returned instead: the
        caller takes both forms.  One request of its own (never folded into a batch).
        """
        return await self._settled(
            method, params, lambda: self._post_typed(method, params, result_type)
        )

    async def _post_typed(self, method: str, params: Sequence[Any], result_type: Any) -> Any:
        """One typed request (the hook a benchmark wraps to count round trips)."""
        payload = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        fit = _single_fit(result_type)
        reply = await self._post(payload, retry=method in RETRYABLE, typed=fit)
        if isinstance(reply, _Typed):
            return reply.result
        return self._result(method, params, reply)

    async def batch(
        self,
        calls: Sequence[tuple[str, Sequence[Any]]],
        *,
        tolerate: type[RpcError] = CallReverted,
    ) -> list[Any]:
        """Send several requests in one JSON-RPC batch.

        Returns one entry per call, in order: the result, or the error instance for a
        call that failed with ``tolerate`` (by default CallReverted: the EVM's answer
        about a contract).  Any other per-call error raises, so no caller can mistake a
        node failure (rate limit, internal error, missing reply) for an empty result.
        Capability probes pass ``tolerate=RpcError``.  Transport failures raise.
        """
        if not calls:
            return []
        out = await self._batch_settled(calls)
        for reply in out:
            if isinstance(reply, RpcError) and not isinstance(reply, tolerate):
                raise reply
        return out

    async def _batch_settled(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Every reply, the ones a lagging backend answered as "not yet" sent again (as
        one smaller batch per round) under :mod:`tokenrisk.chain.lag`'s rule; raises
        NodeBehind when some still are after the last round."""
        out: list[Any] = []
        stale = list(range(len(calls)))
        for wait in self.lag.waits:
            if wait:
                await asyncio.sleep(wait)
            again = await self._batch_parts([calls[i] for i in stale])
            if not out:
                out = again
            else:
                for i, reply in zip(stale, again, strict=True):
                    out[i] = reply
            stale = [i for i in stale if self.lag.behind(*calls[i], out[i])]
            if not stale:
                return out
            self._lagged(len(stale))
        raise self.lag.gave_up(calls[stale[0]][0])

    async def _batch_parts(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Every reply (per-call errors as instances), the calls cut into batches of at
        most ``batch_limit``, sent concurrently; a batch the node refuses as too large
        teaches a lower limit and is sent again, split.  The refused batch did not run
        (the node answered it with one error), so nothing is done twice."""
        limit = self.batch_limit or len(calls)
        if len(calls) <= limit:
            try:
                return await self._batch_once(calls)
            except BatchTooLarge as exc:
                if len(calls) <= 1:
                    raise
                if isinstance(exc, RequestTooLarge):  # too many bytes, not too many calls
                    return await self._halves(calls)
                self.learn_batch_limit(len(calls), exc.limit)
                return await self._batch_parts(calls)
        parts = [calls[i : i + limit] for i in range(0, len(calls), limit)]
        replies = await asyncio.gather(*(self._batch_parts(part) for part in parts))
        return [reply for part in replies for reply in part]

    async def _halves(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """Every reply of a batch the node refused for its bytes, sent again as two
        halves at once (each split again while still refused, down to one call)."""
        half = len(calls) // 2
        first, second = await asyncio.gather(
            self._batch_parts(calls[:half]), self._batch_parts(calls[half:])
        )
        return [*first, *second]

    def learn_batch_limit(self, refused: int, named: int | None = None) -> int:
        """Lower ``batch_limit`` after the node refused a batch of ``refused`` requests:
        to the size it ``named`` when that is smaller, else to half.  Returns the limit."""
        limit = named if named is not None and 0 < named < refused else max(1, refused // 2)
        if self.batch_limit is None or limit < self.batch_limit:
            self.batch_limit = limit
            log.info("%s: batches of at most %d requests", self.label, limit)
        return self.batch_limit

    async def _batch_once(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """One JSON-RPC batch on the wire; per-call errors come back as instances."""
        first = next(self._ids)
        ids = [first + i for i in range(len(calls))]
        for _ in calls[1:]:
            next(self._ids)
        payload = [
            {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            for i, (m, p) in zip(ids, calls, strict=True)
        ]
        retry = all(method in RETRYABLE for method, _ in calls)
        decoders = {
            i: _result_decoder(call.result_type)
            for i, call in zip(ids, calls, strict=True)
            if isinstance(call, TypedCall)
        }
        types = {id(c.result_type): c.result_type for c in calls if isinstance(c, TypedCall)}
        whole = None
        if len(decoders) == len(calls) and len(types) == 1:
            whole = _batch_decoder(next(iter(types.values())))
        bounded = all(isinstance(c.result_type, Shallow) for c in calls if isinstance(c, TypedCall))
        depth = self.settings.max_depth
        fit = _BatchFit(decoders, whole, depth, bounded) if decoders else None
        replies = await self._post(payload, retry=retry, typed=fit)
        if not isinstance(replies, list):
            if isinstance(replies, dict) and replies.get("error") is not None:
                raise error_from_object(replies["error"])
            raise MalformedResponse("node answered a batch with a non-list")
        _raise_batch_refusal(replies, len(calls))
        by_id = {r.get("id"): r for r in replies if isinstance(r, dict)}
        out: list[Any] = []
        for i, (method, params) in zip(ids, calls, strict=True):
            try:
                out.append(_checked(method, _result_of(by_id.get(i))))
                self.lag.saw(method, params, out[-1])
            except RpcError as exc:
                self._tell(method, params, exc)
                out.append(exc)
        return out

    async def _post(self, payload: Any, retry: bool, typed: Fit | None = None) -> Any:
        attempts = 1 + (self.settings.retries if retry else 0)
        for attempt in range(attempts):
            await self.identity.ensure(self._read_chain_id)
            try:
                return await self._post_once(payload, typed)
            except ChainMismatch:
                raise
            except NodeUnavailable as exc:
                if not isinstance(exc, NodeThrottled):
                    self.identity.lost()  # whoever answers next must show its chain id
                if attempt + 1 >= attempts:
                    raise
                await asyncio.sleep(self.settings.backoff * (2**attempt))
        raise AssertionError("unreachable")

    def _greeted(self, status: int, body: bytes) -> None:
        """The check of a new connection's ``eth_chainId`` (:mod:`~tokenrisk.chain.http11`
        greets every new connection with it): ChainMismatch refuses the node."""
        _check_status(self.label, status)
        reply = decode_reply(body, self.settings.max_depth)
        served = int(_checked("eth_chainId", _result_of(reply)), 16)
        wrong = self.identity.saw(served)
        if wrong is not None:
            raise wrong

    async def warm(self, count: int = WARM_CONNECTIONS) -> int:
        """Open and greet up to ``count`` connections to the node now (start-up), so the
        first checks find them ready (see :meth:`~tokenrisk.chain.http11.Http11.warm`);
        how many are ready (0 through httpx, which opens its own)."""
        if self._lean is None:
            return 0
        return await self._lean.warm(min(count, self.settings.max_connections))

    async def verify_chain(self) -> None:
        """Ask the node for its chain id now (start-up); raises ChainMismatch, or the
        transport errors when it cannot be reached."""
        self.identity.lost()
        await self.identity.ensure(self._read_chain_id)

    async def _read_chain_id(self) -> int:
        payload = {"jsonrpc": "2.0", "id": next(self._ids), "method": "eth_chainId", "params": []}
        try:
            reply = _checked("eth_chainId", _result_of(await self._post_once(payload)))
        except NodeUnavailable as exc:
            if not isinstance(exc, NodeThrottled):
                self.identity.lost()
            raise
        return int(reply, 16)

    async def _post_once(self, payload: Any, typed: Fit | None = None) -> Any:
        started = time.perf_counter()
        try:
            reply = await self._exchange(payload, typed)
        except TokenRiskError as exc:
            metrics.node_request(self._metrics_chain, time.perf_counter() - started, exc)
            raise
        metrics.node_request(self._metrics_chain, time.perf_counter() - started, None)
        return reply

    async def _exchange(self, payload: Any, typed: Fit | None = None) -> Any:
        """The decoded reply: a :class:`_Typed` result when ``typed`` takes it (a batch's
        replies with its typed results: :class:`_BatchFit`), else the plain JSON reply."""
        request = orjson.dumps(payload)
        _check_body(request, payload, self.settings.max_request_bytes)
        if self._lean is not None:
            status, body = await self._lean.post(request)
            _check_status(self.label, status)
        else:
            status, body = await self._exchange_httpx(request)
        if isinstance(payload, list) and status >= 400:
            _raise_refused_batch(status, body)
        if len(body) >= LONG_REPLY:
            await self._before_long_reply()
        if typed is not None:
            fitted = self._typed(typed, body)
            if fitted is not None:
                return fitted
        try:
            reply = decode_reply(body, self.settings.max_depth)
        except MalformedResponse as exc:
            if status >= 400 and type(exc) is MalformedResponse:
                raise UpstreamError(f"{self.label} answered HTTP {status}") from exc
            raise
        _raise_refused_body(reply, len(request), isinstance(payload, list))
        return reply

    def _typed(self, typed: Fit, body: bytes) -> Any:
        """The reply decoded typed, or None for the plain path (which then decides, with
        its own errors).  The depth guard scans the body first, unless every type is
        :class:`Shallow`: a simulation's reply is then decoded without the pass over
        its bytes."""
        limit = self.settings.max_depth
        if not typed.bounded and too_deep(body, limit):
            return None  # the plain path raises ReplyTooDeep
        try:
            return typed.fit(body)
        except RecursionError:
            raise ReplyTooDeep(f"node reply nests deeper than {limit} levels") from None

    async def _before_long_reply(self) -> None:
        """Run before a long reply (``LONG_REPLY`` bytes) is decoded: nothing here; the
        coalescing client (:mod:`tokenrisk.chain.coalesce`) first lets the other replies
        of the loop turn run and sends what they queued."""

    async def _exchange_httpx(self, request: bytes) -> tuple[int, bytes]:
        """(status, body) through httpx: an injected transport, or a proxy to go through."""
        assert self._http is not None
        try:
            async with self._http.stream("POST", self._url, content=request) as response:
                _check_status(self.label, response.status_code)
                return response.status_code, await self._read_capped(response)
        except httpx.TimeoutException as exc:
            raise DeadlineExceeded(f"{self.label} did not answer in time") from exc
        except httpx.DecodingError as exc:
            raise MalformedResponse(f"{self.label} sent an undecodable (compressed) reply") from exc
        except httpx.TransportError as exc:
            raise NodeUnavailable(f"{self.label} is unreachable") from exc
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{self.label} answered with an HTTP error") from exc

    async def _read_capped(self, response: httpx.Response) -> bytes:
        """The (decompressed) body, read in chunks; stops at ``max_reply_bytes``."""
        cap = self.settings.max_reply_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise ReplyTooLarge(f"{self.label} announced a reply of {declared} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise ReplyTooLarge(f"{self.label} sent a reply over {cap} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


JSON_HEADERS = {"Content-Type": "application/json"}
_CHAIN_ID_REQUEST = b'{"jsonrpc":"2.0","id":0,"method":"eth_chainId","params":[]}'


def _raise_refused_batch(status: int, body: bytes) -> None:
    """An HTTP error answering a batch that says "too large" (413, or a 400 whose body
    names the batch) raises BatchTooLarge; other statuses are left to the caller."""
    text = body[:2000].decode("utf-8", "replace")
    refused = batch_refusal(text) if status in (400, 413) else None
    if refused is not None:
        raise refused
    if status == 413:
        raise BatchTooLarge("the node answered HTTP 413 to a batch")


def _check_body(request: bytes, payload: Any, cap: int | None) -> None:
    """RequestTooLarge, before sending, for a batch of several calls over ``cap`` bytes
    (the caller sends it again in halves)."""
    if cap is not None and len(request) > cap and isinstance(payload, list) and len(payload) > 1:
        raise RequestTooLarge(f"a batch of {len(request)} bytes, over the {cap} sent at once")


def _raise_refused_body(reply: Any, size: int, batch: bool) -> None:
    """A request of at least ``REFUSED_BODY_FLOOR`` bytes answered with ONE error object
    that is no call's reply (to a batch: no array; to one call: ``id`` null): the node
    refused the body before running anything (anvil answers a body over 2 MiB with a
    lone ``-32600 "Invalid request"``), so RequestTooLarge; a batch is then sent again
    in halves.  JSON-RPC 2.0 answers so only a request it could not take at all."""
    if size < REFUSED_BODY_FLOOR or not isinstance(reply, dict):
        return
    error = reply.get("error")
    if not isinstance(error, dict) or not (batch or reply.get("id") is None):
        return
    message = str(error.get("message", "request refused"))[:200]
    if batch_refusal(message) is None:  # one naming the batch's count: BatchTooLarge
        code = error.get("code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else 0
        raise RequestTooLarge(message, code)


def _raise_batch_refusal(replies: list[Any], sent: int) -> None:
    """geth answers a batch over its limit with ONE error ("batch too large") in a
    one-element array; some providers fill every slot with that error.  Either way the
    batch did not run: raise BatchTooLarge."""
    refusals = [
        refused
        for reply in replies
        if isinstance(reply, dict) and isinstance(error := reply.get("error"), dict)
        if (refused := batch_refusal(str(error.get("message", "")))) is not None
    ]
    if refusals and (len(replies) < sent or len(refusals) == len(replies)):
        raise refusals[0]


class ChainIdentity:
    """Whether the node has shown it serves the configured chain.

    Unknown at first and again after the node was unreachable (it may have come back as
    another node); then the next request asks ``eth_chainId`` first (one round trip,
    shared by concurrent requests).  A node serving another chain makes every request
    raise ChainMismatch; it is asked again at most every ``recheck`` seconds, so a
    repaired node is served again without a restart.  ``expected`` None: no check.
    """

    def __init__(self, expected: int | None, recheck: float = 5.0) -> None:
        self.expected = expected
        self.recheck = recheck
        self.served: int | None = None
        self._known = expected is None
        self.verified = 0
        """How often the node showed its chain id after it was unknown (start, each
        outage): a Node probes its capabilities again when this moved."""
        self._refused_at = 0.0
        self._lock = asyncio.Lock()

    def lost(self) -> None:
        if self.expected is not None:
            self._known = False

    @property
    def mismatch(self) -> ChainMismatch | None:
        """The error every request gets while the node serves another chain."""
        expected, served = self.expected, self.served
        if expected is None or served is None or served == expected:
            return None
        return ChainMismatch(expected, served)

    async def ensure(self, read: Callable[[], Awaitable[int]]) -> None:
        """Returns when the node serves ``expected``; raises ChainMismatch or the
        errors of ``read`` (an async function giving the node's chain id)."""
        if self._known:
            return
        async with self._lock:
            wrong = self.mismatch
            if wrong is not None and time.monotonic() - self._refused_at < self.recheck:
                raise wrong
            if self._known:
                return
            wrong = self.saw(await read())
            if wrong is not None:
                raise wrong

    def saw(self, served: int) -> ChainMismatch | None:
        """The node reported ``served``: the error to refuse it with, or None."""
        self.served = served
        wrong = self.mismatch
        if wrong is None:
            if not self._known:
                self.verified += 1
            self._known = True
            return None
        if self._known or time.monotonic() - self._refused_at >= self.recheck:
            log.warning("%s", wrong.message)
        self._known = False
        self._refused_at = time.monotonic()
        return wrong


def _lean_client(url: str, label: str, settings: RpcSettings) -> Http11 | None:
    """The lean HTTP/1.1 client for ``url``; None when httpx must go instead: a proxy
    configured in the environment applies to it (httpx honours those), or the URL is
    not a plain http(s) one."""
    try:
        target = Target.parse(url)
    except ValueError:
        return None
    proxies = urllib.request.getproxies()
    scheme = "https" if target.tls else "http"
    if (proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(target.host):
        return None
    return Http11(
        url,
        label,
        timeout=settings.timeout,
        max_reply_bytes=settings.max_reply_bytes,
        max_connections=settings.max_connections,
        headers=JSON_HEADERS,
    )


def _check_status(label: str, status: int) -> None:
    """Statuses that mean "not now" raise before the body is read."""
    if status == 429:
        raise NodeThrottled(f"{label} answered HTTP 429")
    if status >= 500 or status == 408:
        raise NodeUnavailable(f"{label} answered HTTP {status}")

"""A JSON-RPC client that folds requests made at the same moment into one batch.

A check runs its independent reads concurrently (the token's metadata, the pools, the
holder index, the journey's simulations, ...).  Sent one HTTP request each, they cost
the service a request's worth of HTTP work apiece (for a small JSON-RPC call most of its
CPU) and the node as many connections.  :class:`CoalescingRpc` keeps the
:class:`~tokenrisk.rpc.RpcClient` interface but queues every ``call``/``batch`` made in
one turn of the event loop and sends them together as ONE JSON-RPC batch (split at
``max_batch`` calls), then hands each caller its own result or error.  Results are the
same as sending them apart: a per-call error is that caller's error (raised or returned
by the caller's own ``tolerate`` rule); a transport failure is every caller's.

Methods in ``SOLO`` (slow traces, large log ranges) always go in their own request, so
they never hold fast calls back.  A request that one caller's simulations fill
(``MAX_HEAVY`` of them, or one large one) leaves at once: waiting could add nothing to it.

Plain ``eth_call``s (``to``, ``data`` and ``gas`` only) and ``eth_getCode``s of one flush
at one block are folded further into ONE ``eth_call`` of the reader contract
(:mod:`tokenrisk.chain.reader`): a check's metadata reads, ERC-20 probes and code reads
cost the node one call, not ten.  The
few the reader cannot answer for sure are sent again directly; a node that refuses or
ignores the reader's code override gets no more folded calls from this client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tokenrisk.chain import reader
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import CallReverted, MalformedResponse, RpcError

SOLO = frozenset({"debug_traceCall", "eth_getLogs"})
MAX_BATCH = 200
HEAVY = frozenset({"eth_simulateV1"})
MAX_HEAVY = 4
"""Most simulations in one request (:func:`_chunks`): one check's journey sends at most
four at a time, so only concurrent work is split."""
LARGE_SIMULATION = 10
"""Simulated blocks from which a simulation fills a request alone (a holder-sell group
of dozens of blocks): the node then runs those on all its cores at once.  The simulator
(:mod:`tokenrisk.simulate.simulator`) sends plans this large on their own and decodes their
replies typed: hundreds of KiB, mostly block headers and log metadata never read."""
TURNS = 3
"""Event-loop turns a request waits for company: tasks started together reach their
first node call a turn or two apart (a cached lookup, a task hand-off), and a turn
costs microseconds against a round trip's milliseconds."""

Pending = tuple[tuple[str, Sequence[Any]], asyncio.Future[Any]]
Call = tuple[str, Sequence[Any]]
MIN_FOLD = 2
"""Fewest plain eth_calls and eth_getCodes at one block worth a reader call."""
CLOSE_GRACE = 1.0
"""Seconds closing waits for the requests still in flight (a check's past its deadline,
a background refresh), then cancels them: with a node that does not answer, each would
otherwise hold the service's shutdown for its timeouts and retries (76 s at a 20 s
``rpc_timeout``)."""


@dataclass
class _Group:
    """The calls of one block folded into one reader call (indexes into the flush)."""

    reads: list[tuple[int, reader.Read]] = field(default_factory=list)
    codes: list[tuple[int, str]] = field(default_factory=list)  # full code
    heads: list[tuple[int, str]] = field(default_factory=list)  # its first bytes

    def __len__(self) -> int:
        return len(self.reads) + len(self.codes) + len(self.heads)

    def indexes(self) -> list[int]:
        return [i for i, _ in [*self.reads, *self.codes, *self.heads]]

    def params(self, block: str) -> list[Any]:
        reads = [r for _, r in self.reads]
        accounts, heads = [a for _, a in self.codes], [a for _, a in self.heads]
        return reader.read_params(reader.fresh_address(), reads, block, accounts, heads)


def _fold_groups(calls: Sequence[Call]) -> dict[str, _Group]:
    """Foldable calls by block, only blocks with at least ``MIN_FOLD`` of them."""
    groups: dict[str, _Group] = {}
    for i, (method, params) in enumerate(calls):
        read = reader.foldable(method, params)
        if read is not None:
            groups.setdefault(str(params[1]), _Group()).reads.append((i, read))
            continue
        account = reader.code_account(method, params)
        if account is not None:
            group = groups.setdefault(str(params[1]), _Group())
            (group.heads if method == reader.CODE_HEAD else group.codes).append((i, account))
    return {block: group for block, group in groups.items() if len(group) >= MIN_FOLD}


def _chunks(pending: list[Pending], most: int, heavy: int) -> list[list[Pending]]:
    """``pending`` cut into requests of at most ``most`` calls and ``heavy`` of the
    ``HEAVY`` methods (a large simulation counts as ``heavy``: :func:`_weight`).  A
    node works through one batch call after call, but on separate requests at once:
    concurrent checks (or a holder analysis) whose simulations share a flush then keep
    several cores busy instead of queueing behind one another."""
    out: list[list[Pending]] = [[]]
    weight = 0
    for item in pending:
        cost = _weight(item[0], heavy)
        if len(out[-1]) >= most or (cost and weight + cost > heavy):
            out.append([])
            weight = 0
        out[-1].append(item)
        weight += cost
    return [chunk for chunk in out if chunk]


def _weight(call: Call, heavy: int) -> int:
    """A request's share a call takes: 0 for light methods, 1 for a simulation, all of
    it (``heavy``) for a simulation of ``LARGE_SIMULATION`` blocks or more."""
    method, params = call
    if method not in HEAVY:
        return 0
    first = params[0] if params else None
    blocks = first.get("blockStateCalls") if isinstance(first, dict) else None
    return heavy if isinstance(blocks, list) and len(blocks) >= LARGE_SIMULATION else 1


def _full(chunk: list[Pending], heavy: int) -> bool:
    """Simulations only, as many as a request takes (:func:`_chunks`)."""
    weights = [_weight(call, heavy) for call, _ in chunk]
    return all(weights) and sum(weights) >= heavy


def _direct(call: Call) -> Call:
    """The call as the node takes it (a code head is read as the whole code)."""
    method, params = call
    return ("eth_getCode", params) if method == reader.CODE_HEAD else call


def _direct_result(call: Call, result: Any) -> Any:
    if call[0] == reader.CODE_HEAD and isinstance(result, str):
        return result[:8].lower()  # "0x" and three bytes
    return result


async def _results(futures: list[asyncio.Future[Any]]) -> list[Any]:
    """Each future's result, in order, as ``asyncio.gather`` gives them, without its
    callback per future (a batch of a hundred reads paid ~3 us per call for it): one
    :meth:`CoalescingRpc._send` settles a chunk's futures together, so awaiting them
    in turn suspends once per chunk.  When the caller stops (an error, cancellation)
    the rest are cancelled, as gather cancels its children, and the errors of those
    already settled are retrieved, so asyncio does not report them as lost."""
    try:
        return [await future for future in futures]
    except BaseException:
        for future in futures:
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()
        raise


class CoalescingRpc(RpcClient):
    """An RpcClient whose concurrent requests share JSON-RPC batches."""

    max_batch = MAX_BATCH
    max_heavy = MAX_HEAVY

    def __init__(self, *args: Any, fold: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fold = fold  # plain eth_calls go through the reader contract
        self._pending: list[Pending] = []
        self._flushing = False
        self._sending: set[asyncio.Task[None]] = set()

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        if method in SOLO:
            return await self._post_call(method, params)
        (future,) = self._enqueue([(method, params)])
        result = await future
        if isinstance(result, RpcError):
            raise result
        return result

    async def batch(
        self,
        calls: Sequence[tuple[str, Sequence[Any]]],
        *,
        tolerate: type[RpcError] = CallReverted,
    ) -> list[Any]:
        """As :meth:`RpcClient.batch`: per-call ``tolerate`` errors are returned, any
        other per-call error raises (for this caller only)."""
        if not calls:
            return []
        results = await _results(self._enqueue(calls))
        for result in results:
            if isinstance(result, RpcError) and not isinstance(result, tolerate):
                raise result
        return results

    async def _post_call(self, method: str, params: Sequence[Any]) -> Any:
        """One request on its own (the hook a benchmark wraps to count round trips)."""
        return await RpcClient.call(self, method, params)

    async def _post_batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        """One JSON-RPC batch on the wire (the hook a benchmark wraps); every per-call
        error comes back as an instance, each caller then applies its own tolerance."""
        return await RpcClient.batch(self, calls, tolerate=RpcError)

    def _enqueue(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[asyncio.Future[Any]]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in calls]
        self._pending.extend(self._leave_full(list(zip(calls, futures, strict=True))))
        if not self._flushing:
            self._flushing = True
            loop.call_soon(self._flush, TURNS - 1)
        return futures

    def _leave_full(self, items: list[Pending]) -> list[Pending]:
        """Send now the requests ``items`` fill with simulations alone (``max_heavy`` of
        them, or one large one); the rest, returned, wait for company.

        Waiting gives a full request nothing (no call may join it, a simulation never
        folds), but costs it the loop turns it waits: on a check's busy turns (a round's
        replies decoded, the next round planned) a few milliseconds at the head of the
        critical path, as a limit search's dozens of simulations wait in turn behind
        the rest of the round's work (issue #27)."""
        if sum(_weight(call, self.max_heavy) for call, _ in items) < self.max_heavy:
            return items
        keep: list[Pending] = []
        for chunk in _chunks(items, self._most(), self.max_heavy):
            if _full(chunk, self.max_heavy):
                self._start(chunk)
            else:
                keep += chunk
        return keep

    def _most(self) -> int:
        """Most calls in one request: ``max_batch``, fewer when the node accepts fewer
        (``batch_limit``)."""
        return min(self.max_batch, self.batch_limit or self.max_batch)

    def _start(self, chunk: list[Pending]) -> None:
        task = asyncio.ensure_future(self._send(chunk))
        self._sending.add(task)  # a strong reference until it is done
        task.add_done_callback(self._sending.discard)

    async def _before_long_reply(self) -> None:
        """Send what is queued before a long reply is decoded.

        A round's replies often arrive in one loop turn: a check's small ones (a
        journey step, a scan's read) whose next requests are queued microseconds after
        their reply, and long ones (a holder group's simulations, hundreds of KiB) whose
        decoding and use take milliseconds.  A request queued by a reply handled
        earlier in the turn would wait for all of that, then its ``TURNS`` for company
        (issue #27's first-sight gaps); it leaves now instead (the flush already
        scheduled still sends whatever joins after), and the reply is decoded once
        those requests are written.  Nothing leaves later than before, and with nothing
        queued the reply is decoded at once, as before."""
        if self._send_queued():
            await asyncio.sleep(0)  # the _send tasks write their requests first

    def _send_queued(self) -> bool:
        """Start sending every queued call now; whether there was any.  The scheduled
        ``_flush`` still runs and sends what joins the queue meanwhile."""
        pending, self._pending = self._pending, []
        for chunk in _chunks(pending, self._most(), self.max_heavy):
            self._start(chunk)
        return bool(pending)

    def _flush(self, turns_left: int) -> None:
        """Send what the last loop turns queued, ``max_batch`` calls per request (fewer
        when the node accepts fewer: ``batch_limit``)."""
        if turns_left > 0:
            asyncio.get_running_loop().call_soon(self._flush, turns_left - 1)
            return
        self._flushing = False
        self._send_queued()

    async def _folded(self, calls: Sequence[Call]) -> list[Any]:
        """Results of ``calls`` as :meth:`_post_batch` gives them, with the plain
        eth_calls folded into reader calls (see the module docstring)."""
        groups = _fold_groups(calls) if self.fold else {}
        if not groups:
            return await self._direct_batch(calls)
        folded = {i for group in groups.values() for i in group.indexes()}
        direct = [i for i in range(len(calls)) if i not in folded]
        wire = [_direct(calls[i]) for i in direct]
        wire += [("eth_call", group.params(block)) for block, group in groups.items()]
        replies = await self._post_batch(wire)
        results: list[Any] = [None] * len(calls)
        for i, reply in zip(direct, replies, strict=False):
            results[i] = _direct_result(calls[i], reply)
        again = self._unfold(groups, replies[len(direct) :], results)
        if again:
            replies = await self._direct_batch([calls[i] for i in again])
            for i, reply in zip(again, replies, strict=True):
                results[i] = reply
        return results

    async def _direct_batch(self, calls: Sequence[Call]) -> list[Any]:
        replies = await self._post_batch([_direct(c) for c in calls])
        return [_direct_result(c, r) for c, r in zip(calls, replies, strict=True)]

    def _unfold(
        self, groups: dict[str, _Group], replies: Sequence[Any], results: list[Any]
    ) -> list[int]:
        """Fill ``results`` from the reader replies; the indexes to send directly."""
        again: list[int] = []
        for group, reply in zip(groups.values(), replies, strict=True):
            try:
                if isinstance(reply, RpcError):
                    raise reply
                outcomes, codes = reader.decode_output(
                    reply, len(group.reads), len(group.codes), len(group.heads)
                )
            except (RpcError, MalformedResponse):
                self.fold = False  # no override support (or ignored): read directly
                again += group.indexes()
                continue
            for (i, _), outcome in zip(group.reads, outcomes, strict=True):
                if outcome.status == reader.RETURNED:
                    results[i] = reader.as_call_result(outcome)
                elif outcome.status == reader.REVERTED:
                    results[i] = CallReverted("execution reverted", 3, None)
                else:
                    again.append(i)
            for (i, _), code in zip([*group.codes, *group.heads], codes, strict=True):
                results[i] = code
        return again

    async def _send(self, chunk: list[Pending]) -> None:
        try:
            results = await self._folded([call for call, _ in chunk])
        except BaseException as exc:  # transport failure or cancellation: every caller's
            for _, future in chunk:
                if future.done():
                    continue
                if isinstance(exc, asyncio.CancelledError):
                    future.cancel()  # an error nobody retrieves would be logged
                else:
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, future), result in zip(chunk, results, strict=True):
            if not future.done():
                future.set_result(result)

    async def aclose(self) -> None:
        """Close after the requests in flight are answered, or cancelled after
        :data:`CLOSE_GRACE` seconds."""
        if self._sending:
            _, late = await asyncio.wait(set(self._sending), timeout=CLOSE_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        await super().aclose()

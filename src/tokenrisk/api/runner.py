"""Running a check: under the request deadline, through the shared results cache and
single flight when asked, and through admission control whenever it computes.

Answers are JSON bytes from the moment they are computed (orjson), so a cached answer,
in this worker's memory or in Redis, is served as stored.  The ``X-Cache`` header says
how an answer came: ``hit`` (stored), ``wait`` (computed meanwhile for another request,
in this worker or another), ``miss`` (computed for this request).

Admission control (:class:`Admission`): a bounded number of recomputations per node, the
rest refused at once.  A node (and the worker's CPU) serves a few checks at a time well;
past that every check in progress slows down together until they all run into the
deadline (measured: 32 clients with distinct tokens got 4.5 s p50, below what one client
gets alone).  So each worker admits at most ``limit`` uncached computations per chain
(running or waiting for the node), and answers the next one immediately with 503 and
``Retry-After``; a client retries later instead of making everyone slower.  Answers from
the results cache and requests that join a computation already in flight are never
refused: they add no node work.  ``limit <= 0`` turns admission control off.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from fastapi.responses import Response

from tokenrisk import metrics
from tokenrisk.api.shared_state import Heads, SharedState, chain_heads, key_text
from tokenrisk.chain.head import one_head_per_request
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.errors import DeadlineExceeded, Overloaded
from tokenrisk.service import Service

Work = Callable[[], Awaitable[Any]]
"""A check and the rendering of its result as JSON-ready values."""
T = TypeVar("T")


class JSONBytes(Response):
    """An answer already serialised."""

    media_type = "application/json"


def json_bytes(body: Any) -> bytes:
    """The JSON text of an answer: orjson (several times faster than the json module),
    or the json module for what orjson refuses (integers beyond 64 bits, e.g. reserves)."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class Runner:
    """Runs a check under the request deadline (see the module docstring)."""

    deadline: float
    state: SharedState
    admission: Admission
    opened: Service | None = None  # the composition root, once the app has started
    supervisor: NodeSupervisor | None = None  # of the local nodes, while serving
    head_reuse: float = 0.0  # seconds a head read for one request keys others' lookups

    @property
    def service(self) -> Service:
        """The running service; the handlers take from it their check's bundle."""
        if self.opened is None:
            raise Overloaded("the service is starting", retry_after=1)
        return self.opened

    async def fresh(self, chain_id: int | None, work: Work) -> JSONBytes:
        """Compute without the results cache."""
        return JSONBytes(await self._timed(lambda: self._compute(chain_id, work)))

    async def cached(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> JSONBytes:
        """Answer from the cache when the chain head(s) still match, else compute once
        (however many requests, in however many workers, ask for it meanwhile) and store.

        The lookup reads each chain's head; with ``head_reuse`` set it uses a head read
        at most that many seconds ago (by any request of this worker), so a hit usually
        costs no round trip to the node, and a miss reads the heads afresh before it
        computes, so nothing is computed at an old head.  The head reads count against
        the deadline too.
        """
        body, how = await self._timed(lambda: self._lookup(endpoint, chain_id, params, work))
        return JSONBytes(body, headers={"X-Cache": how})

    async def _lookup(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> tuple[bytes, str]:
        if not self.state.caching:
            return await self._compute(chain_id, work), "miss"
        nodes = self.service.nodes
        heads = await chain_heads(nodes, chain_id, self.head_reuse)
        value = await self._stored(endpoint, heads, params)
        if value is None and self.head_reuse > 0:
            # the heads may be remembered ones: compute at the node's latest (no second
            # read when this request has just read them)
            fresh = await chain_heads(nodes, chain_id)
            if fresh != heads:
                heads = fresh
                value = await self._stored(endpoint, heads, params)
        if heads is None:
            return await self._compute(chain_id, work), "miss"
        metrics.cache_lookup(hit=value is not None)
        if value is not None:
            return value, "hit"
        key = key_text((endpoint, heads, params))
        computed = False

        async def compute() -> bytes:
            nonlocal computed
            computed = True
            return await self._compute(chain_id, work)

        value = await self.state.flight(key, compute)
        return value, "miss" if computed else "wait"

    async def _stored(self, endpoint: str, heads: Heads | None, params: Hashable) -> bytes | None:
        """The stored answer at these heads (None: none, or no heads to key it on)."""
        return None if heads is None else await self.state.get(key_text((endpoint, heads, params)))

    async def _compute(self, chain_id: int | None, work: Work) -> bytes:
        """Run ``work`` if admission control lets it in (else Overloaded, a 503)."""
        with self.admission.admit(chain_id):
            return json_bytes(await work())

    async def _timed(self, start: Callable[[], Awaitable[T]]) -> T:
        try:
            with one_head_per_request():  # the cache key and the check see one head
                async with asyncio.timeout(self.deadline):
                    return await start()
        except TimeoutError:
            raise DeadlineExceeded("the check did not finish within the deadline") from None


# ADMISSION CONTROL


class Admission:
    """Per-chain counters of computations in progress in this worker."""

    def __init__(self, limit: int, retry_after: int = 1) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self.refused = 0
        self._active: dict[int | None, int] = {}

    def active(self, chain_id: int | None) -> int:
        return self._active.get(chain_id, 0)

    @contextmanager
    def admit(self, chain_id: int | None) -> Iterator[None]:
        """Hold one of ``chain_id``'s places (None: a request for every chain);
        raises Overloaded when they are all taken."""
        if self.limit <= 0:
            yield
            return
        if self._active.get(chain_id, 0) >= self.limit:
            self.refused += 1
            raise Overloaded("the service is at capacity; retry shortly", self.retry_after)
        self._active[chain_id] = self._active.get(chain_id, 0) + 1
        try:
            yield
        finally:
            self._active[chain_id] -= 1

"""Admission control: a bounded number of recomputations per node, the rest refused at once.

A node (and the worker's CPU) serves a few checks at a time well; past that every check
in progress slows down together until they all run into the deadline (measured: 32
clients with distinct tokens got 4.5 s p50, below what one client gets alone).  So each
worker admits at most ``limit`` uncached computations per chain (running or waiting for
the node), and answers the next one immediately with 503 and ``Retry-After``; a client
retries later instead of making everyone slower.  Answers from the results cache and
requests that join a computation already in flight are never refused: they add no node
work.  ``limit <= 0`` turns admission control off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tokenrisk.errors import Overloaded


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

"""Running a check: under the request deadline, through the results cache when asked."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from tokenrisk.api.cache import ResultCache, chain_heads
from tokenrisk.devnet.supervisor import NodeSupervisor
from tokenrisk.errors import DeadlineExceeded
from tokenrisk.service import Service

Work = Callable[[Service], Awaitable[Any]]


@dataclass
class Runner:
    """Runs a check under the request deadline, through the results cache when asked."""

    deadline: float
    cache: ResultCache
    services: dict[str, Service] = field(default_factory=dict)
    supervisor: NodeSupervisor | None = None  # of the local nodes, while serving

    @property
    def service(self) -> Service:
        return self.services["svc"]

    async def fresh(self, work: Work) -> Any:
        """Compute without the cache (GetContractVerification)."""
        return await self._timed(lambda: work(self.service))

    async def cached(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> Any:
        """Answer from the cache when the chain head(s) still match, else compute and store.

        The head read (one per chain) counts against the deadline too.
        """
        return await self._timed(lambda: self._lookup(endpoint, chain_id, params, work))

    async def _lookup(
        self, endpoint: str, chain_id: int | None, params: Hashable, work: Work
    ) -> Any:
        svc = self.service
        heads = await chain_heads(svc, chain_id) if self.cache.enabled else None
        if heads is None:
            return await work(svc)
        key = (endpoint, heads, params)
        hit, value = self.cache.get(key)
        if hit:
            return value
        value = await work(svc)
        self.cache.put(key, value)
        return value

    async def _timed(self, start: Callable[[], Awaitable[Any]]) -> Any:
        try:
            async with asyncio.timeout(self.deadline):
                return await start()
        except TimeoutError:
            raise DeadlineExceeded("the check did not finish within the deadline") from None

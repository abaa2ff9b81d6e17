"""Chains shared among N watchers through Redis: a chain is stepped by the watcher that
holds its lease (``watch:lease:<chain>``, ``SET NX`` with an expiry renewed each step).

The webhook deliveries are leased the same way (``watch:lease:webhooks``): one watcher
sends, so an endpoint is not sent an event twice by two watchers reading its cursor at
once.

Correctness of the events never rests on the lease: the store's cursor compare-and-set
already lets one watcher commit each range.  The lease keeps the others from doing the
same reads for nothing, and hands a chain over within ``ttl`` seconds when its holder
dies.  Without Redis
every watcher steps every chain.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import RedisError


@dataclass
class Lease:
    redis: Redis  # the job queue's connection (arq's ArqRedis is one)
    ttl: float = 10.0
    holder: str = field(default_factory=lambda: secrets.token_hex(8))

    async def holds(self, chain_id: int | str) -> bool:
        """Take or renew ``chain_id``'s lease (or the one named so: ``"webhooks"``, the
        deliveries); False while another watcher holds it.  Redis down: True (every
        watcher steps; the store's compare-and-set decides)."""
        try:
            return await self._hold(f"watch:lease:{chain_id}", int(self.ttl * 1000))
        except RedisError:
            return True

    async def _hold(self, key: str, ms: int) -> bool:
        if await self.redis.set(key, self.holder, nx=True, px=ms):
            return True
        current = await self.redis.get(key)
        if isinstance(current, bytes):
            current = current.decode()
        if current != self.holder:
            return False
        await self.redis.pexpire(key, ms)
        return True

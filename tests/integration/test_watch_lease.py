"""N watchers share the chains through Redis leases (a real redis-server)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from tokenrisk.devnet.redisserver import start_redis
from tokenrisk.watch.lease import Lease

pytestmark = pytest.mark.integration


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    server = start_redis()
    if server is None:
        pytest.skip("redis-server is not installed (scripts/with-redis.sh installs it)")
    client = Redis.from_url(server.url)
    try:
        yield client
    finally:
        await client.aclose()
        server.stop()


async def test_one_watcher_holds_a_chain_until_it_goes(redis: Redis) -> None:
    first, second = Lease(redis), Lease(redis)
    assert await first.holds(1) and await first.holds(1)  # renewed
    assert not await second.holds(1)
    assert await second.holds(2)  # another chain: the other watcher's
    await redis.delete("watch:lease:1")  # the first watcher died and its lease lapsed
    assert await second.holds(1) and not await first.holds(1)


async def test_without_redis_every_watcher_steps() -> None:
    down = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
    try:
        assert await Lease(down).holds(1)
    finally:
        await down.aclose()

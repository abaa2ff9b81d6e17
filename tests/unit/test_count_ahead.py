"""The holder count taken as soon as the index refresh ends (checks/venue.py:
count_ahead), so that the answer's count after the last reply reads no store (#27)."""

import asyncio
from types import SimpleNamespace
from typing import Any

from tokenrisk.caching import MemoryCache
from tokenrisk.checks.venue import count_ahead, counted
from tokenrisk.holders.index import Indexed
from tokenrisk.model import TokenInfo

CHAIN, TOKEN = 31337, "0x" + "ab" * 20


class Store:
    """The four store reads the count uses, counting ``holder_count``'s."""

    def __init__(self) -> None:
        self.memo: MemoryCache[Any, Any] = MemoryCache(16)
        self.counts = 0
        content = ("0xhead", (1, 1))
        self.memo.put(("indexed", CHAIN, TOKEN), Indexed("0xhead", 7, (1, 1), content))

    def content_version(self, chain_id: int, token: str) -> tuple[int, int]:
        return (1, 1)

    def get_cursor(self, chain_id: int, token: str) -> object:
        return object()

    def holder_count(self, chain_id: int, token: str) -> int:
        self.counts += 1
        return 42


def _deps(store: Store) -> Any:
    return SimpleNamespace(index=SimpleNamespace(store=store))


def _info() -> TokenInfo:
    return TokenInfo(address=TOKEN, name="T", symbol="T", decimals=18, total_supply=1)


async def _refreshed() -> None:
    return None


async def test_the_count_is_taken_when_the_index_is_refreshed_and_found_after() -> None:
    store, node = Store(), SimpleNamespace(id=CHAIN)
    index = asyncio.ensure_future(_refreshed())
    ahead = count_ahead(_deps(store), node, TOKEN, index)  # type: ignore[arg-type]
    await asyncio.gather(ahead)
    assert store.counts == 1  # counted beside the check, before its last step
    info = await counted(_deps(store), node, TOKEN, _info(), (index, ahead))  # type: ignore[arg-type]
    assert info.total_holders == 42 and store.counts == 1  # the memo, no store read


async def test_an_unfinished_refresh_leaves_the_count_to_the_last_step() -> None:
    store, node = Store(), SimpleNamespace(id=CHAIN)
    never = asyncio.get_running_loop().create_future()
    index = asyncio.ensure_future(never)
    ahead = count_ahead(_deps(store), node, TOKEN, index)  # type: ignore[arg-type]
    info = await counted(_deps(store), node, TOKEN, _info(), (index, ahead))  # type: ignore[arg-type]
    assert ahead.cancelled() and info.total_holders == 42 and store.counts == 1
    index.cancel()


async def test_a_failed_refresh_is_not_counted_ahead() -> None:
    store, node = Store(), SimpleNamespace(id=CHAIN)

    async def failed() -> None:
        raise RuntimeError("node down")

    index = asyncio.ensure_future(failed())
    ahead = count_ahead(_deps(store), node, TOKEN, index)  # type: ignore[arg-type]
    await asyncio.gather(ahead, return_exceptions=True)
    assert store.counts == 0
    info = await counted(_deps(store), node, TOKEN, _info(), (index, ahead))  # type: ignore[arg-type]
    assert info.total_holders == 42 and store.counts == 1

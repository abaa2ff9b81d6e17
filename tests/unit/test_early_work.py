"""Work that needs only the token starts when a search confirms the token, before the
search of its pools ends (checks.target.early_token_work; issue #27: a Uniswap V4
token's pools' state is read a round trip after their events, and IsHoneypot's holder
index need not wait for it)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.chain import dex
from tokenrisk.chain.pools import Found
from tokenrisk.checks import target

TOKEN = "0x" + "70" * 20


class Rpc:
    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        assert method == "eth_getCode"
        return "0x6080604052"


@pytest.fixture
def pools_pending(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The pools' search waits for this event (their state read still on the wire)."""
    released = asyncio.Event()

    async def search_pools(node: Any, address: str) -> Found:
        await released.wait()
        return Found([])

    async def is_erc20(rpc: Any, address: str) -> bool:
        return True

    monkeypatch.setattr(target, "search_pools", search_pools)
    monkeypatch.setattr(target, "is_erc20", is_erc20)
    return released


def node() -> Any:
    return SimpleNamespace(id=1, rpc=Rpc(), chain=SimpleNamespace(name="devnet"))


def pair_probe(answer: tuple[str, str] | None) -> Any:
    async def resolve_pair(rpc: Any, chain: Any, address: str) -> tuple[str, str] | None:
        return answer

    return resolve_pair


async def test_a_token_starts_its_work_before_its_pools_are_found(
    pools_pending: asyncio.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dex, "resolve_pair", pair_probe(None))
    started: list[str] = []

    async def work(n: Any, token: str) -> None:
        started.append(token)

    chain_node = node()
    async with target.early_token_work(work):
        search = asyncio.ensure_future(target._target_on(chain_node, TOKEN))
        for _ in range(20):
            await asyncio.sleep(0)
        assert started == [TOKEN] and not search.done()  # before the pools' search ended
        pools_pending.set()
        found = await search
        assert found is not None and found.token == TOKEN
        task = target.started_early(chain_node, TOKEN)
        assert task is not None and task.done()
        assert target.started_early(chain_node, TOKEN) is None  # taken once


async def test_a_pair_starts_nothing(
    pools_pending: asyncio.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dex, "resolve_pair", pair_probe((TOKEN, "0x" + "ee" * 20)))
    started: list[str] = []

    async def work(n: Any, token: str) -> None:
        started.append(token)

    async with target.early_token_work(work):
        search = asyncio.ensure_future(target._target_on(node(), "0x" + "aa" * 20))
        for _ in range(20):
            await asyncio.sleep(0)
        assert started == []
        search.cancel()
        await asyncio.gather(search, return_exceptions=True)


async def test_work_not_taken_is_cancelled_at_the_end(
    pools_pending: asyncio.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dex, "resolve_pair", pair_probe(None))
    forever = asyncio.Event()

    async def work(n: Any, token: str) -> None:
        await forever.wait()

    pools_pending.set()
    async with target.early_token_work(work) as early:
        await target._target_on(node(), TOKEN)
        (task,) = early._tasks.values()
    assert task.cancelled()


async def test_the_chains_not_chosen_stop_when_the_check_takes_its_own(
    pools_pending: asyncio.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dex, "resolve_pair", pair_probe(None))
    forever = asyncio.Event()

    async def work(n: Any, token: str) -> None:
        await forever.wait()

    pools_pending.set()
    chosen, other = node(), SimpleNamespace(id=2, rpc=Rpc(), chain=SimpleNamespace(name="b"))
    async with target.early_token_work(work):
        await asyncio.gather(target._target_on(chosen, TOKEN), target._target_on(other, TOKEN))
        mine = target.started_early(chosen, TOKEN)
        assert mine is not None
        await asyncio.sleep(0)
        assert not mine.done()  # the chosen chain's work goes on
        (theirs,) = target._early.get()._tasks.values()  # type: ignore[union-attr]
        assert theirs.cancelled()
        mine.cancel()

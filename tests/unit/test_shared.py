"""Admission control and in-process single flight (pure parts of api/runner, api/shared_state)."""

from __future__ import annotations

import asyncio

import pytest

from tokenrisk.api.runner import Admission
from tokenrisk.api.shared_state import Flights, LocalState, ResultCache, key_text
from tokenrisk.errors import Overloaded, RateLimited


def test_admission_refuses_beyond_the_limit_per_chain_and_frees_places() -> None:
    admission = Admission(limit=2, retry_after=3)
    with admission.admit(1), admission.admit(1):
        with pytest.raises(Overloaded) as refused:
            with admission.admit(1):
                pass
        assert refused.value.retry_after == 3 and refused.value.status == 503
        with admission.admit(2):  # another chain has its own places
            assert admission.active(2) == 1
    assert admission.active(1) == 0 and admission.refused == 1
    with admission.admit(1):
        pass
    with pytest.raises(ValueError):  # a failing check frees its place too
        with admission.admit(1):
            raise ValueError("check failed")
    assert admission.active(1) == 0
    off = Admission(limit=0)
    for _ in range(100):
        with off.admit(None):
            pass


async def test_one_computation_per_key_and_failures_are_not_shared_later() -> None:
    flights = Flights()
    started = 0
    gate = asyncio.Event()

    async def compute() -> bytes:
        nonlocal started
        started += 1
        await gate.wait()
        return b"answer"

    waiting = [asyncio.ensure_future(flights.run("k", compute)) for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*waiting) == [b"answer"] * 5
    assert started == 1

    async def broken() -> bytes:
        raise RuntimeError("node down")

    with pytest.raises(RuntimeError):
        await flights.run("k", broken)
    assert await flights.run("k", compute) == b"answer"  # a new flight after the failure


async def test_local_state_stores_answers_and_spends_the_limiter() -> None:
    state = LocalState(ResultCache(60))
    key = key_text(("IsHoneypot", ((1, 2, "0xab"),), ("0xtoken", None, "never")))
    assert await state.get(key) is None

    async def compute() -> bytes:
        return b"{}"

    assert await state.flight(key, compute) == b"{}"
    assert await state.get(key) == b"{}"
    limiter = state.limiter(1)
    await limiter.acquire("ip:a")
    with pytest.raises(RateLimited):
        await limiter.acquire("ip:a")
    assert key_text(("a", 1)) != key_text(("a", "1"))

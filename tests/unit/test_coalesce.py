"""CoalescingRpc: concurrent requests share one JSON-RPC batch, results go to their caller.

The wire is replaced by overriding the two send hooks (pure logic under test); the
real client against a real node is exercised by every integration test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from tokenrisk.chain import coalesce
from tokenrisk.chain.coalesce import LARGE_SIMULATION, MAX_HEAVY, CoalescingRpc, _results
from tokenrisk.errors import CallReverted, NodeUnavailable, RpcError


class FakeWire(CoalescingRpc):
    def __init__(self, fail: bool = False) -> None:
        super().__init__("http://127.0.0.1:9", label="fake")
        self.sent: list[list[str]] = []
        self.fail = fail

    async def _post_call(self, method: str, params: Sequence[Any] = ()) -> Any:
        self.sent.append([method])
        return f"solo:{method}"

    async def _post_batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        self.sent.append([method for method, _ in calls])
        await asyncio.sleep(0)
        if self.fail:
            raise NodeUnavailable("fake node is unreachable")
        return [
            CallReverted("execution reverted")
            if params and params[0] == "bad"
            else RpcError("internal error")
            if params and params[0] == "broken"
            else f"{method}:ok"
            for method, params in calls
        ]


async def test_concurrent_calls_share_one_batch_and_keep_their_results() -> None:
    rpc = FakeWire()
    try:
        one, many, solo = await asyncio.gather(
            rpc.call("eth_chainId"),
            rpc.batch([("eth_call", ["good"]), ("eth_call", ["bad"])]),
            rpc.call("debug_traceCall", [{}]),
        )
        assert one == "eth_chainId:ok"
        assert many[0] == "eth_call:ok" and isinstance(many[1], RpcError)
        assert solo == "solo:debug_traceCall"
        assert sorted(rpc.sent) == [["debug_traceCall"], ["eth_chainId", "eth_call", "eth_call"]]
        with pytest.raises(RpcError):
            await rpc.call("eth_call", ["bad"])
        with pytest.raises(RpcError, match="internal"):  # not a revert: raises for this caller
            await rpc.batch([("eth_call", ["good"]), ("eth_call", ["broken"])])
        tolerant = await rpc.batch([("eth_call", ["broken"])], tolerate=RpcError)
        assert isinstance(tolerant[0], RpcError)
    finally:
        await rpc.aclose()


async def test_transport_failure_reaches_every_caller_and_batches_are_split() -> None:
    rpc = FakeWire(fail=True)
    try:
        results = await asyncio.gather(
            rpc.call("eth_blockNumber"), rpc.batch([("eth_call", [])]), return_exceptions=True
        )
        assert all(isinstance(r, NodeUnavailable) for r in results)
        rpc.fail, rpc.max_batch = False, 2
        rpc.sent.clear()
        assert len(await rpc.batch([("eth_call", [])] * 5)) == 5
        assert [len(sent) for sent in rpc.sent] == [2, 2, 1]
        assert await rpc.batch([]) == []
    finally:
        await rpc.aclose()


async def test_a_cancelled_caller_does_not_disturb_the_others() -> None:
    rpc = FakeWire()
    try:
        doomed = asyncio.ensure_future(rpc.call("eth_call", ["good"]))
        kept = asyncio.ensure_future(rpc.call("eth_blockNumber"))
        await asyncio.sleep(0)
        doomed.cancel()
        assert await kept == "eth_blockNumber:ok"
        assert doomed.cancelled()
    finally:
        await rpc.aclose()


async def test_a_batch_caller_that_stops_cancels_the_rest_of_its_futures() -> None:
    """A batch's futures are awaited in turn (not gathered): when one fails, the
    caller's futures still pending are cancelled, as gather cancels its children, so
    the batch that settles them later finds them done and drops their results."""
    loop = asyncio.get_running_loop()
    first, second, third = (loop.create_future() for _ in range(3))
    second.set_result("eth_call:ok")
    loop.call_soon(first.set_exception, NodeUnavailable("fake node is unreachable"))
    with pytest.raises(NodeUnavailable):
        await _results([first, second, third])
    assert third.cancelled()
    assert second.result() == "eth_call:ok"


def _simulation(blocks: int) -> tuple[str, list[Any]]:
    return ("eth_simulateV1", [{"blockStateCalls": [{"calls": []}] * blocks}, "latest"])


async def test_simulations_share_requests_but_a_large_one_goes_alone() -> None:
    """At most MAX_HEAVY small simulations per request; one of LARGE_SIMULATION blocks or
    more (a holder-sell group) fills a request alone, light calls still ride along."""
    rpc = FakeWire()
    try:
        small, large = _simulation(3), _simulation(LARGE_SIMULATION)
        calls = [small] * (MAX_HEAVY + 1) + [large, ("eth_call", []), large, small]
        assert len(await rpc.batch(calls)) == len(calls)
        sims = [sent.count("eth_simulateV1") for sent in rpc.sent]
        assert sorted(sims) == [1, 1, 1, 1, MAX_HEAVY]
        assert ["eth_simulateV1", "eth_call"] in rpc.sent
    finally:
        await rpc.aclose()


async def test_a_request_full_of_simulations_leaves_without_waiting_for_company() -> None:
    """MAX_HEAVY simulations fill a request: it is sent on the next loop turn, while the
    rest of the batch (one more simulation, a light call) waits its turns for company."""
    rpc = FakeWire()
    try:
        calls = [_simulation(3)] * (MAX_HEAVY + 1) + [("eth_call", [])]
        task = asyncio.ensure_future(rpc.batch(calls))
        await asyncio.sleep(0)  # the batch is queued
        await asyncio.sleep(0)  # the full request's send has run
        assert rpc.sent == [["eth_simulateV1"] * MAX_HEAVY]
        assert len(await task) == len(calls)
        assert rpc.sent[1] == ["eth_simulateV1", "eth_call"]
    finally:
        await rpc.aclose()


async def test_what_is_queued_leaves_before_a_long_reply_is_decoded() -> None:
    """Before a long reply is decoded (``RpcClient._before_long_reply``) the queued
    calls leave at once, not after the decoding and the coalescer's turns of waiting
    for company; with nothing queued the reply is decoded at once."""
    rpc = FakeWire()
    seen: list[list[list[str]]] = []

    async def long_reply() -> None:
        await rpc._before_long_reply()
        seen.append(list(rpc.sent))  # what was on the wire when the decoding starts

    try:
        quick = asyncio.ensure_future(rpc.call("eth_call", ["next"]))
        decoding = asyncio.ensure_future(long_reply())
        await decoding
        assert seen == [[["eth_call"]]]
        assert await quick == "eth_call:ok"
        assert rpc.sent == [["eth_call"]]  # the flush already scheduled found nothing more
        await long_reply()  # nothing queued
        assert seen[1] == [["eth_call"]]
    finally:
        await rpc.aclose()


class Silent(FakeWire):
    """A node that never answers a batch."""

    async def _post_batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        self.sent.append([method for method, _ in calls])
        await asyncio.sleep(3600)
        return []


async def test_closing_cancels_what_is_still_in_flight_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(coalesce, "CLOSE_GRACE", 0.05)
    rpc = Silent()
    waiting = asyncio.ensure_future(rpc.call("eth_chainId"))
    while not rpc.sent:
        await asyncio.sleep(0)
    await asyncio.wait_for(rpc.aclose(), 5)  # not the node's hour
    assert not rpc._sending
    with pytest.raises(asyncio.CancelledError):
        await waiting

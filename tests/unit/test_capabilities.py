"""Capability probing against a scripted node (no anvil): which features count as
present, and how the eth_getLogs range limit is measured."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from tokenrisk.chain.capabilities import LOG_SPANS, probe_capabilities
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import MethodUnsupported, RpcError

HEAD = 1_000_000


class ScriptedNode:
    """Answers ``batch`` like RpcClient: a result or an RpcError instance per call."""

    def __init__(
        self,
        refuse: set[str] = frozenset(),
        max_range: int | None = None,
        fail: set[str] = frozenset(),
    ) -> None:
        self.refuse = refuse
        self.fail = fail
        self.max_range = max_range
        self.batches: list[list[str]] = []

    async def batch(
        self, calls: Sequence[tuple[str, Sequence[Any]]], tolerate: type[RpcError] = RpcError
    ) -> list[Any]:
        assert tolerate is RpcError  # a probe reads refusals as answers
        self.batches.append([method for method, _ in calls])
        return [self._answer(method, params) for method, params in calls]

    def _answer(self, method: str, params: Sequence[Any]) -> Any:
        if method in self.refuse:
            return MethodUnsupported("Method not found", -32601)
        if method in self.fail:
            return RpcError("internal error", -32603)
        if method == "eth_getLogs":
            span = int(params[0]["toBlock"], 16) - int(params[0]["fromBlock"], 16) + 1
            if self.max_range is not None and span > self.max_range:
                return RpcError("block range too large", -32005)
            return []
        return {
            "eth_simulateV1": [{"calls": [{"status": "0x1"}]}],
            "debug_traceCall": {"type": "CALL"},
            "eth_call": "0x" + "00" * 31 + "2a",
            "eth_blockNumber": hex(HEAD),
        }[method]


async def probe(node: ScriptedNode) -> Any:
    return await probe_capabilities(cast(RpcClient, node))


async def test_full_node_has_everything() -> None:
    node = ScriptedNode()
    caps = await probe(node)
    assert (caps.simulate_v1, caps.trace_call, caps.state_override) == (True, True, True)
    assert caps.get_logs_max_range is None
    assert caps.missing() == ()
    assert len(node.batches) == 2  # one probe batch, one eth_getLogs batch


async def test_refused_methods_are_missing() -> None:
    caps = await probe(ScriptedNode(refuse={"eth_simulateV1", "debug_traceCall"}))
    assert (caps.simulate_v1, caps.trace_call, caps.state_override) == (False, False, True)
    assert caps.missing() == ("eth_simulateV1", "debug_traceCall")


async def test_ignored_state_override_is_missing() -> None:
    class IgnoresOverrides(ScriptedNode):
        def _answer(self, method: str, params: Sequence[Any]) -> Any:
            return "0x" if method == "eth_call" else super()._answer(method, params)

    caps = await probe(IgnoresOverrides())
    assert caps.state_override is False
    assert caps.missing() == ("eth_call state overrides",)


@pytest.mark.parametrize(("limit", "expected"), [(2_000, 2_000), (5_000, 2_000), (99, 0)])
async def test_get_logs_range_is_the_widest_working_span(limit: int, expected: int) -> None:
    caps = await probe(ScriptedNode(max_range=limit))
    assert caps.get_logs_max_range == expected
    assert expected in (*LOG_SPANS, 0)


async def test_a_node_without_block_number_fails_the_probe() -> None:
    with pytest.raises(RpcError):
        await probe(ScriptedNode(refuse={"eth_blockNumber"}))


@pytest.mark.parametrize("method", ["eth_simulateV1", "debug_traceCall", "eth_call"])
async def test_a_failing_probe_is_not_a_missing_feature(method: str) -> None:
    """A node that errs (not refuses) fails the probe, so nothing is cached as missing."""
    with pytest.raises(RpcError):
        await probe(ScriptedNode(fail={method}))

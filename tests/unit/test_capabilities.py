"""Capability probing against a scripted node (no anvil): which features count as
present, and how the eth_getLogs range limit is measured."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from tokenrisk.chain.capabilities import LOG_SPANS, probe_capabilities
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import MethodUnsupported, RpcError, StateUnavailable

HEAD = 1_000_000


class ScriptedNode:
    """Answers ``batch`` like RpcClient: a result or an RpcError instance per call."""

    def __init__(
        self,
        refuse: set[str] = frozenset(),
        max_range: int | None = None,
        fail: set[str] = frozenset(),
        simulate_cap: int = 256,
        kept_states: int | None = None,
    ) -> None:
        self.refuse = refuse
        self.fail = fail
        self.max_range = max_range
        self.simulate_cap = simulate_cap
        self.kept_states = kept_states
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
        if method == "eth_simulateV1" and params[1] != "latest":
            base = int(params[1], 16)
            last = int(params[0]["blockStateCalls"][-1]["blockOverrides"]["number"], 16)
            if last - base > self.simulate_cap:
                return RpcError("too many blocks", -38026)
            return [{"number": hex(last), "calls": []}]
        if method == "eth_getBalance":
            depth = HEAD - int(params[1], 16)
            if self.kept_states is not None and depth > self.kept_states:
                return StateUnavailable("missing trie node abc (path ) <nil>", -32000)
            return "0x0"
        if method == "eth_call" and len(params) == 4:
            return params[3]["number"]  # the code override returns NUMBER
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
            "eth_createAccessList": {"accessList": [], "gasUsed": "0x5208"},
            "ots_getApiLevel": 8,
        }[method]


async def probe(node: ScriptedNode) -> Any:
    return await probe_capabilities(cast(RpcClient, node))


async def test_full_node_has_everything() -> None:
    node = ScriptedNode()
    caps = await probe(node)
    assert (caps.simulate_v1, caps.trace_call, caps.state_override) == (True, True, True)
    assert caps.get_logs_max_range is None
    assert caps.missing() == ()
    assert (caps.simulate_max_blocks, caps.archive_depth) == (256, None)
    assert (caps.call_block_overrides, caps.otterscan, caps.access_list) == (True, True, True)
    assert len(node.batches) == 2  # what needs no head; then everything pinned at the head


@pytest.mark.parametrize(("cap", "learnt"), [(256, 256), (100, 64), (16, 16), (12, 8), (3, 1)])
async def test_the_simulate_cap_is_the_widest_span_answered(cap: int, learnt: int) -> None:
    caps = await probe(ScriptedNode(simulate_cap=cap))
    assert caps.simulate_v1 and caps.simulate_max_blocks == learnt


@pytest.mark.parametrize(("kept", "depth"), [(128, 127), (2000, 1024), (0, 0), (None, None)])
async def test_archive_depth_is_the_deepest_state_read(kept: int | None, depth: int | None) -> None:
    caps = await probe(ScriptedNode(kept_states=kept))
    assert caps.archive_depth == depth
    # the search floor: the shallowest block without state (never above a kept one)
    floors = {128: HEAD - 1024, 2000: HEAD - 65536, 0: HEAD - 16, None: 0}
    assert caps.state_floor() == floors[kept]


async def test_missing_extras_are_absent_not_failures() -> None:
    node = ScriptedNode(refuse={"eth_createAccessList"}, fail={"ots_getApiLevel"})
    caps = await probe(node)
    assert (caps.otterscan, caps.access_list) == (False, False)


async def test_block_overrides_ignored_are_absent() -> None:
    class IgnoresBlockOverrides(ScriptedNode):
        def _answer(self, method: str, params: Sequence[Any]) -> Any:
            if method == "eth_call" and len(params) == 4:
                return hex(HEAD)  # NUMBER of the head: the override was ignored
            return super()._answer(method, params)

    caps = await probe(IgnoresBlockOverrides())
    assert caps.call_block_overrides is False
    caps = await probe(ScriptedNode(refuse={"eth_call"}))
    assert (caps.state_override, caps.call_block_overrides) == (False, False)


async def test_without_simulate_no_span_is_probed() -> None:
    node = ScriptedNode(refuse={"eth_simulateV1"})
    caps = await probe(node)
    assert "eth_simulateV1" not in node.batches[1]
    assert caps.simulate_v1 is False


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

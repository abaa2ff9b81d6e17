"""What a Node learns from its node's errors: a lower simulate cap, a re-probe when a
method probed present is now missing (bounded), nothing from unrelated errors."""

from __future__ import annotations

from typing import Any

import pytest

from tokenrisk.chain import node as node_module
from tokenrisk.chain.capabilities import Capabilities
from tokenrisk.chain.node import Node
from tokenrisk.chain.registry import load_registry
from tokenrisk.errors import CallReverted, MethodUnsupported, RpcError


class CountingNode(Node):
    probes = 0


def fresh(monkeypatch: pytest.MonkeyPatch) -> Node:
    async def probe(rpc: Any) -> Capabilities:
        CountingNode.probes += 1
        return Capabilities(True, True, True, None, oldest_state=873, archive_depth=127)

    monkeypatch.setattr(node_module, "probe_capabilities", probe)
    CountingNode.probes = 0
    return CountingNode(load_registry()[1], rpc=None)  # type: ignore[arg-type]


async def test_a_refused_span_lowers_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    node = fresh(monkeypatch)
    assert (await node.capabilities()).simulate_max_blocks == 256
    node.learn(RpcError("too many blocks", -38026), span=256)
    assert (await node.capabilities()).simulate_max_blocks == 64
    node.learn(RpcError("too many blocks", -38026), span=20)
    assert (await node.capabilities()).simulate_max_blocks == 16
    node.learn_simulate_cap(100)  # never raised again by learning
    assert (await node.capabilities()).simulate_max_blocks == 16
    assert CountingNode.probes == 1


async def test_a_method_gone_missing_probes_again_once(monkeypatch: pytest.MonkeyPatch) -> None:
    node = fresh(monkeypatch)
    await node.capabilities()
    node.learn(MethodUnsupported("the method eth_simulateV1 does not exist", -32601))
    await node.capabilities()
    assert CountingNode.probes == 2
    node.learn(MethodUnsupported("the method eth_simulateV1 does not exist", -32601))
    await node.capabilities()  # within REPROBE_INTERVAL: no probe storm
    assert CountingNode.probes == 2


async def test_other_errors_teach_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    node = fresh(monkeypatch)
    await node.capabilities()
    node.learn(CallReverted("execution reverted", 3), span=256)
    node.learn(ValueError("not a node error"))
    caps = await node.capabilities()
    assert caps.simulate_max_blocks == 256 and CountingNode.probes == 1
    assert caps.state_floor() == 873

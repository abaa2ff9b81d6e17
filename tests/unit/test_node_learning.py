"""What a Node learns from its node's errors: a lower simulate cap, a re-probe when a
method probed present is now missing (bounded), nothing from unrelated errors."""

from __future__ import annotations

from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk.chain import node as node_module
from tokenrisk.chain.capabilities import Capabilities
from tokenrisk.chain.node import Node, simulated_span
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


class TooLong(FakeNode):
    """Serves eth_simulateV1 up to ``cap`` blocks past the base (geth's -38026 beyond)."""

    def __init__(self, cap: int) -> None:
        super().__init__({"eth_simulateV1": self.simulate, "eth_blockNumber": "0x10"})
        self.cap = cap

    def simulate(self, params: list[Any]) -> Any:
        span = simulated_span(params)
        assert span is not None
        return Fault(-38026, "too many blocks") if span > self.cap else []


def simulation(base: int, last: int) -> list[Any]:
    block = {"blockOverrides": {"number": hex(last)}, "calls": []}
    return [{"blockStateCalls": [block]}, hex(base)]


async def test_the_client_teaches_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """No caller has to report: the Node watches its client's errors."""
    fresh(monkeypatch)  # the probe stub
    fake = TooLong(16)
    node = Node(load_registry()[1], fake.client())
    await node.capabilities()
    with pytest.raises(RpcError):
        await node.rpc.call("eth_simulateV1", simulation(100, 300))
    assert (await node.capabilities()).simulate_max_blocks == 64
    replies = await node.rpc.batch([("eth_simulateV1", simulation(100, 164))], tolerate=RpcError)
    assert isinstance(replies[0], RpcError)
    assert (await node.capabilities()).simulate_max_blocks == 16
    assert await node.rpc.call("eth_simulateV1", simulation(100, 116)) == []
    await node.aclose()


def test_the_span_of_a_simulation() -> None:
    assert simulated_span(simulation(100, 356)) == 256
    assert simulated_span([{"blockStateCalls": [{}, {}, {}]}, "latest"]) == 3
    assert simulated_span([]) is None


async def test_a_node_back_from_an_outage_is_probed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Identity:
        verified = 1

    class Client:
        identity = Identity()

    node = fresh(monkeypatch)
    node.rpc = Client()  # type: ignore[assignment]
    await node.capabilities()
    await node.capabilities()
    assert CountingNode.probes == 1
    Client.identity.verified = 2  # the chain id was shown again after an outage
    await node.capabilities()
    await node.capabilities()
    assert CountingNode.probes == 2

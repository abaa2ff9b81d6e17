"""The simulation engine without a node: plans, outcomes and faults through a fake transport.

The node is :class:`tests.fakenode.FakeNode` plugged into the real :class:`RpcClient`
(``transport=``), so requests are built and replies parsed exactly as against anvil.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest
from fakenode import INTERNAL, REVERTED, FakeNode

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.registry import load_registry
from tokenrisk.errors import CallReverted, MalformedResponse, RpcError
from tokenrisk.model import Pool
from tokenrisk.simulate import simulator as simulator_module
from tokenrisk.simulate.calls import Route
from tokenrisk.simulate.simulator import (
    NO_LOGS,
    SIMULATION,
    Funding,
    Plan,
    SimBlock,
    SimCall,
    SimLog,
    SimSettings,
    Simulator,
    _outcome,
    parse_typed_call,
)

CHAIN = load_registry()[1]
DEX = next(d for d in CHAIN.dexes if d.version == "V2")
WETH = CHAIN.wrapped_native.address
TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
PAIR = "0x000000000000000000000000000000000000bEEF"


def pool(reserve: int = 10**21) -> Pool:
    return Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, DEX.router, reserve, reserve, 1e6)


def simulator(node: FakeNode, reserve: int = 10**21) -> Simulator:
    route = Route(pool(reserve), DEX, TOKEN, WETH)
    return Simulator(
        node.client(), route, ChainHead(100, 1_700_000_000), Funding(WETH, None), SimSettings()
    )


def word(value: int) -> str:
    return "0x" + f"{value:064x}"


async def test_an_outcome_is_read_by_mark() -> None:
    sim = simulator(FakeNode())
    plan = sim.buy_then_sell(10**18, 1_000)
    marks = {index: mark for mark, index in plan.marks.items()}
    balances = {"bought": 1_234, "buyer.seller_before": 1_000, "buyer.seller_after": 0}

    def reply(params: list[Any]) -> list[dict[str, Any]]:
        out = []
        for b, block in enumerate(params[0]["blockStateCalls"]):
            calls = []
            for c, _ in enumerate(block["calls"]):
                value = balances.get(marks.get((b, c), ""), 7)
                calls.append({"status": "0x1", "gasUsed": "0x5208", "returnData": word(value)})
            out.append({"calls": calls})
        return out

    node = FakeNode({"eth_simulateV1": reply})
    sim = Simulator(node.client(), sim.route, sim.head, sim.funding, sim.settings)
    outcome = await sim.run_one(plan)
    assert outcome["buy"].ok and outcome["buy"].gas == 21_000
    assert outcome["bought"].uint == 1_234
    assert (outcome["buyer.seller_before"].uint, outcome["buyer.seller_after"].uint) == (1_000, 0)
    assert node.methods == ["eth_simulateV1"]


async def test_a_whole_simulation_reverted_is_an_answer_not_an_error() -> None:
    node = FakeNode({"eth_simulateV1": REVERTED})
    sim = simulator(node)
    (outcome,) = await sim.run([sim.buy_only(10**18)])
    assert isinstance(outcome, CallReverted)
    with pytest.raises(CallReverted):
        await sim.run_one(sim.buy_only(10**18))


async def test_other_node_errors_raise_typed() -> None:
    sim = simulator(FakeNode({"eth_simulateV1": INTERNAL}))
    with pytest.raises(RpcError) as caught:
        await sim.run([sim.buy_only(10**18)])
    assert not isinstance(caught.value, CallReverted)


async def test_a_reply_of_the_wrong_shape_is_malformed() -> None:
    sim = simulator(FakeNode({"eth_simulateV1": [{"calls": []}]}))
    with pytest.raises(MalformedResponse):
        await sim.run_one(sim.buy_then_sell(10**18, 1))


async def test_a_failed_call_carries_the_tokens_revert_reason() -> None:
    reason = "0x08c379a0" + word(32)[2:] + word(6)[2:] + b"no way".hex().ljust(64, "0")

    def reply(params: list[Any]) -> list[dict[str, Any]]:
        blocks = params[0]["blockStateCalls"]
        failed = {"status": "0x0", "gasUsed": "0x10", "returnData": reason}
        return [{"calls": [failed for _ in b["calls"]]} for b in blocks]

    sim = simulator(FakeNode({"eth_simulateV1": reply}))
    outcome = await sim.run_one(sim.buy_only(10**18))
    assert outcome["buy"].ok is False
    assert outcome["buy"].reason == "execution reverted: no way"


async def test_a_deterministic_simulation_is_kept_per_head_block() -> None:
    """``Simulator.remembered``: the same key at the same block (hash) runs once; another
    block, another key, a plan with a prelude or a failed run is never served kept."""
    memo: MemoryCache[Any, Any] = MemoryCache(16)
    runs: list[str] = []

    def at(head: ChainHead, prelude: list[dict[str, Any]] | None = None) -> Simulator:
        sim = simulator(FakeNode())
        sim = Simulator(sim.rpc, sim.route, head, sim.funding, sim.settings, prelude or [])
        sim.memo = memo
        return sim

    async def work(name: str) -> str:
        runs.append(name)
        return name

    head = ChainHead(100, 1_700_000_000, hash="0x" + "ab" * 32)
    assert await at(head).remembered("sells", lambda: work("a")) == "a"
    assert await at(head).remembered("sells", lambda: work("b")) == "a"  # kept
    assert await at(head).remembered("other", lambda: work("c")) == "c"
    reorged = ChainHead(100, 1_700_000_000, hash="0x" + "cd" * 32)
    assert await at(reorged).remembered("sells", lambda: work("d")) == "d"
    assert await at(ChainHead(100, 1_700_000_000)).remembered("sells", lambda: work("e")) == "e"
    prelude = [{"calls": []}]
    assert await at(head, prelude).remembered("sells", lambda: work("f")) == "f"

    async def fails() -> str:
        runs.append("g")
        raise RpcError("node down")

    with pytest.raises(RpcError):
        await at(head).remembered("failing", fails)
    assert await at(head).remembered("failing", lambda: work("h")) == "h"
    assert runs == ["a", "c", "d", "e", "f", "g", "h"]


def _typed_reply(plan: Plan, logged: str = "buy") -> list[SimBlock]:
    """A typed reply to ``plan``: every call succeeds, the ``logged`` mark with a log."""
    where = plan.marks[logged]
    log = msgspec.Raw(msgspec.json.encode([SimLog("0x" + "AB" * 20, ["0x" + "CD" * 32], "0x01")]))
    blocks = []
    for b, block in enumerate(plan.blocks):
        calls = [
            SimCall("0x1", word(c), "0x5208", log if (b, c) == where else NO_LOGS)
            for c in range(len(block["calls"]))
        ]
        blocks.append(SimBlock(block["blockOverrides"]["number"], calls))
    return blocks


def test_a_typed_outcome_builds_each_result_when_first_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = simulator(FakeNode()).buy_then_sell(10**18, 1_000)
    reply = _typed_reply(plan)
    built: list[SimCall] = []

    def counted(call: SimCall) -> Any:
        built.append(call)
        return parse_typed_call(call)

    monkeypatch.setattr(simulator_module, "parse_typed_call", counted)
    outcome = _outcome(plan, reply)
    assert built == []  # nothing read yet
    b, c = plan.marks["bought"]
    assert outcome.get("bought") == parse_typed_call(reply[b].calls[c]) and built == []
    assert outcome["buy"].logs == (("0x" + "ab" * 20, ("0x" + "cd" * 32,), "0x01"),)
    assert outcome["buy"] is outcome.get("buy") and len(built) == 1  # kept once built
    expected = {mark: parse_typed_call(reply[b].calls[c]) for mark, (b, c) in plan.marks.items()}
    assert dict(outcome.results) == expected and outcome.get("nothing") is None


def test_a_typed_reply_short_of_a_marked_call_is_malformed_when_it_arrives() -> None:
    plan = simulator(FakeNode()).buy_then_sell(10**18, 1_000)
    reply = _typed_reply(plan)
    reply[-1].calls.pop()  # the last block's last call: a marked read
    with pytest.raises(MalformedResponse):
        _outcome(plan, reply)


def test_a_kept_outcome_does_not_keep_the_replys_body() -> None:
    plan = simulator(FakeNode()).buy_then_sell(10**18, 1_000)
    body = msgspec.json.encode(_typed_reply(plan))  # logs decoded from it are views of it
    alone = sys.getrefcount(body)
    outcome = _outcome(plan, msgspec.json.decode(body, type=SIMULATION.type))
    assert sys.getrefcount(body) == alone
    assert outcome["buy"].logs[0].address == "0x" + "ab" * 20


def test_priced_counts_a_sender_by_its_address_not_its_string_object() -> None:
    """``_priced`` adds to the previous call's list when the sender is the same string
    object; an equal string built apart, or the same address in other case, still lands
    in the same sender's list, and the sender's first block is its first call's."""
    wallet = "0x" + "Ab" * 20
    apart = "".join(["0x", "Ab" * 20])  # equal, another object
    lowered = wallet.lower()
    blocks = [
        {"calls": [{"from": wallet, "data": "0x"}, {"data": "0x"}, {"from": apart}]},
        {"calls": [{"from": lowered}, {"from": wallet, "gas": "0x1"}]},
    ]
    heavy = [[True, False, False], [False, True]]
    priced, spent_by, senders = simulator_module._priced(blocks, heavy, (2, 5), "0x7")
    assert spent_by[lowered] == [5 + 2, 2 + 5]  # per block: its calls' declared gas
    assert spent_by[""] == [2, 0]
    assert senders == [(0, wallet)]
    assert [list(c) for c in priced[1]["calls"]] == [["from", "gas", "gasPrice"]] * 2
    assert priced[1]["calls"][1] == {"from": wallet, "gas": "0x5", "gasPrice": "0x7"}
    assert priced[0]["calls"][1]["gas"] == "0x2"
    assert blocks[1]["calls"][1] == {"from": wallet, "gas": "0x1"}  # the plan's own call kept

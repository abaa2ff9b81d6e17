"""What each of the journey's plans reads around its trades (issue #27: a check sent ~50
reads per check that no result used).  The sell plans replay the transfer plan's buy and
transfer call for call, without its reads; every mark the journey reads is still sent."""

from __future__ import annotations

from test_sim_rules import simulator

from tokenrisk.simulate import journey
from tokenrisk.simulate.simulator import Plan

BUYER, RECEIVER = "0x" + "aa" * 20, "0x" + "bb" * 20
SELL_READS = {"seller_before", "base_before", "quote", "sell", "seller_after", "base_after"}


AMOUNTS = (10**18, 10**19, 9 * 10**19, 10**19)


def _sells(main_only: bool = False) -> list[Plan]:
    return journey._sell_plans(simulator(), BUYER, RECEIVER, AMOUNTS, main_only)


def test_the_verdicts_alone_send_the_whole_balances_sells_as_the_journey_does() -> None:
    """GetContractVerification's journey (``verdicts_only``) sends the main sell plan
    only, call for call the whole journey's first."""
    (alone,) = _sells(main_only=True)
    main = _sells()[0]
    assert [b["calls"] for b in alone.blocks] == [b["calls"] for b in main.blocks]
    assert alone.marks == main.marks
    assert {"buyer.sell", "receiver.sell"} <= set(alone.marks)


def _tags(plan: Plan, tag: str) -> set[str]:
    return {mark.split(".", 1)[1] for mark in plan.marks if mark.startswith(f"{tag}.")}


def _read_positions(plan: Plan, block: int) -> set[int]:
    return {c for mark, (b, c) in plan.marks.items() if b == block and mark != "transfer"}


def test_the_sells_replay_the_transfer_plans_buy_and_transfer_without_its_reads() -> None:
    moved = journey._transfer_plan(simulator(), BUYER, RECEIVER, 10**18, 10**19)
    for plan in _sells():
        for b in (0, 1):
            reads = _read_positions(moved, b) - ({moved.marks["buy"][1]} if b == 0 else set())
            kept = [c for i, c in enumerate(moved.blocks[b]["calls"]) if i not in reads]
            assert plan.blocks[b]["calls"] == kept
            assert plan.blocks[b].get("stateOverrides") == moved.blocks[b].get("stateOverrides")
        assert plan.wallets[0] == moved.wallets[0]


def test_the_transfer_plan_reads_what_the_journey_and_ahead_read() -> None:
    moved = journey._transfer_plan(simulator(), BUYER, RECEIVER, 10**18, 10**19)
    assert set(moved.marks) == {"buy", "bought", "transfer", "sender_after_transfer", "received"}


def test_only_the_sells_whose_taxes_are_measured_read_around_them() -> None:
    main, same, delayed, half = _sells()
    assert _tags(main, "buyer") == _tags(half, "buyer") == SELL_READS
    assert _tags(main, "receiver") == _tags(same, "receiver") == {"sell"}
    assert _tags(same, "buyer") == _tags(delayed, "buyer") == {"sell"}
    for plan in (main, same, delayed, half):
        assert not {"quote", "bought", "buy", "received"} & set(plan.marks)


def test_a_bare_sell_is_its_approvals_and_the_trade() -> None:
    sim, plan = simulator(), simulator().plan()
    plan.block(1)
    sim.add_sell(plan, BUYER, 10**18, "s", reads="none")
    assert plan.heavy == [[False, True]] and list(plan.marks) == ["s.sell"]
    plan.block(2)
    sim.add_sell(plan, BUYER, 10**18, "t", reads="received")
    assert [m for m in plan.marks if m.startswith("t.")] == [
        "t.base_before",
        "t.sell",
        "t.base_after",
    ]
    assert plan.blocks[1]["calls"][1]["data"] == plan.blocks[1]["calls"][3]["data"]


def test_a_buy_reads_the_quote_only_when_its_taxes_are_measured() -> None:
    sim = simulator()
    assert set(sim.buy_only(10**18).marks) == {"quote", "buy", "bought"}
    assert set(sim.buy_only(10**18, reads="bought").marks) == {"buy", "bought"}
    bare = sim.plan()
    sim.add_buy(bare, BUYER, 10**18, reads="none")
    assert not bare.marks and bare.heavy[0][-1]

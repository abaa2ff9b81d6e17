"""Every plan the engine builds obeys a real node's rules (tests/simrules.py, written from
go-ethereum's simulate.go): pinned to the head read, numbers and times strictly
increasing, within the block cap (256 and 16), gas within the block's and the request's
limits, priced at or above the base fee, wallets funded realistically and fresh; replies
with geth's gap blocks are matched by number; a refused span is learnt and re-planned."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fakenode import FakeNode, Fault
from simrules import RPC_GAS_CAP, Base, call_violations, simulate_violations

from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.registry import load_registry
from tokenrisk.holders import selling as holder_sells
from tokenrisk.model import Pool
from tokenrisk.simulate import journey, powers
from tokenrisk.simulate import simulator as simulator_module
from tokenrisk.simulate import story as plot
from tokenrisk.simulate.calls import BalanceSlot, Route
from tokenrisk.simulate.gas import LIGHT_GAS, shares
from tokenrisk.simulate.hostile import Targets
from tokenrisk.simulate.simulator import (
    SIMULATION,
    Funding,
    NodeLimits,
    Plan,
    SimSettings,
    Simulator,
    sells_ahead,
)

CHAIN = load_registry()[1]
DEX = next(d for d in CHAIN.dexes if d.version == "V2")
WETH = CHAIN.wrapped_native.address
TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
PAIR = "0x000000000000000000000000000000000000bEEF"
MINER = "0x" + "c0" * 20
HEAD = ChainHead(1_000, 1_700_000_000, base_fee=7 * 10**9, gas_limit=30_000_000, miner=MINER)
BASE = Base(HEAD.number, HEAD.timestamp, HEAD.gas_limit, HEAD.base_fee)
SLOT = BalanceSlot(3, "solidity")


def simulator(cap: int = 256, node: FakeNode | None = None, weth_slot: bool = False) -> Simulator:
    pool = Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, DEX.router, 10**22, 10**22, 1e6)
    funding = Funding(WETH, SLOT if weth_slot else None)
    return Simulator(
        (node or FakeNode()).client(),
        Route(pool, DEX, TOKEN, WETH),
        HEAD,
        funding,
        SimSettings(),
        limits=NodeLimits(max_blocks=cap),
    )


def holders(n: int) -> list[tuple[str, int]]:
    return [("0x" + f"{i + 1:040x}", 10**18 * (i + 1)) for i in range(n)]


def story() -> plot.Story:
    return plot.Story(10**18, 10**17, 10**20, 10**19, 10**19, True, "0x" + "0b" * 20,
                        "0x" + "0c" * 20, "0x" + "0d" * 20)  # fmt: skip


def every_plan(sim: Simulator) -> list[Plan]:
    """One of each plan the journey, the holder sells and the owner-power scan send."""
    buyer, receiver = "0x" + "aa" * 20, "0x" + "bb" * 20
    plans = [sim.buy_only(10**18), sim.buy_then_sell(10**18, 10**20)]
    plans += journey._sell_plans(sim, buyer, receiver, (10**18, 10**19, 10**20, 10**19))
    size = min(holder_sells.GROUP, sim.room)
    plans.append(holder_sells._group_plan(sim, holders(size)))
    plans.append(holder_sells._sell_plan(sim, *holders(1)[0]))
    targets = Targets(buyer=buyer, pair=PAIR)
    plans.append(plot.story_plan(sim, targets, story(), None))
    trial = ("0x" + "ee" * 20, "0x1234")  # (caller, calldata)
    plans.append(plot.story_plan(sim, targets, story(), trial))
    plans += [plot.future_plan(sim, targets, story(), s) for _, s in powers.FUTURE]
    predictor = plot._sell_plan(sim, buyer, 10**18)
    assert predictor is not None
    return [*plans, predictor]


@pytest.mark.parametrize("cap", [256, 16])
@pytest.mark.parametrize("weth_slot", [False, True])
def test_every_plan_keeps_a_real_nodes_rules(cap: int, weth_slot: bool) -> None:
    sim = simulator(cap, weth_slot=weth_slot)
    for plan in every_plan(sim):
        assert simulate_violations(plan.params(), BASE, cap) == []
        assert plan.span <= cap


def test_the_base_is_the_head_read_not_latest() -> None:
    params = simulator().buy_only(10**18).params()
    assert params[1] == hex(HEAD.number) and params[1] != "latest"


def test_numbers_and_times_strictly_increase_from_the_base() -> None:
    plan = journey._sell_plans(simulator(), "0x" + "aa" * 20, "0x" + "bb" * 20, (1, 1, 1, 1))[0]
    overrides = [b["blockOverrides"] for b in plan.params()[0]["blockStateCalls"]]
    numbers = [int(o["number"], 16) for o in overrides]
    times = [int(o["time"], 16) for o in overrides]
    assert numbers[0] > HEAD.number and numbers == sorted(set(numbers))
    assert times[0] > HEAD.timestamp and times == sorted(set(times))


def test_the_delayed_and_future_sells_reach_ahead_by_time_within_the_cap() -> None:
    sim = simulator(cap=16)
    delayed = journey._sell_plans(sim, "0x" + "aa" * 20, "0x" + "bb" * 20, (1, 1, 1, 1))[2]
    last = delayed.params()[0]["blockStateCalls"][-1]["blockOverrides"]
    assert int(last["time"], 16) >= HEAD.timestamp + SimSettings().delayed_seconds
    assert int(last["number"], 16) - HEAD.number <= 16
    month = plot.future_plan(sim, Targets("0x" + "aa" * 20, PAIR), story(), 30 * 86_400)
    assert month.span <= 16


def test_holder_groups_split_to_fit_a_small_cap() -> None:
    sim = simulator(cap=4)
    assert sim.room == 4
    assert holder_sells._group_plan(sim, holders(4)).span == 4


def test_blocks_keep_the_chains_gas_limit_and_the_heads_fees() -> None:
    for block in simulator().buy_only(10**18).params()[0]["blockStateCalls"]:
        overrides = block["blockOverrides"]
        assert "gasLimit" not in overrides
        assert int(overrides["baseFeePerGas"], 16) == HEAD.base_fee
        assert overrides["feeRecipient"] == MINER
        for call in block["calls"]:
            assert int(call["gasPrice"], 16) > HEAD.base_fee


def test_a_gas_burner_still_gets_enough_gas_to_sell_in_the_journey() -> None:
    plan = journey._sell_plans(simulator(), "0x" + "aa" * 20, "0x" + "bb" * 20, (1, 1, 1, 1))[1]
    blocks = plan.params()[0]["blockStateCalls"]
    sells_gas = [int(c["gas"], 16) for c in blocks[-1]["calls"] if c["data"][:10] == "0x5c11d795"]
    assert len(sells_gas) == 2 and min(sells_gas) >= 5_000_000  # the 4.3M burner sells


@pytest.mark.parametrize("weth_slot", [False, True])
def test_a_gas_burner_still_gets_enough_gas_to_sell_in_an_owner_power_trial(
    weth_slot: bool,
) -> None:
    sim = simulator(weth_slot=weth_slot)
    trial = ("0x" + "ee" * 20, "0x1234")  # (caller, calldata)
    plan = plot.story_plan(sim, Targets("0x" + "aa" * 20, PAIR), story(), trial)
    sent = plan.params()[0]["blockStateCalls"]
    swaps = [int(c["gas"], 16) for b in sent for c in b["calls"] if c["data"][:10] == "0x5c11d795"]
    assert min(swaps) >= 4_300_000  # GasHeavySellToken needs ~4.3M


def _allotted(heavy: list[list[bool]], spent: int = 0) -> list[list[int]]:
    """Every call's declared gas, as a plan's ``params`` declares it."""
    light, trade = shares(heavy, 10_000_000, 30_000_000, RPC_GAS_CAP, spent)
    return [[trade if h else light for h in block] for block in heavy]


def test_allot_fits_every_limit() -> None:
    heavy = [[True, False, False]] * 40
    gas = _allotted(heavy)
    assert sum(map(sum, gas)) <= RPC_GAS_CAP
    assert all(sum(b) <= 30_000_000 for b in gas)
    assert gas[0][1] <= LIGHT_GAS and gas[0][0] > gas[0][1]


@pytest.mark.parametrize(
    "heavy",
    [
        [[True, False, False]] * 40,
        [[False] * 30, [True], [False, True, True, False], []],
        [[True] * 12, [False] * 3],
        [[False] * 200],
    ],
)
def test_every_call_of_a_kind_gets_the_same_share_within_every_limit(
    heavy: list[list[bool]],
) -> None:
    light, trade = shares(heavy, 10_000_000, 30_000_000, RPC_GAS_CAP, spent=1_000_000)
    gas = _allotted(heavy, spent=1_000_000)
    assert sum(map(sum, gas)) <= RPC_GAS_CAP - 1_000_000
    assert all(sum(b) <= 30_000_000 for b in gas)
    assert light <= LIGHT_GAS and trade <= 10_000_000


def test_wallets_are_fresh_and_look_used() -> None:
    sim = simulator()
    a, b = (sim.buy_only(10**18).params()[0]["blockStateCalls"][0] for _ in range(2))
    (wallet_a,) = {c["from"] for c in a["calls"]}
    (wallet_b,) = {c["from"] for c in b["calls"]}
    assert wallet_a != wallet_b
    account = a["stateOverrides"][wallet_a]
    assert int(account["nonce"], 16) > 0
    assert int(account["balance"], 16) < 10**21  # what the trades cost, not 10**30


def test_every_simulated_block_reads_a_fresh_randao() -> None:
    """``block.prevrandao`` in a simulated block is what the plan sets (a node's default
    is zero, which no real block after the merge reads): 32 random bytes per block."""
    sim = simulator()
    plans = [sim.buy_then_sell(10**18, 1_000).params()[0] for _ in range(2)]
    mixes = [b["blockOverrides"]["prevRandao"] for p in plans for b in p["blockStateCalls"]]
    assert len(mixes) >= 4
    assert all(len(m) == 66 and int(m, 16) != 0 for m in mixes)
    assert len(set(mixes)) == len(mixes)


def test_real_holders_keep_their_nonce() -> None:
    plan = holder_sells._group_plan(simulator(), holders(2))
    for block in plan.params()[0]["blockStateCalls"]:
        for account in block["stateOverrides"].values():
            assert "nonce" not in account


async def test_owner_power_wallets_are_fresh_per_scan() -> None:
    bought = "0x" + f"{10**20:064x}"

    def reply(params: list[Any]) -> list[dict[str, Any]]:
        return [
            {"calls": [{"status": "0x1", "gasUsed": "0x1", "returnData": bought}] * len(b["calls"])}
            for b in params[0]["blockStateCalls"]
        ]

    sim = simulator(node=FakeNode({"eth_simulateV1": reply}))
    targets = Targets("0x" + "aa" * 20, PAIR)
    one, two = [(await plot.amounts(sim, targets, True))[0] for _ in range(2)]
    assert one is not None and two is not None
    assert len({one.other, one.receiver, one.late, two.other, two.receiver, two.late}) == 6


@pytest.mark.parametrize("sold", [True, False])
async def test_the_amounts_round_predicts_failing_sells_with_a_sell_of_its_own(sold: bool) -> None:
    """A first scan's amounts round carries one buy then sell (block 3): its sell's
    failure is the story's ``sells_fail`` (the batch from held positions then goes with
    the trials); a round not asked to predict sends no sell and predicts nothing."""
    bought = "0x" + f"{10**20:064x}"
    sent: list[int] = []

    def reply(params: list[Any]) -> list[dict[str, Any]]:
        out = []
        for b in params[0]["blockStateCalls"]:
            later = int(b["blockOverrides"]["number"], 16) > HEAD.number + 1
            sent.append(later)
            status = "0x0" if later and not sold else "0x1"
            result = {"status": status, "gasUsed": "0x1", "returnData": bought}
            out.append({"calls": [result] * len(b["calls"])})
        return out

    sim = simulator(node=FakeNode({"eth_simulateV1": reply}))
    targets = Targets("0x" + "aa" * 20, PAIR)
    told, _ = await plot.amounts(sim, targets, True, predict=True)
    assert told is not None and told.sells_fail is not sold and any(sent)
    sent.clear()
    plain, _ = await plot.amounts(sim, targets, True)
    assert plain is not None and not plain.sells_fail and not any(sent)


def gap_reply(params: list[Any]) -> list[dict[str, Any]]:
    """geth's shape: every number from base + 1 on, gaps filled with empty blocks."""
    blocks = params[0]["blockStateCalls"]
    sent = {int(b["blockOverrides"]["number"], 16): b for b in blocks}
    word = "0x" + f"{5:064x}"
    out = []
    for n in range(int(params[1], 16) + 1, max(sent) + 1):
        calls = sent[n]["calls"] if n in sent else []
        result = {"status": "0x1", "gasUsed": "0x5208", "returnData": word, "logs": []}
        out.append({"number": hex(n), "calls": [result] * len(calls)})
    return out


async def test_gap_blocks_in_a_reply_are_matched_by_number() -> None:
    sim = simulator(node=FakeNode({"eth_simulateV1": gap_reply}))
    plan = sim.buy_then_sell(10**18, 10**20)  # blocks 1 and 3: geth returns 1, 2, 3
    outcome = await sim.run_one(plan)
    assert outcome["buyer.sell"].ok and outcome["bought"].uint == 5


def test_typed_gap_replies_carry_numbers() -> None:
    import msgspec

    reply = gap_reply(simulator().buy_then_sell(10**18, 1).params())
    typed = msgspec.json.decode(msgspec.json.encode(reply), type=SIMULATION.type)
    assert [b.number for b in typed] == [b["number"] for b in reply]


async def test_a_refused_span_is_learnt_and_the_holder_groups_made_again() -> None:
    seen: list[int] = []

    def reply(params: list[Any]) -> Any:
        blocks = params[0]["blockStateCalls"]
        span = int(blocks[-1]["blockOverrides"]["number"], 16) - int(params[1], 16)
        seen.append(span)
        if span > 4:
            return Fault(-38026, f"too many blocks: {span} > 4")
        return gap_reply(params)

    learnt: list[int] = []
    sim = simulator(node=FakeNode({"eth_simulateV1": reply}))
    sim.learned = learnt.append
    results = await holder_sells.sell_all(sim, holders(10))
    assert len(results) == 10 and learnt == [4] and sim.limits.max_blocks == 4
    assert max(seen) > 4 and all(s <= 4 for s in seen[seen.index(max(seen)) + 1 :])


def test_without_a_number_the_next_common_cap_is_learnt() -> None:
    limits = NodeLimits()
    assert limits.lower(40, "too many blocks") == 32
    assert limits.lower(17, "too many blocks") == 16


async def test_a_sell_counted_in_blocks_is_one_eth_call_with_block_overrides() -> None:
    sent: list[list[Any]] = []

    def call(params: list[Any]) -> str:
        sent.append(params)
        return "0x" + f"{1:064x}"

    sim = simulator(node=FakeNode({"eth_call": call}))
    found = await sells_ahead(sim, SLOT, 10**18, [(50_400, 7 * 86_400)])
    assert found == [None]
    control, later = sent
    assert int(later[3]["number"], 16) == HEAD.number + 50_400
    assert int(later[3]["time"], 16) == HEAD.timestamp + 7 * 86_400
    assert TOKEN in later[2]  # the seller's tokens come from a balance-slot override
    for params in sent:
        assert call_violations(params, BASE) == []


async def test_a_large_plan_with_gaps_is_matched_by_number_on_the_typed_path() -> None:
    def reply(params: list[Any]) -> list[dict[str, Any]]:
        out = gap_reply(params)
        for block in out:  # each block answers its own number, to see who got which
            for call in block["calls"]:
                call["returnData"] = "0x" + f"{int(block['number'], 16):064x}"
        return out

    sim = simulator(node=FakeNode({"eth_simulateV1": reply}))
    plan = sim.plan()
    for k in range(12):  # offsets 1, 3, ..., 23: geth adds the 11 blocks between
        plan.block(1 + 2 * k)
        plan.call({"from": "0x" + "aa" * 20, "to": TOKEN, "data": "0x18160ddd"}, f"b{k}")
    outcome = await sim.run_one(plan)
    assert [outcome[f"b{k}"].uint for k in range(12)] == [
        HEAD.number + 1 + 2 * k for k in range(12)
    ]


async def test_a_block_count_test_that_cannot_run_says_why() -> None:
    reverted = FakeNode({"eth_call": Fault(3, "execution reverted", "0x")})
    found = await sells_ahead(simulator(node=reverted), SLOT, 1, [(50_400, 1)])
    assert found == "a transfer to the pool fails even now"
    refused = FakeNode({"eth_call": Fault(-32602, "too many arguments, want at most 3")})
    found = await sells_ahead(simulator(node=refused), SLOT, 1, [(50_400, 1)])
    assert found == "the node refused eth_call with block overrides"


@pytest.mark.parametrize("held", [False, True])
def test_story_plans_share_blocks_yet_equal_each_plan_built_alone(
    held: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's trial plans built from one baseline (``story.story_plans``) are the plans
    ``story_plan`` builds one by one: every field (calls, marks, gas kinds, wallets,
    actors), for a one-call trial, a two-step trial and a call on another contract.
    Each block's random RANDAO mix is held fixed (a plan built alone draws its own)."""
    monkeypatch.setattr(simulator_module, "fresh_randao", lambda: "0x" + "5a" * 32)
    sim, targets = simulator(), Targets(buyer="0x" + "aa" * 20, pair=PAIR)
    told = story()
    if held:
        given = {TOKEN: {"stateDiff": {"0x" + "01" * 32: "0x" + "02" * 32}}}
        told = replace(told, held=given, a_held=5, b_held=2, owner_getter=False)
    trials = [
        (("0x" + "ee" * 20, "0x1234"), None),
        (("0x" + "ee" * 20, "0x1234", "0x5678"), None),
        (("0x" + "ef" * 20, "0x9abc"), "0x" + "44" * 20),
    ]
    built = plot.story_plans(sim, targets, told, trials)
    alone = [plot.story_plan(sim, targets, told, None)]
    alone += [plot.story_plan(sim, targets, told, call, to) for call, to in trials]
    assert built == alone
    assert len({id(p.blocks) for p in built}) == len(built)  # no plan's list is another's

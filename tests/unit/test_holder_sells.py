"""Holder sells in groups (holders/selling.py) against a fake node that decides per seller.

The fake node answers each simulated block from the seller's address: a "loser" fails
to sell in a group but sells alone (a failure caused by the sells before it), a "trapped"
holder fails either way, a "partial" one sells 99.9% of its balance but not all of it;
with ``cap``, a group's sells past that total overflow the pair.  Only the trapped one
may be reported as failed; every result keeps its holder's place; large holders sell
first; a group the node fails as a whole is sold one by one; the lone sells predicted
(the 99.9% second try, an overflowing group's) go out early and are used only where the
step-by-step order would have sent them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk import metrics
from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.registry import load_registry
from tokenrisk.holders import selling as holder_sells
from tokenrisk.model import Pool
from tokenrisk.simulate.calls import Route
from tokenrisk.simulate.simulator import Funding, SimSettings, Simulator

CHAIN = load_registry()[1]
DEX = next(d for d in CHAIN.dexes if d.version == "V2")
WETH = CHAIN.wrapped_native.address
TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
PAIR = "0x000000000000000000000000000000000000bEEF"
SWAP = "0x5c11d795"  # swapExactTokensForTokensSupportingFeeOnTransferTokens


def word(value: int) -> str:
    return "0x" + f"{value:064x}"


def holder(i: int) -> str:
    return "0x" + f"{i + 1:040x}"


class Node:
    def __init__(
        self,
        loser: str,
        trapped: str,
        broken_groups: bool = False,
        partial: str = "",
        cap: int | None = None,
    ) -> None:
        self.loser, self.trapped, self.broken = loser, trapped, broken_groups
        self.partial, self.cap = partial, cap
        self.simulations: list[list[str]] = []  # sellers per simulation, in block order

    def reply(self, params: list[Any]) -> Any:
        blocks = params[0]["blockStateCalls"]
        sellers = [b["calls"][0]["from"] for b in blocks]
        self.simulations.append(sellers)
        if self.broken and len(blocks) > 1:
            return Fault(3, "execution reverted")
        out, total = [], 0
        for k, block in enumerate(blocks):
            total += _amount(block)
            over = self.cap is not None and k > 0 and total > self.cap
            out.append(self._block(block, alone=len(blocks) == 1, over=over))
        return out

    def _block(self, block: dict[str, Any], alone: bool, over: bool = False) -> dict[str, Any]:
        seller, amount = block["calls"][0]["from"], _amount(block)
        whole = amount % 10**18 == 0  # the balances are whole tokens, a 99.9% try is not
        fails = (
            seller == self.trapped
            or (seller == self.loser and not alone)
            or (seller == self.partial and whole)
            or over
        )
        gas = amount // 10**15 + (0 if alone else 500_000)  # which sell a result came from
        calls = []
        for call in block["calls"]:
            swap = call["data"].startswith(SWAP)
            ok = not (swap and fails)
            data = word(0) if "70a08231" in call["data"][:10] and swap else word(10**18)
            calls.append(
                {"status": "0x1" if ok else "0x0", "gasUsed": hex(gas), "returnData": data}
            )
        return {"calls": calls}


def _amount(block: dict[str, Any]) -> int:
    """The amount the block's sell offers (the swap's first argument)."""
    swap = next(c for c in block["calls"] if c["data"].startswith(SWAP))
    return int(swap["data"][10:74], 16)


def simulator(node: Node, reserve: int = 10**24) -> Simulator:
    fake = FakeNode({"eth_simulateV1": node.reply})
    pool = Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, DEX.router, reserve, 10**24, 1e6)
    route = Route(pool, DEX, TOKEN, WETH)
    return Simulator(
        fake.client(), route, ChainHead(100, 1_700_000_000), Funding(WETH, None), SimSettings()
    )


async def test_groups_then_alone_only_for_who_failed_in_a_group() -> None:
    people = [(holder(i), 10**18 * (i + 1)) for i in range(60)]
    node = Node(loser=holder(30), trapped=holder(7))
    results = await holder_sells.sell_all(simulator(node), people)
    assert [r.holder for r in results] == [a for a, _ in people]
    assert [r.holder for r in results if not r.ok] == [holder(7)]
    grouped = [s for s in node.simulations if len(s) > 1]
    assert (
        len(grouped) == -(-60 // holder_sells.GROUP)
        and max(len(s) for s in grouped) == holder_sells.GROUP
    )
    assert grouped[0][0] == holder(59)  # the largest holder sells first
    alone = sorted(s[0] for s in node.simulations if len(s) == 1)
    # each lone sell went out with its 99.9% second try
    assert alone == sorted([holder(7), holder(7), holder(30), holder(30)])


async def test_a_group_the_node_fails_is_sold_one_by_one() -> None:
    people = [(holder(i), 10**18) for i in range(5)]
    node = Node(loser="", trapped="", broken_groups=True)
    results = await holder_sells.sell_all(simulator(node), people)
    assert all(r.ok for r in results)
    assert sorted(len(s) for s in node.simulations) == [1] * 10 + [5]  # each with its 99.9% try


def _timeline(sim: Simulator) -> list[str]:
    """What ``sim.run`` was asked and answered, in order: ``start``/``end`` of
    ``group`` or ``lone`` simulations (a lone batch may carry second tries).  Each
    answer takes a few loop turns, as a node's would, so what was started meanwhile
    shows before it."""
    events: list[str] = []
    real = sim.run

    async def run(plans: Any) -> Any:
        kind = "group" if any(p.span > 1 for p in plans) else "lone"
        events.append(f"start {kind} {len(plans)}")
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            return await real(plans)
        finally:
            events.append(f"end {kind}")

    sim.run = run  # type: ignore[method-assign]
    return events


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    seen: list[tuple[str, bool]] = []
    monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
    return seen


async def test_a_lone_sell_goes_out_with_its_second_try(monkeypatch: pytest.MonkeyPatch) -> None:
    """Who fails in a group sells alone with the 99.9% try in the same batch; the try's
    result counts only for a holder whose whole balance did not sell.  Fails when the
    second try's result is used without that check (the loser's result would be its
    99.9% sell's) or when the try waits for the whole sell (two lone batches)."""
    seen = _counted(monkeypatch)
    people = [(holder(i), 10**18 * (i + 1)) for i in range(3)]
    node = Node(loser=holder(0), trapped="", partial=holder(1))
    sim = simulator(node)
    events = _timeline(sim)
    results = await holder_sells.sell_all(sim, people)
    assert [r.ok for r in results] == [True, True, True]
    assert results[0].gas == 1_000  # the loser sold everything, alone
    assert results[1].gas == 1_998  # the partial holder, 99.9% of 2 tokens, alone
    assert results[2].gas == 500_000 + 3_000  # in its group
    assert [e for e in events if "lone" in e] == ["start lone 4", "end lone"]
    assert sorted(seen) == [("holder_retry", False), ("holder_retry", True)]


async def test_overflowing_sells_go_out_alone_with_the_groups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A V2 pair 5 tokens short of ``2**112 - 1``: in a group of four 3-token sells,
    every sell after the first overflows it, so those three lone sells go out with the
    group (before its reply) and are used, as the step-by-step order gives them; one
    that cannot sell everything alone gets its 99.9% try after."""
    seen = _counted(monkeypatch)
    people = [(holder(i), 3 * 10**18) for i in range(4)]
    reserve = holder_sells.V2_MAX_RESERVE - 5 * 10**18
    answers, timelines = [], []
    for ahead in (False, True):
        if not ahead:
            monkeypatch.setattr(holder_sells, "overflowing", lambda *_: [])
        sim = simulator(Node(loser="", trapped="", partial=holder(2), cap=5 * 10**18), reserve)
        timelines.append(_timeline(sim))
        answers.append(await holder_sells.sell_all(sim, people))
        monkeypatch.undo()
        seen = _counted(monkeypatch) if not ahead else seen
    assert answers[0] == answers[1] and all(r.ok for r in answers[1])
    assert [r.gas for r in answers[1]] == [500_000 + 3_000, 3_000, 2_997, 3_000]
    early = timelines[1]
    assert early.index("start lone 3") < early.index("end group")  # no second tries ahead
    assert seen == [("holder_alone", True)] * 3


async def test_an_overflow_that_does_not_happen_keeps_the_group_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same prediction on a pair that takes the sells after all (e.g. a token that
    keeps part of each): the lone sells sent early are dropped (counted) and the group's
    results stand.  Fails when a lone result is used for a holder whose group sell went
    through."""
    seen = _counted(monkeypatch)
    people = [(holder(i), 3 * 10**18) for i in range(4)]
    reserve = holder_sells.V2_MAX_RESERVE - 5 * 10**18
    sim = simulator(Node(loser="", trapped="", cap=None), reserve)
    results = await holder_sells.sell_all(sim, people)
    assert [r.gas for r in results] == [500_000 + 3_000] * 4
    assert seen.count(("holder_alone", False)) == 3


def test_who_overflows_a_pair_in_a_group() -> None:
    people = [(holder(i), b) for i, b in enumerate([1, 4, 2, 3])]
    groups = [[1, 3], [2, 0]]  # largest first, two per group
    assert holder_sells.overflowing(people, groups, 6) == [3]  # 4 + 3 > 6
    assert holder_sells.overflowing(people, groups, 7) == []
    assert holder_sells.overflowing(people, groups, None) == []


async def test_suspects_sell_alone_with_the_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Suspects (the caller's snipers): a trapped one and one who sells after all.  Their
    lone sells, with their 99.9% tries, go out before the groups answer; the trapped
    one's is used (its group sell failed), the other's dropped (its group sell stands),
    and the answer is the one without suspects.  Fails when the suspects' lone sells
    wait for the groups, or when a lone result replaces a group one that went through."""
    people = [(holder(i), 10**18 * (i + 1)) for i in range(6)]
    suspects = frozenset({holder(2), holder(4)})
    answers, timelines, counted = [], [], []
    for named in (frozenset[str](), suspects):
        seen = _counted(monkeypatch)
        sim = simulator(Node(loser="", trapped=holder(2)))
        timelines.append(_timeline(sim))
        answers.append(await holder_sells.sell_all(sim, people, named))
        counted.append(sorted(seen))
        monkeypatch.undo()
    assert answers[1] == answers[0]
    assert [r.holder for r in answers[1] if not r.ok] == [holder(2)]
    assert answers[1][4].gas == 500_000 + 5_000  # holder 4's group sell, not its lone one
    early = timelines[1]
    assert early.index("start lone 4") < early.index("end group")
    assert ("start lone 2") in timelines[0]  # without suspects: the trapped one after
    assert ("holder_suspect", True) in counted[1] and ("holder_suspect", False) in counted[1]
    assert not any(p == "holder_suspect" for p, _ in counted[0])


async def test_a_groups_failures_sell_alone_before_the_other_groups_are_back() -> None:
    """Five groups, four in flight: the largest holders' group (the first to go) has a
    trapped holder, whose lone sell starts on that group's reply, while the fifth group
    still waits for a place, not once every group is back; the results are those of the
    step-by-step order.  Fails when the lone sells wait for ``_grouped`` to return."""
    people = [(holder(i), 10**18 * (i + 1)) for i in range(5 * holder_sells.GROUP)]
    node = Node(loser="", trapped=holder(len(people) - 1))  # the largest: the first group
    sim = simulator(node)
    events = _timeline(sim)
    results = await holder_sells.sell_all(sim, people)
    assert [r.holder for r in results if not r.ok] == [holder(len(people) - 1)]
    assert all(r.ok for r in results[:-1])
    ends = [n for n, e in enumerate(events) if e == "end group"]
    assert len(ends) == 5 and events.index("start lone 2") < ends[-1]


async def test_the_first_sight_plan_from_reads_is_what_the_analysis_makes_of_them() -> None:
    """#27: on first sight the holders' sells are planned on their balances read from
    the index's first logs (``checks.holder_sells._read_people``): the first ``limit``
    that hold, less ``skip``, and the holding snipers, as ``_analyse`` makes them of the
    same reads; no plan while a read is not back or failed (then the logged guess)."""
    from tokenrisk.checks import holder_sells as checks_holders

    loop = asyncio.get_running_loop()
    largest, snipers = ("0x1", (holder(0), holder(1), holder(2))), ("0x1", (holder(3),))
    reads: dict[Any, asyncio.Future[list[tuple[str, int]]]] = {
        largest: loop.create_future(),
        snipers: loop.create_future(),
    }
    keys = (largest, snipers)
    assert checks_holders._read_people(reads, keys, 2, frozenset()) is None  # not back
    reads[largest].set_result([(holder(0), 7), (holder(2), 5), (holder(1), 1)])
    reads[snipers].set_result([(holder(3), 2)])
    people = ((holder(0), 7), (holder(2), 5))
    assert checks_holders._read_people(reads, keys, 2, frozenset()) == (people, ((holder(3), 2),))
    skipped = checks_holders._read_people(reads, keys, 2, {holder(0)})
    assert skipped == (((holder(2), 5),), ((holder(3), 2),))
    assert checks_holders._read_people(reads, (largest, None), 5, frozenset()) == (
        ((holder(0), 7), (holder(2), 5), (holder(1), 1)),
        (),
    )
    failed = loop.create_future()
    failed.set_exception(RuntimeError("no reply"))
    assert checks_holders._read_people({**reads, snipers: failed}, keys, 2, frozenset()) is None


async def _until(events: list[str], event: str) -> None:
    """Loop turns until ``event`` is in ``events`` (bounded)."""
    for _ in range(200):
        if event in events:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{event} never came")


async def test_a_guess_s_failures_sell_alone_once_its_reads_confirm_it() -> None:
    """#27: people guessed while the reads that check them are in flight (``after``):
    a group's failures sell alone only once those reads confirm the guess, with the
    same results as without the wait.  Fails when the lone sells do not wait."""
    people = [(holder(i), 10**18 * (i + 1)) for i in range(3)]
    answers = []
    for gated in (False, True):
        sim = simulator(Node(loser=holder(0), trapped=holder(1)))
        events = _timeline(sim)
        gate = asyncio.get_running_loop().create_future() if gated else None
        sold = asyncio.ensure_future(holder_sells.sell_all(sim, people, frozenset(), gate))
        await _until(events, "end group")
        for _ in range(10):
            await asyncio.sleep(0)
        assert ("start lone 4" in events) is not gated
        if gate is not None:
            gate.set_result(None)
        answers.append(await sold)
        assert events.index("end group") < events.index("start lone 4")
    assert answers[0] == answers[1]
    assert [r.holder for r in answers[1] if not r.ok] == [holder(1)]


async def test_a_dropped_guess_sends_no_lone_sell() -> None:
    """The reads contradict the guess: its sells are cancelled and its gate with them;
    no lone sell of its groups' failures reaches the node."""
    people = [(holder(i), 10**18 * (i + 1)) for i in range(3)]
    node = Node(loser=holder(0), trapped=holder(1))
    sim = simulator(node)
    events = _timeline(sim)
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    sold = asyncio.ensure_future(holder_sells.sell_all(sim, people, frozenset(), gate))
    await _until(events, "end group")
    sold.cancel()
    gate.cancel()
    await asyncio.wait([sold])
    for _ in range(10):
        await asyncio.sleep(0)
    assert [len(s) for s in node.simulations] == [3]  # the group alone
    assert not any("lone" in e for e in events)


async def test_the_reads_open_or_drop_a_guess_s_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """``checks.holder_sells._corrected``: a guess made while its reads were in flight
    keeps its sells and opens its gate when they find the same people, and is replaced
    (its sells and gate cancelled) when they do not.  Fails when a kept guess's gate
    stays shut (its failures would never sell alone) or a dropped one's opens."""
    from tokenrisk.checks import holder_sells as checks_holders

    loop = asyncio.get_running_loop()
    key = ("0x1", (holder(0), holder(1)))
    guess = (((holder(0), 7), (holder(1), 5)), ())
    replaced: asyncio.Future[Any] = loop.create_future()
    monkeypatch.setattr(checks_holders, "_sells", lambda *_: replaced)
    for read, kept in (([(holder(0), 7), (holder(1), 5)], True), ([(holder(0), 9)], False)):
        reads: dict[Any, asyncio.Future[list[tuple[str, int]]]] = {key: loop.create_future()}
        gate = checks_holders._gate(reads, (key, None))
        assert gate is not None
        sells: asyncio.Future[Any] = loop.create_future()
        ahead = checks_holders.Ahead(guess, sells, reads, gate)
        on: Any = (None, None, None)
        when: Any = (None, None)
        corrected = asyncio.ensure_future(
            checks_holders._corrected(ahead, on, ((key, None), 2, frozenset()), when)
        )
        await asyncio.sleep(0)
        assert not gate.done()  # nothing decided while the reads are out
        reads[key].set_result(read)
        found = await corrected
        assert (found is ahead) is kept
        assert gate.done() and gate.cancelled() is not kept
        assert sells.cancelled() is not kept
        if not kept:
            assert found.sells is replaced and found.gate is None
    done: dict[Any, asyncio.Future[list[tuple[str, int]]]] = {key: loop.create_future()}
    done[key].set_result([])
    assert checks_holders._gate(done, (key, None)) is None  # nothing in flight: no gate


async def test_who_failed_in_a_group_is_marked_alone() -> None:
    """``HolderSell.alone``: the results a lone sell decided (a group's failures, a group
    the node failed), whatever the lone sell gave; a group's successes are not."""
    people = [(holder(i), 10**18 * (i + 1)) for i in range(14)]
    results = await holder_sells.sell_all(
        simulator(Node(loser=holder(3), trapped=holder(7))), people
    )
    assert {r.holder for r in results if r.alone} == {holder(3), holder(7)}
    assert [r.ok for r in results if r.alone] == [True, False]


async def test_who_failed_in_a_group_sells_alone_with_the_groups_next_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#27, ``checks.holder_sells._analyse``: the holders whose sell failed in its group
    are remembered per token and pool; the next check's sells take them as suspects
    (their lone sells go out with the groups).  Fails when nothing is remembered or the
    next check's sells are not told."""
    from types import SimpleNamespace

    from tokenrisk.caching import MemoryCache
    from tokenrisk.checks import holder_sells as checks_holders
    from tokenrisk.holders.stats import HolderSell

    loop = asyncio.get_running_loop()
    people = ((holder(0), 5), (holder(1), 3))
    told: list[frozenset[str]] = []

    def sells(*_: Any, failed: frozenset[str] = frozenset(), **__: Any) -> Any:
        told.append(failed)
        sold = [HolderSell(holder(0), ok=False, alone=True), HolderSell(holder(1), ok=True)]
        done: asyncio.Future[Any] = loop.create_future()
        done.set_result((sold, set(), []))
        return done

    async def found(*_: Any, **__: Any) -> list[tuple[str, int]]:
        return list(people)

    async def indexed(*_: Any) -> Any:
        return people, ()

    monkeypatch.setattr(checks_holders, "_sells", sells)
    monkeypatch.setattr(checks_holders, "largest_holders", found)
    monkeypatch.setattr(checks_holders, "indexed_people", indexed)
    monkeypatch.setattr(checks_holders, "pool_sell_limit", lambda _: None)
    route = SimpleNamespace(token=TOKEN, pool=SimpleNamespace(address=PAIR))
    sim: Any = SimpleNamespace(route=route, base=SimpleNamespace(tag="0x64"))
    node: Any = SimpleNamespace(id=1)
    crowds: Any = MemoryCache(4)
    alone: Any = MemoryCache(4)
    for _ in range(2):
        holding: asyncio.Future[list[tuple[str, int]]] = loop.create_future()
        holding.set_result([])
        known = (crowds, None, alone)
        await checks_holders._analyse(node, None, 2, sim, [], frozenset(), holding, known)  # type: ignore[arg-type]
    assert told == [frozenset(), frozenset({holder(0).lower()})]

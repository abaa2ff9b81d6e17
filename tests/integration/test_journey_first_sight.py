"""A token's first journey with its later steps sent ahead on predicted amounts (#27).

With nothing remembered, the transfer and the sells go out with the buy, planned from
the V2 pool's curve (``curve``), or, when the buy delivers another amount, together
once the buy is known (``after_buy``); each is used only when the simulation's own
results show the prediction held (simulate/ahead.py); the owner-power scan's amounts
round goes with its facts and its trials, on that round's story, with its screen
(simulate/powers.py).  Real anvil: every catalogue
token's first answer equals a step-by-step check's, the rounds are counted without a
clock (:class:`Rounds`), and each prediction fed a wrong value is dropped with the
answer unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from expectations import assert_details
from receipts import node_call
from test_journey_ahead import _stable
from test_v4_known_pools import Rounds

from tokenrisk import metrics
from tokenrisk.api.app import create_app
from tokenrisk.caching import MemoryCache
from tokenrisk.chain import dex
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.rpc import RpcSettings
from tokenrisk.checks import holder_sells, honeypot
from tokenrisk.checks.target import search_pools
from tokenrisk.checks.trade import prepare, slot_ahead
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.holders import selling
from tokenrisk.model import Pool, SimulationReport
from tokenrisk.service import DEVNET_ID, Service, connect_devnet
from tokenrisk.simulate import journey, powers, story
from tokenrisk.simulate.ahead import Amounts
from tokenrisk.simulate.owners import PowerCache
from tokenrisk.simulate.powers import ScanBounds
from tokenrisk.simulate.simulator import Simulator

pytestmark = pytest.mark.integration


@pytest.fixture
async def service(devnet: RunningDevnet, tmp_path: Path) -> AsyncIterator[Service]:
    settings = Settings(  # a scan budget no loaded machine reaches: answers are compared
        devnet=False,
        data_dir=tmp_path / "data",
        deadline=60.0,
        cache_ttl=0,
        owner_powers={"deadline": 30.0},
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    yield svc
    await svc.close()


def _address(devnet: RunningDevnet, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


def _no_gas(report: SimulationReport) -> SimulationReport:
    """The report without what differs between two runs (fresh wallets' calldata gas)."""
    return replace(report, buy_gas=None, sell_gas=None)


def _step_by_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing sent ahead on a prediction: neither the journey's steps (nor its limit
    searches' sizes at once) nor the scan's trials nor the holders' lone sells of an
    overflowing group or of the index's snipers, nor the holders' reads from the index's
    first logs (the siphon's, the deployer's, the balances) (the memories of earlier
    checks aside)."""
    monkeypatch.setattr(selling, "overflowing", lambda *_: [])
    monkeypatch.setattr(holder_sells, "_suspects", lambda _: frozenset())
    monkeypatch.setattr(holder_sells, "read_ahead", lambda *_: None)
    monkeypatch.setattr(holder_sells, "read_deployer_ahead", lambda *_: None)
    monkeypatch.setattr(holder_sells, "_reads_ahead", lambda *_: {})
    monkeypatch.setattr(journey, "curve_buy", lambda *_: None)
    monkeypatch.setattr(journey, "_after_bought", lambda *_: None)
    monkeypatch.setattr(journey, "_first_journey", lambda *_: False)
    monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)
    monkeypatch.setattr(honeypot, "token_reads_ahead", lambda *_: None)


async def test_every_first_answer_is_the_step_by_step_one(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per catalogue token, with nothing remembered: a check step by step, then a first
    sight's (the journey's transfer and sells predicted, the scan's trials sent with
    its screen): the same answer, meeting the catalogue's expectations.  Both scans use
    the same wallets."""
    memo, scans = service.honeypot.trading.journeys, service.honeypot.powers.cache
    slots = service.honeypot.trading.slots_at
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    used: list[str] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        for entry in devnet.manifest["tokens"]:
            params = {"address": entry["address"], "chainID": 31337}
            answers = []
            for ahead in (False, True):
                memo.clear()
                slots.clear()  # the balance layout searched again (at first sight: ahead)
                scans.__post_init__()
                wallets = iter(range(1, 1_000))
                monkeypatch.setattr(
                    story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}"
                )
                if not ahead:
                    _step_by_step(monkeypatch)
                monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: u and used.append(p))
                answers.append(await http.get("/v2/IsHoneypot", params=params))
                monkeypatch.undo()
            alone, first = answers
            assert first.status_code == alone.status_code, entry["id"]
            if alone.status_code != 200:
                continue
            assert _stable(first.json()) == _stable(alone.json()), entry["id"]
            assert_details(first.json(), entry["expected"])
    half = len(devnet.manifest["tokens"]) // 2
    assert min(used.count("curve"), used.count("scan_trials")) >= half  # the paths were taken
    # the layout search and the scan's reads asked beside the head read, at the head used
    assert min(used.count("slot_ahead"), used.count("scan_reads")) >= half
    assert "scan_held" in used  # a batch from held positions sent with the trials, used


async def test_reads_asked_at_a_head_the_check_does_not_run_at_are_dropped(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The balance-layout search and a first scan's reads asked at the head read a
    moment ago (checks/honeypot.py: token_reads_ahead); the chain then moves before the
    check reads its own head: they are dropped (the scan's counted so), and the answer
    is the one of a check that asked nothing ahead.  Fails when reads asked at another
    block are used."""
    honeypot_deps = service.honeypot
    scans, slots = honeypot_deps.powers.cache, honeypot_deps.trading.slots_at
    dropped = metrics.SENT_AHEAD.labels("scan_reads", "dropped")
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        await http.get(
            "/v2/IsHoneypot", params={"address": _address(devnet, "plain"), "chainID": 31337}
        )
        answers = []
        for entry_id in ("latent-fee", "honest-timelock-pause"):
            token = _address(devnet, entry_id)
            params = {"address": token, "chainID": 31337}
            for ahead in (True, False):
                honeypot_deps.trading.journeys.clear()
                slots.clear()
                scans.__post_init__()
                if ahead:  # as token_reads_ahead asks them, at the head just read
                    node = honeypot_deps.nodes.select(31337)[0]
                    head = await node.head()
                    slot_ahead(node, honeypot_deps.trading, token, head)
                    slots_read = honeypot_deps.powers.bounds.storage_slots
                    caps = await node.capabilities()
                    history = (caps.otterscan, caps.state_floor())
                    powers.reads_ahead(node.rpc, scans, 31337, token, head, slots_read, history)
                    assert scans.ahead.value((31337, token.lower())) is not None
                    await node_call(devnet.url, "evm_mine", [])
                before = dropped._value.get()
                monkeypatch.setattr(honeypot, "token_reads_ahead", lambda *_: None)
                answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
                monkeypatch.undo()
                assert dropped._value.get() == before + (1 if ahead else 0), entry_id
            moved, alone = answers[-2:]
            assert moved["ownerPowers"]["scanned"], entry_id
            assert _stable(moved) == _stable(alone), entry_id


@pytest.mark.parametrize(
    ("entry_id", "ahead", "alone"),
    [
        ("plain", 1, 3),
        ("fot-3", 2, 3),
        ("v3-only", 2, 3),
        ("v4-plain", 2, 3),
        ("max-wallet", 3, 4),
        ("max-tx", 3, 7),
        ("tiny-sell-limit", 3, 6),
        ("swap-cap-guard", 3, 4),
        ("reflection", 2, 3),
    ],
)
async def test_a_first_journey_takes_fewer_rounds(
    service: Service, devnet: RunningDevnet, entry_id: str, ahead: int, alone: int
) -> None:
    """The journey alone, its balance slot known: one round trip when the curve
    predicted the buy (``plain``), two when the transfer and the sells wait for it (a
    buy tax, a V3 or V4 pool), three step by step; the report is the same.  A limit
    token's first journey sends each limit search's two refinements in one batch
    (simulate/limits.py, ``at_once``): the same limits a round trip sooner (max-tx's
    large sells, after its larger buys failed, every size at once too: two); when the
    default buy fails (swap-cap-guard), the smaller buys go at once, not after the larger
    ones; a reflection token's sells sent with the transfer are planned with the wei its
    rounding kept back in the curve-planned transfer (``reflection``: two, not three)."""
    counted, reports, rounds = await _two_journeys(service, devnet, entry_id)
    assert counted == [ahead, alone], rounds.rounds
    assert reports[0].sell_ok and _no_gas(reports[0]) == _no_gas(reports[1])


@pytest.mark.parametrize("entry_id", ["paused", "pool-drained-tokens"])
async def test_a_failed_buy_takes_two_rounds(
    service: Service, devnet: RunningDevnet, entry_id: str
) -> None:
    """A token no buy goes through: the default buy (with the larger buys' largest),
    then the smaller buys with the pool's token-side read beside them (simulate/journey.py,
    ``_smaller_buy``), first sight or step by step: two round trips, the same report."""
    counted, reports, rounds = await _two_journeys(service, devnet, entry_id)
    assert counted == [2, 2], rounds.rounds
    assert reports[0].failure_step == "buy" and _no_gas(reports[0]) == _no_gas(reports[1])


@pytest.mark.parametrize(
    ("entry_id", "ahead"),
    [("plain", 2), ("no-full-sell", 2), ("sell-whitelist", 2), ("tiny-sell-limit", 3)],
)
async def test_a_failed_sell_searches_without_waiting_for_the_delayed_sell(
    service: Service, devnet: RunningDevnet, entry_id: str, ahead: int
) -> None:
    """The balance slot searched beside the buy, as on first sight: the delayed sell by
    block count waits for it (a round), but a failed whole-balance sell's partial-sell
    search goes as soon as the sells are back, not after that round (it was three
    rounds for no-full-sell and sell-whitelist, four for tiny-sell-limit); the report
    is the step-by-step one."""
    counted, reports, rounds = await _two_journeys(service, devnet, entry_id, searched=True)
    assert counted[0] == ahead, rounds.rounds
    assert _no_gas(reports[0]) == _no_gas(reports[1])


@pytest.mark.parametrize(("entry_id", "ahead"), [("plain", 1), ("max-tx", 3)])
async def test_a_slot_found_ahead_plans_the_journey_as_a_known_one(
    service: Service, devnet: RunningDevnet, entry_id: str, ahead: int
) -> None:
    """A first check's balance-layout search asked beside its head read and back before
    the journey starts (``slot_ahead``): ``prepare`` hands the slot over done, so the
    large sells and the delayed sell by block count go with the buy, as with a slot
    found first (one round trip for ``plain``, three for ``max-tx``: the rounds of
    ``test_a_first_journey_takes_fewer_rounds``), not after the buy's reply, as with a
    search still in flight (a round more; it was so even with the search back, the
    slot then still handed over as a task not yet run).  The report is the
    step-by-step one."""
    counted, reports, rounds = await _two_journeys(service, devnet, entry_id, asked=True)
    assert counted[0] == ahead, rounds.rounds
    assert _no_gas(reports[0]) == _no_gas(reports[1])


@pytest.mark.parametrize(("entry_id", "rounds_ahead"), [("swap-cap-guard", 3), ("paused", 2)])
async def test_a_failed_default_buy_sends_no_more_larger_buys(
    service: Service,
    devnet: RunningDevnet,
    entry_id: str,
    rounds_ahead: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the default buy fails, the larger-buy ladder stops at its largest size, sent
    with the default buy: the journey takes the smaller buys' path and reads no larger
    size.  On a first journey the ladder's reply could be read before the default buy's
    and its smaller rungs and the max buy's grids went out in the next round, a batch
    nobody read (swap-cap-guard: every check, its default size never remembered).  Same
    rounds, same report."""
    real, larger = journey._sized_buy, []

    def counting(sim: Any) -> Callable[[int], Any]:
        plan_of, base = real(sim), dex.base_reserve(sim.route.pool)
        sizes = {base * bps // 10_000 for bps in journey._UP_BPS}

        def planned(size: int) -> Any:
            if size in sizes:
                larger.append(size)
            return plan_of(size)

        return planned

    monkeypatch.setattr(journey, "_sized_buy", counting)
    # injected: the default buy's reply is read after the largest larger buy's (from a
    # node far away, two replies of one round arrive in either order)
    buy_only, run_one, default = Simulator.buy_only, Simulator.run_one, set()

    def tagged(sim: Simulator, amount_in: int, reads: Any = "all") -> Any:
        plan = buy_only(sim, amount_in, reads)
        first = sim.settings.buy_amount(dex.base_reserve(sim.route.pool))
        if reads == "all" and amount_in == first:
            default.add(id(plan))
        return plan

    async def late(sim: Simulator, plan: Any) -> Any:
        outcome = await run_one(sim, plan)
        if id(plan) in default:
            await asyncio.sleep(0.05)
        return outcome

    monkeypatch.setattr(Simulator, "buy_only", tagged)
    monkeypatch.setattr(Simulator, "run_one", late)
    counted, reports, rounds = await _two_journeys(service, devnet, entry_id)
    assert counted[0] == rounds_ahead, rounds.rounds
    assert len(larger) == 2, larger  # the largest larger buy, once per journey
    assert reports[0].failure_step == reports[1].failure_step
    assert _no_gas(reports[0]) == _no_gas(reports[1])


async def _two_journeys(
    service: Service,
    devnet: RunningDevnet,
    entry_id: str,
    *,
    searched: bool = False,
    asked: bool = False,
) -> tuple[list[int], list[Any], Rounds]:
    """The journey of ``entry_id``'s first pool twice, through a round-counting
    transport: first with a memo (a first journey: predictions sent ahead), then step by
    step; the round trips and reports of each.  ``searched``: the balance slot is
    searched beside the buy (a task, as on first sight) instead of found first;
    ``asked``: it was searched ahead at the head (``slot_ahead``, as a first check asks
    it beside its head read) and is back, handed to the journey as ``prepare`` gives it."""
    node, rounds = service.nodes[DEVNET_ID], Rounds(devnet.url)
    node.rpc = CoalescingRpc(devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds)
    token = _address(devnet, entry_id)
    pool = (await search_pools(node, token)).pools[0]
    reports, counted = [], []
    trading = service.honeypot.trading
    for memo in (MemoryCache[Any, Amounts](8), None):
        if searched or asked:
            trading.slots_at.clear()
        if asked:
            head = await node.head()
            slot_ahead(node, trading, token, head)
            search = trading.slots_ahead.value((node.id, token.lower(), head.number, head.hash))
            assert search is not None
            await search
        ready = await prepare(node, trading, pool, token)
        assert ready.sim is not None and ready.token_slot is not None
        slot = ready.token_slot if searched or asked else await ready.token_slot
        rounds.rounds.clear()
        base, reserve = dex.base_reserve(pool), dex.token_reserve(pool)
        reports.append(await journey.simulate(ready.sim, base, reserve, slot, memo))
        counted.append(len(rounds.rounds))
    await rounds.aclose()
    return counted, reports, rounds


def _wrong_curve(real: Any) -> Any:
    return lambda *args: (real(*args) or 0) * 2


def _wrong_transfer(real: Any) -> Any:
    def wrong(bought: int, bps: int, *shift: Any) -> Amounts:
        got, received, remaining, slot = real(bought, bps, *shift)
        return (got, received, remaining + 1, slot)

    return wrong


@pytest.mark.parametrize(
    ("entry_id", "where", "planned"),
    [
        ("plain", "curve_buy", "curve"),  # the buy delivers half of it
        ("plain", "after_buy", "curve"),  # the transfer leaves one token less
        ("fot-3", "after_buy", "after_buy"),  # the curve missed: the transfer, after the buy
        ("v3-only", "after_buy", "after_buy"),
    ],
)
async def test_a_wrong_prediction_is_dropped_and_the_answer_stands(
    service: Service,
    devnet: RunningDevnet,
    monkeypatch: pytest.MonkeyPatch,
    entry_id: str,
    where: str,
    planned: str,
) -> None:
    """A prediction that does not hold (the buy delivers another amount, the transfer
    leaves another balance): the steps planned with it are dropped (counted in the
    metrics) and the answer is the step-by-step one.  Fails with the verification
    (``Ahead.bought`` and ``Ahead.kept``) removed: the sells then offer amounts the
    wallets do not hold."""
    params = {"address": _address(devnet, entry_id), "chainID": 31337}
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    seen: list[tuple[str, bool]] = []
    real_count = metrics.sent_ahead
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        _step_by_step(monkeypatch)
        step_by_step = (await http.get("/v2/IsHoneypot", params=params)).json()
        monkeypatch.undo()
        service.honeypot.trading.journeys.clear()
        wrong_of = _wrong_curve if where == "curve_buy" else _wrong_transfer
        monkeypatch.setattr(journey, where, wrong_of(getattr(journey, where)))
        monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
        wrong = (await http.get("/v2/IsHoneypot", params=params)).json()
    monkeypatch.undo()
    assert metrics.sent_ahead is real_count
    assert (planned, False) in seen
    assert step_by_step["simulationResult"]["sellTax"] is not None
    assert _stable(wrong) == _stable(step_by_step)


# THE OWNER-POWER SCAN'S TRIALS, SENT WITH ITS SCREEN


@pytest.mark.parametrize(
    ("entry_id", "ahead", "alone"),
    [("plain", 2, 3), ("fot-3", 2, 3), ("v3-only", 2, 3), ("latent-pause", 2, 4)],
)
async def test_a_first_scan_sends_its_trials_with_the_screen(
    service: Service, devnet: RunningDevnet, entry_id: str, ahead: int, alone: int
) -> None:
    """The scan alone, its balance slot known: the facts with the amounts round, then the
    callers' reads with the screen and the trials (planned on the amounts round's
    story, whatever the pool or a buy tax); without the trials sent ahead, they wait
    for the screen.  ``latent-pause``: its two-step trials (a setter that changed
    nothing, then a switch) go with the trials too, paired as if every candidate passed
    the screen and changed nothing, used where the real pairing names them: two rounds
    against four step by step (facts, screen, trials, two-step trials).  The result is
    the same (the scan's wallets the same in both)."""
    _, counted, results, last = await _two_first_scans(
        service,
        devnet,
        entry_id,
        lambda patch: patch.setattr(powers, "trials_ahead", lambda *_: False),
    )
    assert counted == [ahead, alone], last
    assert results[0].scanned and results[0] == results[1]


@pytest.mark.parametrize("entry_id", ["origin-trap", "gas-price-cap"])
async def test_a_first_scan_whose_sells_fail_sends_its_held_batch_with_its_trials(
    service: Service, devnet: RunningDevnet, entry_id: str
) -> None:
    """Tokens whose sells fail after a buy: the amounts round's sell (sent with its buys)
    failed, so the batch from held positions goes with the trials and is used once the
    baseline's sells failed too: two rounds.  Without that sell the batch from held
    positions waits for the baseline's reply: three.  The same result."""
    _, counted, results, last = await _two_first_scans(
        service, devnet, entry_id, lambda patch: patch.setattr(story, "_sell_plan", lambda *_: None)
    )
    assert counted == [2, 3], last
    assert results[0].scanned and results[0] == results[1]
    assert "sells failed after a buy: the scan re-ran from held positions" in results[0].notes


async def _two_first_scans(
    service: Service,
    devnet: RunningDevnet,
    entry_id: str,
    turn_off: Callable[[pytest.MonkeyPatch], None],
) -> tuple[Pool, list[int], list[Any], list[Any]]:
    """The scan alone of ``entry_id``'s first pool, its balance slot known, twice with
    the same scan wallets: as it runs, then with ``turn_off`` applied (what it sends
    ahead turned off).  The pool, the rounds each scan took (counted without a clock:
    :class:`Rounds`), the two results and the second scan's rounds."""
    node, rounds = service.nodes[DEVNET_ID], Rounds(devnet.url)
    node.rpc = CoalescingRpc(devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds)
    token = _address(devnet, entry_id)
    pool = (await search_pools(node, token)).pools[0]
    caps = await node.capabilities()
    bounds = replace(ScanBounds(), otterscan=caps.otterscan, state_floor=caps.state_floor())
    results, counted = [], []
    for sent in (True, False):
        ready = await prepare(node, service.honeypot.trading, pool, token)
        assert ready.sim is not None and ready.token_slot is not None
        await ready.token_slot
        wallets = iter(range(1, 1_000))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}")
            if not sent:
                turn_off(patch)
            rounds.rounds.clear()
            results.append(await powers.scan(ready.sim, DEVNET_ID, PowerCache(), bounds))
        counted.append(len(rounds.rounds))
    await rounds.aclose()
    return pool, counted, results, list(rounds.rounds)


async def _first_scans(
    service: Service,
    monkeypatch: pytest.MonkeyPatch,
    address: str,
    patch: Callable[[bool], None],
) -> tuple[list[Any], list[tuple[str, bool]]]:
    """Two first checks of ``address`` (nothing remembered, the same scan wallets both
    times), step by step then with what is sent ahead: ``patch(ahead)`` sets what
    differs.  Their answers, and every sent-ahead count (planned, used)."""
    cache = service.honeypot.powers.cache
    transport = httpx.ASGITransport(app=create_app(service.settings, service))
    params = {"address": address, "chainID": 31337}
    seen: list[tuple[str, bool]] = []
    answers = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        for ahead in (False, True):
            cache.__post_init__()  # nothing remembered: a first scan
            wallets = iter(range(1, 1_000))  # the same scan wallets both times
            monkeypatch.setattr(story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}")
            patch(ahead)
            monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
            monkeypatch.undo()
    return answers, seen


@pytest.mark.parametrize("entry_id", ["plain", "hidden-mint", "two-step-fee"])
async def test_trials_planned_on_another_story_are_dropped(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """Trials sent with the screen on a story the scan does not use (here: the amounts
    round's, with A's sell one token larger) are dropped (counted) and the scan's
    answer is a step-by-step scan's.  Fails when the batch sent ahead is used without
    comparing its story with the amounts round's: the trials then ran on amounts the
    wallets do not hold."""
    real = powers._tried_ahead

    def shifted(sim: Any, facts: Any, targets: Any, told: Any, likely: Any) -> Any:
        return real(sim, facts, targets, replace(told, a_sell=told.a_sell + 1), likely)

    def patch(ahead: bool) -> None:
        if ahead:
            monkeypatch.setattr(powers, "_tried_ahead", shifted)
        else:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)

    answers, seen = await _first_scans(service, monkeypatch, _address(devnet, entry_id), patch)
    assert ("scan_trials", False) in seen and ("scan_trials", True) not in seen
    assert answers[0]["ownerPowers"]["scanned"]
    assert _stable(answers[1]) == _stable(answers[0])


async def test_trials_of_a_sender_the_reads_add_run_after_them(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trials sent ahead on the right story but a sender the likely ones missed
    (here: none was likely, and its trials are not sent beside its screen either):
    the batch goes out after the screen as step by step, and the answer is the same.
    Fails when a batch sent ahead is used without checking that it ran every trial."""

    def patch(ahead: bool) -> None:
        if not ahead:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)
        monkeypatch.setattr(powers, "_likely", lambda *_: [])
        monkeypatch.setattr(powers, "_more_senders", lambda _s, _f, sent, *_: sent)

    address = _address(devnet, "hidden-mint")
    answers, seen = await _first_scans(service, monkeypatch, address, patch)
    assert seen.count(("scan_trials", False)) == 1 and ("scan_trials", True) not in seen
    assert answers[0]["ownerPowers"]["findings"]
    assert _stable(answers[1]) == _stable(answers[0])


@pytest.mark.parametrize("entry_id", ["latent-hidden-keeper", "packed-manager"])
async def test_trials_past_the_bound_or_of_a_packed_sender_go_ahead(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """Two senders whose candidates are past ``max_trials`` together (the leading
    sender's trials go ahead, the other's once its screen is known) and a sender only a
    packed storage word names (its trials beside its screen): every trial of the scan
    comes from the batches sent ahead (counted used), and the answer is a step-by-step
    scan's.  Fails when either waits for the screen (counted dropped, a round later)."""

    def patch(ahead: bool) -> None:
        if not ahead:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)

    address = _address(devnet, entry_id)
    answers, seen = await _first_scans(service, monkeypatch, address, patch)
    assert ("scan_trials", True) in seen and ("scan_trials", False) not in seen
    assert answers[0]["ownerPowers"]["scanned"]
    assert _stable(answers[1]) == _stable(answers[0])


async def test_trials_of_a_sender_the_reads_add_go_with_its_screen(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sender only the callers' reads found (here: none was likely) gets its trials
    sent beside its screen, on the batch's story (``powers._more_senders``): every
    trial then comes from the batches sent ahead (counted used), and the answer is a
    step-by-step scan's.  Fails when they are not sent (counted dropped: the batch
    waited for the screen, a round later) or used with another sender's outcomes."""

    def patch(ahead: bool) -> None:
        if not ahead:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)
        monkeypatch.setattr(powers, "_likely", lambda *_: [])

    address = _address(devnet, "hidden-mint")
    answers, seen = await _first_scans(service, monkeypatch, address, patch)
    assert ("scan_trials", True) in seen and ("scan_trials", False) not in seen
    assert answers[0]["ownerPowers"]["findings"]
    assert _stable(answers[1]) == _stable(answers[0])


@pytest.mark.parametrize("entry_id", ["plain", "fot-3", "v3-only"])
async def test_a_first_scans_trials_go_on_the_amounts_rounds_story(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """The amounts round goes with the facts, so the trials sent with the screen are
    planned on its story whatever the pool's curve (``v3-only``) or a buy tax
    (``fot-3``): sent ahead and used."""
    params = {"address": _address(devnet, entry_id), "chainID": 31337}
    service.honeypot.powers.cache.__post_init__()
    service.honeypot.trading.journeys.clear()
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    seen: list[tuple[str, bool]] = []
    monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        answer = (await http.get("/v2/IsHoneypot", params=params)).json()
    assert answer["ownerPowers"]["scanned"]
    assert [used for planned, used in seen if planned == "scan_trials"] == [True]


async def test_two_step_trials_the_pairing_does_not_name_are_run_after(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two-step trials sent with the trials whose setter calls are not the ones the real
    pairing names (here: each setter's calldata with its last byte changed): none is
    used (counted dropped), the pairing's own run after the trials, and the answer is a
    step-by-step scan's.  Fails when a pair sent ahead is used without its calls being
    the pairing's."""
    real = powers.likely_pairs

    def other_setter(candidates: Any) -> Any:
        return [
            replace(p, prior=replace(p.prior, data=p.prior.data[:-2] + "ee"))
            for p in real(candidates)
        ]

    def patch(ahead: bool) -> None:
        if ahead:
            monkeypatch.setattr(powers, "likely_pairs", other_setter)
        else:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)

    address = _address(devnet, "latent-pause")
    answers, seen = await _first_scans(service, monkeypatch, address, patch)
    assert ("scan_pairs", False) in seen and ("scan_pairs", True) not in seen
    assert ("scan_trials", True) in seen
    assert _stable(answers[1]) == _stable(answers[0])


async def test_a_mints_dump_goes_with_the_trials_and_is_used_only_when_the_same(
    service: Service, devnet: RunningDevnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mint-and-dump sells go with the trials, planned as if each candidate of amounts
    minted: used (counted) when the real dump is one of them, and the answer is a
    step-by-step scan's.  Sent with other amounts (a thousandth), none is used (counted
    dropped) and the answer stands: fails when a dump sent ahead is used without its
    amount being the real one (the pool's loss would be another)."""
    params = {"address": _address(devnet, "hidden-mint"), "chainID": 31337}
    cache = service.honeypot.powers.cache
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    real = powers.likely_dumps

    def other_amounts(candidates: Any, pool: Any) -> Any:
        return [(t, n // 1000) for t, n in real(candidates, pool)]

    answers, seen = [], []
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        for mode in ("alone", "ahead", "other"):
            cache.__post_init__()
            wallets = iter(range(1, 1_000))
            monkeypatch.setattr(story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}")
            if mode == "alone":
                monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)
            if mode == "other":
                monkeypatch.setattr(powers, "likely_dumps", other_amounts)
            counted: list[tuple[str, bool]] = []
            monkeypatch.setattr(metrics, "sent_ahead", lambda p, u, c=counted: c.append((p, u)))
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
            seen.append([used for planned, used in counted if planned == "scan_dumps"])
            monkeypatch.undo()
    assert seen == [[], [True], [False]]
    mint = [f for f in answers[0]["ownerPowers"]["findings"] if f["id"] == "owner_can_mint"]
    assert mint and "selling the new tokens took" in mint[0]["detail"]
    assert _stable(answers[1]) == _stable(answers[0]) == _stable(answers[2])


# THE HOLDERS' LONE SELLS, SENT WITH THE GROUPS OR WITH THEIR SECOND TRY


@pytest.mark.parametrize(
    ("entry_id", "planned"),
    [("whale-2e112", "holder_alone"), ("sniper-blacklist", "holder_suspect")],
)
async def test_holders_lone_sells_go_out_early_and_the_answer_stands(
    service: Service,
    devnet: RunningDevnet,
    monkeypatch: pytest.MonkeyPatch,
    entry_id: str,
    planned: str,
) -> None:
    """``whale-2e112``: its holders' balances overflow the V2 pair in a group, so their
    lone sells go out with the groups (holders/selling.py: ``overflowing``);
    ``sniper-blacklist``: the index's snipers are suspects whose lone sells (and 99.9%
    tries) go out with the groups (checks/holder_sells.py: ``_suspects``); they fail in
    their groups.  Both are used, and the answer is the one with the lone sells sent
    after the groups (the catalogue's expectations met)."""
    params = {"address": _address(devnet, entry_id), "chainID": 31337}
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    seen: list[tuple[str, bool]] = []
    answers = []
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        for ahead in (False, True):
            service.honeypot.trading.crowds.clear()
            # the second check is at the same head: its sells would be the ones kept
            # (Simulator.remembered), not sent, and there would be nothing to count
            service.honeypot.trading.simulated.clear()
            if not ahead:
                monkeypatch.setattr(selling, "overflowing", lambda *_: [])
                monkeypatch.setattr(holder_sells, "_suspects", lambda _: frozenset())
            monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
            monkeypatch.undo()
    assert (planned, True) in seen
    assert answers[0]["holderAnalysis"]["holders"]
    assert _stable(answers[1]) == _stable(answers[0])
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    assert_details(answers[1], entry["expected"])

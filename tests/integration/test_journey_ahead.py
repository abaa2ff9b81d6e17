"""Before/after for the journey sent ahead (simulate/ahead.py), on every devnet token.

The first IsHoneypot of a token runs the journey step by step (buy, then transfer, then
sells) and remembers its amounts; the second sends the transfer and the sells with the
buy, planned from those amounts, and (the head unchanged) plans the whole check at the
remembered head and pools, confirmed by the head read beside it (checks/speculation.py).
The two answers must be the same, and both must meet the catalogue's expectations.
What differs between any two runs of the same check is left out: the gas of a trade
(every run's wallets are fresh random addresses, whose zero bytes cost less calldata
gas), also where a text quotes it, and ``ownerPowers.cached``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from expectations import assert_details
from receipts import node_call

from tokenrisk import metrics
from tokenrisk.api.app import create_app
from tokenrisk.checks import holder_sells, honeypot, trade
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet
from tokenrisk.simulate import journey, owners, powers, story
from tokenrisk.simulate.probe import SellTrace
from tokenrisk.simulate.slots import BalanceSlot

pytestmark = pytest.mark.integration

VOLATILE = {"buyGas", "sellGas", "gas", "cached"}


@pytest.fixture(scope="module")
async def service(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    settings = Settings(
        devnet=False,
        data_dir=tmp_path_factory.mktemp("ahead"),
        deadline=60.0,
        cache_ttl=0,
        # two checks' answers are compared: a scan cut by its 3 s budget on a loaded
        # machine (gas-infinite's sells burn their whole gas cap) would differ from one
        # that finished for a reason that is not this file's subject
        owner_powers={"deadline": 30.0},
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    yield svc
    await svc.close()


def _stable(value: Any) -> Any:
    """``value`` without the fields that differ between two runs of one check."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str) and "gas" in value.lower():
        return re.sub(r"\d[\d,]*", "N", value)
    return value


async def test_answers_are_the_same_with_the_journey_sent_ahead(
    service: Service, devnet: Any
) -> None:
    memo = service.honeypot.trading.journeys
    assumed = metrics.HEADS_ASSUMED.labels("31337", "used")
    used = assumed._value.get()
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry in devnet.manifest["tokens"]:
            params = {"address": entry["address"], "chainID": 31337}
            hits = memo.stats.hits
            step_by_step = await http.get("/v2/IsHoneypot", params=params)
            assert memo.stats.hits == hits, entry["id"]  # the first check had nothing to use
            ahead = await http.get("/v2/IsHoneypot", params=params)
            assert ahead.status_code == step_by_step.status_code, entry["id"]
            if step_by_step.status_code != 200:
                continue
            first, second = step_by_step.json(), ahead.json()
            assert _stable(second) == _stable(first), entry["id"]
            assert second["honeypotResult"]["isHoneypot"] is entry["expected"]["isHoneypot"]
            assert_details(second, entry["expected"])
    assert memo.stats.hits >= len(devnet.manifest["tokens"]) // 2  # the path was taken
    # and the second checks were planned at the remembered head (checks/speculation.py)
    assert assumed._value.get() - used >= len(devnet.manifest["tokens"]) // 2


@pytest.mark.parametrize("wrong", [(1, 0, 0, None), (0, 1, 0, None), (0, 0, -1, None), "slot"])
async def test_a_wrong_memory_is_dropped_and_the_answer_stands(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, wrong: Any
) -> None:
    """Remembered amounts that no longer fit (a buy delivering another amount, a
    transfer leaving another balance, another balance layout): the steps sent ahead
    are dropped, the answer is the step-by-step one."""
    memo = service.honeypot.trading.journeys
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry_id in ("plain", "fot-3", "sell-burn", "max-tx"):
            entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
            params = {"address": entry["address"], "chainID": 31337}
            first = (await http.get("/v2/IsHoneypot", params=params)).json()
            real = memo.get

            def off(key: Any, real: Any = real) -> tuple[bool, Any]:
                found, amounts = real(key)
                if not found:
                    return found, amounts
                if wrong == "slot":  # another balance layout than the one verified now
                    layout = amounts[3] or BalanceSlot(0, False)
                    return True, (*amounts[:3], BalanceSlot(layout.slot + 1, layout.vyper))
                moved = (a + d for a, d in zip(amounts[:3], wrong, strict=False))
                return True, (*moved, amounts[3])

            monkeypatch.setattr(memo, "get", off)
            second = (await http.get("/v2/IsHoneypot", params=params)).json()
            monkeypatch.undo()
            assert _stable(second) == _stable(first), entry_id


def _shifted(monkeypatch: pytest.MonkeyPatch, searches: Any, shift: int) -> None:
    """Every remembered search size off by ``shift`` (0: as remembered) until undone."""
    real = searches.value

    def off(key: Any) -> Any:
        sizes = real(key)
        return None if sizes is None else tuple(s + shift for s in sizes)

    monkeypatch.setattr(searches, "value", off)


async def _first_remembering(
    http: httpx.AsyncClient, searches: Any, address: str, kind: str | None = None
) -> Any:
    """A check of ``address`` with no search remembered; its searches' sizes (those of
    ``kind`` when given) must be remembered for the next check."""
    searches.clear()
    first = (await http.get("/v2/IsHoneypot", params={"address": address, "chainID": 31337})).json()
    kept = [
        key
        for key in searches._entries
        if key[1].lower() == address.lower() and kind in (None, key[3])
    ]
    assert kept, address  # the searches' sizes were remembered
    return first


LIMIT_TOKENS = ("max-tx", "max-wallet", "tiny-sell-limit", "swap-cap-guard")
"""Tokens whose limit searches ask for sizes more than once: a max transaction, a max
wallet, a sell limit found by the partial-sell search; and one whose default buy fails
(its smaller buys are remembered however often they asked)."""


@pytest.mark.parametrize("shift", [0, 1])
async def test_a_limit_tokens_searches_are_recalled_and_the_answer_stands(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    """A check remembers the sizes each limit search asked for; the next check of the
    token sends them with the buy and its searches read them (simulate/limits.py,
    ``Recall``): the same answer.  Remembered sizes that no longer fit (each one off by
    ``shift``) are sent, not read: the searches send what they ask for, and the answer
    is still the step-by-step one."""
    searches = service.honeypot.trading.searches
    counted = metrics.SENT_AHEAD.labels("search", "used" if shift == 0 else "dropped")
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry_id in LIMIT_TOKENS:
            entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
            params = {"address": entry["address"], "chainID": 31337}
            first = await _first_remembering(http, searches, entry["address"])
            _shifted(monkeypatch, searches, shift)
            before = counted._value.get()
            second = (await http.get("/v2/IsHoneypot", params=params)).json()
            monkeypatch.undo()
            assert counted._value.get() > before, entry_id
            assert _stable(second) == _stable(first), entry_id


HONEYPOTS = ("sell-whitelist", "no-full-sell", "origin-trap")
"""Tokens whose whole sell fails at every check, so that their partial-sell search and
the failed sell's trace run at every check: nothing sells at all, a sell refused by what
sent it (``tx.origin``): their traces are read; and only a part sells (``no-full-sell``):
its sell went through in the end, so its trace is dropped, as it was when it started
after the failed sell."""


@pytest.mark.parametrize("shift", [0, 1])
async def test_a_failed_sells_search_and_trace_go_with_the_next_buy(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, shift: int
) -> None:
    """A check whose whole sell failed remembers its partial-sell sizes; the next check
    sends them with the buy, and starts the failed sell's trace then too, not once its
    own sell failed (a round trip later): the same answer.  Remembered sizes that no
    longer fit (each one off by ``shift``) are sent, not read, and the answer is still
    the step-by-step one."""
    searches = service.honeypot.trading.searches
    counted = metrics.SENT_AHEAD.labels("search", "used" if shift == 0 else "dropped")
    traces = [metrics.SENT_AHEAD.labels(trade.SELL_TRACE, r) for r in ("used", "dropped")]
    started_by: list[str] = []
    start = SellTrace.start

    def spied(trace: SellTrace) -> None:
        if not trace.early:  # who started it: the journey's start or its failed sell
            started_by.append(sys._getframe(1).f_code.co_name)
        start(trace)

    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry_id in HONEYPOTS:
            entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
            params = {"address": entry["address"], "chainID": 31337}
            first = await _first_remembering(http, searches, entry["address"], "partial")
            _shifted(monkeypatch, searches, shift)
            monkeypatch.setattr(SellTrace, "start", spied)
            started_by.clear()
            before = counted._value.get(), [t._value.get() for t in traces]
            second = (await http.get("/v2/IsHoneypot", params=params)).json()
            monkeypatch.undo()
            assert counted._value.get() > before[0], entry_id
            assert started_by == ["simulate"], entry_id  # with the buy
            # read when the sell failed after all; a token that sells a part drops it
            grew = [t._value.get() - b for t, b in zip(traces, before[1], strict=True)]
            assert grew == ([0, 1] if entry_id == "no-full-sell" else [1, 0]), entry_id
            assert _stable(second) == _stable(first), entry_id


@pytest.mark.parametrize("last", ["verifies", "moved"])
async def test_a_failed_sells_trace_at_a_new_block_goes_beside_the_layout_search(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, last: str
) -> None:
    """At a new block the token's balance layout is verified again (a round trip); the
    failed sell's trace goes beside that search, with the layout the token's last search
    verified, and is used when this search verifies the same one.  A layout that no
    longer verifies (``moved``) is dropped and the trace asked again with the one found:
    the same answer either way."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "sell-whitelist")
    params = {"address": entry["address"], "chainID": 31337}
    slots = service.honeypot.trading.slots
    moved = BalanceSlot(slot=987_654, vyper=False)
    traced: list[tuple[BalanceSlot, bool, int]] = []
    explain = trade.explain_sell_failure

    async def spied(rpc: Any, route: Any, slot: BalanceSlot, *rest: Any) -> Any:
        ready = sys._getframe(1).f_locals["ready"]  # the check's prepared trade
        # whether its layout search was back, and at which block (a run planned at the
        # head this worker remembered is dropped once the head read says it moved)
        traced.append((slot, ready.token_slot.done(), ready.sim.base.number))
        return await explain(rpc, route, slot, *rest)

    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        first = (await http.get("/v2/IsHoneypot", params=params)).json()
        found = slots.last_of(entry["address"])
        assert found is not None
        await _node(devnet, "evm_mine", [])
        block = int(await _node(devnet, "eth_blockNumber", []), 16)
        monkeypatch.setattr(trade, "explain_sell_failure", spied)
        if last == "moved":
            monkeypatch.setattr(slots, "last_of", lambda token: moved)
        second = (await http.get("/v2/IsHoneypot", params=params)).json()
        monkeypatch.undo()
    expected = [(found, False)] if last == "verifies" else [(moved, False), (found, True)]
    assert [(slot, done) for slot, done, at in traced if at == block] == expected
    assert second["chain"] == first["chain"]
    assert _stable(second) == _stable(first)


FAILED_BUYS = ("paused", "pool-drained-tokens", "swap-cap-guard")
"""Tokens whose default buy fails at every check: no buy goes through, a pool whose
token side was drained (the read of that side says why), and one whose smaller buys
go through."""


async def test_a_failed_buys_side_read_goes_with_the_next_buy(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check whose default buy failed remembers its smaller buys; the next check
    sends them and the pool's token-side read with the buy, not once its own buy failed
    (a round trip later): the same answer."""
    searches = service.honeypot.trading.searches
    asked_by: list[str] = []
    side_short = journey._side_short

    def spied(sim: Any) -> Any:
        asked_by.append(sys._getframe(1).f_code.co_name)  # who asked: the start or the buys
        return side_short(sim)

    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry_id in FAILED_BUYS:
            entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
            params = {"address": entry["address"], "chainID": 31337}
            searches.clear()
            monkeypatch.setattr(journey, "_side_short", spied)
            asked_by.clear()
            first = (await http.get("/v2/IsHoneypot", params=params)).json()
            assert asked_by == ["_smaller_buy"], entry_id  # after the failed buy
            asked_by.clear()
            second = (await http.get("/v2/IsHoneypot", params=params)).json()
            monkeypatch.undo()
            assert asked_by == ["simulate"], entry_id  # with the buy
            assert _stable(second) == _stable(first), entry_id


@pytest.mark.parametrize("before", [frozenset({"0x" + "00" * 19 + "01"}), "with-more"])
async def test_a_trace_calling_other_contracts_reads_their_code(
    service: Service, devnet: Any, before: Any
) -> None:
    """The code read with the trace covers what the last trace called: when this trace
    calls something else it is read again, and extra addresses read are not listed
    (GetContractVerification lists every contract of the trace)."""
    seen = service.verification.trading.traced
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "proxy-verified")
    params = {"address": entry["address"], "chainID": 31337}
    path = "/v2/GetContractVerification"
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        first = (await http.get(path, params=params)).json()
        key = (31337, entry["address"].lower())
        called = seen.value(key)
        assert called  # the proxy's implementation, the pair, the router, WETH
        other = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")["address"]
        extra = {other.lower(), devnet.manifest["addresses"]["OWNER"].lower()}  # code, none
        seen.put(key, before if before != "with-more" else called | extra)
        second = (await http.get(path, params=params)).json()
    assert len(first["contractsOpenSource"]) >= 3
    first.pop("contractCalls"), second.pop("contractCalls")  # from fresh random wallets
    assert second == first


@pytest.mark.parametrize("change", ["balance", "fewer", "snipers"])
async def test_holders_found_anew_are_the_ones_that_sell(
    service: Service, devnet: Any, change: str
) -> None:
    """The holders' sells sent with the reads that find them (the last check's people)
    are used only when those reads find the same people and balances."""
    memo = service.honeypot.trading.crowds
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "sniper-blacklist")
    params = {"address": entry["address"], "chainID": 31337}
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        first = (await http.get("/v2/IsHoneypot", params=params)).json()
        key = (31337, entry["address"].lower(), first["pairAddress"].lower())
        people, held = memo.value(key)
        assert people and first["holderAnalysis"]["holders"]
        stale = {
            "balance": ((people[0][0], people[0][1] // 2), *people[1:]),
            "fewer": people[1:],
            "snipers": people,
        }[change]
        memo.put(key, (stale, held if change != "snipers" else (*held, people[0])))
        second = (await http.get("/v2/IsHoneypot", params=params)).json()
    assert _stable(second) == _stable(first)


@pytest.mark.parametrize(
    "entry_id",
    ["plain", "packed-manager", "multisig-blocklist", "honest-timelock-pause", "two-step-fee"],
)
async def test_a_first_scan_sent_ahead_finds_what_a_step_by_step_scan_finds(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """A first owner-power scan screens its likely senders and runs its amounts round
    with the reads that find the callers (simulate/powers.py: Ahead); a sender those
    reads add (a packed manager, a role member) is screened after them.  The answer is
    the one of a scan that waits for the callers first (both scans' wallets the same)."""
    cache = service.honeypot.powers.cache
    sent: list[bool] = []
    phase: list[bool] = []
    real = powers._ahead

    async def counted(*args: Any) -> Any:
        sent.append(phase[-1])
        return await real(*args)

    monkeypatch.setattr(powers, "_ahead", counted)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    params = {"address": entry["address"], "chainID": 31337}
    answers = []
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for ahead in (False, True):
            phase.append(ahead)
            cache.__post_init__()  # nothing remembered: a first scan
            wallets = iter(range(1, 1_000))  # the same scan wallets both times
            monkeypatch.setattr(story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}")
            monkeypatch.setattr(cache, "scanned", lambda *_, a=ahead: not a)
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
    # only the second scan sent anything ahead (twice when the deployer is a sender the
    # guess before its reply did not name: powers._guessed, _verified)
    assert sent and all(sent) and len(sent) <= 2
    step_by_step, with_ahead = answers
    assert with_ahead["ownerPowers"]["findings"] or entry_id == "plain"
    assert _stable(with_ahead) == _stable(step_by_step)


@pytest.mark.parametrize("entry_id", ["plain", "rfi", "sniper-blacklist"])
async def test_first_sight_holder_sells_planned_from_the_index(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """With nobody remembered, the holders' sells go out with the reads that find them,
    planned from the indexed holders and balances (checks/holder_sells.py: logged_people
    from the index's first logs in memory, else indexed_people from the store); used
    only when the reads find exactly those (a reflection token's balances, a holding
    sniper make them differ).  The answer is the one without the guess."""
    memo = service.honeypot.trading.crowds
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    params = {"address": entry["address"], "chainID": 31337}
    answers = []
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for guess in (False, True):
            memo.clear()
            if not guess:
                monkeypatch.setattr(holder_sells, "indexed_people", _nobody)
                monkeypatch.setattr(holder_sells, "logged_people", lambda *_: ((), ()))
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
            monkeypatch.undo()
    assert answers[0]["holderAnalysis"]["holders"]
    assert _stable(answers[1]) == _stable(answers[0])


@pytest.mark.parametrize("made_wrong", ["logged_people", "_read_people"])
async def test_a_wrong_first_sight_guess_from_the_index_logs_is_not_used(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, made_wrong: str
) -> None:
    """The first-sight guess from the index's first logs (logged_people, or
    _read_people: the same people with the balances read, the plan the logged one is
    corrected to at the reads' reply), made wrong (a stranger in place of the smallest
    holder): its sells go out but are dropped, the miss is counted, and the answer is
    the one without a guess.  Fails when the guess's sells are used unverified (the
    stranger's sell fails, the smallest holder's is not simulated)."""
    trading = service.honeypot.trading
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    params = {"address": entry["address"], "chainID": 31337}
    real = getattr(holder_sells, made_wrong)

    def wrong(*args: Any) -> Any:
        found = real(*args)
        if found is None:  # _read_people: the reads not back
            return None
        people, held = found
        return (*people[:-1], ("0x" + "11" * 20, people[0][1])), held

    answers, seen = [], []
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for guess in (None, wrong):
            trading.crowds.clear()
            trading.simulated.clear()  # the holders' sells run anew
            service.store.reset_token(31337, entry["address"])  # indexed anew: first logs
            monkeypatch.setattr(holder_sells, "indexed_people", _nobody)
            monkeypatch.setattr(holder_sells, "_read_people", lambda *_: None)
            if guess is None or made_wrong == "logged_people":  # else the logged guess
                monkeypatch.setattr(holder_sells, "logged_people", lambda *_: ((), ()))
            if guess is not None:  # ... corrected at the reads' reply, wrongly
                monkeypatch.setattr(holder_sells, made_wrong, guess)
            monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
            answers.append((await http.get("/v2/IsHoneypot", params=params)).json())
            monkeypatch.undo()
    assert int(answers[0]["holderAnalysis"]["holders"]) >= 2
    assert ("holders", False) in seen and ("holders", True) not in seen
    assert _stable(answers[1]) == _stable(answers[0])


async def _nobody(*_: Any) -> tuple[tuple[()], tuple[()]]:
    return (), ()


async def _node(devnet: Any, method: str, params: list[Any]) -> Any:
    return await node_call(devnet.url, method, params)


async def _back_to(devnet: Any, snapshot: str) -> None:
    """The chain as at ``snapshot``, its head then carried back to where it was (a
    service that saw the later head takes a lower one for a node behind)."""
    head = int(await _node(devnet, "eth_blockNumber", []), 16)
    assert await _node(devnet, "evm_revert", [snapshot]) is True
    gone = head - int(await _node(devnet, "eth_blockNumber", []), 16)
    await _node(devnet, "anvil_mine", [hex(gone)])


def _at_the_new_head_only(monkeypatch: pytest.MonkeyPatch, service: Service) -> None:
    """No check planned at the remembered head (checks/speculation.py): after a block
    was mined, one would be started and dropped (whether depends on the time since the
    head was read), and its refresh and holder runs would add to the counts."""
    monkeypatch.setattr(service.honeypot.trading, "ahead", 0.0)


def _hold_the_refresh(monkeypatch: pytest.MonkeyPatch, token: str) -> tuple[list[bool], list[int]]:
    """The token's index refresh waits (boundedly) for a holder sell to start; returns
    ``(started_first, checks)``: per refresh, whether one had, and per check, the
    holder analyses run (two: one sent ahead and dropped, then one on the fresh index)."""
    started, first, runs = asyncio.Event(), [], []
    real_refresh, real_sell, real_run = (
        honeypot.refresh_index,
        holder_sells.sell_all,
        holder_sells._holder_sells,
    )

    async def refresh(index: Any, node: Any, address: str) -> None:
        if address.lower() == token.lower():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(started.wait(), 10)
            first.append(started.is_set())
        await real_refresh(index, node, address)

    def sell(*args: Any) -> Any:
        started.set()
        return real_sell(*args)

    def run(*args: Any) -> Any:
        runs.append(1)
        return real_run(*args)

    monkeypatch.setattr(honeypot, "refresh_index", refresh)
    monkeypatch.setattr(holder_sells, "sell_all", sell)
    monkeypatch.setattr(holder_sells, "_holder_sells", run)
    return first, runs


async def test_a_quiet_token_sells_before_the_index_reaches_a_new_head(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#27: at a new head, a token whose last refresh found no transfer of it has its
    holders' sells sent before the refresh ends (checks/holder_sells.py: holder_sells),
    used when the refresh leaves its index unchanged: the answer is the one at the
    last head.  Fails with the speculation removed (the refresh waits in vain)."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    params = {"address": entry["address"], "chainID": 31337}
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    try:  # an empty block: nothing for the next tests to undo
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
            before = [(await http.get("/v2/IsHoneypot", params=params)).json() for _ in "ab"]
            await _node(devnet, "evm_mine", [])
            first, runs = _hold_the_refresh(monkeypatch, entry["address"])
            _at_the_new_head_only(monkeypatch, service)
            after = (await http.get("/v2/IsHoneypot", params=params)).json()
    finally:
        monkeypatch.undo()
    assert before[1]["holderAnalysis"]["holders"]
    assert first == [True] and runs == [1]
    assert _stable(after) == _stable(before[1])


async def test_a_sell_sent_before_a_changed_index_is_dropped(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quiet token that moves in the new block: the sells sent ahead of the refresh
    are dropped (the index's content changed) and the analysis runs on the fresh index;
    the answer is a check's with nothing remembered, and the token is no longer quiet."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    token = entry["address"]
    params = {"address": token, "chainID": 31337}
    trading = service.honeypot.trading
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    snapshot = await _node(devnet, "evm_snapshot", [])
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
            for _ in "ab":
                first_answer = (await http.get("/v2/IsHoneypot", params=params)).json()
            key = (31337, token.lower(), first_answer["pairAddress"].lower())
            holder = trading.crowds.value(key)[0][0][0]
            await _node(devnet, "anvil_impersonateAccount", [holder])
            await _node(devnet, "anvil_setBalance", [holder, hex(10**18)])
            data = "0xa9059cbb" + "7e57".rjust(64, "0") + hex(10**6)[2:].rjust(64, "0")
            sent = await _node(
                devnet, "eth_sendTransaction", [{"from": holder, "to": token, "data": data}]
            )
            for _ in range(100):  # anvil answers before it has mined the block
                if await _node(devnet, "eth_getTransactionReceipt", [sent]):
                    break
                await asyncio.sleep(0.05)
            first, runs = _hold_the_refresh(monkeypatch, token)
            _at_the_new_head_only(monkeypatch, service)
            moved = (await http.get("/v2/IsHoneypot", params=params)).json()
            monkeypatch.undo()
            assert trading.quiet.value((31337, token.lower()))[1] is False
            trading.crowds.clear()
            trading.quiet.clear()
            fresh = (await http.get("/v2/IsHoneypot", params=params)).json()
    finally:
        monkeypatch.undo()
        await _back_to(devnet, snapshot)
    assert first == [True] and runs == [1, 1]
    assert _stable(moved) == _stable(fresh)


async def test_a_new_heads_scan_sends_its_caller_reads_with_the_facts(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#27: at a new head the owner-power scan's facts are read again; the reads that
    find its callers (which grants still hold, the callers' code) go out with them,
    planned from the last scan's facts (simulate/powers.py: _caller_reads), and the
    answer is the one at the last head.  Fails with the sending ahead removed."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "role-freeze-renounced")
    params = {"address": entry["address"], "chainID": 31337}
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    order: list[str] = []
    real_grants, real_reads = owners.role_grants, powers._caller_reads

    async def grants(*args: Any) -> Any:
        found = await real_grants(*args)
        order.append("grants")
        return found

    def reads(*args: Any) -> Any:
        order.append("ahead")
        return real_reads(*args)

    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        before = (await http.get("/v2/IsHoneypot", params=params)).json()
        await _node(devnet, "evm_mine", [])
        monkeypatch.setattr(owners, "role_grants", grants)
        monkeypatch.setattr(powers, "_caller_reads", reads)
        after = (await http.get("/v2/IsHoneypot", params=params)).json()
    assert before["ownerPowers"]["findings"]
    assert order[:2] == ["ahead", "grants"]
    assert _stable(after) == _stable(before)


@pytest.mark.parametrize("entry_id", ["multisig-blocklist", "honest-timelock-pause"])
async def test_a_new_heads_scan_reads_its_callers_controls_with_the_facts(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch, entry_id: str
) -> None:
    """#27: at a new head the reads planned from the last scan's facts carry the likely
    senders' control getters too (a multisig's owners and threshold, a timelock's
    delay), as a first scan's do: the callers' kinds need no read of their own a round
    trip later, and the answer is the one at the last head.  Fails with the control
    reads left out of ``_caller_reads``."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    params = {"address": entry["address"], "chainID": 31337}
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    read_by: list[str] = []
    real = owners.control_reads

    def controls(rpc: Any, addresses: Any, block: str) -> Any:
        if addresses:  # who asks: the reads sent with the facts, or the callers' kinds
            read_by.append(sys._getframe(1).f_code.co_name)
        return real(rpc, addresses, block)

    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        before = (await http.get("/v2/IsHoneypot", params=params)).json()
        await _node(devnet, "evm_mine", [])
        monkeypatch.setattr(owners, "control_reads", controls)
        after = (await http.get("/v2/IsHoneypot", params=params)).json()
        monkeypatch.undo()
    kinds = {c["kind"] for c in before["ownerPowers"]["callers"]}
    assert kinds & {"multisig", "timelock"}, kinds  # a contract caller whose kind is read
    assert read_by == ["_caller_reads"]
    assert _stable(after) == _stable(before)


async def test_caller_reads_planned_from_other_facts_are_dropped(
    service: Service, devnet: Any
) -> None:
    """The scan's remembered inputs without the token's role grant: the reads sent
    ahead miss the role holder, so they are dropped (this head's grants differ) and the
    answer finds the holder as before.  Fails with the comparison removed."""
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "role-freeze-renounced")
    params = {"address": entry["address"], "chainID": 31337}
    cache = service.honeypot.powers.cache
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
        before = (await http.get("/v2/IsHoneypot", params=params)).json()
        key = (31337, entry["address"].lower())
        facts, deployer, granted = cache.inputs.value(key)
        assert granted
        cache.inputs.put(key, (facts, deployer, ()))
        await _node(devnet, "evm_mine", [])
        after = (await http.get("/v2/IsHoneypot", params=params)).json()
    assert before["ownerPowers"]["findings"]
    assert _stable(after) == _stable(before)

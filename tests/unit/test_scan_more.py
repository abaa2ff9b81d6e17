"""The scan's trials sent before they are known to be needed (#27): a number setter's
later argument sets paired when the cap leaves room (trials.likely_pairs), and the
trials of a sender only the callers' reads found, sent beside its screen with only the
calls that screen could choose (powers._more_senders)."""

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.simulate import owners, powers
from tokenrisk.simulate.hostile import Targets
from tokenrisk.simulate.trials import PAIRS_AHEAD, Function, ScanBounds, Trial, likely_pairs

OWNER, OTHER = "0x" + "0a" * 20, "0x" + "0b" * 20
TARGETS = Targets(buyer="0x" + "11" * 20, pair="0x" + "22" * 20, supply=10**27)
FEE = Function("0x11111111", ("uint256",), False)
HANDOVER = Function("0x33333333", ("address",), False)
COMMIT = Function("0x22222222", (), False)
NO_SIM: Any = None  # the simulator and facts are only handed on (to _tried_more, faked)
NO_FACTS: Any = SimpleNamespace(code="0x", impl_code=None)


def _trial(function: Function, value: Any) -> Trial:
    data = function.selector + (f"{value:064x}" if isinstance(value, int) else value)
    return Trial(function, OWNER, (value,), data)


def test_a_number_setters_later_sets_are_paired_after_every_first_one() -> None:
    fees = [_trial(FEE, v) for v in (99, 0, 10_000, 9_900, 25, 100, 1_000)]
    owners = [_trial(HANDOVER, f"{i:064x}") for i in range(1, 8)]
    pairs = likely_pairs([*fees, *owners, Trial(COMMIT, OWNER, (), COMMIT.selector)])
    firsts = [(p.prior.function, p.prior.args[0]) for p in pairs if p.prior]
    # every setter's first four sets first, setter by setter as the pairing takes them, then
    # the fee setter's fifth and sixth (a hostile fee changed something): not the
    # address setter's (handing the owner over changes nothing a buyer sees)
    assert [f for f, _ in firsts[:8]] == [FEE] * 4 + [HANDOVER] * 4
    assert [v for f, v in firsts[:8] if f is FEE] == [99, 0, 10_000, 9_900]
    assert firsts[8:] == [(FEE, 25), (FEE, 100)]
    assert all(p.function is COMMIT for p in pairs)


def test_later_sets_never_push_a_first_set_past_the_cap() -> None:
    setters = [Function(f"0x{i:08x}", ("uint256",), False) for i in range(1, 12)]
    candidates = [_trial(f, v) for f in setters for v in (99, 0, 10_000, 9_900, 25, 100)]
    pairs = likely_pairs([*candidates, Trial(COMMIT, OWNER, (), COMMIT.selector)])
    assert len(pairs) == PAIRS_AHEAD
    assert {p.prior.args[0] for p in pairs if p.prior} == {99, 0, 10_000, 9_900}


def test_the_trials_ahead_are_the_leading_senders_within_the_bound() -> None:
    bounds = ScanBounds(max_arg_sets=3, max_trials=8)
    candidates = powers.candidates_of([FEE, HANDOVER], [OWNER, OTHER], TARGETS, bounds)
    lead, leading = powers._leading(candidates, [OWNER, OTHER], bounds)
    assert lead == [OWNER] and leading == [t for t in candidates if t.caller == OWNER]
    wide = ScanBounds(max_arg_sets=3)
    assert powers._leading(candidates, [OWNER, OTHER], wide) == ([OWNER, OTHER], candidates)
    none = ScanBounds(max_arg_sets=3, max_trials=5)
    assert powers._leading(candidates, [OWNER, OTHER], none) == ([], [])


def _ahead(screened: dict[tuple[str, str], bool], ran: tuple[str, ...]) -> powers.Ahead:
    loop = asyncio.get_running_loop()
    story: Any = "story"
    tried: asyncio.Future[Any] = loop.create_future()
    futures = (loop.create_future(), loop.create_future())
    return powers.Ahead(screened, *futures, (story, tried), senders=ran, callers=ran)


def _sent(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    sent: list[Any] = []

    async def tried_more(*args: Any, **kwargs: Any) -> Any:
        sent.append((args[-1], kwargs))
        return powers.Tried(args[3], [], {}, ([], ()))

    monkeypatch.setattr(powers, "functions_of", lambda *_: ([FEE, HANDOVER], False))
    monkeypatch.setattr(powers, "_tried_more", tried_more)
    return sent


async def test_a_sender_the_reads_add_gets_the_calls_its_screen_could_choose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = _sent(monkeypatch)
    bounds = ScanBounds(max_arg_sets=3)
    first = powers.candidates_of([FEE, HANDOVER], [OWNER], TARGETS, bounds)
    # the batch's sender got its fees through (the same calldata from OTHER can never
    # be chosen: the first caller wins) but no handover
    screened = {(OWNER, t.data): t.function is FEE for t in first}
    ahead = _ahead(screened, (OWNER,))
    more = powers._more_senders(NO_SIM, NO_FACTS, ahead, [OWNER, OTHER], (TARGETS, bounds))
    await asyncio.sleep(0)
    assert more is not ahead and more.senders == (OWNER, OTHER)
    (((before, every), kwargs),) = sent
    assert before == (first, [OWNER]) and kwargs == {"paired": False}
    wanted = [t for t in every[0] if t.caller == OTHER]
    assert wanted and all(t.function is HANDOVER for t in wanted)
    assert every[1] == [OWNER, OTHER]
    assert more.tried is not None
    more.tried[1].cancel()  # the merge: stops both batches


async def test_nothing_more_is_sent_when_no_sender_is_new_or_past_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = _sent(monkeypatch)
    bounds = ScanBounds(max_arg_sets=3)
    ahead = _ahead({}, (OWNER,))
    more = powers._more_senders
    assert more(NO_SIM, NO_FACTS, ahead, [OWNER], (TARGETS, bounds)) is ahead
    tight = ScanBounds(max_arg_sets=3, max_trials=2)  # OTHER's six candidates: past it
    assert more(NO_SIM, NO_FACTS, ahead, [OWNER, OTHER], (TARGETS, tight)) is ahead
    others = powers.candidates_of([FEE, HANDOVER], [OTHER], TARGETS, bounds)
    known = _ahead({(OTHER, t.data): False for t in others}, (OWNER,))  # none gets through
    assert more(NO_SIM, NO_FACTS, known, [OWNER, OTHER], (TARGETS, bounds)) is known
    await asyncio.sleep(0)
    assert sent == []


class _Rpc:
    """Records each batch (a list of methods) and answers every call with code; an empty
    batch sends nothing, as the node clients' do."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []

    async def batch(self, calls: Any) -> list[str]:
        if calls:
            self.sent.append([method for method, _ in calls])
        return ["0x6080"] * len(calls)


async def test_the_deployers_own_reads_are_only_what_the_earlier_reads_missed() -> None:
    rpc: Any = _Rpc()
    assert await owners.deployer_reads(rpc, OWNER, "0x1", ({OWNER}, False)) == ({}, {})
    assert rpc.sent == []  # a getter's address: its code head was read with the guess
    heads, controls = await owners.deployer_reads(rpc, OTHER, "0x1", ({OWNER}, True))
    assert heads == {OTHER: "0x6080"} and list(controls) == [OTHER]
    assert sorted(map(len, rpc.sent)) == [1, len(owners.CONTROL_GETTERS)]
    assert await owners.deployer_reads(rpc, None, "0x1", (set(), True)) == ({}, {})

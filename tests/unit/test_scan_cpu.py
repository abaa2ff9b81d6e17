"""The owner-power scan's CPU savings keep its answers (issue #27): a trial's key, the
candidates kept per function and caller, no trial plan built for no trial, and the
classification reading a trial's tax only where the baseline has one."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from test_powers import BASE, TARGETS, failed, story

from tokenrisk.simulate import effects, powers
from tokenrisk.simulate.effects import classify
from tokenrisk.simulate.simulator import Outcome
from tokenrisk.simulate.trials import Function, ScanBounds, Trial, _trials_of, candidates_of

SETTER = Function("0x12345678", ("uint256",), proxy_own=False)
SWITCH = Function("0x9abcdef0", (), proxy_own=False)
OWNER = "0x" + "Ab" * 20


def test_a_trials_key_is_its_lower_case_sender_calldata_and_target() -> None:
    setter = Trial(SETTER, OWNER, (99,), "0x12345678" + "00" * 32)
    paired = Trial(SWITCH, OWNER, (), "0x9abcdef0", prior=setter, target="0x" + "44" * 20)
    assert setter.key == (OWNER.lower(), (setter.data,), None)
    assert paired.key == (OWNER.lower(), (setter.data, "0x9abcdef0"), "0x" + "44" * 20)
    assert paired.key is paired.key  # kept


def test_candidates_asked_again_are_the_same_calls_built_once() -> None:
    _trials_of.cache_clear()
    bounds, callers = ScanBounds(), [OWNER, "0x" + "cd" * 20]
    first = candidates_of([SETTER, SWITCH], callers, TARGETS, bounds)
    again = candidates_of([SWITCH], callers[1:], TARGETS, bounds)
    assert [t.caller for t in first[-2:]] == callers  # the switch: one call per caller
    assert again == first[-1:] and again[0] is first[-1]
    _trials_of.cache_clear()
    assert candidates_of([SETTER, SWITCH], callers, TARGETS, bounds) == first


def test_no_trial_plans_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: Any) -> list[Any]:
        raise AssertionError("a baseline plan built for no trial")

    monkeypatch.setattr(powers, "story_plans", never)
    assert powers._trial_plans(SimpleNamespace(), TARGETS, SimpleNamespace(), []) == []  # type: ignore[arg-type]


class _Counting(Outcome):
    """An outcome that records which marks were read."""

    def __init__(self, base: Outcome) -> None:
        super().__init__(base.results)
        object.__setattr__(self, "read", [])

    def get(self, mark: str) -> Any:
        self.read.append(mark)  # type: ignore[attr-defined]
        return super().get(mark)


def test_a_tax_the_baseline_lacks_is_not_read_of_the_trial() -> None:
    base = story(**{"c.quote": failed()})  # no buy tax in the baseline
    trial = _Counting(story(buy_tax=60.0))
    assert classify(base, trial) == []
    assert "c.quote" not in trial.read  # type: ignore[attr-defined]
    assert [e.kind for e in classify(BASE, story(buy_tax=60.0))] == ["owner_can_set_buy_tax"]


def test_marks_read_once_keep_a_none_and_a_reason() -> None:
    marks = effects._Marks(_Counting(story(**{"a.sell": failed("no")})))
    assert marks.uint("missing") is None and marks.uint("missing") is None
    assert marks.uint("a.sell") is None and marks.reason("a.sell") == "no"
    assert marks.state("a.sell") == "no" and marks.reason("a.sell") == "no"
    assert marks.outcome.read.count("missing") == 1  # type: ignore[attr-defined]
    assert marks.outcome.read.count("a.sell") == 3  # type: ignore[attr-defined]

"""The scan's per-trial classification kept for the scan (effects.Classifier): each
trial is classified once, with classify's own answer (#27)."""

from test_powers import BASE, failed, story

from tokenrisk.simulate import effects
from tokenrisk.simulate.effects import Classifier, classify


def test_each_trial_is_classified_once_with_classifys_answer(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    trials = [story(), story(**{"a.sell": failed()}), story(sell_tax=40.0)]
    expected = [classify(BASE, t) for t in trials]
    calls: list[object] = []
    real = effects._classified  # what classify runs, on a baseline read once

    def counting(known, trial, armed):  # type: ignore[no-untyped-def]
        calls.append(trial)
        return real(known, trial, armed)

    monkeypatch.setattr(effects, "_classified", counting)
    seen = Classifier(BASE)
    assert [seen(t) for t in trials] == expected
    assert [seen(t) for t in trials] == expected  # asked again: kept
    assert calls == trials
    assert expected[1] and expected[2]  # the trials found something to keep


def test_a_kept_answer_is_a_copy() -> None:
    seen, trial = Classifier(BASE), story(**{"a.sell": failed()})
    seen(trial).clear()
    assert seen(trial) == classify(BASE, trial)

"""The scan's per-trial classification kept for the scan (effects.Classifier): each
trial is classified once, with classify's own answer, and the scan's trial batches
classified run by run as they come back (powers._run_classified) (#27)."""

import asyncio
from types import SimpleNamespace

import pytest
from test_powers import BASE, failed, story

from tokenrisk.errors import RpcError
from tokenrisk.simulate import effects, powers
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


def _runs_of(n: int) -> list[asyncio.Future[list[object]]]:
    return [asyncio.get_running_loop().create_future() for _ in range(n)]


def test_runs_are_classified_as_each_comes_back_and_kept_in_order() -> None:
    trials = [story(), story(**{"a.sell": failed()}), story(sell_tax=40.0)]
    route = SimpleNamespace(v3=False, v4=False)
    sim, held = SimpleNamespace(route=route), SimpleNamespace(held=None)

    async def main() -> tuple[object, object, list[bool]]:
        runs = _runs_of(2)
        task = asyncio.ensure_future(powers._run_classified(sim, runs, held))  # type: ignore[arg-type]
        runs[1].set_result(trials[1:])  # the later run back first: waits for the baseline's
        await asyncio.sleep(0)
        runs[0].set_result([BASE, trials[0]])
        outcomes, seen = await task
        assert seen is not None
        known = [id(t) in seen._seen for t in trials]
        return outcomes, seen, known

    outcomes, seen, known = asyncio.run(main())
    assert outcomes == [BASE, *trials]
    assert known == [True, True, True]  # classified before _try_all asks
    assert [seen(t) for t in trials] == [classify(BASE, t) for t in trials]  # type: ignore[operator]


def test_a_runs_error_stops_the_others_and_is_raised() -> None:
    sim, held = (
        SimpleNamespace(route=SimpleNamespace(v3=False, v4=False)),
        SimpleNamespace(held=None),
    )

    async def main() -> bool:
        runs = _runs_of(2)
        task = asyncio.ensure_future(powers._run_classified(sim, runs, held))  # type: ignore[arg-type]
        runs[0].set_exception(RpcError("node down"))
        with pytest.raises(RpcError):
            await task
        return runs[1].cancelled()

    assert asyncio.run(main())

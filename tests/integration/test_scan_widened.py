"""A first scan whose deployer's reply adds a sender to the guessed ones (powers._widened,
#27): the guess's screen and trials are kept, the added sender's sent on its own, and
the answer is a step-by-step check's.  Real anvil; the deployer's reply is held back a
little so the guess is back before it, as on a node far away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_journey_ahead import _stable
from test_journey_first_sight import _address, _first_scans, service  # noqa: F401 (fixture)

from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import Service
from tokenrisk.simulate import owners, powers

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("entry_id", ["role-freeze-renounced", "honest-renounced"])
async def test_a_guess_the_deployer_adds_a_sender_to_is_widened(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
    monkeypatch: pytest.MonkeyPatch,
    entry_id: str,
) -> None:
    """The deployer is no getter's address here, so it adds a sender to the guess: the
    guess is widened (not dropped), the merged batch ran every trial the scan tries
    (used: ``scan_trials`` True) and the answer equals a step-by-step one.  Fails when
    the added sender's trials are not sent (the batch is then sent again: not used)."""
    real_deployer, real_widened = owners.deployer, powers._widened
    widened: list[bool] = []

    async def late(*args: Any, **kwargs: Any) -> Any:
        found = await real_deployer(*args, **kwargs)
        await asyncio.sleep(0.2)  # the guess (facts and grants) is back first
        return found

    async def spied(*args: Any) -> Any:
        widened.append(True)
        return await real_widened(*args)

    def patch(ahead: bool) -> None:
        monkeypatch.setattr(owners, "deployer", late)
        # the guess never names the deployer (its lookup asked beside the head may be
        # back by then: test_scan_curve.py), as when that lookup is late too
        monkeypatch.setattr(owners, "deployer_known", lambda *_: (False, None))
        if ahead:
            monkeypatch.setattr(powers, "_widened", spied)
        else:
            monkeypatch.setattr(powers, "trials_ahead", lambda *_: False)

    answers, seen = await _first_scans(service, monkeypatch, _address(devnet, entry_id), patch)
    assert widened == [True]
    assert ("scan_trials", True) in seen and ("scan_trials", False) not in seen
    assert answers[0]["ownerPowers"]["scanned"]
    assert _stable(answers[1]) == _stable(answers[0])

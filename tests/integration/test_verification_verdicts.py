"""GetContractVerification's journey for its verdicts alone, against the whole journey,
on every devnet token (checks/verification.py, ``verdicts_only`` in simulate/journey.py).

GetContractVerification reads only whether the simulated buy and sell went through and
why not (``checks.verification.untraceable``).  Its journey leaves out what sizes the
limits or finds later failures: larger buys, the large-sell search, the same-block,
delayed and half-balance sells.  Here each check's prepared pool runs both journeys, the
whole one first, and the verdicts must be the same while the trimmed one sends fewer
simulations.  What differs between two runs of one journey is left out of the
comparison: the gas a text quotes (every run's wallets are fresh random addresses,
whose zero bytes cost less calldata gas).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.checks import trade, verification
from tokenrisk.config import Settings
from tokenrisk.model import SimulationReport
from tokenrisk.service import Service, connect_devnet
from tokenrisk.simulate.simulator import Plan, Simulator

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def service(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    settings = Settings(
        devnet=False, data_dir=tmp_path_factory.mktemp("verdicts"), deadline=60.0, cache_ttl=0
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    yield svc
    await svc.close()


def _verdicts(report: SimulationReport) -> tuple[Any, ...]:
    """What GetContractVerification reads of a journey's report."""
    reason = report.failure_reason
    if reason is not None and "gas" in reason.lower():
        reason = re.sub(r"\d[\d,]*", "N", reason)
    fields = (report.success, report.error, report.buy_ok, report.sell_ok, report.failure_step)
    return (*fields, reason, verification.untraceable(report) is None)


async def test_the_verdicts_alone_are_the_whole_journeys(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    plans: dict[str, int] = {"whole": 0, "verdicts": 0}
    counting: list[str] = []
    run = Simulator.run

    async def counted(self: Simulator, batch: Sequence[Plan]) -> Any:
        if counting:
            plans[counting[-1]] += len(batch)
        return await run(self, batch)

    seen: list[tuple[str, tuple[Any, ...], tuple[Any, ...], int, int]] = []
    journey = trade.run_journey

    async def both(ready: Any, simulations: Any, verdicts_only: bool = False) -> SimulationReport:
        assert verdicts_only  # GetContractVerification asks for the verdicts alone
        before = dict(plans)
        reports: dict[str, SimulationReport] = {}
        # each kind first for half the tokens (the module's docstring)
        order = ["whole", "verdicts"] if len(seen) % 2 == 0 else ["verdicts", "whole"]
        for kind in order:
            counting.append(kind)
            try:
                reports[kind] = await journey(ready, simulations, kind == "verdicts")
            finally:
                counting.pop()
        whole, trimmed = reports["whole"], reports["verdicts"]
        sold = whole.success and whole.buy_ok and whole.sell_ok
        spent = (plans["whole"] - before["whole"], plans["verdicts"] - before["verdicts"])
        seen.append((ready.route.token, _verdicts(whole), _verdicts(trimmed), *spent))
        assert not sold or spent[1] < spent[0], (ready.route.token, spent)
        return trimmed

    monkeypatch.setattr(Simulator, "run", counted)
    monkeypatch.setattr(verification, "run_journey", both)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    answered = 0
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry in devnet.manifest["tokens"]:
            params = {"address": entry["address"], "chainID": 31337}
            reply = await http.get("/v2/GetContractVerification", params=params)
            assert reply.status_code in (200, 404), (entry["id"], reply.text)
            answered += reply.status_code == 200
    assert len(seen) >= answered // 2  # most answers ran a journey (the others had no pool)
    differ = [(token, whole, trimmed) for token, whole, trimmed, _, _ in seen if whole != trimmed]
    assert not differ
    # sold and refused sells both appear, so both halves of the verdict were compared
    assert {whole[3] for _, whole, _, _, _ in seen} == {True, False}
    whole_plans = sum(s[3] for s in seen)
    trimmed_plans = sum(s[4] for s in seen)
    assert trimmed_plans * 3 < whole_plans * 2, (trimmed_plans, whole_plans)

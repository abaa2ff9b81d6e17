"""Each GetContractVerification's journey run twice, whole and for its verdicts alone,
on the same prepared pool (``verdicts_only`` in simulate/journey.py): one definition
for the nodes the comparison runs on (anvil's catalogue, Hardhat's emulated journeys).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from tokenrisk.checks import trade, verification
from tokenrisk.model import SimulationReport
from tokenrisk.simulate.simulator import Plan, Simulator


def verdicts(report: SimulationReport) -> tuple[Any, ...]:
    """What GetContractVerification reads of a journey's report; the gas a reason quotes
    left out (each run's wallets are fresh random addresses, whose zero bytes cost less
    calldata gas)."""
    reason = report.failure_reason
    if reason is not None and "gas" in reason.lower():
        reason = re.sub(r"\d[\d,]*", "N", reason)
    fields = (report.success, report.error, report.buy_ok, report.sell_ok, report.failure_step)
    return (*fields, reason, verification.untraceable(report) is None)


@dataclass(frozen=True)
class Compared:
    """One check's two journeys: the token, both verdicts, the plans each sent."""

    token: str
    whole: tuple[Any, ...]
    trimmed: tuple[Any, ...]
    whole_plans: int
    trimmed_plans: int


@dataclass
class BothJourneys:
    """Installed by :meth:`install`: GetContractVerification's journey runs whole, then
    for its verdicts alone, or the other way round for every second check (the second
    journey of a token finds the first one's amounts remembered and sends its transfer
    and sells with the buy, simulate/ahead.py, so both kinds run step by step and sent
    ahead); the trimmed report is the answer's."""

    seen: list[Compared] = field(default_factory=list)
    _plans: dict[str, int] = field(default_factory=lambda: {"whole": 0, "verdicts": 0})
    _counting: list[str] = field(default_factory=list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> BothJourneys:
        run, journey = Simulator.run, trade.run_journey
        plans, counting = self._plans, self._counting

        async def counted(sim: Simulator, batch: Sequence[Plan]) -> Any:
            if counting:
                plans[counting[-1]] += len(batch)
            return await run(sim, batch)

        async def both(
            ready: Any, simulations: Any, verdicts_only: bool = False
        ) -> SimulationReport:
            assert verdicts_only  # GetContractVerification asks for the verdicts alone
            before = dict(plans)
            reports: dict[str, SimulationReport] = {}
            order = ["whole", "verdicts"] if len(self.seen) % 2 == 0 else ["verdicts", "whole"]
            for kind in order:
                counting.append(kind)
                try:
                    reports[kind] = await journey(ready, simulations, kind == "verdicts")
                finally:
                    counting.pop()
            whole, trimmed = reports["whole"], reports["verdicts"]
            spent = [plans[k] - before[k] for k in ("whole", "verdicts")]
            self.seen.append(
                Compared(ready.route.token, verdicts(whole), verdicts(trimmed), *spent)
            )
            return trimmed

        monkeypatch.setattr(Simulator, "run", counted)
        monkeypatch.setattr(verification, "run_journey", both)
        return self

    def differ(self) -> list[Compared]:
        return [c for c in self.seen if c.whole != c.trimmed]

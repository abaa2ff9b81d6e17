"""model.evolve: dataclasses.replace's object, for the classes the hot path rebuilds."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from tokenrisk.findings import OwnerPowers
from tokenrisk.model import HolderStats, Pool, SimulationReport, TokenInfo, evolve
from tokenrisk.simulate.trials import ScanBounds

POOL = Pool(
    "0x" + "b" * 40,
    "Uniswap",
    "V2",
    "0x" + "1" * 40,
    "0x" + "2" * 40,
    "0x" + "2" * 40,
    "0x" + "3" * 40,
    10,
    20,
    1.5,
)


@pytest.mark.parametrize(
    ("value", "changes"),
    [
        (SimulationReport(True, buy_tax=1.5, notes=("a",)), {"sell_ok": False, "notes": ("b",)}),
        (TokenInfo("0x" + "1" * 40, "T", "T", 18, 10**24), {"total_holders": 7}),
        (POOL, {"created_at_timestamp": 5, "creation_tx_hash": "0x" + "ab" * 32}),
        (ScanBounds(), {"otterscan": True, "state_floor": 12}),
        (OwnerPowers(scanned=True), {"cached": True}),
        (
            HolderStats(10, 9, 1, 0, 2.5, 1e5, 9.0, 1),
            {"sold_at_pool_limit": 2, "pool_limit_wei": 5},
        ),
    ],
)
def test_evolve_gives_what_replace_gives(value: Any, changes: dict[str, Any]) -> None:
    evolved = evolve(value, **changes)
    assert evolved == replace(value, **changes) and type(evolved) is type(value)
    assert evolved is not value and value == evolve(value)  # the original is untouched
    assert hash(evolve(value)) == hash(value)
    for name, changed in changes.items():
        assert getattr(evolved, name) == changed


@dataclass(frozen=True)
class _Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")


@dataclass(frozen=True)
class _Derived:
    value: int
    twice: int = field(init=False, default=0)


def test_evolve_refuses_what_it_cannot_copy_as_replace_builds() -> None:
    with pytest.raises(TypeError):
        evolve(_Checked(1), value=-1)  # replace would run __post_init__
    with pytest.raises(TypeError):
        evolve(_Derived(1), value=2)  # replace would reset ``twice``
    with pytest.raises(TypeError):
        evolve(SimulationReport(True), no_such_field=1)
    with pytest.raises(TypeError):
        evolve(object())

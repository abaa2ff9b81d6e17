"""Every note the engine writes reaches the response's ``taxDetails.explanation``.

Before, a journey's notes were shown only when the simulation could buy: the probe
fallback's note (and any other) was dropped when the buy failed, and the owner-power
scan's notes were never rendered.  The reports here come from the engine's own code
where it is pure (the probe's decoder), so a note added there is covered too.
"""

from __future__ import annotations

from dataclasses import replace

from test_wire import FAILED_SIMULATION, HONEST, render

from tokenrisk.api import wire
from tokenrisk.findings import OwnerPowers
from tokenrisk.model import SimulationReport
from tokenrisk.simulate.probe import _probe_report


def explanation(body: dict[str, object]) -> list[str]:
    details = body.get("taxDetails")
    assert isinstance(details, dict), "taxDetails is absent"
    found = details["explanation"]
    assert isinstance(found, list)
    return found


def test_the_probe_fallback_note_survives_a_failed_buy() -> None:
    report = _probe_report([0, 0, 0, 90_000, 0, 0, 0, 0, 0], "execution reverted: no", None)
    assert not report.buy_ok and report.notes  # the engine wrote a note
    body = render(replace(FAILED_SIMULATION, simulation=report))
    assert body["simulationSuccess"] is False and "simulationResult" not in body
    assert explanation(body) == list(report.notes)


def test_a_bought_journeys_notes_are_all_listed_once_in_order() -> None:
    notes = ("Sell tax is 2.3% of the quote but 4.0% in token units", "a second sell fails")
    assert HONEST.simulation is not None
    sim = replace(HONEST.simulation, notes=(*notes, notes[0]))
    assert explanation(render(replace(HONEST, simulation=sim))) == list(notes)


def test_owner_power_notes_follow_the_journeys() -> None:
    assert HONEST.simulation is not None
    sim = replace(HONEST.simulation, notes=("journey note",))
    powers = OwnerPowers(scanned=True, notes=("scan note", "journey note"))
    body = render(replace(HONEST, simulation=sim, owner_powers=powers))
    assert explanation(body) == ["journey note", "scan note"]


def test_no_note_and_nothing_measured_means_no_tax_details() -> None:
    assert "taxDetails" not in render(FAILED_SIMULATION)
    empty = replace(FAILED_SIMULATION, simulation=SimulationReport(success=False, notes=()))
    assert wire.engine_notes(empty) == []

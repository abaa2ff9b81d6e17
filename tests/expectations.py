"""A catalogue entry's expectations held against an IsHoneypot answer: one definition
for every node the catalogue runs on (anvil, the strict profiles, Hardhat's node).

The catalogue is only the expectation here; the service never sees it.
"""

from __future__ import annotations

from typing import Any

TAX_TOLERANCE = 0.5  # percentage points around the catalogue's [min, max] range


def within(value: float | None, bounds: list[float] | None, name: str) -> None:
    if bounds is None:
        return
    assert value is not None, f"{name} missing"
    low, high = bounds
    assert low - TAX_TOLERANCE <= value <= high + TAX_TOLERANCE, f"{name}={value} not in {bounds}"


def assert_details(body: dict[str, Any], expected: dict[str, Any]) -> None:
    """Everything an answer must show beyond ``isHoneypot`` (which callers assert
    themselves): risk, flags, taxes and limits of a sellable token, holder failures and
    siphons."""
    summary = body["summary"]
    assert summary["risk"] in expected["risk"], (summary, body.get("honeypotResult"))
    flag_ids = {f["flag"] for f in summary.get("flags", [])}
    assert set(expected.get("flags", [])) <= flag_ids, (flag_ids, body.get("simulationResult"))
    if body["simulationSuccess"] and not expected["isHoneypot"]:
        sim = body["simulationResult"]
        within(sim.get("buyTax"), expected.get("buyTax"), "buyTax")
        within(sim.get("sellTax"), expected.get("sellTax"), "sellTax")
        within(sim.get("transferTax"), expected.get("transferTax"), "transferTax")
        assert ("maxBuy" in sim) is bool(expected.get("maxBuy")), sim
        assert ("maxSell" in sim) is bool(expected.get("maxSell")), sim
    if expected.get("holderFailures"):
        assert int(body["holderAnalysis"]["failed"]) > 0, body.get("holderAnalysis")
    if expected.get("siphoned"):
        assert int(body["holderAnalysis"]["siphoned"]) > 0, body.get("holderAnalysis")

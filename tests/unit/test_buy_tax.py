"""The flat buy tax the owner-power scan learns from the journey's buy
(``story.flat_tax``): a prediction's input, so it must reproduce the buy exactly."""

from __future__ import annotations

from tokenrisk.simulate.story import flat_tax


def test_a_flat_rate_reproduces_the_buy() -> None:
    sent = 123_456_789_012_345_678
    for bps in (1, 300, 500, 2_500, 9_999):
        assert flat_tax(sent, sent - sent * bps // 10_000) == bps


def test_a_buy_no_flat_rate_gives_is_not_predicted() -> None:
    """Fails when the rate is taken from the buy without checking it reproduces it."""
    sent = 1_000_000
    assert flat_tax(sent, 969_999) is None  # 3% and one token more taken
    assert flat_tax(sent, sent) is None  # no tax: the curve's own story
    assert flat_tax(sent, 0) is None and flat_tax(sent, sent + 1) is None

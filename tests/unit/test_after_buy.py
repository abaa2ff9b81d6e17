"""The transfer's predicted result (simulate/ahead.py, ``after_buy``) without a node."""

from __future__ import annotations

from tokenrisk.simulate.ahead import after_buy


def test_a_whole_transfer_leaves_the_tenth_sent_and_the_rest() -> None:
    assert after_buy(1_000_001, 1_000) == (1_000_001, 100_000, 900_001, None)


def test_what_another_transfer_showed_shifts_the_prediction() -> None:
    """A reflection token's rounding kept a wei back from the receiver of a transfer of
    another amount after the same buy: the prediction keeps it back too; a shift never
    predicts a negative balance."""
    assert after_buy(1_000_001, 1_000, (-1, 0)) == (1_000_001, 99_999, 900_001, None)
    assert after_buy(1_000_001, 1_000, (-200_000, 7)) == (1_000_001, 0, 900_008, None)

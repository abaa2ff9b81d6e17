"""The simulation's wallets: random, never reused, and of one calldata cost."""

from __future__ import annotations

from tokenrisk.simulate.calls import fresh_address


def test_fresh_addresses_are_distinct_and_have_no_zero_byte() -> None:
    # a zero byte in the swap's recipient costs 4 gas of calldata instead of 16: the
    # same trade's reported gas would move by 12 from one check to the next
    drawn = [fresh_address() for _ in range(5000)]
    assert len(set(drawn)) == len(drawn)
    for address in drawn:
        raw = bytes.fromhex(address[2:])
        assert len(raw) == 20 and 0 not in raw and address == address.lower()

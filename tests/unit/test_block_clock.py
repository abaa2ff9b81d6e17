"""The chain's block interval as the service sees it, which decides whether a check may
plan at a remembered head (``chain/head.py: BlockClock``, ``checks/speculation.py``)."""

from __future__ import annotations

from tokenrisk.chain.head import BLOCK_SECONDS, DEFAULT_BLOCK_SECONDS, BlockClock, ChainHead


def _head(number: int, timestamp: int, read_at: float) -> ChainHead:
    return ChainHead(number, timestamp, hash=hex(number), read_at=read_at)


def test_a_chain_starts_from_its_usual_interval() -> None:
    assert BlockClock.of_chain(1).interval == BLOCK_SECONDS[1] == 12.0
    assert BlockClock.of_chain(424242).interval == DEFAULT_BLOCK_SECONDS


def test_the_interval_is_measured_from_the_heads_timestamps() -> None:
    clock = BlockClock.of_chain(1)
    clock.observe(_head(100, 1_000, 10.0))
    clock.observe(_head(100, 1_000, 11.0))  # the same head again: nothing measured
    assert clock.interval == 12.0
    clock.observe(_head(102, 1_004, 40.0))  # two blocks in 4 s (read 30 s later)
    assert clock.interval == 2.0


def test_blocks_arriving_faster_than_their_clock_says_win() -> None:
    """A node mining on demand (a devnet) stamps each block a second or more apart while
    they come every few milliseconds: the pace they are seen at counts."""
    clock = BlockClock.of_chain(31337)
    clock.observe(_head(5, 1_000, 1.00))
    clock.observe(_head(6, 1_001, 1.10))
    assert abs(clock.interval - 0.1) < 1e-9


def test_a_head_is_current_for_a_fraction_of_the_interval() -> None:
    clock = BlockClock(seconds=12.0)
    head = _head(7, 0, read_at=100.0)
    assert clock.current(head, 0.25, now=102.9)
    assert not clock.current(head, 0.25, now=103.1)
    assert not clock.current(head, 0.0, now=100.0)  # 0: never assumed

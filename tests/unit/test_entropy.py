"""Fresh wallets' bytes: read from the OS in blocks, each byte handed out once."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tokenrisk.chain import entropy
from tokenrisk.simulate.gas import nonce


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """os.urandom replaced by a counter (byte i of the stream is i % 256); the sizes
    asked of it are listed."""
    stream = itertools.count()
    asked: list[int] = []

    def urandom(size: int) -> bytes:
        asked.append(size)
        return bytes(next(stream) % 256 for _ in range(size))

    monkeypatch.setattr("tokenrisk.chain.entropy.os.urandom", urandom)
    entropy._forgotten()  # start from an empty block
    yield asked
    entropy._forgotten()  # the counted bytes are no one's wallets


def test_draws_split_one_read_and_never_overlap(counted: list[int]) -> None:
    first, second = entropy.random_bytes(20), entropy.random_bytes(20)
    assert first == bytes(range(20)) and second == bytes(range(20, 40))
    assert counted == [entropy.BLOCK]


def test_a_draw_past_the_block_reads_a_new_one(counted: list[int]) -> None:
    entropy.random_bytes(entropy.BLOCK - 10)
    assert entropy.random_bytes(20) == bytes(range(entropy.BLOCK % 256, entropy.BLOCK % 256 + 20))
    assert counted == [entropy.BLOCK, entropy.BLOCK]
    assert len(entropy.random_bytes(entropy.BLOCK + 1)) == entropy.BLOCK + 1  # straight


def test_a_forked_child_forgets_the_parents_block(counted: list[int]) -> None:
    entropy.random_bytes(5)
    entropy._forgotten()  # what os.register_at_fork runs in the child
    assert entropy.random_bytes(5) == bytes(range(entropy.BLOCK % 256, entropy.BLOCK % 256 + 5))


def test_below_is_in_range_and_rejects_the_uneven_remainder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn = iter([bytes([250]), bytes([241]), bytes([239])])
    monkeypatch.setattr(entropy, "random_bytes", lambda _: next(drawn))
    assert entropy.below(40) == 239 % 40  # 250 and 241 fall past 240 = 6 x 40
    with pytest.raises(ValueError):
        entropy.below(0)


def test_nonces_are_small_non_zero_and_vary() -> None:
    drawn = [nonce() for _ in range(2000)]
    assert min(drawn) == 1 and max(drawn) == 40

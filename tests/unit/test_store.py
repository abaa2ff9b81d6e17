"""The store against every backend: SQLite always, PostgreSQL when one is configured.

The ``store_url`` and ``store`` fixtures (tests/conftest.py) give each test an empty
SQLite file or its own PostgreSQL schema (``TOKENRISK_TEST_POSTGRES_URL``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from tokenrisk.chain.abi import ZERO_ADDRESS, checksum
from tokenrisk.errors import StoreConflict, StoreError, TokenRiskError
from tokenrisk.store.engine import (
    CHECKPOINTS_KEPT,
    Cursor,
    Store,
    TransferLog,
    create_store,
    normalize_url,
)

CHAIN = 1
TOKEN = "0x" + "ab" * 20
A, B, C, D = ("0x" + f"{n:02x}" * 20 for n in (0x11, 0x22, 0x33, 0x44))
BIG = 2**256 - 1


def log(block: int, index: int, sender: str, recipient: str, amount: int) -> TransferLog:
    return TransferLog(block, index, f"0x{block:032x}{index:032x}", sender, recipient, amount)


def first_window(store: Store, logs: list[TransferLog], last: int = 10) -> Cursor:
    cursor = Cursor(0, last, f"0xhash{last}")
    store.apply_window(CHAIN, TOKEN, expected=None, new=cursor, logs=logs)
    return cursor


# SCHEMA AND URLS


def test_create_all_is_idempotent(store: Store) -> None:
    store.create_all()
    store.create_all()
    assert store.get_cursor(CHAIN, TOKEN) is None
    assert store.backend in ("sqlite", "postgresql")


def test_workers_starting_together_create_the_schema_once(store_url: str) -> None:
    errors: list[Exception] = []
    barrier = threading.Barrier(4)

    def open_store() -> None:
        barrier.wait()
        try:
            create_store(store_url).close()
        except StoreError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_urls() -> None:
    assert normalize_url("postgres://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert normalize_url("postgresql://h/db") == "postgresql+psycopg://h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"


def test_sqlite_file_uses_wal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nested' / 'tokenrisk.db'}"
    s = create_store(url)
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()
    s.close()


def test_unreachable_database_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as caught:
        create_store("postgresql://user:s3cret@127.0.0.1:1/nothing?connect_timeout=2")
    assert caught.value.status == 503
    assert isinstance(caught.value, TokenRiskError)
    assert "s3cret" not in str(caught.value) and "127.0.0.1" not in str(caught.value)


# BALANCES


@pytest.mark.parametrize("amount", [1, 9, 10, 2**63, 2**64 + 1, 10**77, BIG])
def test_uint256_round_trips_exactly(store: Store, amount: int) -> None:
    first_window(store, [log(1, 0, ZERO_ADDRESS, A, amount)])
    assert store.balances(CHAIN, TOKEN) == {A: amount}
    assert store.top_holders(CHAIN, TOKEN) == [(checksum(A), amount)]
    (stored,) = store.outgoing_transfers(CHAIN, TOKEN, [ZERO_ADDRESS])
    assert stored.amount == amount


def test_top_holders_order_numerically_then_by_address(store: Store) -> None:
    logs = [
        log(1, 0, ZERO_ADDRESS, D, 9),
        log(1, 1, ZERO_ADDRESS, C, 10),
        log(1, 2, ZERO_ADDRESS, B, 2**200),
        log(1, 3, ZERO_ADDRESS, A, 10),
    ]
    first_window(store, logs)
    top = store.top_holders(CHAIN, TOKEN, limit=3)
    assert top == [(checksum(B), 2**200), (checksum(A), 10), (checksum(C), 10)]
    assert store.holder_count(CHAIN, TOKEN) == 4


def test_zero_balances_vanish_and_negative_ones_do_not_count(store: Store) -> None:
    logs = [
        log(1, 0, ZERO_ADDRESS, A, 100),
        log(2, 0, A, B, 100),  # A drops to zero
        log(3, 0, C, D, 7),  # C never received anything (a token not logging mints)
        log(4, 0, D, ZERO_ADDRESS, 2),  # burn
    ]
    first_window(store, logs)
    assert store.balances(CHAIN, TOKEN) == {B: 100, C: -7, D: 5}
    assert store.holder_count(CHAIN, TOKEN) == 2
    assert [a.lower() for a, _ in store.top_holders(CHAIN, TOKEN)] == [B, D]


def test_tokens_and_chains_are_separate(store: Store) -> None:
    first_window(store, [log(1, 0, ZERO_ADDRESS, A, 5)])
    other = Cursor(0, 3, "0xother")
    store.apply_window(2, TOKEN, expected=None, new=other, logs=[log(1, 0, ZERO_ADDRESS, B, 6)])
    assert store.balances(CHAIN, TOKEN) == {A: 5}
    assert store.balances(2, TOKEN) == {B: 6}
    store.reset_token(2, TOKEN)
    assert store.get_cursor(2, TOKEN) is None and store.balances(2, TOKEN) == {}
    assert store.balances(CHAIN, TOKEN) == {A: 5}


def test_addresses_are_case_insensitive(store: Store) -> None:
    first_window(store, [log(1, 0, ZERO_ADDRESS, A, 5)])
    assert store.balances(CHAIN, TOKEN.upper().replace("0X", "0x")) == {A: 5}
    assert store.get_cursor(CHAIN, checksum(TOKEN)) is not None


# CURSOR: ATOMIC COMPARE-AND-SET


def test_windows_chain_through_the_cursor(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, 50)])
    second = Cursor(0, 20, "0xhash20")
    store.apply_window(CHAIN, TOKEN, expected=first, new=second, logs=[log(15, 0, A, B, 20)])
    assert store.get_cursor(CHAIN, TOKEN) == second
    assert store.balances(CHAIN, TOKEN) == {A: 30, B: 20}
    assert store.checkpoints(CHAIN, TOKEN) == [(20, "0xhash20"), (10, "0xhash10")]


def test_a_stale_cursor_is_a_conflict_and_writes_nothing(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, 50)])
    with pytest.raises(StoreConflict):
        first_window(store, [log(11, 0, A, B, 1)], last=12)
    stale = Cursor(0, 9, "0xhash9")
    with pytest.raises(StoreConflict):
        store.apply_window(
            CHAIN, TOKEN, expected=stale, new=Cursor(0, 20, "0xh"), logs=[log(12, 0, A, B, 1)]
        )
    wrong_hash = Cursor(0, 10, "0xforked")
    with pytest.raises(StoreConflict):
        store.apply_window(CHAIN, TOKEN, expected=wrong_hash, new=Cursor(0, 20, "0xh"), logs=[])
    assert store.get_cursor(CHAIN, TOKEN) == first
    assert store.balances(CHAIN, TOKEN) == {A: 50}


def test_a_failing_window_is_rolled_back_whole(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, 50)])
    duplicate = [log(11, 0, A, B, 5), log(1, 0, ZERO_ADDRESS, A, 50)]  # (1, 0) exists
    with pytest.raises(StoreError):
        store.apply_window(CHAIN, TOKEN, expected=first, new=Cursor(0, 20, "0xh"), logs=duplicate)
    assert store.get_cursor(CHAIN, TOKEN) == first
    assert store.balances(CHAIN, TOKEN) == {A: 50}
    assert store.transfer_count(CHAIN, TOKEN) == 1


def test_concurrent_writers_one_wins(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, 50)])
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        barrier.wait()
        try:
            store.apply_window(
                CHAIN,
                TOKEN,
                expected=first,
                new=Cursor(0, 20, f"0x{n}"),
                logs=[log(12, 0, A, B, 5)],
            )
            outcomes.append("won")
        except StoreConflict:
            outcomes.append("conflict")
        except StoreError:
            outcomes.append("error")  # a duplicate-row failure is also a clean refusal

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("won") == 1
    assert store.balances(CHAIN, TOKEN) == {A: 45, B: 5}


def test_a_driver_error_in_the_refresh_statements_is_a_store_error(store: Store) -> None:
    """The cursor read and move and the checkpoints go to the driver directly: its
    errors are StoreErrors too, and a failed window is rolled back whole."""
    first = first_window(store, [])
    with store.transaction("drop", writes=True) as conn:
        conn.exec_driver_sql("DROP TABLE index_checkpoints")
    with pytest.raises(StoreError):
        store.apply_window(CHAIN, TOKEN, expected=first, new=Cursor(0, 20, "0xh"), logs=[])
    assert store.get_cursor(CHAIN, TOKEN) == first  # the cursor's move went with it
    with store.transaction("drop", writes=True) as conn:
        conn.exec_driver_sql("DROP TABLE index_cursors")
    with pytest.raises(StoreError):
        store.get_cursor(CHAIN, TOKEN)


def test_amount_too_large_for_the_column_is_a_store_error(store: Store) -> None:
    with pytest.raises(StoreError):
        first_window(store, [log(1, 0, ZERO_ADDRESS, A, 10**78)])
    assert store.get_cursor(CHAIN, TOKEN) is None


# REORG SUPPORT


def test_rollback_restores_the_earlier_state_exactly(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, BIG), log(2, 0, A, B, 3)])
    second = Cursor(0, 20, "0xhash20")
    later = [log(12, 0, A, C, 2**128), log(15, 1, B, A, 3), log(20, 0, C, D, 1)]
    store.apply_window(CHAIN, TOKEN, expected=first, new=second, logs=later)

    undone = store.rollback(CHAIN, TOKEN, expected=second, to=first)

    assert undone == 3
    assert store.get_cursor(CHAIN, TOKEN) == first
    assert store.balances(CHAIN, TOKEN) == {A: BIG - 3, B: 3}
    assert store.checkpoints(CHAIN, TOKEN) == [(10, "0xhash10")]
    assert store.transfer_count(CHAIN, TOKEN) == 2


def test_rollback_to_before_the_start_empties_the_token(store: Store) -> None:
    first = first_window(store, [log(1, 0, ZERO_ADDRESS, A, 5)])
    store.rollback(CHAIN, TOKEN, expected=first, to=Cursor(0, -1, None))
    assert store.balances(CHAIN, TOKEN) == {}
    assert store.checkpoints(CHAIN, TOKEN) == []
    assert store.get_cursor(CHAIN, TOKEN) == Cursor(0, -1, None)


def test_only_the_newest_checkpoints_are_kept(store: Store) -> None:
    cursor = first_window(store, [], last=0)
    for block in range(1, CHECKPOINTS_KEPT + 10):
        new = Cursor(0, block, f"0xh{block}")
        store.apply_window(CHAIN, TOKEN, expected=cursor, new=new, logs=[])
        cursor = new
    points = store.checkpoints(CHAIN, TOKEN)
    assert len(points) == CHECKPOINTS_KEPT
    assert points[0] == (cursor.last_block, cursor.last_block_hash)


# SIPHON DATA


def test_outgoing_transfers_keeps_the_newest_per_holder(store: Store) -> None:
    logs = [log(1, 0, ZERO_ADDRESS, A, 100), log(1, 1, ZERO_ADDRESS, B, 100)]
    logs += [log(2 + i, 0, A, C, 1) for i in range(5)] + [log(3, 1, B, C, 1)]
    first_window(store, logs)
    found = store.outgoing_transfers(CHAIN, TOKEN, [A.upper().replace("0X", "0x"), B, D], 2)
    assert [(x.sender, x.block) for x in found] == [(B, 3), (A, 5), (A, 6)]
    assert found[0].tx_hash == log(3, 1, B, C, 1).tx_hash


# RESULTS CACHE

"""``holders.stats.aggregate``: the numbers behind holderAnalysis."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokenrisk.holders.stats import HolderSell, aggregate, round_percent, tax_distribution
from tokenrisk.model import HolderStats, TaxBucket


def sold(tax: float, gas: int = 100_000, holder: str = "0x1") -> HolderSell:
    return HolderSell(holder, ok=True, tax=tax, gas=gas)


def test_no_holders_gives_zeros() -> None:
    assert aggregate([]) == HolderStats(0, 0, 0, 0, 0.0, 0.0, 0.0, 0, (), taxes_measured=0)


def test_sells_without_a_measured_tax_are_counted_as_unmeasured() -> None:
    stats = aggregate([HolderSell("0x1", ok=True, tax=None, gas=100_000), sold(5.0, 110_000)])
    assert stats.taxes_measured == 1 and stats.average_tax == 5.0


def test_counts_averages_and_distribution() -> None:
    results = [
        sold(0.0, 100_000),
        sold(10.2, 120_000),
        sold(9.6, 110_000),
        sold(60.0, 130_000),
        HolderSell("0x5", ok=False),
        HolderSell("0x6", ok=False, siphoned=True),
    ]
    stats = aggregate(results)
    assert (stats.analysed, stats.successful, stats.failed, stats.siphoned) == (6, 4, 2, 1)
    assert stats.average_tax == pytest.approx((0.0 + 10.2 + 9.6 + 60.0) / 4)
    assert stats.average_gas == pytest.approx(115_000)
    assert stats.highest_tax == 60.0
    assert stats.high_tax_wallets == 1
    assert stats.tax_distribution == (TaxBucket(0, 1), TaxBucket(10, 2), TaxBucket(60, 1))


def test_high_tax_threshold_is_inclusive() -> None:
    stats = aggregate([sold(49.99), sold(50.0), sold(99.0)])
    assert stats.high_tax_wallets == 2


def test_failed_sells_do_not_enter_averages() -> None:
    stats = aggregate([sold(5.0, 90_000), HolderSell("0x2", ok=False, tax=99.0, gas=10**6)])
    assert (stats.average_tax, stats.average_gas, stats.highest_tax) == (5.0, 90_000.0, 5.0)
    assert stats.high_tax_wallets == 0


def test_unmeasured_values_are_skipped_not_zero() -> None:
    results = [sold(20.0, 100_000), HolderSell("0x2", ok=True, tax=None, gas=None)]
    stats = aggregate(results)
    assert stats.successful == 2
    assert (stats.average_tax, stats.average_gas) == (20.0, 100_000.0)
    assert stats.tax_distribution == (TaxBucket(20, 1),)


def test_non_finite_taxes_are_ignored() -> None:
    stats = aggregate([sold(math.nan), sold(math.inf), sold(3.0)])
    assert (stats.average_tax, stats.highest_tax) == (3.0, 3.0)


def test_siphoned_holders_count_whether_or_not_they_sold() -> None:
    results = [
        HolderSell("0x1", ok=True, tax=0.0, gas=1, siphoned=True),
        HolderSell("0x2", ok=False, siphoned=True),
    ]
    assert aggregate(results).siphoned == 2


@pytest.mark.parametrize(
    ("tax", "bucket"), [(2.5, 3), (2.4999, 2), (0.49, 0), (99.5, 100), (-0.2, 0), (-0.6, -1)]
)
def test_taxes_round_half_up(tax: float, bucket: int) -> None:
    assert round_percent(tax) == bucket


def test_distribution_is_sorted_by_tax() -> None:
    assert tax_distribution([30.0, 1.0, 30.4, 12.0, 1.2]) == (
        TaxBucket(1, 2),
        TaxBucket(12, 1),
        TaxBucket(30, 2),
    )


taxes = st.floats(min_value=0, max_value=100, allow_nan=False)
sells = st.builds(
    HolderSell,
    holder=st.just("0x1"),
    ok=st.booleans(),
    tax=st.none() | taxes,
    gas=st.none() | st.integers(min_value=21_000, max_value=10**7),
    siphoned=st.booleans(),
)


@given(st.lists(sells, max_size=60))
def test_invariants(results: list[HolderSell]) -> None:
    stats = aggregate(results)
    measured = [r.tax for r in results if r.ok and r.tax is not None]
    assert stats.successful + stats.failed == stats.analysed == len(results)
    assert sum(b.count for b in stats.tax_distribution) == len(measured)
    assert [b.tax for b in stats.tax_distribution] == sorted(
        {b.tax for b in stats.tax_distribution}
    )
    assert 0 <= stats.average_tax <= stats.highest_tax <= 100
    assert stats.high_tax_wallets <= stats.successful


def test_large_holder_sets_are_sampled_by_balance() -> None:
    from tokenrisk.checks.holder_sells import sample_by_balance

    rows = [(f"0x{i:040x}", 10_000 - i) for i in range(10_000)]  # largest first
    sample = sample_by_balance(rows, 2_000)
    assert len(sample) == 2_000 and len(set(sample)) == 2_000
    assert sample[:1_000] == rows[:1_000]  # the largest always
    assert sample[1_000] == rows[1_000] and sample[-1][1] < 100  # the rest spread to the end
    assert [b for _, b in sample] == sorted((b for _, b in sample), reverse=True)
    assert sample_by_balance(rows[:50], 2_000) == rows[:50]

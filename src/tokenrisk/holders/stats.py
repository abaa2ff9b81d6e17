"""Summary of simulated holder sells: the numbers behind ``holderAnalysis``.

Pure: the simulation module decides, per analysed holder, whether its sell succeeded and
what it cost; this module only counts and averages.  Taxes are percentages (0..100).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tokenrisk.model import HolderStats, TaxBucket

HIGH_TAX = 50.0
"""A wallet paying this tax (percent) or more counts in ``highTaxWallets``."""


@dataclass(frozen=True)
class HolderSell:
    """Outcome of one holder's simulated sell.

    ``tax`` and ``gas`` are None when not measured (always for a failed sell).
    ``siphoned`` comes from :func:`tokenrisk.holders.siphon.siphoned_holders`.
    """

    holder: str
    ok: bool
    tax: float | None = None
    gas: int | None = None
    siphoned: bool = False
    tax_token_unit: float | None = None  # the same sell in token units (Transfer logs)
    alone: bool = False
    """Decided by a lone sell: its sell failed in its group (or the group failed as a
    whole).  ``checks.holder_sells`` sends such a holder's lone sell with the groups at
    the token's next check, where it is likely to fail in its group again."""


def aggregate(results: Sequence[HolderSell]) -> HolderStats:
    """Counts, averages and the tax distribution of ``results``.

    Averages, the highest tax, ``high_tax_wallets`` and the distribution cover
    successful sells with a measured (finite) value only; with none they are 0.
    """
    sold = [r for r in results if r.ok]
    taxes = [r.tax for r in sold if r.tax is not None and math.isfinite(r.tax)]
    units = [r.tax_token_unit for r in sold if r.tax_token_unit is not None]
    gases = [r.gas for r in sold if r.gas is not None]
    return HolderStats(
        analysed=len(results),
        successful=len(sold),
        failed=len(results) - len(sold),
        siphoned=sum(1 for r in results if r.siphoned),
        average_tax=_mean(taxes),
        average_gas=_mean([float(g) for g in gases]),
        highest_tax=max(taxes, default=0.0),
        high_tax_wallets=sum(1 for t in taxes if t >= HIGH_TAX),
        tax_distribution=tax_distribution(taxes),
        average_tax_token_unit=_mean(units) if units else None,
        taxes_measured=len(taxes),
    )


def tax_distribution(taxes: Sequence[float]) -> tuple[TaxBucket, ...]:
    """Wallets per whole-percent tax (half rounds up: 2.5 -> 3), sorted by tax."""
    counts = Counter(round_percent(t) for t in taxes)
    return tuple(TaxBucket(tax, count) for tax, count in sorted(counts.items()))


def round_percent(tax: float) -> int:
    """Round half up, unlike ``round`` (banker's rounding would turn 2.5 into 2)."""
    return math.floor(tax + 0.5)


def _mean(values: Sequence[float]) -> float:
    """Arithmetic mean kept within [min, max]: float rounding of a sum can otherwise
    put the mean of equal values a hair above their maximum."""
    if not values:
        return 0.0
    return min(max(math.fsum(values) / len(values), min(values)), max(values))

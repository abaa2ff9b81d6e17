"""Holders of a token: the Transfer-log index, top holders, holder counts, siphons.

``index_token`` keeps a token's balances in the store up to date from its Transfer
logs; ``top_holders`` and ``holder_count`` read them; ``siphoned_holders`` judges whether
holders lost tokens without consent; ``aggregate`` summarises simulated holder sells.
"""

from tokenrisk.holders.index import (
    IndexProgress,
    IndexSettings,
    IndexStats,
    find_start_block,
    holder_count,
    index_token,
    top_holders,
    top_holders_checked,
    total_supply,
)
from tokenrisk.holders.siphon import siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate

__all__ = [
    "HolderSell",
    "IndexProgress",
    "IndexSettings",
    "IndexStats",
    "aggregate",
    "find_start_block",
    "holder_count",
    "index_token",
    "siphoned_holders",
    "top_holders",
    "top_holders_checked",
    "total_supply",
]

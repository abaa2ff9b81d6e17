"""GetPairs order: base-token pools first, then liquidity, then creation time (older first,
unknown last), then address."""

from __future__ import annotations

from dataclasses import replace

from tokenrisk.checks import pairs
from tokenrisk.model import Pool


def pool(address: str, liquidity: float | None, created: int | None = None) -> Pool:
    return Pool(
        address,
        "Uniswap",
        "V2",
        "0x1",
        "0x2",
        "0x1",
        "0xr",
        1,
        1,
        liquidity,
        chain_id=1,
        created_at_timestamp=created,
    )


def rank(pools: list[Pool], limit: int) -> list[str]:
    return [p.address for p in pairs.rank_pools(pools, limit)]


def test_liquidity_decides_first() -> None:
    pools = [pool("0xc", 10.0), pool("0xa", 30.0), pool("0xb", 20.0), pool("0xd", None)]
    assert rank(pools, 10) == ["0xa", "0xb", "0xc", "0xd"]


def test_ties_go_to_the_older_pool_then_the_address() -> None:
    pools = [pool("0xa", 5.0, 300), pool("0xb", 5.0, 100), pool("0xc", 5.0), pool("0xd", 5.0, 100)]
    assert rank([*pools, pool("0xe", 9.0)], 10) == ["0xe", "0xb", "0xd", "0xa", "0xc"]
    assert rank([*pools, pool("0xe", 9.0)], 2) == ["0xe", "0xb"]


def test_pools_against_other_tokens_come_after_base_pools() -> None:
    deep_other = replace(pool("0xa", 1_000_000.0), against_base=False)
    assert rank([deep_other, pool("0xb", 1.0), pool("0xc", None)], 10) == ["0xb", "0xc", "0xa"]

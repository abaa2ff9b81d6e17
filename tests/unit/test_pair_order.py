"""GetPairs order: liquidity, then creation time (older first, unknown last), then address;
creation times are read only where a tie decides the answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tokenrisk.checks import honeypot
from tokenrisk.model import Pool


def pool(address: str, liquidity: float) -> Pool:
    return Pool(address, "Uniswap", "V2", "0x1", "0x2", "0x1", "0xr", 1, 1, liquidity, chain_id=1)


class FakeService:
    def client(self, chain_id: int) -> str:
        return f"client {chain_id}"

    def chain(self, chain_id: int) -> str:
        return f"chain {chain_id}"


@dataclass
class Births:
    """Creation timestamps by pool address, and which pools were looked up."""

    times: dict[str, int | None] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)


@pytest.fixture
def born(monkeypatch: pytest.MonkeyPatch) -> Births:
    births = Births()

    async def creation_info(rpc: Any, chain: Any, p: Pool) -> tuple[int | None, str | None]:
        assert rpc == "client 1" and chain == "chain 1"
        births.asked.append(p.address)
        return births.times.get(p.address), None

    monkeypatch.setattr(honeypot.dex, "creation_info", creation_info)
    return births


async def rank(pools: list[Pool], limit: int) -> list[str]:
    ranked = await honeypot.rank_pools(FakeService(), pools, limit)  # type: ignore[arg-type]
    return [p.address for p in ranked]


async def test_liquidity_decides_first(born: Births) -> None:
    assert await rank([pool("0xc", 10.0), pool("0xa", 30.0), pool("0xb", 20.0)], 10) == [
        "0xa",
        "0xb",
        "0xc",
    ]
    assert born.asked == []  # no tie, no creation lookups


async def test_ties_go_to_the_older_pool_then_the_address(born: Births) -> None:
    born.times.update({"0xa": 300, "0xb": 100, "0xc": None, "0xd": 100})
    pools = [pool(a, 5.0) for a in ("0xa", "0xb", "0xc", "0xd")] + [pool("0xe", 9.0)]
    assert await rank(pools, 10) == ["0xe", "0xb", "0xd", "0xa", "0xc"]


async def test_only_ties_that_reach_the_limit_are_looked_up(born: Births) -> None:
    born.times.update({"0xa": 200, "0xb": 100})
    pools = [pool("0xa", 9.0), pool("0xb", 9.0), pool("0xc", 1.0), pool("0xd", 1.0)]
    assert await rank(pools, 1) == ["0xb"]
    assert sorted(born.asked) == ["0xa", "0xb"]

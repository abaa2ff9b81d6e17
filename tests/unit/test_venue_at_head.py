"""The checked token's metadata and its pool's creation, read once per head block
(checks.venue.token_info / traded_created)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.head import ChainHead
from tokenrisk.checks import venue
from tokenrisk.errors import NodeUnavailable
from tokenrisk.model import Pool, TokenInfo
from tokenrisk.simulate.simulator import Simulator


class _Sim(SimpleNamespace):
    """A simulator's base block and prelude, with its own rule for what is pinned."""

    pinned = Simulator.pinned


TOKEN = "0x" + "Ab" * 20
HEAD = ChainHead(number=7, timestamp=1, hash="0x" + "11" * 32)
BASE = "0x" + "Ef" * 20
POOL = Pool("0x" + "Cd" * 20, "Uniswap", "V2", TOKEN, BASE, BASE, BASE, 1, 2, None)


class Reads:
    """Stands in for ``read_token`` / ``created``: records each read, answers ``found``."""

    def __init__(self, found: Any) -> None:
        self.found = found
        self.seen: list[Any] = []

    async def token(self, rpc: Any, token: str, block: str = "latest") -> Any:
        self.seen.append(block)
        if isinstance(self.found, Exception):
            raise self.found
        return self.found

    async def created(self, node: Any, pool: Pool, token: str, simulated: bool) -> Pool:
        self.seen.append((pool.address, simulated))
        return replace(pool, **self.found)


def _ready(head: ChainHead, prelude: list[Any] | None = None, made: Any = None) -> Any:
    sim = _Sim(base=head, prelude=prelude or [])
    route = SimpleNamespace(token=TOKEN, pool=POOL)
    node = SimpleNamespace(id=1, rpc=None)
    return SimpleNamespace(node=node, route=route, sim=sim, simulated=made is not None)


def _deps() -> Any:
    return SimpleNamespace(at_head=MemoryCache(16))


INFO = TokenInfo(address=TOKEN, name="T", symbol="T", decimals=18, total_supply=10)


def test_metadata_read_once_per_head_block_at_that_block(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(INFO)
    monkeypatch.setattr(venue, "read_token", reads.token)
    deps = _deps()
    assert asyncio.run(venue.token_info(deps, _ready(HEAD))) == INFO
    assert asyncio.run(venue.token_info(deps, _ready(HEAD))) == INFO
    assert reads.seen == [HEAD.tag]
    moved = ChainHead(number=8, timestamp=2, hash="0x" + "22" * 32)
    reorged = ChainHead(number=7, timestamp=1, hash="0x" + "33" * 32)
    asyncio.run(venue.token_info(deps, _ready(moved)))
    asyncio.run(venue.token_info(deps, _ready(reorged)))
    assert reads.seen == [HEAD.tag, moved.tag, reorged.tag]


def test_metadata_read_every_time_without_a_pinned_block(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(INFO)
    monkeypatch.setattr(venue, "read_token", reads.token)
    deps = _deps()
    for ready in (_ready(HEAD, prelude=[{"calls": []}]), _ready(HEAD.after(1, 12))):
        asyncio.run(venue.token_info(deps, ready))
        asyncio.run(venue.token_info(deps, ready))
    journeyless = _ready(HEAD)
    journeyless.sim = None
    asyncio.run(venue.token_info(deps, journeyless))
    assert reads.seen == ["latest"] * 5


def test_a_failed_metadata_read_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads(NodeUnavailable("node is unreachable"))
    monkeypatch.setattr(venue, "read_token", reads.token)
    deps = _deps()
    with pytest.raises(NodeUnavailable):
        asyncio.run(venue.token_info(deps, _ready(HEAD)))
    reads.found = INFO
    asyncio.run(venue.token_info(deps, _ready(HEAD)))
    asyncio.run(venue.token_info(deps, _ready(HEAD)))
    assert reads.seen == [HEAD.tag, HEAD.tag]


def test_a_found_creation_is_kept_per_head_block(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads({"created_at_timestamp": 5, "creation_tx_hash": "0x" + "99" * 32})
    monkeypatch.setattr(venue, "created", reads.created)
    deps = _deps()
    first = asyncio.run(venue.traded_created(deps, _ready(HEAD)))
    again = asyncio.run(venue.traded_created(deps, _ready(HEAD)))
    assert first == again and first.created_at_timestamp == 5
    assert len(reads.seen) == 1
    asyncio.run(venue.traded_created(deps, _ready(replace(HEAD, hash="0x" + "44" * 32))))
    assert len(reads.seen) == 2


def test_an_unknown_creation_is_looked_up_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = Reads({"created_at_timestamp": None, "creation_tx_hash": None})
    monkeypatch.setattr(venue, "created", reads.created)
    deps = _deps()
    asyncio.run(venue.traded_created(deps, _ready(HEAD)))
    asyncio.run(venue.traded_created(deps, _ready(HEAD)))
    made = _ready(HEAD, made=object())
    asyncio.run(venue.traded_created(deps, made))
    asyncio.run(venue.traded_created(deps, made))
    assert reads.seen == [(POOL.address, False)] * 2 + [(POOL.address, True)] * 2

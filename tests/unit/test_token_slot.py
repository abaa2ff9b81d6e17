"""The checked token's balance slot, searched once per head block (checks.trade.token_slot)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.chain.head import ChainHead
from tokenrisk.checks import trade
from tokenrisk.checks.deps import Trading
from tokenrisk.errors import NodeUnavailable
from tokenrisk.simulate.simulator import Simulator
from tokenrisk.simulate.slots import BalanceSlot


class _Sim(SimpleNamespace):
    """A simulator's base block and prelude, with its own rule for what is pinned."""

    pinned = Simulator.pinned


TOKEN = "0x" + "Ab" * 20
HEAD = ChainHead(number=7, timestamp=1, hash="0x" + "11" * 32)


class Searches:
    """Stands in for ``find_balance_slot``: counts searches, answers ``found`` (or raises)."""

    def __init__(self, found: BalanceSlot | None | Exception) -> None:
        self.found = found
        self.blocks: list[str] = []

    async def __call__(self, rpc: Any, token: str, block: str, cache: Any = None) -> Any:
        self.blocks.append(block)
        if isinstance(self.found, Exception):
            raise self.found
        return self.found


def _slot(trading: Trading, head: ChainHead, prelude: list[Any] | None = None) -> Any:
    node = SimpleNamespace(id=1, rpc=None)
    sim = _Sim(base=head, prelude=prelude or [])
    return asyncio.run(trade.token_slot(node, trading, TOKEN, sim))  # type: ignore[arg-type]


def _trading() -> Trading:
    return Trading(simulations=asyncio.Semaphore(1))


def test_searched_once_per_head_block(monkeypatch: pytest.MonkeyPatch) -> None:
    searches = Searches(BalanceSlot(3, False))
    monkeypatch.setattr(trade, "find_balance_slot", searches)
    trading = _trading()
    assert _slot(trading, HEAD) == BalanceSlot(3, False)
    assert _slot(trading, HEAD) == BalanceSlot(3, False)
    assert searches.blocks == [HEAD.tag]
    moved = ChainHead(number=8, timestamp=2, hash="0x" + "22" * 32)
    assert _slot(trading, moved) == BalanceSlot(3, False)
    reorged = ChainHead(number=7, timestamp=1, hash="0x" + "33" * 32)
    assert _slot(trading, reorged) == BalanceSlot(3, False)
    assert searches.blocks == [HEAD.tag, moved.tag, reorged.tag]


def test_no_slot_is_kept_too(monkeypatch: pytest.MonkeyPatch) -> None:
    searches = Searches(None)
    monkeypatch.setattr(trade, "find_balance_slot", searches)
    trading = _trading()
    assert _slot(trading, HEAD) is None
    assert _slot(trading, HEAD) is None
    assert searches.blocks == [HEAD.tag]


def test_searched_every_time_without_a_hash_or_with_a_prelude(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searches = Searches(BalanceSlot(0, False))
    monkeypatch.setattr(trade, "find_balance_slot", searches)
    trading = _trading()
    simulated = HEAD.after(1, 12)  # a simulated block has no hash
    _slot(trading, simulated)
    _slot(trading, simulated)
    _slot(trading, HEAD, prelude=[{"calls": []}])
    _slot(trading, HEAD, prelude=[{"calls": []}])
    assert len(searches.blocks) == 4


def test_a_failed_search_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    searches = Searches(NodeUnavailable("node is unreachable"))
    monkeypatch.setattr(trade, "find_balance_slot", searches)
    trading = _trading()
    with pytest.raises(NodeUnavailable):
        _slot(trading, HEAD)
    searches.found = BalanceSlot(1, True)
    assert _slot(trading, HEAD) == BalanceSlot(1, True)
    assert _slot(trading, HEAD) == BalanceSlot(1, True)
    assert len(searches.blocks) == 2

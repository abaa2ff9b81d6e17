"""The first-sight guess of who sells, from the index's first logs in memory
(checks/holder_sells.py: logged_people), against the same guess from the stored index
(indexed_people): the same people, balances and snipers, in the same order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.checks import holder_sells
from tokenrisk.checks.holder_sells import indexed_people, logged_people
from tokenrisk.model import Pool
from tokenrisk.store.engine import Cursor, TransferLog, create_store

POOL = "0x" + "aa" * 20
DEPLOYER = "0x" + "de" * 20
TOKEN = "0x" + "70" * 20
CHAIN = 31337


def wallet(n: int) -> str:
    return "0x" + f"{n:040x}"


def history() -> list[TransferLog]:
    """A mint, the pool funded, buys over several blocks (two of equal size: a tie),
    a sniper who sold out, a holder who sent part on, a transfer to the token itself."""
    rows = [(1, ZERO_ADDRESS, DEPLOYER, 10_000), (2, DEPLOYER, POOL, 5_000)]
    rows += [(5, POOL, wallet(n), 100 + n) for n in range(1, 4)]  # snipers
    rows += [(6, POOL, wallet(9), 300), (6, POOL, wallet(8), 300)]  # a tie, sniping too
    rows += [(20, POOL, wallet(n), 10 * n) for n in range(10, 30)]  # later buyers
    rows += [(21, wallet(1), POOL, 101), (22, wallet(12), wallet(40), 60)]
    rows += [(23, DEPLOYER, TOKEN, 50)]
    return [
        TransferLog(block, i, f"0x{i:064x}", sender, recipient, amount)
        for i, (block, sender, recipient, amount) in enumerate(rows)
    ]


async def test_the_guess_from_the_logs_is_the_guess_from_the_store(tmp_path: Path) -> None:
    logs = history()
    store = create_store(f"sqlite:///{tmp_path / 'index.db'}")  # read from worker threads
    store.apply_window(CHAIN, TOKEN, expected=None, new=Cursor(0, 30, "0xhead"), logs=logs)
    pool = Pool(POOL, "Uniswap", "V2", TOKEN, DEPLOYER, DEPLOYER, DEPLOYER, 1, 1, None)
    node: object = SimpleNamespace(id=CHAIN)
    skip = {wallet(20)}
    try:
        for limit in (3, 8, 50):
            stored = await indexed_people(node, store, limit, TOKEN, [pool], skip)  # type: ignore[arg-type]
            assert logged_people(logs, limit, TOKEN, [pool], skip) == stored
            people, held = stored
            assert people and len(people) <= limit
        people, held = stored
        assert wallet(20).lower() not in {a.lower() for a, _ in people}  # skipped
        assert {a.lower() for a, _ in held} == {wallet(n) for n in (2, 3, 8, 9)}
    finally:
        store.close()


async def test_the_reads_started_from_the_logs_are_the_stored_indexs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code and balance reads started from the logs in memory (``_reads_ahead``) are
    the ones ``largest_holders`` and ``holding_snipers`` ask of the stored index: taken,
    with no read of their own.  Fails when those reads are keyed otherwise than the
    addresses and block the stored index gives (they are then read again)."""
    logs = history()
    store = create_store(f"sqlite:///{tmp_path / 'index.db'}")
    store.apply_window(CHAIN, TOKEN, expected=None, new=Cursor(0, 30, "0xhead"), logs=logs)
    pool = Pool(POOL, "Uniswap", "V2", TOKEN, DEPLOYER, DEPLOYER, DEPLOYER, 1, 1, None)
    node: Any = SimpleNamespace(id=CHAIN, rpc=None)
    sim: Any = SimpleNamespace(route=SimpleNamespace(token=TOKEN), base=SimpleNamespace(tag="0x1e"))
    read: list[list[str]] = []

    async def holding(_: Any, __: str, addresses: list[str], block: str) -> list[tuple[str, int]]:
        read.append(addresses)
        return [(a, 1) for a in addresses]

    monkeypatch.setattr(holder_sells, "_holding_people", holding)
    skip = {wallet(20)}
    try:
        for limit in (3, 8, 50):
            read.clear()
            logged = holder_sells._logged(logs, limit, [pool])
            reads = holder_sells._reads_ahead(node, sim, logged, ([pool], skip))
            await asyncio.gather(*reads.values())
            ahead = list(read)
            monkeypatch.undo()  # from here on a read would reach the (absent) node
            largest = await holder_sells.largest_holders(
                node, store, limit, TOKEN, [pool], "0x1e", reads
            )
            held = await holder_sells.holding_snipers(
                node, store, TOKEN, [pool], skip, "0x1e", reads
            )
            monkeypatch.setattr(holder_sells, "_holding_people", holding)
            assert [a for a, _ in largest] == ahead[0][:limit]
            assert [a for a, _ in held] == ahead[1]
            assert read == ahead  # nothing read after the store was asked
            assert reads == {}  # both taken (counted holder_reads used)
    finally:
        store.close()


async def test_a_reader_before_the_run_gets_the_future_the_run_settles() -> None:
    """#27: a reader that starts before the indexer (``next_first_logs``: the holders'
    reads started before the trade is ready) gets the future the indexer then settles;
    one that starts after gets the run's own, settled or not, never a fresh one that no
    run would settle."""
    from tokenrisk.holders import index

    store = create_store("sqlite://")
    try:
        early = index.next_first_logs(store, CHAIN, TOKEN)
        run = index._first_logs(store, CHAIN, TOKEN)  # the indexer's start
        assert run is early and not early.done()
        batch = index.FirstBatch(0, [])
        index._publish(run, batch)
        assert await asyncio.wait_for(early, 1) is batch
        assert index.next_first_logs(store, CHAIN, TOKEN) is run
        assert index._first_logs(store, CHAIN, TOKEN) is not run  # the next run's own
    finally:
        store.close()


async def test_the_holders_reads_are_kept_per_head_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#27: ``largest_holders`` and ``holding_snipers`` at the block a simulator is pinned
    to read code and balances once per head block (``Simulator.remembered``): a check
    again at the same hash reads nothing, one at another hash (a new head) or with
    simulated liquidity (a prelude) reads again.  Fails when a recomputed check at an
    unchanged head sends the holders' reads again, or when a new head reuses them."""
    from tokenrisk.caching import MemoryCache
    from tokenrisk.simulate.simulator import Simulator

    logs = history()
    store = create_store(f"sqlite:///{tmp_path / 'index.db'}")
    store.apply_window(CHAIN, TOKEN, expected=None, new=Cursor(0, 30, "0xhead"), logs=logs)
    pool = Pool(POOL, "Uniswap", "V2", TOKEN, DEPLOYER, DEPLOYER, DEPLOYER, 1, 1, None)
    node: Any = SimpleNamespace(id=CHAIN, rpc=None)
    memo: MemoryCache[Any, Any] = MemoryCache(16)
    read: list[str] = []

    async def holding(
        _: Any, __: str, addresses: list[str], block: str, ___: Any = None
    ) -> list[tuple[str, int]]:
        read.append(block)
        return [(a, 1) for a in addresses]

    def pinned(block_hash: str, prelude: tuple[Any, ...] = ()) -> Any:
        sim = SimpleNamespace(
            memo=memo,
            prelude=prelude,
            base=SimpleNamespace(tag="0x1e", number=30, hash=block_hash),
            route="route",
            settings="settings",
            limits=SimpleNamespace(max_blocks=1, request_gas=2, block_overrides=True),
        )
        sim.pinned = Simulator.pinned.fget(sim)  # the simulator's own rule
        sim.remembered = lambda key, work: Simulator.remembered(sim, key, work)
        return sim

    async def both(sim: Any) -> tuple[Any, ...]:
        return (
            await holder_sells.largest_holders(node, store, 3, TOKEN, [pool], "0x1e", kept=sim),
            await holder_sells.holding_snipers(node, store, TOKEN, [pool], set(), "0x1e", kept=sim),
        )

    monkeypatch.setattr(holder_sells, "_holding_people", holding)
    try:
        first = await both(pinned("0xaa"))
        assert len(read) == 2 and first[0] and first[1]
        assert await both(pinned("0xaa")) == first and len(read) == 2  # same head: none
        assert await both(pinned("0xbb")) == first and len(read) == 4  # a new head
        await both(pinned("0xbb", prelude=("liquidity",)))
        assert len(read) == 6  # a prelude's plan is never kept
    finally:
        store.close()

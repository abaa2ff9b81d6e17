"""A first index's logs in memory (holders/index.py, issue #27): a reader that starts
before the indexer gets the future the indexer then settles; one that starts after
gets the run's own, settled or not (never a fresh one nobody settles)."""

from __future__ import annotations

import asyncio

from tokenrisk.holders import index
from tokenrisk.store.engine import create_store

TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"


async def test_a_reader_before_the_run_gets_the_future_the_run_settles() -> None:
    store = create_store("sqlite://")
    try:
        early = index.next_first_logs(store, 31337, TOKEN)
        run = index._first_logs(store, 31337, TOKEN.lower())  # the indexer's start
        assert run is early and not early.done()
        batch = index.FirstBatch(0, [])
        index._publish(run, batch)
        assert await asyncio.wait_for(early, 1) is batch
        # after the run: its settled future, not a fresh one no run would settle
        assert index.next_first_logs(store, 31337, TOKEN) is run
        # the next run starts a fresh one (the settled one is the last run's)
        assert index._first_logs(store, 31337, TOKEN) is not run
    finally:
        store.close()

"""Siphon detection's node reads (holders.siphon): what goes out together, what a
second judgment reuses, and that either way the judgment is the one made step by step.

The rule itself runs against a real anvil in tests/integration/test_holders.py; here a
fake node answers ``eth_getTransactionByHash`` and ``eth_getLogs`` from tables and
counts the round trips a judgment waits for (a round: requests sent before any reply).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tokenrisk import metrics
from tokenrisk.chain.signatures import APPROVAL_TOPIC
from tokenrisk.errors import RpcError
from tokenrisk.holders import siphon
from tokenrisk.holders.index import Indexed, IndexSettings
from tokenrisk.store.engine import Cursor, Store, TransferLog, create_store

CHAIN = 1
TOKEN = "0x" + "70" * 20
ROBBED, SELLER, PULLED = ("0x" + f"{n:02x}" * 20 for n in (0x11, 0x22, 0x33))
OWNER, ROUTER, SPENDER, POOL = ("0x" + f"{n:02x}" * 20 for n in (0x44, 0x55, 0x66, 0x77))


def tx(n: int) -> str:
    return f"0x{n:064x}"


def word(address: str) -> str:
    return "0x" + "0" * 24 + address[2:]


TRANSFERS = [  # (block, sender, tx): the robbed one's tokens left in the owner's tx
    (5, SELLER, tx(1)),
    (6, PULLED, tx(2)),
    (7, ROBBED, tx(3)),
]
SENDERS = {  # tx -> (from, to)
    tx(1): (SELLER, ROUTER),
    tx(2): (SPENDER, TOKEN),  # a transferFrom by an approved spender
    tx(3): (OWNER, TOKEN),  # siphon(robbed)
}
GRANTS = [(4, PULLED, SPENDER)]  # (block, owner, spender)


class Node:
    """Replies from the tables above; ``rounds`` counts the round trips waited for."""

    def __init__(self) -> None:
        self.rounds = 0
        self.requests: list[list[str]] = []
        self.beside: list[list[str]] = []  # requests sent while another was in flight
        self._in_flight = 0

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        return (await self.batch([(method, params)]))[0]

    async def batch(
        self, calls: Sequence[tuple[str, Sequence[Any]]], *, tolerate: type[RpcError] = RpcError
    ) -> list[Any]:
        self.requests.append([m for m, _ in calls])
        if self._in_flight == 0:
            self.rounds += 1  # nothing else on the wire: a new round trip
        else:
            self.beside.append([m for m, _ in calls])
        self._in_flight += 1
        try:
            await asyncio.sleep(0.01)
        finally:
            self._in_flight -= 1
        return [self._reply(m, p) for m, p in calls]

    def _reply(self, method: str, params: Sequence[Any]) -> Any:
        if method == "eth_getTransactionByHash":
            sender, to = SENDERS[params[0]]
            return {"hash": params[0], "from": sender, "to": to}
        assert method == "eth_getLogs", method
        wanted = set(params[0]["topics"][1])
        first, last = int(params[0]["fromBlock"], 16), int(params[0]["toBlock"], 16)
        return [
            {
                "topics": [APPROVAL_TOPIC, word(owner), word(spender)],
                "data": "0x" + f"{10**21:064x}",
                "blockNumber": hex(block),
                "logIndex": "0x0",
            }
            for block, owner, spender in GRANTS
            if word(owner) in wanted and first <= block <= last
        ]


@pytest.fixture
def store() -> Iterator[Store]:
    store = create_store("sqlite://")
    logs = [
        TransferLog(block, 0, tx_hash, sender, POOL, 10)
        for block, sender, tx_hash in [(1, OWNER, tx(9)), *TRANSFERS]
    ]
    store.apply_window(CHAIN, TOKEN, expected=None, new=Cursor(1, 10, "0xhead"), logs=logs[1:])
    indexed = Indexed("0xhead", 10, store.content_version(CHAIN, TOKEN), ("0xhead", (0, 0)))
    store.memo.put(("indexed", CHAIN, TOKEN.lower()), indexed)
    yield store
    store.close()


def sent_ahead(result: str, planned: str = "siphon_approvals") -> float:
    labels = {"planned": planned, "result": result}
    return metrics.REGISTRY.get_sample_value("tokenrisk_sent_ahead_total", labels) or 0.0


async def test_the_approvals_go_with_the_transactions_on_first_sight(store: Store) -> None:
    node, used = Node(), sent_ahead("used")
    found = await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, SELLER, PULLED])
    assert {h.lower() for h in found} == {ROBBED}  # PULLED's pull was approved
    assert node.rounds == 1  # step by step: the transactions, then the Approval logs
    assert sorted(m for r in node.requests for m in r).count("eth_getLogs") == 1
    assert sent_ahead("used") == used + 1


async def test_no_suspect_last_time_no_approvals_ahead(store: Store) -> None:
    node, dropped = Node(), sent_ahead("dropped")
    assert await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [SELLER]) == set()
    assert sent_ahead("dropped") == dropped + 1  # first sight: read ahead, unused
    assert node.rounds == 1
    again = Node()
    assert await siphon.siphoned_holders(again, store, CHAIN, TOKEN, [ROBBED]) != set()
    assert again.rounds == 2  # the last judgment found nobody suspect: nothing ahead
    assert [m for r in again.requests for m in r][-1] == "eth_getLogs"


async def test_a_cancelled_judgment_leaves_its_reads_to_the_next(store: Store) -> None:
    node = Node()
    guess = asyncio.ensure_future(
        siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, SELLER, PULLED])
    )
    while not node.requests:
        await asyncio.sleep(0)
    guess.cancel()  # the holders were a guess: the chain's balances disagreed
    found = await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, PULLED])
    assert {h.lower() for h in found} == {ROBBED}
    assert node.rounds == 1 and len(node.requests) == 2  # the guess's two, no more


async def test_a_reading_is_not_shared_across_index_content(store: Store) -> None:
    node = Node()
    await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, SELLER])
    store.memo.forget(("indexed", CHAIN, TOKEN.lower()))  # content unknown: nothing shared
    later = Node()
    found = await siphon.siphoned_holders(later, store, CHAIN, TOKEN, [ROBBED])
    assert {h.lower() for h in found} == {ROBBED}
    assert later.requests  # read again


async def test_a_long_history_is_not_read_ahead(store: Store) -> None:
    node = Node()
    narrow = IndexSettings(window=2, min_window=1, windows_per_batch=1)  # 2 blocks a batch
    found = await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED], settings=narrow)
    assert {h.lower() for h in found} == {ROBBED}
    assert node.beside == []  # blocks 1-7: more than one batch, so nothing went ahead


# READ FROM A FIRST INDEX'S LOGS, BEFORE THEY ARE STORED


def first_logs() -> list[TransferLog]:
    """The index's whole history as the store holds it (the fixture's rows)."""
    return [
        TransferLog(block, 0, tx_hash, sender, POOL, 10)
        for block, sender, tx_hash in [(1, OWNER, tx(9)), *TRANSFERS]
    ][1:]


async def test_reads_from_the_first_logs_serve_the_judgment(store: Store) -> None:
    """The reads leave before the store is asked anything; the judgment after it makes
    none of its own and is the step-by-step one.  Fails when the judgment does not take
    them (a second batch of transactions)."""
    node, used = Node(), sent_ahead("used", "siphon_reads")
    siphon.read_ahead(node, store, (CHAIN, TOKEN), (1, first_logs()), [ROBBED, SELLER, PULLED])
    for _ in range(10):  # the reads' tasks reach the node
        await asyncio.sleep(0)
    sent = sorted(map(tuple, node.requests))
    assert sent == sorted([("eth_getTransactionByHash",) * 3, ("eth_getLogs",)])
    found = await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, SELLER, PULLED])
    assert {h.lower() for h in found} == {ROBBED}
    assert sorted(map(tuple, node.requests)) == sent  # nothing more asked
    assert node.rounds == 1
    assert sent_ahead("used", "siphon_reads") == used + 1


@pytest.mark.parametrize(("case", "reads"), [("other start", 3 + 3), ("fewer holders", 1 + 3)])
async def test_reads_from_the_first_logs_that_do_not_cover_are_not_used(
    store: Store, case: str, reads: int
) -> None:
    """Logs indexed from another start block (their Approval span is not the index's),
    or the transactions of fewer holders than judged: read again, the same judgment.
    Fails when ``Reading.early`` ignores the start block or the hashes."""
    node, dropped = Node(), sent_ahead("dropped", "siphon_reads")
    start, holders = (0, [ROBBED, SELLER, PULLED]) if case == "other start" else (1, [SELLER])
    siphon.read_ahead(node, store, (CHAIN, TOKEN), (start, first_logs()), holders)
    found = await siphon.siphoned_holders(node, store, CHAIN, TOKEN, [ROBBED, SELLER, PULLED])
    assert {h.lower() for h in found} == {ROBBED}
    assert [m for r in node.requests for m in r].count("eth_getTransactionByHash") == reads
    assert sent_ahead("dropped", "siphon_reads") == dropped + 1


def test_newest_outgoing_is_the_stores_query(store: Store) -> None:
    """Over logs in memory, the rows ``Store.outgoing_transfers`` returns."""
    logs = first_logs() + [TransferLog(8, 1, tx(4), ROBBED, POOL, 1)]
    store.apply_window(
        CHAIN, TOKEN, expected=Cursor(1, 10, "0xhead"), new=Cursor(1, 11, "0xnext"), logs=logs[-1:]
    )
    wanted = {ROBBED, SELLER}
    for per_holder in (1, 2, 50):
        assert siphon.newest_outgoing(logs, wanted, per_holder) == store.outgoing_transfers(
            CHAIN, TOKEN, wanted, per_holder
        )

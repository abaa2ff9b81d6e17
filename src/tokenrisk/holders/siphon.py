"""Siphon detection: did tokens leave a holder without the holder's consent?

The rule.  A holder H is *siphoned* when one of its indexed outgoing transfers
``Transfer(from=H, ...)`` happened in a transaction that

1. H did not send (``tx.from != H``),
2. that did not call H itself (``tx.to != H``; a contract wallet such as a Safe moves
   its own tokens in a transaction an owner sends *to the wallet*), and
3. that no allowance H granted explains: the token emitted no ``Approval(owner=H,
   spender=S, value > 0)`` before the transfer (by block and log index) for a spender S
   that is the transaction's sender or the contract it called.

An ordinary ``transferFrom`` by an approved spender, or a router the spender calls, is
thus consent; an owner-only ``siphon(holder)`` function, a hidden allowance written
without an Approval event, or a balance "adjustment" emitting Transfer(H, owner) is not.

Cost: one store query, one batch of ``eth_getTransactionByHash`` for the distinct
transactions of the newest ``per_holder`` outgoing transfers per holder, and Approval
logs (topic-filtered to the suspect owners only) when any transfer is still suspect.

Rounds (issue #27).  The Approval logs depend on who is suspect, i.e. on the
transactions' replies: read after them, they cost a round trip of their own.  So when a
token's last judgment here found suspects, or none is known (a token seen for the first
time), they are read *ahead*, beside the transactions, for every holder with an outgoing
transfer up to the newest of those transfers (when that span is one batch of the log
reader's windows: one request, not a long history's pages): a superset of what the suspects need
(every owner a suspect can have, every block before its transfer), so the judgment is
the same; unused when nobody is suspect (``tokenrisk_sent_ahead_total{planned=
"siphon_approvals"}``).  And a judgment's reads are shared with the next judgment of the
same token at the same index content (:class:`Reading`): IsHoneypot judges the holders
the index suggests and, when the chain's balances disagree, judges again; the second
judgment waits for the first one's replies, even when the first was cancelled, rather
than asking the node again a round later.

Known false positives (rare, as SPEC.md warns):

* rebasing / reflection / "auto-burn" tokens that emit Transfer(H, ...) from a holder
  during somebody else's transaction (negative rebases, fees taken from holders);
* meta-transactions and relayers (ERC-2771 forwarders, gasless transfers signed by H and
  sent by a relayer), and account-abstraction wallets whose calls go through a shared
  EntryPoint: H signed, but neither sent the transaction nor is the called contract;
* ``permit`` pulls are fine when the token emits Approval in ``permit`` (as usual), but
  not for tokens whose permit skips the event;
* allowances granted to a contract that is called indirectly (a keeper calls contract A,
  which calls spender B): only the transaction's sender and callee are considered;
* contracts that move their own tokens (pairs, vaults) during other people's
  transactions: callers should analyse user-like holders only (the lead's holder
  analysis skips the pair and contracts).

Unknown transactions (the node does not return them) are never judged siphoned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tokenrisk import metrics
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, topic_address
from tokenrisk.chain.signatures import APPROVAL_TOPIC
from tokenrisk.holders.index import (
    IndexSettings,
    JsonRpc,
    LogReader,
    index_content,
    memo_at_index_head,
)
from tokenrisk.store.engine import Cursor, Store, TransferLog

TX_BATCH = 200
T = TypeVar("T")
READING_TTL = 60.0
"""Seconds a judgment's reads stay shareable (:class:`Reading`): one check's judgments
are milliseconds apart; the judgment itself is remembered per index state."""


@dataclass(frozen=True)
class TxParties:
    """Who sent a transaction and which address it called (None: contract creation)."""

    sender: str
    target: str | None


@dataclass(frozen=True)
class Grant:
    """An Approval with a non-zero value: ``owner`` let ``spender`` move its tokens."""

    block: int
    log_index: int
    spender: str


async def siphoned_holders(
    rpc: JsonRpc,
    store: Store,
    chain_id: int,
    token: str,
    holders: Iterable[str],
    *,
    per_holder: int = 50,
    settings: IndexSettings | None = None,
) -> set[str]:
    """The (checksummed) holders among ``holders`` whose tokens were siphoned.

    Reads the token's index in ``store``: run ``index_token`` first.  Raises the rpc
    errors and StoreError.  Answered once per index state and set of holders
    (:func:`~tokenrisk.holders.index.memo_at_index_head`): every input (the indexed
    transfers, the transactions they came in, the Approval logs up to the last of them)
    is fixed while the index stays at one head block.
    """
    wanted = sorted({h.lower() for h in holders} - {ZERO_ADDRESS})

    async def judge() -> frozenset[str]:
        found = await _siphoned(rpc, store, chain_id, token, wanted, per_holder, settings)
        return frozenset(found)

    key = ("siphoned", tuple(wanted), per_holder, settings)
    return set(await memo_at_index_head(store, chain_id, token, key, judge))


async def _siphoned(
    rpc: JsonRpc,
    store: Store,
    chain_id: int,
    token: str,
    wanted: list[str],
    per_holder: int,
    settings: IndexSettings | None,
) -> set[str]:
    if not wanted:
        return set()
    cursor, outgoing = await asyncio.to_thread(
        _indexed_outgoing, store, chain_id, token, wanted, per_holder
    )
    if cursor is None or not outgoing:
        return set()
    reading, fresh = _reading(rpc, store, chain_id, token, outgoing, cursor.start_block, settings)
    parties = await asyncio.shield(reading.parties)
    suspects = [x for x in outgoing if _not_sent_by_holder(x, parties.get(x.tx_hash))]
    _suspected(store, chain_id, token, bool(suspects), fresh and reading.grants is not None)
    if not suspects:
        return set()
    owners = sorted({x.sender for x in suspects})
    last = max(x.block for x in suspects)
    if reading.covers(owners, last):
        assert reading.grants is not None  # covers() says so
        grants = await asyncio.shield(reading.grants)
    else:
        grants = await approvals(rpc, token, owners, cursor.start_block, last, settings)
    return {
        checksum(x.sender)
        for x in suspects
        if not _allowed(x, parties[x.tx_hash], grants.get(x.sender, []))
    }


def _indexed_outgoing(
    store: Store, chain_id: int, token: str, wanted: list[str], per_holder: int
) -> tuple[Cursor | None, list[TransferLog]]:
    """The token's cursor and the holders' newest outgoing transfers: one thread hop,
    so the transactions' reads leave as soon after the index as they can."""
    cursor = store.get_cursor(chain_id, token)
    if cursor is None:
        return None, []
    return cursor, store.outgoing_transfers(chain_id, token, wanted, per_holder)


# ONE JUDGMENT'S READS, SHARED WITH THE NEXT


@dataclass(frozen=True)
class Reading:
    """The node reads of one judgment of a token: the transactions of ``hashes``, and,
    when sent ahead, the Approval logs of ``owners`` from ``first`` to ``last``.

    Tasks of their own (not the judgment's), so a judgment cancelled mid-way (its
    holders were a guess) leaves them running for the next judgment at the same index
    ``content`` whose needs they cover."""

    content: Any
    hashes: frozenset[str]
    parties: asyncio.Task[dict[str, TxParties]]
    first: int
    owners: frozenset[str] = frozenset()
    last: int = -1
    grants: asyncio.Task[dict[str, list[Grant]]] | None = None

    def covers(self, owners: Iterable[str], last: int) -> bool:
        """The Approval logs read ahead hold every grant of ``owners`` up to ``last``."""
        return self.grants is not None and self.last >= last and self.owners.issuperset(owners)

    def usable(self, content: Any, hashes: Set[str]) -> bool:
        """Shareable with a judgment at index ``content`` needing ``hashes``: the same
        index, this event loop, and no read that failed or was cancelled."""
        return content is not None and content == self.content and self._serves(hashes)

    def early(self, first: int, hashes: Set[str]) -> bool:
        """Read from a first index's logs before they were stored (:func:`read_ahead`),
        for a judgment of an index from block ``first`` needing ``hashes``: what a
        transaction's sender and callee are is fixed by its hash, and the Approval logs
        read ahead span that same index's blocks (:meth:`covers` decides for whom)."""
        return self.content is FROM_LOGS and self.first == first and self._serves(hashes)

    def _serves(self, hashes: Set[str]) -> bool:
        tasks = [self.parties] if self.grants is None else [self.parties, self.grants]
        return self.hashes.issuperset(hashes) and all(_healthy(t) for t in tasks)


FROM_LOGS = "read ahead from a first index's logs"
"""The ``content`` of a :class:`Reading` started before the index held its logs."""


def _healthy(task: asyncio.Task[Any]) -> bool:
    if task.get_loop() is not asyncio.get_running_loop() or task.cancelled():
        return False
    return not task.done() or task.exception() is None


def _reading(
    rpc: JsonRpc,
    store: Store,
    chain_id: int,
    token: str,
    outgoing: list[TransferLog],
    first: int,
    settings: IndexSettings | None,
) -> tuple[Reading, bool]:
    """The last judgment's reads when they cover this one's, else new ones (the
    Approval logs too when :func:`_predicted`), remembered for the next judgment;
    and whether they are new."""
    key = ("siphon-reading", chain_id, token.lower())
    content = index_content(store, chain_id, token)
    hashes = frozenset(x.tx_hash for x in outgoing)
    known = store.memo.value(key)
    if isinstance(known, Reading) and known.usable(content, hashes):
        return known, False
    taken = isinstance(known, Reading) and known.early(first, hashes)
    if isinstance(known, Reading) and known.content == FROM_LOGS:
        metrics.sent_ahead("siphon_reads", taken)  # once: the next judgment's replaces it
    if isinstance(known, Reading) and taken:
        reading = replace(known, content=content)  # this judgment's: counted as its own
    else:
        reading = _started(rpc, store, (chain_id, token), outgoing, first, settings, content)
    if content is not None:
        store.memo.put(key, reading, ttl=READING_TTL)
    return reading, True


def _started(
    rpc: JsonRpc,
    store: Store,
    known: tuple[int, str],
    outgoing: Sequence[TransferLog],
    first: int,
    settings: IndexSettings | None,
    content: Any = None,
) -> Reading:
    """New reads of ``outgoing``'s transactions, with their Approval logs when
    :func:`_predicted`."""
    hashes = frozenset(x.tx_hash for x in outgoing)
    parties = _task(transaction_parties(rpc, sorted(hashes)))
    reading = Reading(content, hashes, parties, first)
    last = max(x.block for x in outgoing)
    if _predicted(store, *known) and _one_batch(first, last, settings):
        owners = sorted({x.sender for x in outgoing})
        ahead = _task(approvals(rpc, known[1], owners, first, last, settings))
        reading = replace(reading, owners=frozenset(owners), last=last, grants=ahead)
    return reading


def read_ahead(
    rpc: JsonRpc,
    store: Store,
    known: tuple[int, str],
    batch: tuple[int, Sequence[TransferLog]],
    holders: Iterable[str],
    per_holder: int = 50,
) -> None:
    """Start the reads a judgment of ``holders`` will make, from a token's first index
    while it is being stored (``batch``: its start block and whole history of logs,
    :func:`~tokenrisk.holders.index.first_logs`): the transactions of the holders'
    newest ``per_holder`` outgoing transfers (as ``Store.outgoing_transfers`` will
    return them) and their Approval logs, so they leave with the logs, not after the
    store's commit and query (issue #27).  The judgment takes them only where they
    cover what it needs (:meth:`Reading.early`), else it reads again."""
    first, logs = batch
    wanted = {h.lower() for h in holders} - {ZERO_ADDRESS}
    outgoing = newest_outgoing(logs, wanted, per_holder)
    if outgoing:
        reading = _started(rpc, store, known, outgoing, first, None, FROM_LOGS)
        chain_id, token = known
        store.memo.put(("siphon-reading", chain_id, token.lower()), reading, ttl=READING_TTL)


def newest_outgoing(
    logs: Sequence[TransferLog], wanted: Set[str], per_holder: int
) -> list[TransferLog]:
    """The newest ``per_holder`` of ``logs`` sent by each of ``wanted`` (lowercase),
    oldest first: ``Store.outgoing_transfers`` over logs in memory."""
    sent: dict[str, list[TransferLog]] = {}
    for log in logs:
        if log.sender in wanted:
            sent.setdefault(log.sender, []).append(log)
    newest = [x for rows in sent.values() for x in sorted(rows, key=_order)[-per_holder:]]
    return sorted(newest, key=_order)


def _order(log: TransferLog) -> tuple[int, int]:
    return log.block, log.log_index


def _task(work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    task = asyncio.ensure_future(work)
    task.add_done_callback(_retrieve)
    return task


def _retrieve(task: asyncio.Task[Any]) -> None:
    """A shared read nobody awaits any more: its failure is retrieved, not reported."""
    if not task.cancelled():
        task.exception()


def _one_batch(first: int, last: int, settings: IndexSettings | None) -> bool:
    """The span fits the log reader's first batch of windows: a read sent ahead costs
    the node one request, never a history's worth of pages that may go unused."""
    tuning = settings or IndexSettings()
    return last - first < tuning.window * tuning.windows_per_batch


def _predicted(store: Store, chain_id: int, token: str) -> bool:
    """Read the Approval logs ahead: the token's last judgment found a suspect, or
    there is none to go by."""
    found, suspect = store.memo.get(("siphon-suspects", chain_id, token.lower()))
    return not found or bool(suspect)


def _suspected(store: Store, chain_id: int, token: str, suspect: bool, ahead: bool) -> None:
    """Remember whether this judgment found a suspect (the next one's prediction), and
    count an Approval read this judgment sent ahead as used or not."""
    store.memo.put(("siphon-suspects", chain_id, token.lower()), suspect)
    if ahead:
        metrics.sent_ahead("siphon_approvals", suspect)


def _not_sent_by_holder(log: TransferLog, tx: TxParties | None) -> bool:
    if tx is None:
        return False
    return log.sender not in (tx.sender, tx.target)


def _allowed(log: TransferLog, tx: TxParties, grants: Sequence[Grant]) -> bool:
    """An earlier non-zero Approval to the tx sender or the called contract explains it."""
    spenders = {tx.sender, tx.target}
    return any(
        g.spender in spenders and (g.block, g.log_index) < (log.block, log.log_index)
        for g in grants
    )


async def transaction_parties(rpc: JsonRpc, tx_hashes: Sequence[str]) -> dict[str, TxParties]:
    """Sender and callee of each transaction, batched; unknown hashes are left out."""
    found: dict[str, TxParties] = {}
    for i in range(0, len(tx_hashes), TX_BATCH):
        chunk = tx_hashes[i : i + TX_BATCH]
        replies = await rpc.batch([("eth_getTransactionByHash", [h]) for h in chunk])
        for tx_hash, reply in zip(chunk, replies, strict=True):
            parties = _parties(reply)
            if parties is not None:
                found[tx_hash] = parties
    return found


def _parties(reply: Any) -> TxParties | None:
    if not isinstance(reply, dict) or not isinstance(reply.get("from"), str):
        return None
    target = reply.get("to")
    return TxParties(reply["from"].lower(), target.lower() if isinstance(target, str) else None)


async def approvals(
    rpc: JsonRpc,
    token: str,
    owners: Sequence[str],
    first: int,
    last: int,
    settings: IndexSettings | None = None,
) -> dict[str, list[Grant]]:
    """Non-zero Approval events of ``owners`` in blocks ``first..last``, per owner."""
    topics: list[Any] = [APPROVAL_TOPIC, ["0x" + "0" * 24 + o[2:] for o in owners]]
    reader = LogReader(rpc, token, topics, settings or IndexSettings(), with_hashes=False)
    grants: dict[str, list[Grant]] = {}
    async for chunk in reader.chunks(first, last):
        for log in chunk.logs:
            parsed = _grant(log)
            if parsed is not None:
                grants.setdefault(parsed[0], []).append(parsed[1])
    return grants


def _grant(log: Any) -> tuple[str, Grant] | None:
    """(owner, grant) of an Approval log with a non-zero value; None for anything else."""
    topics: list[Any] = log.get("topics") or []
    data = log.get("data") or ""
    if len(topics) != 3 or len(data) != 66 or log.get("removed"):
        return None
    try:
        if int(data, 16) == 0:
            return None
        spender = topic_address(topics[2])
        return topic_address(topics[1]), Grant(
            int(log["blockNumber"], 16), int(log["logIndex"], 16), spender
        )
    except (ValueError, KeyError, TypeError):
        return None

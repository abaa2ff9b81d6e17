"""The Transfer-log indexer: ERC-20 balances from ``eth_getLogs``, incremental and reorg-aware.

``index_token`` reads ``Transfer(address,address,uint256)`` logs of one token from the
block after its stored cursor up to the head (or ``to_block``) and writes them to the
store.  How it stays fast and safe:

* **Windows, batched.**  Logs are read in block windows; several consecutive windows go
  into one JSON-RPC batch, and the batch is committed as ONE store transaction together
  with the cursor (crash-safe: a kill loses the whole batch or nothing, never half).
  While a batch is being committed (in a worker thread) the next one is being fetched.
* **Adaptive.**  When the node refuses a window (range too wide, too many results,
  response too large, timeout) the window is halved and re-read; after ``grow_after``
  clean batches whose windows were not dense it doubles again, up to ``max_window``.
* **Incremental.**  A second call reads only blocks after the cursor.
* **Reorgs.**  The cursor stores the hash of its block.  When the chain no longer has
  that hash, the indexer rolls back at least ``reorg_depth`` blocks, and further if
  needed, to the newest stored checkpoint (a block hash recorded at each commit) that
  the chain still agrees with; since each block hash commits to its parent, every block
  below a matching checkpoint is unchanged.  If no checkpoint matches (e.g. a devnet was
  restarted from a different state), the token is re-indexed from scratch.  The end-block
  hash of each batch is fetched *before* its logs, so a reorg racing the read leaves a
  stale hash behind and is healed by the next call rather than hidden.
* **Start block.**  On a devnet (chain id 31337 or 1337) indexing starts at block 0;
  elsewhere at the token's deployment block, found by a batched k-ary search over
  ``eth_getCode`` at historical blocks (a node without that history falls back to 0).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar, cast

from tokenrisk import metrics
from tokenrisk.chain.abi import decode_uint, encode_call, topic_address
from tokenrisk.chain.head import ChainHead, read_head
from tokenrisk.chain.history import JsonRpc, creation_block, has_code
from tokenrisk.chain.signatures import TRANSFER_TOPIC
from tokenrisk.chain.tokens import call_params
from tokenrisk.errors import (
    CallReverted,
    DeadlineExceeded,
    MalformedResponse,
    MethodUnsupported,
    NotFoundError,
    RpcError,
    UpstreamError,
    retrieved,
)
from tokenrisk.store.engine import Cursor, Store, TransferLog

T = TypeVar("T")

DEVNET_CHAIN_IDS = frozenset({31337, 1337})


@dataclass(frozen=True)
class IndexSettings:
    """Tuning of the log reader; the defaults suit public nodes and local anvil alike."""

    window: int = 2_000  # first window, in blocks
    min_window: int = 1
    max_window: int = 200_000
    windows_per_batch: int = 8
    grow_after: int = 2  # clean batches before the window doubles again
    dense_logs: int = 5_000  # a window this full is not grown
    reorg_depth: int = 12  # blocks always re-read after a detected reorg
    start_block: int | None = None  # skip the deployment-block search
    state_floor: int = 0
    """The oldest block whose state the node keeps (probed: ``Capabilities.state_floor``):
    the deployment-block search reads no state below it."""

    def __post_init__(self) -> None:
        if not 1 <= self.min_window <= self.window <= self.max_window:
            raise ValueError("need 1 <= min_window <= window <= max_window")
        if self.windows_per_batch < 1 or self.grow_after < 1 or self.dense_logs < 1:
            raise ValueError("windows_per_batch, grow_after and dense_logs must be >= 1")
        if self.reorg_depth < 0 or (self.start_block is not None and self.start_block < 0):
            raise ValueError("reorg_depth and start_block must not be negative")


@dataclass(frozen=True)
class IndexProgress:
    """Reported after each committed batch."""

    from_block: int
    to_block: int
    done_block: int
    logs: int


@dataclass
class IndexStats:
    """What one ``index_token`` call did; ``requests`` counts eth_getLogs calls."""

    chain_id: int
    token: str
    from_block: int
    to_block: int
    logs: int = 0
    requests: int = 0
    shrinks: int = 0
    rolled_back_blocks: int = 0
    seconds: float = 0.0

    @property
    def blocks(self) -> int:
        return max(0, self.to_block - self.from_block + 1)

    @property
    def logs_per_second(self) -> float:
        return self.logs / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Chunk:
    """Logs of consecutive blocks ``first..last`` read by :class:`LogReader`."""

    first: int
    last: int
    last_hash: str | None
    logs: list[Any]
    rows: list[TransferLog] | None = None  # ``logs`` decoded already, when they are


@dataclass
class _Window:
    """The adaptive window size and its grow/shrink bookkeeping."""

    settings: IndexSettings
    size: int = 0
    clean: int = 0
    shrinks: int = 0

    def spans(self, first: int, last: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        while first <= last and len(out) < self.settings.windows_per_batch:
            end = min(last, first + self.size - 1)
            out.append((first, end))
            first = end + 1
        return out

    def shrink(self, error: Exception) -> None:
        """Halve the window; raises ``error`` when it cannot get any smaller."""
        if self.size <= self.settings.min_window:
            raise error
        self.size = max(self.settings.min_window, self.size // 2)
        self.clean = 0
        self.shrinks += 1

    def succeeded(self, densest: int) -> None:
        """A whole batch was answered; ``densest`` is the most logs one window returned."""
        if densest >= self.settings.dense_logs:
            self.clean = 0
            return
        self.clean += 1
        if self.clean >= self.settings.grow_after:
            self.size = min(self.settings.max_window, self.size * 2)
            self.clean = 0


def _refused(error: Exception) -> bool:
    """Errors that mean "ask for less", as nodes and providers word them differently."""
    if isinstance(error, MethodUnsupported):
        return False
    return isinstance(error, RpcError | MalformedResponse | UpstreamError | DeadlineExceeded)


class LogReader:
    """Adaptive, batched ``eth_getLogs`` of one contract's logs matching ``topics``."""

    def __init__(
        self,
        rpc: JsonRpc,
        address: str,
        topics: list[Any],
        settings: IndexSettings,
        *,
        with_hashes: bool = True,
        known: dict[int, str] | None = None,
    ) -> None:
        """``known``: block hashes already read before any of these logs (the head the
        indexer was started at), so a span ending there costs no hash read."""
        self._rpc = rpc
        self._known = known or {}
        self._filter = {"address": address, "topics": topics}
        self._window = _Window(settings, size=settings.window)
        self._with_hashes = with_hashes
        self.requests = 0

    @property
    def shrinks(self) -> int:
        return self._window.shrinks

    async def chunks(self, first: int, last: int) -> AsyncGenerator[Chunk, None]:
        """Yield chunks covering ``first..last`` in order, without gaps."""
        while first <= last:
            chunk = await self._next_chunk(first, last)
            if chunk is None:
                continue
            yield chunk
            first = chunk.last + 1

    async def _next_chunk(self, first: int, last: int) -> Chunk | None:
        """Read one batch of windows; None when the window had to shrink first."""
        spans = self._window.spans(first, last)
        hashes = await self._end_hashes(spans)
        try:
            replies = await self._rpc.batch(
                [("eth_getLogs", [self._params(s)]) for s in spans], tolerate=RpcError
            )
        except (UpstreamError, DeadlineExceeded) as exc:
            self._window.shrink(exc)
            return None
        self.requests += len(spans)
        good = _leading_successes(replies)
        if good == 0:
            error = replies[0]
            self._window.shrink(error if isinstance(error, Exception) else MalformedResponse(""))
            return None
        if good == len(spans):
            self._window.succeeded(max(len(r) for r in replies))
        logs = [log for reply in replies[:good] for log in reply]
        return Chunk(spans[0][0], spans[good - 1][1], hashes[good - 1], logs)

    def _params(self, span: tuple[int, int]) -> dict[str, Any]:
        return {**self._filter, "fromBlock": hex(span[0]), "toBlock": hex(span[1])}

    async def _end_hashes(self, spans: list[tuple[int, int]]) -> list[str | None]:
        """Hashes of the span ends, read BEFORE their logs (see the module docstring)."""
        if not self._with_hashes:
            return [None] * len(spans)
        ends = [end for _, end in spans]
        unknown = [end for end in ends if end not in self._known]
        read = dict(zip(unknown, await block_hashes(self._rpc, unknown), strict=True))
        hashes = [self._known.get(end) or read.get(end) for end in ends]
        if None in hashes:
            raise UpstreamError("a block being indexed vanished (reorg); index again")
        return hashes


def _leading_successes(replies: list[Any]) -> int:
    """How many replies, from the first, are log lists (later ones are discarded)."""
    for i, reply in enumerate(replies):
        if not isinstance(reply, list):
            if isinstance(reply, Exception) and not _refused(reply):
                raise reply
            return i
    return len(replies)


async def block_hashes(rpc: JsonRpc, numbers: Sequence[int]) -> list[str | None]:
    """Current hash of each block number (None for a block the chain does not have)."""
    if not numbers:
        return []
    replies = await rpc.batch([("eth_getBlockByNumber", [hex(n), False]) for n in numbers])
    out: list[str | None] = []
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
        out.append(reply.get("hash") if isinstance(reply, dict) else None)
    return out


def parse_transfers(logs: Sequence[Any]) -> list[TransferLog]:
    """ERC-20 Transfer logs as rows; ERC-721-style (4 topics) and removed logs are skipped.

    The indexer's hot loop (one call per log), hence positional construction.
    """
    out: list[TransferLog] = []
    append = out.append
    for log in logs:
        topics: Sequence[str] = log.get("topics") or ()
        data = log.get("data") or ""
        if len(topics) != 3 or len(data) != 66 or log.get("removed"):
            continue
        if topics[0] != TRANSFER_TOPIC and topics[0].lower() != TRANSFER_TOPIC:
            continue
        append(
            TransferLog(
                int(log["blockNumber"], 16),
                int(log["logIndex"], 16),
                log["transactionHash"].lower(),
                topic_address(topics[1]),
                topic_address(topics[2]),
                int(data, 16),
            )
        )
    return out


async def head_block(rpc: JsonRpc) -> int:
    return (await read_head(rpc)).number


async def find_start_block(
    rpc: JsonRpc, token: str, head: int, fanout: int = 16, floor: int = 0
) -> int:
    """First block at which ``token`` has code (:func:`tokenrisk.chain.history.creation_block`).

    Returns 0 when the node has no state for old blocks (non-archive): ``eth_getLogs``,
    which full nodes serve over all of history, then reads from genesis.  ``floor``:
    the oldest block whose state the node keeps, when known (the search asks nothing
    below it).  Raises NotFoundError when ``token`` has no code at ``head``.
    """
    if not await has_code(rpc, token, [head]) == [True]:
        raise NotFoundError("no contract code at the token address")
    found = await creation_block(rpc, token, head, fanout, floor)
    return 0 if found is None else found


async def total_supply(rpc: JsonRpc, token: str, block: str = "latest") -> int | None:
    """``totalSupply()`` of ``token``; None when it reverts or returns garbage."""
    try:
        reply = await rpc.call("eth_call", call_params(token, encode_call("totalSupply()"), block))
    except CallReverted:
        return None
    return decode_uint(reply)


async def top_holders(
    store: Store, chain_id: int, token: str, limit: int = 50
) -> list[tuple[str, int]]:
    """Indexed holders with a positive balance: (checksummed address, balance), largest
    first, ties by address.  Index the token first (``index_token``).  Read once per
    index state (:func:`memo_at_index_head`)."""
    if limit <= 0:
        return []

    async def read() -> list[tuple[str, int]]:
        return await asyncio.to_thread(store.top_holders, chain_id, token, limit)

    return list(await memo_at_index_head(store, chain_id, token, ("top", limit), read))


async def top_holders_checked(
    rpc: JsonRpc, store: Store, chain_id: int, token: str, limit: int = 50, pool: int = 4
) -> list[tuple[str, int]]:
    """Like ``top_holders``, with balances re-read by ``balanceOf`` in one batch.

    For tokens whose balances move without Transfer logs (reflection, rebasing) the
    index is only an approximation: this takes the ``limit * pool`` largest indexed
    holders (:func:`holder_candidates`), replaces their balances by the chain's, and
    ranks those again (:func:`ranked_live`).  A holder whose ``balanceOf`` reverts keeps
    its indexed balance.
    """
    candidates = await holder_candidates(store, chain_id, token, limit, pool)
    return await ranked_live(rpc, token, candidates, limit)


async def holder_candidates(
    store: Store, chain_id: int, token: str, limit: int = 50, pool: int = 4
) -> list[tuple[str, int]]:
    """The ``limit * pool`` largest indexed holders: (address, indexed balance)."""
    return list(await asyncio.to_thread(store.top_holders, chain_id, token, limit * pool))


async def ranked_live(
    rpc: JsonRpc, token: str, candidates: list[tuple[str, int]], limit: int
) -> list[tuple[str, int]]:
    """The ``limit`` largest of ``candidates`` by the balances ``balanceOf`` reads now
    (one batch; a holder whose call reverts keeps its indexed balance), zeros left out."""
    calls = [
        ("eth_call", call_params(token, encode_call("balanceOf(address)", [holder])))
        for holder, _ in candidates
    ]
    replies = await rpc.batch(calls) if calls else []
    live = [
        (holder, indexed if isinstance(reply, Exception) else (decode_uint(reply) or 0))
        for (holder, indexed), reply in zip(candidates, replies, strict=True)
    ]
    ranked = sorted((x for x in live if x[1] > 0), key=lambda x: (-x[1], x[0].lower()))
    return ranked[:limit]


async def holder_count(store: Store, chain_id: int, token: str) -> int | None:
    """Indexed addresses with a positive balance, the zero address excluded.

    None when the token has never been indexed: its count is unknown, not zero.  Counted
    once per head at which this process indexed the token (the count cannot change until
    the index moves, and it moves only with the head).
    """
    at = _content_key(store, chain_id, token)
    key = ("holders", chain_id, token.lower(), at)
    if at is not None:
        found, known = store.memo.get(key)
        if found and known is not None:
            return int(known)
    if await asyncio.to_thread(store.get_cursor, chain_id, token) is None:
        return None
    count = await asyncio.to_thread(store.holder_count, chain_id, token)
    if at is not None:
        store.memo.put(key, count)
    return count


async def index_token(
    rpc: JsonRpc,
    store: Store,
    chain_id: int,
    token: str,
    *,
    to_block: int | None = None,
    window: int | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
    settings: IndexSettings | None = None,
) -> IndexStats:
    """Bring the index of ``token`` up to ``to_block`` (default: the head).

    ``window`` overrides ``settings.window`` (the first eth_getLogs span).  Raises the
    rpc errors (NodeUnavailable, DeadlineExceeded, RpcError when even a one-block window
    is refused), NotFoundError (no code at ``token``), StoreError, and StoreConflict
    when another indexer works on the same token.
    """
    settings = _settings(settings, window)
    token = token.lower()
    started = time.perf_counter()
    head = await read_head(rpc)
    last = head.number if to_block is None else min(to_block, head.number)
    before = _indexed(store, chain_id, token)
    if last == head.number and before is not None and before.head == head.hash:
        return IndexStats(chain_id, token, last + 1, last)  # indexed here at this very head
    # the head's hash was read before any log: a span ending at the head needs no read
    known = {head.number: head.hash} if head.hash else None
    reader = LogReader(rpc, token, [TRANSFER_TOPIC], settings, known=known)
    first = _first_logs(store, chain_id, token)
    try:
        known_cursor = await asyncio.to_thread(store.get_cursor, chain_id, token)
        ahead = await _read_ahead(rpc, known_cursor, settings, last, reader)
        if ahead is not None:
            cursor, stored, rolled_back = ahead[0], True, 0
        else:
            cursor, stored, rolled_back = await _resume(
                rpc, store, (chain_id, token, known_cursor), settings, last, head
            )
        resumed = (cursor.last_block, (cursor.last_block_hash or "").lower())
        stats = IndexStats(chain_id, token, cursor.last_block + 1, last)
        stats.rolled_back_blocks = rolled_back
        expected = cursor if stored else None
        if ahead is not None:  # the window after the cursor, read beside its hash check
            expected = Cursor(cursor.start_block, ahead[1].last, ahead[1].last_hash)
            _committed(stats, await _commit(store, stats, cursor, expected, ahead[1]), progress)
        at = (head, last)
        given = await _taken_window(store, chain_id, token, at, None if stored else cursor)
        after = expected or cursor  # past the read-ahead window, when there was one
        chunks = _chunks(reader, given, after.last_block + 1, last)
        await _run(chunks, store, expected, after, stats, (progress, first))
        stats.requests, stats.shrinks = reader.requests + bool(given), reader.shrinks
        stats.seconds = time.perf_counter() - started
        if last == head.number:
            _reached(store, chain_id, token, head, before if stored else None, resumed)
        return stats
    finally:
        _publish(first, None)  # no first batch holding the token's whole history


async def memo_at_index_head(
    store: Store, chain_id: int, token: str, key: Hashable, compute: Callable[[], Awaitable[T]]
) -> T:
    """``compute()`` (something read from the token's index, or fixed by it), remembered
    while the token's indexed transfers stay as this process last brought them up to
    date: at the same head, or at a later one when this process itself read the blocks
    between and found no transfer of the token (:class:`Indexed`)."""
    at = _content_key(store, chain_id, token)
    full = ("derived", chain_id, token.lower(), at, key)
    if at is not None:
        found, known = store.memo.get(full)
        if found:
            return cast(T, known)
    value = await compute()
    if at is not None and _content_key(store, chain_id, token) == at:
        store.memo.put(full, value)
    return value


@dataclass(frozen=True)
class Indexed:
    """Where this process last brought a token's index up to date: the head (hash and
    number), the store's :meth:`~Store.content_version` of the token then, and ``content``,
    a key of the indexed transfers themselves.  ``content`` is carried to a later head
    only when this process resumed from exactly that head's cursor (no other process
    wrote in between: the cursor moves with every commit) and its own windows up to
    the new head held no transfer of the token; otherwise it is new."""

    head: str
    number: int
    version: tuple[int, int]
    content: tuple[str, tuple[int, int]]


def _indexed(store: Store, chain_id: int, token: str) -> Indexed | None:
    """This process's last :class:`Indexed` of ``token``, while no write made here has
    changed its transfers since (else None)."""
    found, value = store.memo.get(("indexed", chain_id, token.lower()))
    if not found or not isinstance(value, Indexed):
        return None
    return value if value.version == store.content_version(chain_id, token) else None


def _content_key(store: Store, chain_id: int, token: str) -> Hashable | None:
    found = _indexed(store, chain_id, token)
    return None if found is None else found.content


def index_content(store: Store, chain_id: int, token: str) -> Hashable | None:
    """A key of ``token``'s indexed transfers as this process last brought them up to
    date (:class:`Indexed`), None when unknown: equal keys before and after a refresh
    mean the refresh changed nothing that is read from the index."""
    return _content_key(store, chain_id, token)


def _reached(
    store: Store,
    chain_id: int,
    token: str,
    head: ChainHead,
    before: Indexed | None,
    resumed: tuple[int, str],
) -> None:
    """Remember that the index of ``token`` is at ``head`` (see :class:`Indexed`)."""
    version = store.content_version(chain_id, token)
    content = (head.hash, version)
    if before is not None and before.version == version and resumed == (before.number, before.head):
        content = before.content
    store.memo.put(("indexed", chain_id, token), Indexed(head.hash, head.number, version, content))


def _settings(settings: IndexSettings | None, window: int | None) -> IndexSettings:
    settings = settings or IndexSettings()
    if window is None:
        return settings
    return replace(
        settings,
        window=window,
        min_window=min(settings.min_window, window),
        max_window=max(settings.max_window, window),
    )


async def _run(
    chunks: AsyncGenerator[Chunk, None],
    store: Store,
    expected: Cursor | None,
    cursor: Cursor,
    stats: IndexStats,
    told: tuple[Callable[[IndexProgress], None] | None, FirstLogs | None],
) -> None:
    """Fetch chunks and commit each one, overlapping a commit with the next fetch.
    ``told``: the progress callback, and where a first batch that holds the token's
    whole history is published (:func:`first_logs`)."""
    progress, first = told
    pending: asyncio.Task[tuple[int, int]] | None = None
    try:
        async for chunk in chunks:
            new = Cursor(cursor.start_block, chunk.last, chunk.last_hash)
            if pending is not None:
                _committed(stats, await pending, progress)
            whole = expected is None and chunk.last == stats.to_block
            tell = first if whole else None
            if tell is not None and chunk.rows is not None:  # decoded: published now
                _publish_rows(tell, FirstBatch(new.start_block, chunk.rows))
            pending = asyncio.create_task(_commit(store, stats, expected, new, chunk, tell))
            expected = new
        if pending is not None:
            _committed(stats, await pending, progress)
    finally:
        await _settle(pending)


async def _commit(
    store: Store,
    stats: IndexStats,
    expected: Cursor | None,
    new: Cursor,
    chunk: Chunk,
    first: FirstLogs | None = None,
) -> tuple[int, int]:
    """Decode and store one chunk in a worker thread; returns (last block, logs).
    ``first``: where the decoded rows are published before they are stored (a token's
    whole history read in one batch, :func:`first_logs`; rows decoded already were
    published by the caller)."""
    loop = asyncio.get_running_loop()

    def work() -> tuple[int, int]:
        rows = chunk.rows if chunk.rows is not None else parse_transfers(chunk.logs)
        if first is not None and chunk.rows is None:
            loop.call_soon_threadsafe(_publish_rows, first, FirstBatch(new.start_block, rows))
        store.apply_window(stats.chain_id, stats.token, expected=expected, new=new, logs=rows)
        return new.last_block, len(rows)

    return await asyncio.to_thread(work)


async def _chunks(
    reader: LogReader, given: Chunk | None, first: int, last: int
) -> AsyncGenerator[Chunk, None]:
    """``reader``'s chunks of ``first..last``, the first of them ``given`` when it was
    read already (:func:`first_window_ahead`: it starts at ``first``)."""
    if given is not None:
        yield given
        first = given.last + 1
    async with aclosing(reader.chunks(first, last)) as rest:
        async for chunk in rest:
            yield chunk


# A FIRST INDEX'S FIRST WINDOW, ASKED WITH THE CHECK'S HEAD


class _Ahead(NamedTuple):
    head: ChainHead
    start: int
    chunk: asyncio.Task[Chunk]


def first_window_ahead(
    rpc: JsonRpc, store: Store, chain_id: int, token: str, head: ChainHead
) -> None:
    """The first window of a token's first index here, asked now at ``head`` (a head
    read a moment ago, likely still the chain's), before the check has read its own
    head and confirmed that ``token`` is a token (issue #27: on first sight the logs
    then come a round trip earlier, and who holds is known in time to read their
    balances before their sells are planned).  Only where the start block is known
    without asking the node (a devnet: :func:`_start_block`) and this process has not
    indexed ``token``.  :func:`index_token` uses the window only when it finds no
    cursor, starts at the same block and reads up to this very head (the same number
    and hash): the window it would have read itself; otherwise it is dropped."""
    token = token.lower()
    start = 0 if chain_id in DEVNET_CHAIN_IDS else None
    if start is None or head.number < start or not head.hash:
        return
    if _indexed(store, chain_id, token) is not None:
        return
    known = {head.number: head.hash}
    reader = LogReader(rpc, token, [TRANSFER_TOPIC], IndexSettings(), known=known)
    chunk = asyncio.ensure_future(_decoded(_first_chunk(reader, start, head.number)))
    chunk.add_done_callback(retrieved)
    store.memo.put(("first window", chain_id, token), _Ahead(head, start, chunk))


async def _decoded(read: Awaitable[Chunk]) -> Chunk:
    """The chunk ``read`` gives, its logs decoded (in a worker thread, while the check
    waits for its head anyway), so a first index publishes them without a thread hop."""
    chunk = await read
    return replace(chunk, rows=await asyncio.to_thread(parse_transfers, chunk.logs))


async def _taken_window(
    store: Store, chain_id: int, token: str, at: tuple[ChainHead, int], cursor: Cursor | None
) -> Chunk | None:
    """:func:`first_window_ahead`'s window, taken (once) when it is the one this run
    reads first: from the new cursor's first block up to ``at`` (the head, and the last
    block to index, which must be it), read already and without error; ``cursor``:
    the new one (None: a stored one, the window is not used).  Counted as
    ``index_window`` used or dropped in ``tokenrisk_sent_ahead_total``."""
    key = ("first window", chain_id, token)
    ahead = store.memo.value(key)
    if not isinstance(ahead, _Ahead):
        return None
    store.memo.forget(key)
    head, last = at
    same = ahead.head.number == head.number == last and ahead.head.hash == head.hash
    chunk = ahead.chunk
    if cursor is None or not same or ahead.start != cursor.last_block + 1:
        chunk.cancel()  # a no-op once it is done
        metrics.sent_ahead(WINDOW, False)
        return None
    await asyncio.wait([chunk])  # in flight: the very request this run would send
    used = not chunk.cancelled() and chunk.exception() is None
    metrics.sent_ahead(WINDOW, used)
    return chunk.result() if used else None  # else read again, as without it


WINDOW = "index_window"
"""``tokenrisk_sent_ahead_total``'s ``planned`` for :func:`first_window_ahead`."""


# A FIRST INDEX'S LOGS, BEFORE THEY ARE STORED


class FirstBatch(NamedTuple):
    """A token's whole history of decoded Transfer logs (``logs``), indexed from block
    ``start`` (the cursor's start block, which the store will hold)."""

    start: int
    logs: list[TransferLog]


FirstLogs = asyncio.Future[FirstBatch | None]
"""The decoded Transfer logs of a token's whole history, published by the indexer the
moment it has decoded them (before its store transaction), or None."""
FIRST_LOGS_MAX = 20_000
"""Most logs published in memory: the reader's guess from them runs on the event loop."""


def _first_logs(store: Store, chain_id: int, token: str) -> FirstLogs:
    """A fresh future for this indexer run (it replaces an earlier run's), or the one
    a reader asked for before the run began (:func:`next_first_logs`)."""
    found = first_logs(store, chain_id, token)
    if found is not None and not found.done():
        return found
    future: FirstLogs = asyncio.get_running_loop().create_future()
    store.memo.put(("first logs", chain_id, token.lower()), future)
    return future


def next_first_logs(store: Store, chain_id: int, token: str) -> FirstLogs:
    """:func:`first_logs` of the latest run (under way or over), or, before any run
    here, of the next one: for a reader that may start before the indexer has begun
    (every run settles it: with its first batch, or None)."""
    found = first_logs(store, chain_id, token)
    return found if found is not None else _first_logs(store, chain_id, token)


def first_logs(store: Store, chain_id: int, token: str) -> FirstLogs | None:
    """The latest index run's :data:`FirstLogs` of ``token`` (None: no run here yet).

    Set to the decoded logs when that run started from an empty index and its first
    batch reached the head (issue #27: on a token's first check, who sells can be
    guessed from them while they are being committed, instead of by a store query
    after the commit); None when it did not.  A guess, never an answer: the store is
    what the check reads once the index is refreshed."""
    found, value = store.memo.get(("first logs", chain_id, token.lower()))
    if not found or not isinstance(value, asyncio.Future):
        return None
    # a store outlives an event loop (tests, a restarted service): another loop's is stale
    return value if value.get_loop() is asyncio.get_running_loop() else None


def _publish_rows(first: FirstLogs, batch: FirstBatch) -> None:
    """``batch`` published, unless it is too large to guess from on the event loop."""
    if len(batch.logs) <= FIRST_LOGS_MAX:
        _publish(first, batch)


def _publish(first: FirstLogs | None, rows: FirstBatch | None) -> None:
    if first is not None and not first.done():
        first.set_result(rows)


def _committed(
    stats: IndexStats, done: tuple[int, int], progress: Callable[[IndexProgress], None] | None
) -> None:
    stats.logs += done[1]
    if progress is not None:
        progress(IndexProgress(stats.from_block, stats.to_block, done[0], stats.logs))


async def _settle(pending: asyncio.Task[tuple[int, int]] | None) -> None:
    """On the way out (error, cancellation) let a running commit finish: it is atomic,
    and returning only afterwards means a caller that resumes sees a settled cursor."""
    if pending is None:
        return
    if not pending.done():
        await asyncio.wait([pending])
    if not pending.cancelled():
        pending.exception()  # retrieved, so asyncio does not log it as lost


async def _resume(
    rpc: JsonRpc,
    store: Store,
    known: tuple[int, str, Cursor | None],
    settings: IndexSettings,
    last: int,
    head: ChainHead,
) -> tuple[Cursor, bool, int]:
    """The cursor to continue from, whether it is stored, and blocks rolled back.
    ``known``: the chain, the token and its stored cursor (read by the caller).

    A cursor at the head block with the head's hash needs no reorg check (the common
    case of a token checked again in the same block: no node call at all).
    """
    chain_id, token, cursor = known
    rolled_back = 0
    at_head = (
        cursor is not None
        and cursor.last_block == head.number
        and (cursor.last_block_hash or "").lower() == head.hash
    )
    if cursor is not None and not at_head:
        cursor, rolled_back = await _heal_reorg(rpc, store, chain_id, token, cursor, settings)
    if cursor is not None:
        return cursor, True, rolled_back
    start = await _start_block(rpc, chain_id, token, settings, last)
    return Cursor(start, start - 1, None), False, rolled_back


async def _read_ahead(
    rpc: JsonRpc,
    cursor: Cursor | None,
    settings: IndexSettings,
    last: int,
    reader: LogReader,
) -> tuple[Cursor, Chunk] | None:
    """The stored cursor and the first chunk of logs after it, read in ONE round trip
    with the cursor block's hash (the reorg check); None when the cursor is not a few
    blocks behind (at most one ``window``) or that hash no longer matches (then
    :func:`_resume` heals the reorg and the chunk is dropped, never stored).

    A check at a new head finds its token's index a block or a few behind: the hash
    check and the new logs one after the other cost a sequential round trip more than
    the logs alone (issue #27).  The logs are used only when this head's read of the
    cursor's block confirms the cursor, so the index stores what the checked order
    would have stored.  ``cursor``: the stored one (read by the caller).
    """
    if cursor is None or cursor.last_block_hash is None:
        return None
    if not 0 < last - cursor.last_block <= settings.window:
        return None
    check, chunk = await asyncio.gather(
        block_hashes(rpc, [cursor.last_block]),
        _first_chunk(reader, cursor.last_block + 1, last),
        return_exceptions=True,
    )
    if isinstance(check, BaseException):
        raise check
    if check[0] != cursor.last_block_hash:
        return None  # a reorg: healed by _resume, these logs are not used
    if isinstance(chunk, BaseException):
        raise chunk
    return cursor, chunk


async def _first_chunk(reader: LogReader, first: int, last: int) -> Chunk:
    """The reader's first chunk of ``first..last`` (``first <= last``)."""
    async with aclosing(reader.chunks(first, last)) as chunks:
        return await anext(chunks)


async def _start_block(
    rpc: JsonRpc, chain_id: int, token: str, settings: IndexSettings, head: int
) -> int:
    if settings.start_block is not None:
        return settings.start_block
    if chain_id in DEVNET_CHAIN_IDS:
        return 0
    return await find_start_block(rpc, token, head, floor=settings.state_floor)


async def _heal_reorg(
    rpc: JsonRpc, store: Store, chain_id: int, token: str, cursor: Cursor, settings: IndexSettings
) -> tuple[Cursor | None, int]:
    """Roll back what a reorg invalidated; None means the token was reset entirely."""
    if cursor.last_block_hash is None:
        return cursor, 0
    if (await block_hashes(rpc, [cursor.last_block]))[0] == cursor.last_block_hash:
        return cursor, 0
    points = await asyncio.to_thread(store.checkpoints, chain_id, token)
    current = await block_hashes(rpc, [block for block, _ in points])
    agreed = [block for (block, stored), now in zip(points, current, strict=True) if stored == now]
    if not agreed:
        await asyncio.to_thread(store.reset_token, chain_id, token)
        return None, cursor.last_block - cursor.start_block + 1
    target = max(cursor.start_block - 1, min(agreed[0], cursor.last_block - settings.reorg_depth))
    target_hash = (await block_hashes(rpc, [target]))[0] if target >= 0 else None
    to = Cursor(cursor.start_block, target, target_hash)
    await asyncio.to_thread(store.rollback, chain_id, token, expected=cursor, to=to)
    return to, cursor.last_block - target


__all__ = [
    "DEVNET_CHAIN_IDS",
    "TRANSFER_TOPIC",
    "Chunk",
    "IndexProgress",
    "IndexSettings",
    "IndexStats",
    "JsonRpc",
    "LogReader",
    "block_hashes",
    "find_start_block",
    "first_logs",
    "first_window_ahead",
    "next_first_logs",
    "head_block",
    "holder_count",
    "memo_at_index_head",
    "index_token",
    "parse_transfers",
    "top_holders",
    "top_holders_checked",
    "holder_candidates",
    "ranked_live",
    "total_supply",
]

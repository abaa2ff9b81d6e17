"""The one reader of a chain's head block.

Simulations start after the head, the results cache is keyed on it, ``/health`` reports
its age and the holder index indexes up to it: all of them read it here, with one
``eth_getBlockByNumber("latest")``.

Inside :func:`one_head_per_request` (the API runs every check in one) each node's head
is read once and shared: the results-cache key, the simulations, the holder index and
the pool lookups of one request all see the same block, for one call instead of five.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from tokenrisk.errors import MalformedResponse


class Caller(Protocol):
    """What reading the head needs of :class:`tokenrisk.chain.rpc.RpcClient`."""

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any: ...


@dataclass(frozen=True)
class ChainHead:
    """A block as the node reports it: the head that was read, or (:meth:`after`) a
    block simulated after it, which has no hash.

    The one head type: the results cache, ``/health`` and the holder index key on it,
    and simulations are pinned to it (``tag``), keep its gas limit and charge its base
    fee to its fee recipient.
    """

    number: int
    timestamp: int  # unix seconds, the block's own clock
    hash: str = ""  # "" for a simulated block
    base_fee: int = 0  # wei; 0 for a block without ``baseFeePerGas`` (pre-London chains)
    gas_limit: int = 30_000_000  # the block's gas limit; simulations stay within it
    miner: str = "0x0000000000000000000000000000000000000000"  # the block's fee recipient
    read_at: float = field(default=0.0, compare=False, repr=False)  # monotonic, when asked

    @property
    def tag(self) -> str:
        """The block parameter pinning a request to this block (never "latest")."""
        return hex(self.number)

    def after(self, blocks: int, seconds: int) -> ChainHead:
        """The simulated block ``blocks`` and ``seconds`` later (same fees and gas limit)."""
        return replace(
            self, number=self.number + blocks, timestamp=self.timestamp + seconds, hash=""
        )


_REQUEST_HEADS: ContextVar[dict[int, asyncio.Future[ChainHead]] | None] = ContextVar(
    "tokenrisk_request_heads", default=None
)


@contextmanager
def one_head_per_request() -> Iterator[None]:
    """Within this block (and the tasks started in it) each node's head is read once."""
    token = _REQUEST_HEADS.set({})
    try:
        yield
    finally:
        _REQUEST_HEADS.reset(token)


@contextmanager
def assumed_head(rpc: Caller, head: ChainHead) -> Iterator[bool]:
    """Within this block, and in the tasks started in it, this request's readers of
    ``rpc``'s head get ``head`` at once without asking the node: a head remembered from
    an earlier request, which the caller confirms with :func:`read_latest` before it
    uses anything read at it.  The rest of the request (other tasks, what runs after
    the block) does not see it.  Yields False outside a request: nothing is assumed."""
    heads = _REQUEST_HEADS.get()
    if heads is None:
        yield False
        return
    token = _REQUEST_HEADS.set({**heads, id(rpc): _done(head)})
    try:
        yield True
    finally:
        _REQUEST_HEADS.reset(token)


def share_head(rpc: Caller, head: ChainHead) -> None:
    """``head``, just read from ``rpc`` (:func:`read_latest`), is this request's head
    from now on, for every reader (inside :func:`one_head_per_request`)."""
    heads = _REQUEST_HEADS.get()
    if heads is not None:
        heads[id(rpc)] = _done(head)


def _done(head: ChainHead) -> asyncio.Future[ChainHead]:
    done: asyncio.Future[ChainHead] = asyncio.get_running_loop().create_future()
    done.set_result(head)
    return done


def request_head(rpc: Caller) -> ChainHead | None:
    """The head this request has already read from ``rpc`` (or assumed, inside
    :func:`assumed_head`), when it has one; None while it is being read, after a failed
    read, or outside a request."""
    heads = _REQUEST_HEADS.get()
    found = heads.get(id(rpc)) if heads is not None else None
    if found is None or not found.done() or found.cancelled() or found.exception() is not None:
        return None
    return found.result()


async def read_latest(rpc: Caller) -> ChainHead:
    """The node's latest block, asked now even inside a request that has a head (the
    confirmation of an assumed one); raises as :func:`read_head`."""
    return await _read(rpc)


async def read_head(rpc: Caller) -> ChainHead:
    """The node's latest block (the request's, inside :func:`one_head_per_request`).

    Raises the RPC client's errors (NodeUnavailable, DeadlineExceeded, RpcError,
    MalformedResponse); MalformedResponse too when the block lacks number/hash/timestamp.
    A failed read is not shared: the next reader asks again.
    """
    heads = _REQUEST_HEADS.get()
    if heads is None:
        return await _read(rpc)
    task = heads.get(id(rpc))
    if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
        task = asyncio.ensure_future(_read(rpc))
        task.add_done_callback(_retrieve)
        heads[id(rpc)] = task
    # shielded: one reader giving up (its own deadline) must not cancel the others' read
    return await asyncio.shield(task)


def _retrieve(task: asyncio.Future[ChainHead]) -> None:
    """Mark a failure as seen (its readers get it; none may be left to await it)."""
    if not task.cancelled():
        task.exception()


async def _read(rpc: Caller) -> ChainHead:
    asked = time.monotonic()
    block = await rpc.call("eth_getBlockByNumber", ["latest", False])
    return parse_head(block, asked)


# HOW OFTEN A CHAIN MAKES BLOCKS

BLOCK_SECONDS = {1: 12.0, 10: 2.0, 56: 3.0, 137: 2.0, 8453: 2.0, 42161: 0.25, 31337: 12.0}
"""Seconds between blocks per chain id, before this process has seen blocks of that
chain come (Ethereum's 12 s slot, also for a local anvil or Hardhat chain, which mines
on demand; the rollups' and sidechains' shorter blocks)."""
DEFAULT_BLOCK_SECONDS = 2.0
"""For a chain not listed above: short, so that a head is assumed current for little
time until the chain's own blocks show their interval."""
SMOOTHING = 0.25
"""Weight of the newest interval in the running estimate."""


@dataclass
class BlockClock:
    """The chain's interval between blocks as this process sees it, and whether a head
    read a little while ago is likely still the head.

    Two running averages over the head changes seen: the heads' own timestamps per block,
    and the time between the reads that first saw each new head (a node mining on
    demand, or a chain whose clock says more than its blocks' pace); the shorter wins.
    """

    seconds: float = DEFAULT_BLOCK_SECONDS
    stamped: float | None = None
    arrived: float | None = None
    last: ChainHead | None = None

    @classmethod
    def of_chain(cls, chain_id: int) -> BlockClock:
        """A clock starting from the chain's usual interval (:data:`BLOCK_SECONDS`)."""
        return cls(BLOCK_SECONDS.get(chain_id, DEFAULT_BLOCK_SECONDS))

    @property
    def interval(self) -> float:
        """Seconds between blocks: the measured ones, else the chain's usual interval."""
        measured = [s for s in (self.stamped, self.arrived) if s is not None]
        return min(measured) if measured else self.seconds

    def observe(self, head: ChainHead) -> None:
        """Take in a head that was read (``read_at``: monotonic, when it was asked)."""
        last = self.last
        if last is not None and head.number > last.number:
            blocks = head.number - last.number
            if head.timestamp >= last.timestamp:
                self.stamped = _mix(self.stamped, (head.timestamp - last.timestamp) / blocks)
            if head.read_at >= last.read_at > 0:
                self.arrived = _mix(self.arrived, (head.read_at - last.read_at) / blocks)
        if last is None or head.number > last.number:
            self.last = head

    def current(self, head: ChainHead, fraction: float, now: float) -> bool:
        """Whether ``head`` (read at ``head.read_at``, monotonic) was read less than
        ``fraction`` of a block interval before ``now``: then the chain has most likely
        not made another block since (with blocks every ``s`` seconds, a head read ``a``
        seconds ago has been replaced with a chance of about ``a / s``)."""
        return fraction > 0 and now - head.read_at < fraction * self.interval


def _mix(average: float | None, sample: float) -> float:
    return sample if average is None else (1 - SMOOTHING) * average + SMOOTHING * sample


def parse_head(block: Any, read_at: float = 0.0) -> ChainHead:
    """Decode a JSON-RPC block object; raises MalformedResponse on anything else."""
    try:
        return ChainHead(
            number=int(block["number"], 16),
            hash=str(block["hash"]).lower(),
            timestamp=int(block["timestamp"], 16),
            read_at=read_at,
            base_fee=int(block.get("baseFeePerGas") or "0x0", 16),
            gas_limit=int(block.get("gasLimit") or "0x1c9c380", 16),
            miner=str(block.get("miner") or "0x" + "0" * 40).lower(),
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise MalformedResponse("node sent a block without number, hash or timestamp") from exc

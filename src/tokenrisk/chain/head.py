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


_REQUEST_HEADS: ContextVar[dict[int, asyncio.Task[ChainHead]] | None] = ContextVar(
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


def _retrieve(task: asyncio.Task[ChainHead]) -> None:
    """Mark a failure as seen (its readers get it; none may be left to await it)."""
    if not task.cancelled():
        task.exception()


async def _read(rpc: Caller) -> ChainHead:
    asked = time.monotonic()
    block = await rpc.call("eth_getBlockByNumber", ["latest", False])
    return parse_head(block, asked)


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

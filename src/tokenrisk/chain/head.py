"""The one reader of a chain's head block.

Simulations start after the head, the results cache is keyed on it, ``/health`` reports
its age and the holder index indexes up to it: all of them read it here, with one
``eth_getBlockByNumber("latest")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tokenrisk.errors import MalformedResponse


class Caller(Protocol):
    """What reading the head needs of :class:`tokenrisk.chain.rpc.RpcClient`."""

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any: ...


@dataclass(frozen=True)
class ChainHead:
    """The latest block of a chain as the node reports it."""

    number: int
    hash: str
    timestamp: int  # unix seconds, the block's own clock


async def read_head(rpc: Caller) -> ChainHead:
    """The node's latest block.

    Raises the RPC client's errors (NodeUnavailable, DeadlineExceeded, RpcError,
    MalformedResponse); MalformedResponse too when the block lacks number/hash/timestamp.
    """
    block = await rpc.call("eth_getBlockByNumber", ["latest", False])
    return parse_head(block)


def parse_head(block: Any) -> ChainHead:
    """Decode a JSON-RPC block object; raises MalformedResponse on anything else."""
    try:
        return ChainHead(
            number=int(block["number"], 16),
            hash=str(block["hash"]).lower(),
            timestamp=int(block["timestamp"], 16),
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise MalformedResponse("node sent a block without number, hash or timestamp") from exc

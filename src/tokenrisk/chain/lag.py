"""Lagging backends: when a node answers as if a block we read from it did not exist yet.

Hosted providers put several nodes behind one URL and route each request to any of
them; those backends trail one another by a block or two.  A check pins the head it read
(block H, from the backend that was ahead) and its next request may land on a backend
whose head is still H - 1: geth answers ``-32000 "header not found"`` for state at H
(``"header for hash not found"`` for its hash, ``"unknown block"`` for logs by hash) and
``null`` for the block itself.  Nothing is wrong with the request: the same read a moment
later, or on another backend, answers.

So a read naming a *recent* block (at most :data:`SLACK` above the highest head this
client has seen and less than :data:`WINDOW` below it, or the hash of a recent head)
that comes back with one of those answers is sent again, a bounded number of times with
a short backoff (:func:`waits`), as the providers' own documentation advises for
"header not found".  Older or unknown blocks are never retried: there the answer is the
node's, not a lag.  Every method here is a read, so sending it again changes nothing.
When the lag outlasts the retries the caller gets
:class:`~tokenrisk.errors.NodeBehind` (503), never the node's text as a 502.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from typing import Any

from tokenrisk.errors import NodeBehind, RpcError

WINDOW = 8
"""How far below the highest head seen a block still counts as recent: providers'
backends trail by a block or two, an L2's with sub-second blocks by a few more.  Kept
small: "header not found" for an older block is the node's answer, not a lag (and the
archive-depth probe reads 16 blocks down and deeper)."""
SLACK = 2
"""How far above the highest head seen a block still counts as "just above" it."""
HASHES_KEPT = 16
"""Recent head hashes remembered (a request pinned by hash names one of them)."""

BLOCK_PARAM = {
    "eth_call": 1,
    "eth_getCode": 1,
    "eth_getBalance": 1,
    "eth_getStorageAt": 2,
    "eth_getTransactionCount": 1,
    "eth_getProof": 2,
    "eth_createAccessList": 1,
    "eth_estimateGas": 1,
    "debug_traceCall": 1,
    "eth_simulateV1": 1,
    "eth_getBlockByNumber": 0,
    "eth_getBlockByHash": 0,
    "eth_getBlockReceipts": 0,
}
"""Reads at a block, and the position of their block parameter (EIP-1898 objects too)."""
NULL_WHEN_MISSING = frozenset(
    {"eth_getBlockByNumber", "eth_getBlockByHash", "eth_getBlockReceipts"}
)
"""Reads a node answers with ``null`` for a block it does not have (yet)."""

_MISSING_TEXT = (
    "header not found",  # geth, nethermind: state or header at a number above the head
    "header for hash not found",  # geth: EIP-1898 block hash it does not know
    "unknown block",  # geth eth_getLogs by hash, reth
    "block not found",  # erigon, besu, reth
    "could not be found",  # nethermind: "Block ... could not be found"
    "beyond current head",  # eth_getLogs to a block above the head (execution-apis tests)
    "invalid block range",  # eth_getLogs from a block above the head to "latest"
)
_HEX_NUMBER = re.compile(r"0x[0-9a-fA-F]{1,16}")
_HASH = re.compile(r"0x[0-9a-fA-F]{64}")


def waits(retries: int, backoff: float) -> tuple[float, ...]:
    """Seconds to wait before each attempt: none before the first two (a load balancer
    routes the second to another backend), then ``backoff`` doubling: a bounded total."""
    return (0.0,) * min(2, retries + 1) + tuple(backoff * 2**i for i in range(retries - 1))


def says_missing(error: RpcError) -> bool:
    """Does the node's error say it does not have the block (yet)?"""
    message = error.message.lower()
    return any(text in message for text in _MISSING_TEXT)


class Lag:
    """One client's view of its node's heads, and the rule for reads that met a lagging
    backend.  ``retried`` counts the "not yet" answers met (tests, logs)."""

    def __init__(self, retries: int = 5, backoff: float = 0.05) -> None:
        self.waits = waits(retries, backoff)
        self.highest: int | None = None
        self.retried = 0
        self._hashes: deque[str] = deque(maxlen=HASHES_KEPT)

    def saw(self, method: str, params: Sequence[Any], result: Any) -> None:
        """Note a head the node reported (``eth_blockNumber``, the ``latest`` block)."""
        if method == "eth_blockNumber" and isinstance(result, str):
            self._head(_number(result), None)
        elif (
            method == "eth_getBlockByNumber"
            and params
            and params[0] == "latest"
            and isinstance(result, dict)
        ):
            self._head(_number(result.get("number")), result.get("hash"))

    def _head(self, number: int | None, block_hash: Any) -> None:
        if number is not None and (self.highest is None or number > self.highest):
            self.highest = number
        if isinstance(block_hash, str) and block_hash.lower() not in self._hashes:
            self._hashes.append(block_hash.lower())

    def behind(self, method: str, params: Sequence[Any], outcome: Any) -> bool:
        """Is ``outcome`` (a result, or the error instance) a backend's "not yet" for a
        recent block, so that the read should be sent again?

        Only a plain RpcError counts: a revert (whose reason a token chooses, and could
        make read "header not found"), an unsupported method, a refused batch or pruned
        state is an answer, never a lag.
        """
        if isinstance(outcome, BaseException):
            missing = type(outcome) is RpcError and says_missing(outcome)
        else:
            missing = outcome is None and method in NULL_WHEN_MISSING
        return missing and self.recent(block_of(method, params))

    def recent(self, block: int | str | None) -> bool:
        """A block number or hash at (or just above) a head this client saw."""
        if isinstance(block, str):
            return block.lower() in self._hashes
        if block is None or self.highest is None:
            return False
        return self.highest - WINDOW < block <= self.highest + SLACK

    def met(self, count: int = 1) -> bool:
        """Count ``count`` "not yet" answers; True for the client's first (worth a log
        line: the operator learns the node lags, once)."""
        first = self.retried == 0
        self.retried += count
        return first

    def gave_up(self, method: str) -> NodeBehind:
        return NodeBehind(f"the node stayed behind a recent block ({method})")


def block_of(method: str, params: Sequence[Any]) -> int | str | None:
    """The block a read names: a number, a hash, or None (a tag, or no block)."""
    if method == "eth_getLogs":
        query = params[0] if params and isinstance(params[0], dict) else {}
        named = [_named(query.get(key)) for key in ("blockHash", "toBlock", "fromBlock")]
        return next((block for block in named if block is not None), None)
    position = BLOCK_PARAM.get(method)
    if position is None or len(params) <= position:
        return None
    return _named(params[position])


def _named(tag: Any) -> int | str | None:
    if isinstance(tag, dict):
        tag = tag.get("blockHash") or tag.get("blockNumber")
    if not isinstance(tag, str):
        return None
    if _HASH.fullmatch(tag):
        return tag.lower()
    return _number(tag)


def _number(value: Any) -> int | None:
    if isinstance(value, str) and _HEX_NUMBER.fullmatch(value):
        return int(value, 16)
    return None

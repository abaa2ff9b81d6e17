"""When a contract was created, read from the node's history of state.

The one creation-block search of the project: the holder indexer starts a token's index
at its deployment block, the owner-power scan reads the deployer from that block's
receipts, and pool discovery finds a pool's creation event there when the node refuses
the full-range ``eth_getLogs`` (:mod:`tokenrisk.chain.created`).  All three need an
archive node (``eth_getCode`` at any old block); a node without that history answers
the search with an RPC error (StateUnavailable), which the search reports as "cannot
tell" (None); given the node's archive depth (:mod:`tokenrisk.chain.capabilities`) it
searches only the blocks whose state the node keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from tokenrisk.chain.tokens import is_contract_code
from tokenrisk.errors import RpcError


class JsonRpc(Protocol):
    """What the history search (and the holder indexer) needs of
    :class:`tokenrisk.chain.rpc.RpcClient` (fakes in unit tests)."""

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any: ...

    async def batch(
        self, calls: Sequence[tuple[str, Sequence[Any]]], *, tolerate: type[RpcError] = ...
    ) -> list[Any]: ...


async def has_code(rpc: JsonRpc, address: str, blocks: Sequence[int]) -> list[bool]:
    """Per block: does ``address`` hold contract code there (one batch; raises the first
    error).  An EIP-7702 delegation is not: a wallet delegating is not a contract created
    (:func:`~tokenrisk.chain.tokens.is_contract_code`, the one rule)."""
    replies = await rpc.batch([("eth_getCode", [address, hex(b)]) for b in blocks])
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return [is_contract_code(r) for r in replies]


async def creation_block(
    rpc: JsonRpc, address: str, head: int, fanout: int = 16, floor: int = 0
) -> int | None:
    """The block in which ``address`` got its code (searched in ``floor..head``).

    A k-ary search, ``fanout`` ``eth_getCode`` probes per batch (about log_fanout(head)
    round trips: 6 on Ethereum mainnet), then one batch that proves the answer: code at
    the block, none at the block before.  A block the node has no state for (an RPC
    error: pruned history, a node loaded from a state dump) counts as "no code seen", so
    a node that keeps recent history still finds recent contracts; None when the node
    cannot prove the answer (the contract is older than its history, or has no code at
    ``head``).  Transport failures (node down, throttled, garbage, timeout) raise.

    ``floor``: the oldest block the node kept state for when probed
    (:meth:`~tokenrisk.chain.capabilities.Capabilities.state_floor`); the search never
    asks below it (a full node would answer each such read with
    StateUnavailable), and a contract with code already at ``floor`` is older than the
    node's history: None.
    """
    lo, hi = max(0, min(floor, head)), head  # the first block with code *seen* is in lo..hi
    while lo < hi:
        step = max(1, (hi - lo) // fanout)
        probes = list(range(lo, hi, step))[:fanout]
        seen = await _code_seen(rpc, address, probes)
        first = next((i for i, has in enumerate(seen) if has), None)
        if first is None:
            lo = probes[-1] + 1
        else:
            hi = probes[first]
            lo = probes[first - 1] + 1 if first else lo
    edge = await _code_seen(rpc, address, [lo - 1, lo] if lo else [lo])
    if edge[-1] is not True or (lo and edge[0] is not False):
        return None  # no code there, or no state before it: cannot tell
    return lo


async def _code_seen(rpc: JsonRpc, address: str, blocks: Sequence[int]) -> list[bool | None]:
    """Per block: code (True), none (False) or no state at the node (None)."""
    calls = [("eth_getCode", [address, hex(b)]) for b in blocks]
    replies = await rpc.batch(calls, tolerate=RpcError)
    return [None if isinstance(r, RpcError) else len(str(r)) > 2 for r in replies]

"""Searching every configured chain, where a chain whose node is down is skipped and named.

Endpoints called without ``chainID`` (IsHoneypot, GetPairs, GetContractVerification)
ask every chain.  One chain's node being down (unreachable, broken replies, too slow)
must not fail the answer the other chains can give, but the answer must say it is
partial: the ids of the skipped chains are collected by :func:`skipped_chains`, which the
API turns into the ``X-Skipped-Chains`` header.  When no chain answered, or when only
one chain was asked, the failure is raised as usual (503/502/504).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, TypeVar

from tokenrisk.chain import pools as every_dex
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.chain.tokens import is_contract
from tokenrisk.errors import DeadlineExceeded, NodeUnavailable, UpstreamError

T = TypeVar("T")

NODE_DOWN = (NodeUnavailable, UpstreamError, DeadlineExceeded)
"""Failures that say nothing about the token, only about one chain's node."""

_skipped: ContextVar[set[int] | None] = ContextVar("tokenrisk_skipped_chains", default=None)
_unsearched: ContextVar[set[str] | None] = ContextVar("tokenrisk_unsearched", default=None)


@contextmanager
def unsearched_history() -> Iterator[set[str]]:
    """Collect, as ``<chain id>:<first>-<last>``, the block ranges whose Uniswap V4 pools
    a node's ``eth_getLogs`` limits kept the searches run inside this block from reading
    (GetPairs' ``X-Unsearched-Blocks`` header: the list may miss pools created there)."""
    found: set[str] = set()
    token = _unsearched.set(found)
    try:
        yield found
    finally:
        _unsearched.reset(token)


def note_unsearched(label: str) -> None:
    """Record one unsearched range for :func:`unsearched_history` (if collecting)."""
    collected = _unsearched.get()
    if collected is not None:
        collected.add(label)


@contextmanager
def skipped_chains() -> Iterator[set[int]]:
    """Collect the ids of chains skipped by the searches run inside this block."""
    found: set[int] = set()
    token = _skipped.set(found)
    try:
        yield found
    finally:
        _skipped.reset(token)


@dataclass(frozen=True)
class Search(Generic[T]):
    """Per-chain answers, and the chains whose node failed (with the failure)."""

    answers: list[tuple[Node, T]]
    down: list[tuple[Node, Exception]]

    def skip_down(self) -> list[tuple[Node, T]]:
        """The answers, noting the failed chains as skipped; raises the first failure
        when no chain answered or only one chain was asked."""
        if self.down and (not self.answers or len(self.answers) + len(self.down) == 1):
            raise self.down[0][1]
        collected = _skipped.get()
        if collected is not None:
            collected.update(node.id for node, _ in self.down)
        return self.answers


async def on_every_chain(nodes: Sequence[Node], work: Callable[[Node], Awaitable[T]]) -> Search[T]:
    """Run ``work`` on each chain's node concurrently.  A node failure (:data:`NODE_DOWN`) is
    kept in ``down``; any other error (bad input, a bug) is raised."""
    replies = await asyncio.gather(*(work(node) for node in nodes), return_exceptions=True)
    answers: list[tuple[Node, T]] = []
    down: list[tuple[Node, Exception]] = []
    for node, reply in zip(nodes, replies, strict=True):
        if isinstance(reply, NODE_DOWN):
            down.append((node, reply))
        elif isinstance(reply, BaseException):
            raise reply
        else:
            answers.append((node, reply))
    return Search(answers, down)


async def contract_chains(nodes: Sequence[Node], address: str) -> list[Node]:
    """The chains with code at ``address`` (chains whose node is down are skipped and
    named); raises the first node failure when every chain answered "no code" or failed."""
    search = await on_every_chain(nodes, lambda n: is_contract(n.rpc, [address]))
    if search.down and not any(flags[0] for _, flags in search.answers):
        raise search.down[0][1]  # "not a contract" only when every chain answered that
    return [node for node, flags in search.skip_down() if flags[0]]


async def search_pools(node: Node, token: str) -> every_dex.Found:
    """The token's pools on ``node``'s chain; the V4 search is bounded by the node's
    ``eth_getLogs`` range cap (probed once per node)."""
    span = (await node.capabilities()).get_logs_max_range if node.chain.uniswap_v4 else None
    return await every_dex.search_pools(
        node.rpc, node.chain, token, memo=node.native_pools, events=node.v4_pools, log_span=span
    )


def unsearched_known(nodes: Nodes, address: str, chain_id: int | None) -> list[str]:
    """``X-Unsearched-Blocks`` labels of the token's V4 history that the nodes' last
    searches (kept on each Node) could not read: a GetPairs answer from the results
    cache states them too, without searching again."""
    found = (every_dex.remembered(n.chain, n.v4_pools, address) for n in nodes.select(chain_id))
    return [f.label for f in found if f is not None]

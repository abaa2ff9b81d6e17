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

from tokenrisk.chain.registry import Chain
from tokenrisk.errors import DeadlineExceeded, NodeUnavailable, UpstreamError

T = TypeVar("T")

NODE_DOWN = (NodeUnavailable, UpstreamError, DeadlineExceeded)
"""Failures that say nothing about the token, only about one chain's node."""

_skipped: ContextVar[set[int] | None] = ContextVar("tokenrisk_skipped_chains", default=None)


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

    answers: list[tuple[Chain, T]]
    down: list[tuple[Chain, Exception]]

    def skip_down(self) -> list[tuple[Chain, T]]:
        """The answers, noting the failed chains as skipped; raises the first failure
        when no chain answered or only one chain was asked."""
        if self.down and (not self.answers or len(self.answers) + len(self.down) == 1):
            raise self.down[0][1]
        collected = _skipped.get()
        if collected is not None:
            collected.update(chain.id for chain, _ in self.down)
        return self.answers


async def on_every_chain(
    chains: Sequence[Chain], work: Callable[[Chain], Awaitable[T]]
) -> Search[T]:
    """Run ``work`` on each chain concurrently.  A node failure (:data:`NODE_DOWN`) is
    kept in ``down``; any other error (bad input, a bug) is raised."""
    replies = await asyncio.gather(*(work(chain) for chain in chains), return_exceptions=True)
    answers: list[tuple[Chain, T]] = []
    down: list[tuple[Chain, Exception]] = []
    for chain, reply in zip(chains, replies, strict=True):
        if isinstance(reply, NODE_DOWN):
            down.append((chain, reply))
        elif isinstance(reply, BaseException):
            raise reply
        else:
            answers.append((chain, reply))
    return Search(answers, down)

"""From an address to what a check trades, on every configured chain: the chain, the
token and its pools; and the search over every chain, which skips (and names) a chain
whose node is down.

Shared by IsHoneypot, GetContractVerification and GetPairs.  An address may name a token
or one of its pools; without ``chainID`` every configured chain is searched and the
deepest pool wins.

One chain's node being down (unreachable, broken replies, too slow) must not fail the
answer the other chains can give, but the answer must say it is partial: the ids of the
skipped chains are collected by :func:`skipped_chains`, which the API turns into the
``X-Skipped-Chains`` header.  When no chain answered, or when only one chain was asked,
the failure is raised as usual (503/502/504).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from tokenrisk.chain import dex
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.chain.pools import search_pools, unsearched_before
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.tokens import is_contract_code, is_erc20, read_token
from tokenrisk.checks.tasks import finish, given
from tokenrisk.errors import (
    DeadlineExceeded,
    NoContract,
    NodeUnavailable,
    NotAToken,
    NotFoundError,
    UpstreamError,
)
from tokenrisk.model import Pool, TokenInfo, Unsearched

# THE TARGET


@dataclass(frozen=True)
class Target:
    """The chain's node, the token and the pools a request resolved to."""

    node: Node
    token: str
    pools: list[Pool]
    unsearched: Unsearched | None = None
    """History the node kept the V4 pool search from reading (the answer says so)."""

    @property
    def chain(self) -> Chain:
        return self.node.chain


def _not_a_token(address: str, chain: Chain) -> NotAToken:
    return NotAToken(
        f"{address} is a contract on {chain.name} but not an ERC-20 token "
        "(totalSupply() and balanceOf() do not answer); is it a router or a wallet?"
    )


async def _target_on(node: Node, address: str, require_token: bool = True) -> Target | None:
    """The target on one chain, or None without code at ``address``.

    The code, the pair probe, the ERC-20 probe and the pools of ``address`` taken as a
    token are read at once (one round trip deep): most requests name a token, so only a
    pair address costs a second pool search, for the token it resolves to.
    """
    rpc, chain = node.rpc, node.chain

    async def probes() -> tuple[Any, tuple[str, str] | None, bool]:
        code, resolved, erc20 = await asyncio.gather(
            rpc.call("eth_getCode", [address, "latest"]),
            dex.resolve_pair(rpc, chain, address),
            is_erc20(rpc, address) if require_token else given(True),
        )
        if is_contract_code(code) and resolved is None and erc20:
            _confirmed(node, address)  # a token: its pools' search may take a round more
        return code, resolved, erc20

    (code, resolved, erc20), pools = await asyncio.gather(probes(), search_pools(node, address))
    if not is_contract_code(code):
        return None
    if resolved is None:
        if require_token and not erc20:
            raise _not_a_token(address, chain)
        return Target(node, address, pools.pools, pools.unsearched)
    token = resolved[0]
    if require_token and chain.base_token(token) is not None:
        raise NotAToken(
            f"{address} is a DEX pool of two base tokens on {chain.name}, not a token; "
            "check one of the tokens traded against them instead"
        )
    if require_token and not await is_erc20(rpc, token):
        raise _not_a_token(address, chain)
    pools = await search_pools(node, token)
    return Target(node, token, pools.pools, pools.unsearched)


async def resolve(nodes: list[Node], address: str, require_token: bool = True) -> Target:
    """Find the token (or pair) on the given chains, deepest pool wins.

    Raises NoContract (a NotFoundError) when no chain has a contract at ``address`` (an
    externally owned account or an unused address), NotAToken when the contract is not a token
    (unless ``require_token`` is False).
    """

    async def on(node: Node) -> Target | NotAToken | None:
        try:
            return await _target_on(node, address, require_token)
        except NotAToken as exc:  # a token on another chain still wins
            return exc

    search = await on_every_chain(nodes, on)
    if search.down and not any(t for _, t in search.answers):
        raise search.down[0][1]  # "no contract" only when every chain answered that
    found = [t for _, t in search.skip_down() if t is not None]
    targets = [t for t in found if isinstance(t, Target)]
    if not targets:
        not_tokens = [t for t in found if isinstance(t, NotAToken)]
        if not_tokens:
            raise not_tokens[0]
        raise NoContract(
            f"{address} is not a contract on the configured chains "
            "(an externally owned account or an unused address): nothing to check"
        )
    return max(targets, key=lambda t: t.pools[0].depth if t.pools else -2.0)


def pick_pool(
    target: Target, pair: str | None, address: str, router: str | None = None
) -> Pool | None:
    """The pool a check trades on: ``pair`` (or the pair given as ``address``) when set,
    else the deepest pool, among the pools traded through ``router`` when that is set.

    Raises NotFoundError when the requested pair or router has no pool of the token.
    """
    pools = target.pools
    if router is not None:
        pools = [p for p in pools if p.router.lower() == router.lower()]
        if not pools and target.pools:
            raise NotFoundError("the given router trades no pool of this token")
    wanted = pair or (address if any(p.address == address for p in pools) else None)
    if wanted is None:
        return pools[0] if pools else None
    for pool in pools:
        if pool.address == wanted:
            return pool
    raise NotFoundError("the given pair is not a pool of this token on a known DEX")


async def base_token_info(node: Node, address: str) -> TokenInfo:
    """A base token's metadata: symbol and decimals from the chain registry (which the
    operator vouches for), the name and supply from the chain."""
    info = await read_token(node.rpc, address)
    base = node.chain.base_token(address)
    if base is None:
        return info
    return replace(info, symbol=base.symbol, decimals=base.decimals, name=info.name or base.symbol)


def no_pairs_reason(chain: Chain) -> str:
    """What was searched, for the 404 "No pairs found" body."""
    bases = ", ".join(b.symbol for b in chain.base_tokens)
    names = [f"{d.name} {d.version}" for d in chain.dexes]
    dexes = ", ".join(names + (["Uniswap V4"] if chain.uniswap_v4 else [])) or "no DEX"
    return f"no pool of this token against {bases} on {dexes} (chain {chain.id})"


# WORK THAT NEEDS ONLY THE TOKEN, STARTED AS SOON AS A SEARCH CONFIRMS IT

Start = Callable[[Node, str], Coroutine[Any, Any, None]]


class EarlyWork:
    """Tasks of ``start(node, token)`` started when a search finds the requested address
    to be a token (its code, ERC-20 probe and pair probe read), before the search of its
    pools ends: a token's Uniswap V4 pools are known only from their ``Initialize``
    events, and their state is read a round trip after those, so work that needs the
    token alone (IsHoneypot's holder index) would otherwise start a round late for
    every V4 token seen the first time (issue #27).  Each (chain, token) is started
    once; what the check does not :meth:`take` is cancelled when the block ends."""

    def __init__(self, start: Start) -> None:
        self._start = start
        self._tasks: dict[tuple[int, str], asyncio.Task[None]] = {}

    def confirmed(self, node: Node, token: str) -> None:
        key = (node.id, token.lower())
        if key not in self._tasks:
            self._tasks[key] = asyncio.create_task(self._start(node, token))

    def take(self, node: Node, token: str) -> asyncio.Task[None] | None:
        """The task started for ``token`` on ``node``'s chain, now the caller's to finish;
        those of the chains not chosen are cancelled."""
        taken = self._tasks.pop((node.id, token.lower()), None)
        for task in self._tasks.values():
            task.cancel()
        return taken

    async def close(self) -> None:
        tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            await finish(task)


_early: ContextVar[EarlyWork | None] = ContextVar("tokenrisk_early_work", default=None)


@asynccontextmanager
async def early_token_work(start: Start) -> AsyncIterator[EarlyWork]:
    """Searches run inside this block call ``start(node, token)`` once the address is
    known to be a token (:class:`EarlyWork`); the block's caller takes the task with
    :func:`started_early`."""
    work = EarlyWork(start)
    reset = _early.set(work)
    try:
        yield work
    finally:
        _early.reset(reset)
        await work.close()


def started_early(node: Node, token: str) -> asyncio.Task[None] | None:
    """The task :func:`early_token_work` started for ``token`` on ``node``'s chain (None:
    none; the caller starts its own)."""
    work = _early.get()
    return work.take(node, token) if work is not None else None


def _confirmed(node: Node, token: str) -> None:
    work = _early.get()
    if work is not None:
        work.confirmed(node, token)


# EVERY CHAIN, A NODE THAT IS DOWN SKIPPED

T = TypeVar("T")

NODE_DOWN = (NodeUnavailable, UpstreamError, DeadlineExceeded)
"""Failures that say nothing about the token, only about one chain's node."""

_skipped: ContextVar[set[int] | None] = ContextVar("tokenrisk_skipped_chains", default=None)
_unsearched: ContextVar[set[str] | None] = ContextVar("tokenrisk_unsearched", default=None)


@contextmanager
def _collecting(var: ContextVar[set[T] | None]) -> Iterator[set[T]]:
    """A fresh set that what runs inside this block adds to through ``var``."""
    found: set[T] = set()
    token = var.set(found)
    try:
        yield found
    finally:
        var.reset(token)


def unsearched_history() -> AbstractContextManager[set[str]]:
    """Collect, as ``<chain id>:<first>-<last>``, the block ranges whose Uniswap V4 pools
    a node's ``eth_getLogs`` limits kept the searches run inside this block from reading
    (GetPairs' ``X-Unsearched-Blocks`` header: the list may miss pools created there)."""
    return _collecting(_unsearched)


async def base_pools(node: Node, token: str) -> list[Pool]:
    """The token's base-token pools on ``node``'s chain (deepest first), the V4 history
    the node kept the search from reading recorded for :func:`unsearched_history` (if
    collecting): GetPairs lists the pools and states that history in its header."""
    found = await search_pools(node, token)
    collected = _unsearched.get()
    if collected is not None and found.unsearched is not None:
        collected.add(found.unsearched.label)
    return found.pools


def skipped_chains() -> AbstractContextManager[set[int]]:
    """Collect the ids of chains skipped by the searches run inside this block."""
    return _collecting(_skipped)


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


def unsearched_known(nodes: Nodes, address: str, chain_id: int | None) -> list[str]:
    """``X-Unsearched-Blocks`` labels of the token's V4 history that the nodes' last
    searches (kept on each Node) could not read: a GetPairs answer from the results
    cache states them too, without searching again."""
    found = (unsearched_before(n, address) for n in nodes.select(chain_id))
    return [f.label for f in found if f is not None]

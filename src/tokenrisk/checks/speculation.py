"""A check planned at the head this worker remembers, confirmed in the same round (#27).

A recomputed IsHoneypot needs the chain's head and the token's pools (their reserves)
before it can plan anything: read together they are one round trip, and everything
pinned to that head is a second.  When this worker read the chain's head ``H`` a moment
ago and has resolved the token at ``H`` before, the check does not wait for either: it
runs at ``H`` from that resolution, and the head read that confirms ``H`` goes out in the
same round as the check's first requests.  The answer is used only when that read
returns ``H`` itself (the same block hash); otherwise everything planned at ``H`` is
dropped (cancelled, no reply of it reaches the answer), counted as wasted in
``/metrics`` (``tokenrisk_heads_assumed``), and the check runs again at the head just
read, exactly as it runs without a remembered head.

What it trades: on a chain that moved since ``H`` the work sent at ``H`` is wasted node
work and the check takes one round trip more than without the guess (the confirmation,
then the usual two).  So a head is assumed only when it was read less than
``Trading.ahead`` (the setting ``head_ahead``) of the chain's observed block interval
ago (:class:`tokenrisk.chain.head.BlockClock`): with blocks every ``s`` seconds a head
read ``a`` seconds ago has been replaced with a chance of about ``a / s``.

A resolution is remembered only when it was read between two reads of the same head:
the head this worker knew before the resolution started and the head read beside it are
one block, and its later use is confirmed again, so its "latest" reads saw that block
(heads do not go back, short of a reorganisation that restores the very same block).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from tokenrisk import metrics
from tokenrisk.chain.head import ChainHead, assumed_head, request_head, share_head
from tokenrisk.chain.node import Node, Nodes
from tokenrisk.checks.deps import Trading
from tokenrisk.checks.target import Target, resolve
from tokenrisk.checks.tasks import finish

T = TypeVar("T")
Run = Callable[[Target, ChainHead | None], Coroutine[Any, Any, T]]
"""A check of a resolved target at a head (None: the chain was not named)."""


async def at_head(
    nodes: Nodes,
    trading: Trading,
    address: str,
    chain_id: int | None,
    run: Run[T],
    require_token: bool = True,
) -> T:
    """``run`` on ``address`` resolved, at the chain's head: the remembered head and
    resolution when they are likely current (confirmed beside the run), else both read
    now, together, as a check always did.  Without ``chain_id`` every chain is searched
    and the head is left to the run.  ``require_token`` False: any contract resolves
    (GetContractVerification), as :func:`~.target.resolve` takes it.  Raises what
    resolving and ``run`` raise."""
    chosen = nodes.select(chain_id)
    if chain_id is None:
        return await run(await resolve(chosen, address, require_token), None)
    node = chosen[0]
    known = request_head(node.rpc)  # this request read it already (a cache lookup)
    if known is not None:
        target = _remembered(node, trading, address, known, require_token)
        if target is not None:
            return await run(target, known)
    else:
        guess = node.recent(trading.ahead)
        target = _remembered(node, trading, address, guess, require_token) if guess else None
        if guess is not None and target is not None:
            done = await _confirmed(node, guess, target, run)
            if done is not None:
                return done[0]
    return await _resolved(node, trading, address, run, require_token)


async def _confirmed(node: Node, head: ChainHead, target: Target, run: Run[T]) -> tuple[T] | None:
    """``run`` at ``head`` with the read of the node's latest block beside it: its
    result when that block is ``head``, else None (the run dropped, the block read
    adopted as the request's head).  Only ``run`` sees ``head`` before it is confirmed:
    another check of the same request (a batch) reads or assumes its own."""
    with assumed_head(node.rpc, head) as assumed:
        if not assumed:
            return None  # outside a request: nothing to pin a guess to
        planned = asyncio.create_task(run(target, head))
    try:
        latest = await node.confirm()
    except BaseException:
        await finish(planned)
        raise
    used = latest.hash == head.hash
    metrics.head_assumed(node.id, used)
    if used:
        return (await planned,)
    await finish(planned)
    share_head(node.rpc, latest)  # the check runs again at the block just read
    return None


async def _resolved(
    node: Node, trading: Trading, address: str, run: Run[T], require_token: bool
) -> T:
    """The check as it runs without a remembered head: the target and the head read
    together; the resolution is remembered when the head it was read between is one."""
    before = node.last_head()
    target, head = await asyncio.gather(resolve([node], address, require_token), node.head())
    if before is not None and before.hash == head.hash:
        trading.targets.put(_key(node, address, require_token), (head.hash, target))
    return await run(target, head)


def _key(node: Node, address: str, require_token: bool) -> tuple[int, str]:
    """Where a resolution is remembered: a token's apart from any contract's, so that a
    check needing a token never runs on a contract resolved without that test."""
    return (node.id, address if require_token else f"{address}:any")


def _remembered(
    node: Node, trading: Trading, address: str, head: ChainHead, require_token: bool
) -> Target | None:
    """The resolution read at ``head``, when this worker has one (a token's serves a
    check of any contract too: the same reads, one test more)."""
    for token_only in (True, False) if not require_token else (True,):
        kept = trading.targets.value(_key(node, address, token_only))
        if kept is not None and kept[0] == head.hash and isinstance(kept[1], Target):
            return kept[1] if kept[1].node is node else None
    return None

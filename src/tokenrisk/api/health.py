"""Health: can each configured chain's node be reached, and how old is its head block?

``/health`` reads ``eth_getBlockByNumber("latest")`` from every node concurrently, each
under its own time limit, and reports reachability plus the age of the head block
(wall clock now minus the block's timestamp).  The report never contains an RPC URL:
failures are described by the RPC client's error messages, which name nodes by label.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field

from tokenrisk.api.wire import WireModel
from tokenrisk.chain.head import read_head
from tokenrisk.chain.node import Node
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import ChainMismatch, DeadlineExceeded, TokenRiskError

if TYPE_CHECKING:
    from tokenrisk.devnet.supervisor import NodeWatch


class ChainHealth(WireModel):
    """One chain's line in the health report; head fields are absent when unreachable."""

    chainId: int = Field(description="Numeric chain id.")
    name: str = Field(description="Chain name from the registry.")
    reachable: bool = Field(description="The node answered eth_getBlockByNumber in time.")
    headBlock: int | None = Field(default=None, description="Latest block number.")
    headTimestamp: int | None = Field(default=None, description="Latest block's unix time.")
    headAgeSeconds: float | None = Field(
        default=None,
        description="Now minus the head block's timestamp, in seconds (negative when the "
        "node's clock is ahead, e.g. a devnet with a pinned clock).",
    )
    error: str | None = Field(default=None, description="Why the node is unreachable.")
    localNode: str | None = Field(
        default=None,
        description="For a node this service runs itself (devnet, fork): running, "
        "restarting or down; it is restarted with its state when it dies.",
    )
    localNodeRestarts: int | None = Field(
        default=None, description="How often that local node was restarted."
    )
    nodeChainId: int | None = Field(
        default=None,
        description="The chain id the node reports, when it is not the configured one "
        "(the chain then answers 503 until its node serves it).",
    )
    forkBlock: int | None = Field(
        default=None,
        description="Fork mode: the upstream block the local fork was made at (it forks "
        "again at the upstream head when older than the configured fork_max_age).",
    )
    forkAgeSeconds: float | None = Field(
        default=None, description="Fork mode: seconds since that fork was made."
    )


class HealthReport(WireModel):
    """The ``/health`` body: ``ok`` when every node is reachable, else ``degraded``."""

    status: str = Field(description="ok or degraded.")
    chains: list[ChainHealth] | None = Field(
        default=None,
        description="One entry per configured chain, by id (with API keys on: only for a "
        "request that sends a valid key).",
    )
    watchLagBlocks: dict[str, int] | None = Field(  # noqa: N815 (the wire's name)
        default=None,
        description="With the watcher in this process (`serve --watch`): blocks it is "
        "behind each chain's head: to the oldest block with a check not done yet "
        "(docs/watch.md).",
    )
    watchQueuedChecks: dict[str, int] | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: checks found and not done yet, by chain."
    )
    watchChecksPerSecond: float | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: checks this process ran per second."
    )
    watchEvents: int | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: events this process committed."
    )
    watchWebhookFailures: int | None = Field(  # noqa: N815 (the wire's name)
        default=None, description="With the watcher: webhook POSTs that failed (each retry)."
    )

    @property
    def healthy(self) -> bool:
        return self.status == "ok"


async def chain_health(
    chain: Chain, rpc: RpcClient, timeout: float, now: Callable[[], float] = time.time
) -> ChainHealth:
    """Probe one node; never raises for node failures (they become ``reachable: false``)."""
    try:
        async with asyncio.timeout(timeout):
            head = await read_head(rpc)
    except TimeoutError:
        return _down(chain, DeadlineExceeded(f"no answer within {timeout:g} s"))
    except TokenRiskError as exc:
        return _down(chain, exc)
    return ChainHealth(
        chainId=chain.id,
        name=chain.name,
        reachable=True,
        headBlock=head.number,
        headTimestamp=head.timestamp,
        headAgeSeconds=round(now() - head.timestamp, 1),
    )


def _down(chain: Chain, exc: TokenRiskError) -> ChainHealth:
    served = exc.served if isinstance(exc, ChainMismatch) else None
    return ChainHealth(
        chainId=chain.id, name=chain.name, reachable=False, error=exc.public, nodeChainId=served
    )


def _local(watch: NodeWatch) -> dict[str, Any]:
    """The health fields of a node this service runs (state, restarts, fork)."""
    fields: dict[str, Any] = {"localNode": watch.state, "localNodeRestarts": watch.restarts}
    fork = watch.node.fork
    if fork is not None and fork.block is not None:
        fields["forkBlock"] = fork.block
        fields["forkAgeSeconds"] = round(fork.age(), 1)
    return fields


async def check_health(
    nodes: Mapping[int, Node],
    timeout: float,
    local: Mapping[int, NodeWatch] | None = None,
) -> HealthReport:
    """Probe every configured chain concurrently, each under ``timeout`` seconds;
    ``local``: the supervisor's view of the nodes this service runs, by chain id."""
    ids = sorted(nodes)
    lines = await asyncio.gather(
        *(chain_health(nodes[i].chain, nodes[i].rpc, timeout) for i in ids)
    )
    watches = local or {}
    lines = [
        line.model_copy(update=_local(watches[i])) if i in watches else line
        for i, line in zip(ids, lines, strict=True)
    ]
    status = "ok" if all(line.reachable for line in lines) else "degraded"
    return HealthReport(status=status, chains=list(lines))

"""Supervision of the local anvil processes the service started (devnet, forks).

A node that dies (crash, OOM killer, a stray ``kill``) is noticed within
``interval`` seconds, reaped (so it never lingers as a zombie) and started again with
the same command: the devnet reloads its state file, a fork node forks again.  A fork node
that follows the chain (no pinned block) is also forked again at the upstream head
whenever its fork is older than its ``fork_max_age``.  While
it is down, requests answer 503 (the RPC client's NodeUnavailable); the service is not
restarted.  Restarts back off exponentially up to ``max_backoff`` seconds while the
node keeps failing to come up.  ``/health`` shows each node's state and restart count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from tokenrisk.devnet.node import AnvilNode, refork
from tokenrisk.errors import NodeUnavailable

log = logging.getLogger("tokenrisk.supervisor")


@dataclass
class NodeWatch:
    """What the supervisor knows of one node (read by /health)."""

    node: AnvilNode
    state: str = "running"  # running | restarting | down
    restarts: int = 0
    reforks: int = 0
    last_exit_code: int | None = None


class NodeSupervisor:
    """Watches ``nodes``; ``start()`` in the serving event loop, ``await stop()`` before
    the nodes are stopped."""

    def __init__(
        self, nodes: list[AnvilNode], interval: float = 0.5, max_backoff: float = 30.0
    ) -> None:
        self.watches = [NodeWatch(node) for node in nodes]
        self.interval = interval
        self.max_backoff = max_backoff
        self._task: asyncio.Task[None] | None = None

    def by_chain(self) -> dict[int, NodeWatch]:
        return {w.node.chain_id: w for w in self.watches if w.node.chain_id is not None}

    def start(self) -> None:
        if self.watches and self._task is None:
            self._task = asyncio.create_task(self._run(), name="node-supervisor")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            for watch in self.watches:
                node = watch.node
                if not node.stopped and not node.alive:
                    await self._revive(watch)
                elif not node.stopped and node.fork is not None and node.fork.due():
                    await self._refork(watch)
            await asyncio.sleep(self.interval)

    async def _refork(self, watch: NodeWatch) -> None:
        """Fork again at the upstream head (the fork follows the chain); on failure the
        node keeps serving its current fork and says so in the log."""
        fork = watch.node.fork
        assert fork is not None
        try:
            await asyncio.to_thread(refork, watch.node)
        except NodeUnavailable as exc:
            log.warning(
                "local fork of chain %s not renewed (%s); serving the fork of block %s",
                watch.node.chain_id,
                exc.public,
                fork.block,
            )
            return
        watch.reforks += 1
        log.info("local fork of chain %s now at block %s", watch.node.chain_id, fork.block)

    async def _revive(self, watch: NodeWatch) -> None:
        """Restart one dead node, retrying with backoff until it answers."""
        watch.last_exit_code = watch.node.process.returncode
        watch.state = "restarting"
        log.warning(
            "local node of chain %s exited with code %s; restarting it",
            watch.node.chain_id,
            watch.last_exit_code,
        )
        delay = self.interval
        while True:
            try:
                await asyncio.to_thread(watch.node.restart)
            except NodeUnavailable:
                watch.state = "down"
                log.warning(
                    "local node of chain %s did not come back; retrying", watch.node.chain_id
                )
                await asyncio.sleep(delay)
                delay = min(self.max_backoff, delay * 2)
                continue
            watch.restarts += 1
            watch.state = "running"
            log.warning(
                "local node of chain %s is back (restart %d)", watch.node.chain_id, watch.restarts
            )
            return

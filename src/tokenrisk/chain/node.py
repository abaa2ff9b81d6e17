"""One configured chain as every capability sees it: registry entry, client, head, features.

The service builds one :class:`Node` per chain at start-up and hands checks the Nodes
they need, never the service itself.  A Node owns the chain's :class:`RpcClient` (and
closes it), reads the head through :mod:`tokenrisk.chain.head` and probes the node's
optional features once (:mod:`tokenrisk.chain.capabilities`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from tokenrisk.chain.capabilities import Capabilities, probe_capabilities
from tokenrisk.chain.head import ChainHead, read_head
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient

log = logging.getLogger("tokenrisk")


@dataclass
class Node:
    """A chain's registry entry and the client of the node serving it."""

    chain: Chain
    rpc: RpcClient
    _capabilities: Capabilities | None = field(default=None, repr=False)
    _probing: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def id(self) -> int:
        return self.chain.id

    async def head(self) -> ChainHead:
        """The latest block; raises the RPC client's errors."""
        return await read_head(self.rpc)

    async def capabilities(self) -> Capabilities:
        """The node's optional features, probed on first use and kept for the process.

        Raises the transport errors of the probe; then nothing is kept and the next
        call probes again.
        """
        if self._capabilities is not None:
            return self._capabilities
        async with self._probing:
            if self._capabilities is None:
                caps = await probe_capabilities(self.rpc)
                log.info("chain %s node lacks: %s", self.id, ", ".join(caps.missing()) or "-")
                self._capabilities = caps
            return self._capabilities

    async def aclose(self) -> None:
        await self.rpc.aclose()

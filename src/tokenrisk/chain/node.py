"""One configured chain as every check sees it: registry entry, client, head, capabilities.

The service builds one :class:`Node` per chain at start-up and hands the checks the
:class:`Nodes` (or the one Node) they need, never the service.  A Node owns its chain's
:class:`~tokenrisk.chain.rpc.RpcClient` (and closes it), reads the head through the one
head reader (:mod:`tokenrisk.chain.head`) and probes the node's optional features once
per process (:mod:`tokenrisk.chain.capabilities`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.capabilities import SIMULATE_SPANS, Capabilities, probe_capabilities
from tokenrisk.chain.dex import Creation
from tokenrisk.chain.head import BlockClock, ChainHead, read_head, read_latest
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import (
    ChainMismatch,
    MethodUnsupported,
    RpcError,
    TokenRiskError,
    UnknownChain,
)

log = logging.getLogger("tokenrisk")

CREATIONS_KEPT = 4096
"""Pools whose creation (block, transaction) a Node remembers: finding it costs a
full-history ``eth_getLogs`` or, on a node that caps log ranges, a search over history
(:mod:`~tokenrisk.chain.created`); it is used again only while its block is unchanged."""


REPROBE_INTERVAL = 30.0
"""Seconds between two re-probes of one node's capabilities (:meth:`Node.reprobe`)."""


def _creations() -> MemoryCache[str, Creation]:
    return MemoryCache(CREATIONS_KEPT)


class Fork(Protocol):
    """A fork node's view (fork mode: :class:`tokenrisk.devnet.node.ForkState`)."""

    @property
    def block(self) -> int | None:
        """The upstream block the current fork was made at."""

    def age(self) -> float:
        """Seconds since that fork was made."""


Scanned = tuple[int, str, tuple[Creation, ...]]
"""The head (number, hash) through which a token's creation events were read, and the
pools they announced."""


def _scanned() -> MemoryCache[str, Scanned]:
    return MemoryCache(CREATIONS_KEPT)


def _v4_pools() -> MemoryCache[str, list[Any]]:
    return MemoryCache(CREATIONS_KEPT)


def _native_pools() -> MemoryCache[str, list[Any]]:
    """One entry: the wrapped native token's stablecoin pools, for USD prices
    (``chain.dex.NATIVE_POOLS_TTL`` each time they are read)."""
    return MemoryCache(4)


@dataclass(eq=False)
class Node:
    """A chain's registry entry and the client of the node serving it.

    ``rpc`` may be replaced (tests inject a faulty transport); everything that holds
    the Node sees the new client.  ``created``: pool creations, by lowercase pool
    address; ``scanned``: by lowercase token, the head through which its creation events
    were read and the pools they announced (both checked against the chain's block
    hashes before reuse: :mod:`~tokenrisk.chain.created`); ``native_pools``: the wrapped
    native token's stablecoin pools that price pools in USD (``dex.find_pools(memo=)``).
    """

    chain: Chain
    rpc: RpcClient
    created: MemoryCache[str, Creation] = field(default_factory=_creations, repr=False)
    scanned: MemoryCache[str, Scanned] = field(default_factory=_scanned, repr=False)
    native_pools: MemoryCache[str, list[Any]] = field(default_factory=_native_pools, repr=False)
    v4_pools: MemoryCache[str, list[Any]] = field(default_factory=_v4_pools, repr=False)
    """Uniswap V4: by token, the head its ``Initialize`` events were read through and the
    pools they announced (:func:`tokenrisk.chain.v4.initialized`)."""
    fork: Fork | None = field(default=None, repr=False)
    """Fork mode: the local fork this chain's node is (its block goes into answers)."""
    _capabilities: Capabilities | None = field(default=None, repr=False)
    _probing: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    _seen: tuple[int, float, ChainHead] | None = field(default=None, repr=False)
    clock: BlockClock | None = field(default=None, repr=False)
    """The chain's observed block interval (:meth:`recent`); made from the chain id."""
    _reprobed_at: float = field(default=-math.inf, repr=False)
    _verified_at: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.rpc, RpcClient):
            self.rpc.watcher = self.observe  # the Node last built on a client learns

    @property
    def id(self) -> int:
        return self.chain.id

    async def head(self, max_age: float = 0.0) -> ChainHead:
        """The latest block; raises the RPC client's errors.

        ``max_age > 0``: a head this Node read (for any request) at most ``max_age``
        seconds ago is returned without asking the node -- for results-cache lookups
        only, so that a hit costs no round trip (docs/performance.md).  The time is
        when that read was sent; a failed read forgets the head, and so does replacing
        ``rpc``.
        """
        seen = self._seen
        if (
            max_age > 0
            and seen is not None
            and seen[0] == id(self.rpc)
            and time.monotonic() - seen[1] <= max_age
        ):
            return seen[2]
        return await self._read(read_head)

    async def confirm(self) -> ChainHead:
        """The latest block, read now even inside a request that has assumed one
        (:func:`tokenrisk.chain.head.assume_head`); kept as :meth:`head` keeps it."""
        return await self._read(read_latest)

    def recent(self, fraction: float) -> ChainHead | None:
        """The head this Node read last, when it was read (sent) less than ``fraction``
        of the chain's observed block interval ago, so it is likely still the head;
        else None (also after a failed read or a replaced ``rpc``)."""
        seen = self._seen
        if seen is None or seen[0] != id(self.rpc):
            return None
        return seen[2] if self._clock().current(seen[2], fraction, time.monotonic()) else None

    def last_head(self) -> ChainHead | None:
        """The head this Node read last, however long ago (None after a failed read or
        a replaced ``rpc``)."""
        seen = self._seen
        return seen[2] if seen is not None and seen[0] == id(self.rpc) else None

    def _clock(self) -> BlockClock:
        if self.clock is None:
            self.clock = BlockClock.of_chain(self.chain.id)
        return self.clock

    async def _read(self, reader: Callable[[RpcClient], Awaitable[ChainHead]]) -> ChainHead:
        rpc = self.rpc
        try:
            head = await reader(rpc)
        except BaseException:
            self._seen = None
            raise
        if self._seen is None or self._seen[1] <= head.read_at:
            self._seen = (id(rpc), head.read_at, head)
        self._clock().observe(head)
        return head

    @property
    def fork_block(self) -> int | None:
        """Fork mode: the upstream block the node's current fork was made at; None for
        a node that is not a fork.  Checks run at the fork's head, so this is the block
        an answer describes."""
        return self.fork.block if self.fork is not None else None

    @property
    def known_capabilities(self) -> Capabilities | None:
        """The capabilities probed and kept, without probing (None before the first
        probe, or when the node came back from an outage and is probed again)."""
        caps = self._capabilities
        return caps if caps is not None and not self._reconnected() else None

    @property
    def probed(self) -> bool:
        """True once the node's capabilities are known (probed and kept)."""
        return self._capabilities is not None

    async def capabilities(self) -> Capabilities:
        """The node's optional features, probed on first use and kept; probed again
        after the node came back from an outage (another node may answer at its URL)
        and after :meth:`reprobe`.

        Raises the transport errors of the probe; then nothing new is kept and the next
        call probes again.
        """
        if self._capabilities is not None and not self._reconnected():
            return self._capabilities
        async with self._probing:
            if self._capabilities is None or self._reconnected():
                self._verified_at = self._verified()
                caps = await probe_capabilities(self.rpc)
                lacks = ", ".join(caps.missing()) or "-"
                log.info("chain %s node lacks: %s; %s", self.id, lacks, caps.limits())
                self._capabilities = caps
            return self._capabilities

    def _verified(self) -> int:
        identity = getattr(self.rpc, "identity", None)
        return int(getattr(identity, "verified", 0))

    def _reconnected(self) -> bool:
        """The node came back after an outage (it showed its chain id again since the
        probe): it may be another node behind the same URL, so probe it again."""
        return self._verified() > max(self._verified_at, 1)

    def learn_simulate_cap(self, blocks: int) -> None:
        """The node refused a simulation as too long (-38026 "too many blocks", or a
        provider's lower cap): plan at most ``blocks`` blocks past the base from now on.
        Only ever lowers the probed cap; a later re-probe measures it again."""
        caps = self._capabilities
        if caps is not None and 0 < blocks < caps.simulate_max_blocks:
            self._capabilities = replace(caps, simulate_max_blocks=blocks)
            log.info("chain %s: simulations of at most %d blocks", self.id, blocks)

    def reprobe(self) -> bool:
        """Forget the probed capabilities, so the next :meth:`capabilities` probes again
        (a node answered against what was probed: a method probed present is now "not
        found", the node was replaced behind its URL).  At most once per
        :data:`REPROBE_INTERVAL` seconds, so a flapping node is not probed per request.
        True when the capabilities were forgotten."""
        now = time.monotonic()
        if self._capabilities is None or now - self._reprobed_at < REPROBE_INTERVAL:
            return False
        self._reprobed_at = now
        self._capabilities = None
        log.info("chain %s: capabilities contradicted by the node; probing again", self.id)
        return True

    def learn(self, error: BaseException, span: int | None = None) -> None:
        """Take in what a node error says about its limits: a simulation refused as too
        long (``span``: the blocks it ended past its base) lowers the simulate cap to the
        next smaller probed span; a method now unsupported forgets the probe."""
        if not isinstance(error, RpcError):
            return
        if span is not None and (error.code == -38026 or "too many blocks" in error.message):
            self.learn_simulate_cap(next((s for s in SIMULATE_SPANS if s < span), 1))
        elif isinstance(error, MethodUnsupported):
            self.reprobe()

    def observe(self, method: str, params: Sequence[Any], error: RpcError) -> None:
        """The client's watcher: every node error but reverts passes here.  A
        simulation refused as too long lowers the cap (its span read from the request);
        a probed method now "not found" makes the next use probe again."""
        if method == "eth_simulateV1" and (
            error.code == -38026 or "too many blocks" in error.message
        ):
            self.learn(error, span=simulated_span(params))
        elif isinstance(error, MethodUnsupported) and method in PROBED_METHODS:
            self.learn(error)

    async def aclose(self) -> None:
        await self.rpc.aclose()


PROBED_METHODS = frozenset({"eth_simulateV1", "debug_traceCall", "eth_createAccessList"})
"""Methods whose presence the probe decides; "method not found" for one contradicts it."""


def simulated_span(params: Sequence[Any]) -> int | None:
    """How many blocks an ``eth_simulateV1`` request ends past its base: the last
    block's number minus the base's, when both are numbers, else the count of blocks."""
    try:
        blocks = params[0]["blockStateCalls"]
        last = (blocks[-1].get("blockOverrides") or {}).get("number")
        base = params[1] if len(params) > 1 else None
        if isinstance(last, str) and isinstance(base, str) and base.startswith("0x"):
            return int(last, 16) - int(base, 16)
        return len(blocks)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


class Nodes(Mapping[int, Node]):
    """The configured chains' Nodes by chain id (read-only once built)."""

    def __init__(self, nodes: Mapping[int, Node]) -> None:
        self._nodes = dict(nodes)

    def __getitem__(self, chain_id: int) -> Node:
        return self._nodes[chain_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def node(self, chain_id: int) -> Node:
        """The chain's Node; raises UnknownChain for a chain that is not configured."""
        try:
            return self._nodes[chain_id]
        except KeyError:
            raise UnknownChain(f"chain {chain_id} is not configured") from None

    def select(self, chain_id: int | None) -> list[Node]:
        """The requested chain, or every configured chain when ``chain_id`` is None."""
        return [self.node(chain_id)] if chain_id is not None else list(self._nodes.values())

    async def warm(self) -> None:
        """Open every node's first connections now (concurrently); a node that cannot be
        reached is connected to when it is first asked."""
        nodes = list(self._nodes.values())
        await asyncio.gather(*(node.rpc.warm() for node in nodes), return_exceptions=True)

    async def verify_chains(self) -> None:
        """Ask every node for its chain id (concurrently).  Raises ChainMismatch for a
        node serving another chain than configured; a node that cannot be reached now
        is checked when it first answers (its client does that before any request)."""
        nodes = list(self._nodes.values())
        results = await asyncio.gather(
            *(node.rpc.verify_chain() for node in nodes), return_exceptions=True
        )
        for node, result in zip(nodes, results, strict=True):
            if isinstance(result, ChainMismatch):
                raise result
            if isinstance(result, TokenRiskError):
                log.warning("chain %s: node not verified at start (%s)", node.id, result.public)
            elif isinstance(result, BaseException):
                raise result

    async def aclose(self) -> None:
        for node in self._nodes.values():
            await node.aclose()

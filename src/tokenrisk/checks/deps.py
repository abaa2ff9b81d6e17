"""What each check is handed by the composition root (``tokenrisk.service``).

A check never sees the service: it receives one small bundle naming exactly what it
uses (the chains' :class:`~tokenrisk.chain.node.Nodes`, the holder index, the
verifier, the caches it reads and fills).  The bundles are built once at start-up and
share their parts, so a balance slot found for one request serves the next.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.node import Nodes
from tokenrisk.model import TokenInfo
from tokenrisk.simulate.owners import PowerCache
from tokenrisk.simulate.powers import ScanBounds
from tokenrisk.simulate.slots import BalanceSlot, SlotCache
from tokenrisk.store.engine import Store
from tokenrisk.verification.verifier import Verifier

BASE_TOKENS_KEPT = 1024
JOURNEYS_KEPT = 4096
SIMULATIONS_KEPT = 256
"""Deterministic simulations' results kept (``Simulator.remembered``): a token's holder
sells at its latest head or two; an older head's are never asked again."""
Crowd = tuple[tuple[str, int], ...]
"""Registry base tokens (by chain) whose slot and metadata are kept: far more than any
registry lists, so in practice each is read once per process."""


class JobQueue(Protocol):
    """What the holder index needs of a background job queue (``tokenrisk.jobs``)."""

    inline_blocks: int

    async def enqueue(self, chain_id: int, token: str) -> bool: ...


@dataclass
class HolderIndex:
    """The Transfer-log index: its store, one indexer per (chain, token) in this process,
    and the job queue when Redis is configured (set by the API while it serves)."""

    store: Store
    queue: JobQueue | None = None
    locks: dict[tuple[int, str], asyncio.Lock] = field(default_factory=dict)


@dataclass
class Trading:
    """What a simulated trade needs besides the node: the process-wide limit on
    concurrent simulations and the balance-slot caches (the checked token's layout by
    code hash, registry base tokens' slots by (chain, token): the operator's few WETH
    and stablecoins, kept for the process)."""

    simulations: asyncio.Semaphore
    slots: SlotCache = field(default_factory=SlotCache)
    base_slots: MemoryCache[tuple[int, str], BalanceSlot | None] = field(
        default_factory=lambda: MemoryCache(BASE_TOKENS_KEPT)
    )
    slots_at: MemoryCache[tuple[int, str, int, str], BalanceSlot | None] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """The checked token's slot as verified at a head block, per (chain, token, block
    number, block hash): a check again at that head does not search it again
    (``checks.trade.token_slot``)."""
    slots_ahead: MemoryCache[tuple[int, str, int, str], asyncio.Future[BalanceSlot | None]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """A first check's slot search asked at a head read a moment ago, before the check
    read its own (``checks.trade.slot_ahead``), per the same key: taken by the check at
    that very head."""
    journeys: MemoryCache[tuple[str, str, int], tuple[int, int, int, BalanceSlot | None]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Amounts earlier journeys saw per (pool, token, buy size): the transfer and the
    sells are sent with the buy when it delivers them (``simulate.ahead``)."""
    searches: MemoryCache[tuple[str, str, int, str], tuple[int, ...]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """The sizes each limit search of an earlier journey asked for, per (pool, token, buy
    size, search): sent with the next journey's buy (``simulate.limits.Recall``)."""
    simulated: MemoryCache[Hashable, Any] = field(
        default_factory=lambda: MemoryCache(SIMULATIONS_KEPT)
    )
    """Results of deterministic simulations per head block (``Simulator.remembered``:
    the holder sells), for a check again at the same head."""
    traced: MemoryCache[tuple[int, str], frozenset[str]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """What the last call trace of a token on a chain called: their code is read with
    the next trace, used when that trace calls nothing else (``checks.verification``)."""
    crowds: MemoryCache[tuple[int, str, str], tuple[Crowd, Crowd]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Per (chain, token, pool): the holders and holding snipers the last check found
    and their balances (``checks.holder_sells.CrowdMemo``)."""
    alone: MemoryCache[tuple[int, str, str], frozenset[str]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Per (chain, token, pool): the holders (lowercase) whose sell failed in its group at
    the last check: their lone sells go out with the groups at the next
    (``checks.holder_sells``)."""
    quiet: MemoryCache[tuple[int, str], tuple[Hashable | None, bool]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Per (chain, token): the index's content key after the last check's refresh and
    whether that refresh left it unchanged (``checks.holder_sells``: a quiet token's
    holder sells go out before the refresh ends)."""
    ahead: float = 0.0
    """The setting ``head_ahead``: a check plans at a head read less than this fraction
    of the chain's block interval ago, beside the read that confirms it (0: never)."""
    targets: MemoryCache[tuple[int, str], tuple[str, object]] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Per (chain, address): the hash of the head a resolution was read at (the same head
    read before and beside it) and the ``checks.target.Target`` it gave
    (``checks.speculation``)."""


@dataclass(frozen=True)
class PowerScan:
    """The owner-power scan as configured: on or off, its bounds, its cache."""

    enabled: bool
    bounds: ScanBounds
    cache: PowerCache

    @classmethod
    def configured(
        cls,
        enabled: bool,
        cache_ttl: float,
        *,
        max_functions: int,
        max_callers: int,
        max_arg_sets: int,
        max_trials: int,
        deadline: float,
    ) -> PowerScan:
        """A scan with these bounds (see ``ScanBounds``) and a cache of ``cache_ttl`` s."""
        bounds = ScanBounds(
            max_functions=max_functions,
            max_callers=max_callers,
            max_arg_sets=max_arg_sets,
            max_trials=max_trials,
            deadline=deadline,
        )
        return cls(enabled, bounds, PowerCache(ttl=cache_ttl))


@dataclass(frozen=True)
class Options:
    """What a check may do for the caller's tier (``tokenrisk.tiers``); default: everything.

    Hashable, so the API puts it in the results-cache key: two tiers never share an answer
    that one of them may not see.
    """

    holder_analysis: bool = True  # real holders sell in simulation (holderAnalysis)
    owner_powers: bool = True  # the owner-power scan; see owner_powers_enabled


EVERY_ANALYSIS = Options()
"""The default of a check called without a tier (the CLI, tests)."""


def owner_powers_enabled(options: Options) -> bool:
    """Whether this check may run the owner-power scan (the tier switch ``owner_powers``,
    also turned off per request by ``?ownerPowers=false``)."""
    return options.owner_powers


@dataclass(frozen=True)
class HoneypotDeps:
    """IsHoneypot: everything a full analysis touches."""

    nodes: Nodes
    trading: Trading
    index: HolderIndex
    verifier: Verifier
    powers: PowerScan
    holder_limit: int  # most holders whose sells are simulated
    base_infos: MemoryCache[tuple[int, str], TokenInfo] = field(
        default_factory=lambda: MemoryCache(BASE_TOKENS_KEPT)
    )
    at_head: MemoryCache[tuple[str, int, str, int, str], Any] = field(
        default_factory=lambda: MemoryCache(JOURNEYS_KEPT)
    )
    """Reads that are a pure function of a head block, per (what, chain, address, block
    number, block hash): the checked token's metadata and its pool's creation
    (``checks.venue``), not read again by a check at an unchanged head."""


@dataclass(frozen=True)
class VerificationDeps:
    """GetContractVerification: a traced buy and sell, and the verifier."""

    nodes: Nodes
    trading: Trading
    verifier: Verifier


@dataclass(frozen=True)
class HoldersDeps:
    """TopHolders: the chains and the holder index."""

    nodes: Nodes
    index: HolderIndex

"""What each check returns: typed results, never JSON.

Only :mod:`tokenrisk.api.wire` turns them into the SPEC's JSON (the API and the CLI's
``--json`` both render through it); the CLI's reports read the rendered wire models.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokenrisk.chain.registry import Chain
from tokenrisk.model import Analysis, CodeReport, Pool, Verdict


@dataclass(frozen=True)
class HoneypotResult:
    """IsHoneypot: everything measured, the verdict on it, and the chain it ran on."""

    analysis: Analysis
    verdict: Verdict
    chain: Chain
    fork_block: int | None = None
    """Fork mode: the upstream block the local fork was made at (``chain.forkBlock``)."""


@dataclass(frozen=True)
class PairRow:
    """One GetPairs element: the pool and its tokens' symbols in token0/token1 order."""

    pool: Pool
    symbols: tuple[str, str]


@dataclass(frozen=True)
class VerificationResult:
    """GetContractVerification: ``code`` is None when no buy and sell could be traced
    (``reason`` says why); ``unknown``: contracts no provider could answer for."""

    is_contract: bool
    root_open_source: bool
    code: CodeReport | None
    unknown: tuple[str, ...] = ()
    reason: str = "the buy and sell could not be traced"


@dataclass(frozen=True)
class HolderBalance:
    """One TopHolders row (checksummed address, raw balance)."""

    address: str
    balance: int
    is_contract: bool


@dataclass(frozen=True)
class TopHoldersResult:
    """TopHolders: the total supply (0 when unreadable) and the largest holders, in order."""

    total_supply: int
    holders: tuple[HolderBalance, ...]

"""What a source-verification provider answers, and the interface every provider has.

A provider answers one question: *is the source code of the contract at (chain, address)
published and matched against the deployed bytecode?*  It answers with a
:class:`SourceInfo`, with ``None`` when it has nothing to say (the contract is not
verified there, or the provider does not know the chain), or by raising a tokenrisk
error when it cannot be asked (unreachable, too slow, rate limited, key rejected).
"Not verified" and "could not ask" are kept apart on purpose: the first may make a
token look risky, the second must never do so silently.

Provider-specific errors extend the tree of :mod:`tokenrisk.errors`::

    NodeUnavailable (503)
    └── ProviderRateLimited     the provider refused because we asked too often
    UpstreamError (502)
    └── ProviderKeyRejected     the provider rejected the configured API key

Messages name the provider (``"etherscan"``), never its URL or key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tokenrisk.chain.abi import checksum

ProviderName = Literal["local", "sourcify", "etherscan"]
"""The providers tokenrisk ships; also the keys of ``VerificationSettings.providers``."""

_HEX_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")

Match = Literal["full", "partial"]
"""``full``: byte-for-byte, metadata hash included (Sourcify "exact_match"/"perfect").
``partial``: same code, different metadata (comments, file names); Sourcify "match"."""


@dataclass(frozen=True, kw_only=True)
class SourceInfo:
    """One provider's answer about one contract.

    ``match`` is None when the provider does not grade matches (Etherscan).
    ``is_proxy`` is True only when the provider itself says so; False means "not
    flagged", not "proven not a proxy".  ``implementation`` is the checksummed address
    the provider reports behind a proxy, when it reports one.
    """

    verified: bool
    contract_name: str | None = None
    compiler: str | None = None
    source: ProviderName
    match: Match | None = None
    is_proxy: bool = False
    implementation: str | None = None


class SourceProvider(Protocol):
    """Anything that can say whether a contract's source is published."""

    name: ProviderName

    async def lookup(self, chain_id: int, address: str) -> SourceInfo | None:
        """The provider's answer for a checksummed ``address``, or None if it has none.

        Raises NodeUnavailable, DeadlineExceeded or UpstreamError (or a subclass) when
        the provider cannot be asked; messages contain no URL and no key.
        """
        ...


def text_or_none(value: Any) -> str | None:
    """A provider's string field, or None when it is absent, empty or not a string."""
    return value if isinstance(value, str) and value else None


def address_or_none(value: Any) -> str | None:
    """A provider's address field checksummed, or None when it is not an address."""
    if isinstance(value, str) and _HEX_ADDRESS.match(value):
        return checksum(value)
    return None

"""Is a contract's source code published?  Providers behind one interface.

- :class:`LocalRegistry`: JSON files we hold ourselves (the devnet build fills one);
- :class:`SourcifyProvider`: a Sourcify server (public or self-hosted);
- :class:`EtherscanProvider`: Etherscan or a compatible explorer;
- :class:`Verifier`: asks them in order, caches, answers many addresses at once;
- :func:`build_verifier`: a verifier from :class:`VerificationSettings`.

See docs/verification.md for what "open source" means here and how to configure it.
"""

from tokenrisk.errors import ProviderKeyRejected, ProviderRateLimited
from tokenrisk.verification.etherscan import EtherscanProvider
from tokenrisk.verification.local import LocalRegistry
from tokenrisk.verification.settings import (
    VerificationSettings,
    build_verifier,
    devnet_settings,
)
from tokenrisk.verification.source import Match, ProviderName, SourceInfo, SourceProvider
from tokenrisk.verification.sourcify import SourcifyProvider
from tokenrisk.verification.verifier import Verifier

__all__ = [
    "EtherscanProvider",
    "LocalRegistry",
    "Match",
    "ProviderKeyRejected",
    "ProviderName",
    "ProviderRateLimited",
    "SourceInfo",
    "SourceProvider",
    "SourcifyProvider",
    "VerificationSettings",
    "Verifier",
    "build_verifier",
    "devnet_settings",
]

"""The one exception tree of tokenrisk.

::

    TokenRiskError
    ├── InputError                  400: the request itself is wrong
    │   ├── InvalidAddress
    │   ├── UnknownChain
    │   ├── MissingParameter
    │   ├── NotAToken               a contract, but not an ERC-20 token to check
    │   └── KeyNameError            a key name that is malformed, taken or revoked
    ├── NotFoundError               404: nothing to check
    │   ├── UnknownKeyName          no API key of that name in the store
    │   └── NoPairsFound            the token has no pool: "No pairs found" + why
    ├── AuthError                   401: missing or wrong API key
    ├── Forbidden                   403: the caller's tier does not allow this
    ├── RateLimited                 429: too many requests for one key
    ├── UpstreamError               502: the node answered, but not usefully
    │   ├── RpcError                    JSON-RPC error object (unknown method, internal error, ...)
    │   │   ├── CallReverted            the EVM ran the call and it failed: an answer about
    │   │   │                           the contract, the only error a check may read as data
    │   │   ├── MethodUnsupported       the node does not implement a method we need
    │   │   ├── StateUnavailable        the node no longer keeps that block's state (full node)
    │   │   └── BatchTooLarge           the node refused a JSON-RPC batch as too large
    │   │       └── RequestTooLarge             ... by its bytes, answering one lone error
    │   ├── MalformedResponse           not JSON-RPC at all (garbage, bad gzip, wrong shape)
    │   │   ├── ReplyTooLarge               more bytes than the reply size cap
    │   │   └── ReplyTooDeep                JSON nested deeper than the depth cap
    │   └── ProviderKeyRejected         a verification provider refused the configured key
    ├── NodeUnavailable             503: the node cannot be reached
    │   ├── NodeThrottled               the node or provider refuses: too many requests
    │   ├── ChainMismatch               the node serves another chain than configured
    │   ├── NodeBehind                  the node's backends stay behind a block we read
    │   └── ProviderRateLimited         a verification provider says "too many requests"
    ├── StoreError                  503: the database cannot be read or written
    │   ├── StoreConflict               another writer moved an index cursor first (retry)
    │   └── SchemaTooNew                the database was migrated by a newer tokenrisk
    ├── Overloaded                  503: this worker admits no more uncached checks now
    ├── DeadlineExceeded            504: the node (or the check) was too slow
    ├── VerdictError                never an HTTP error: what a token did, reported in the
    │   │                           verdict (simulationError, a missing field)
    │   ├── AbiDecodeError              a contract returned data that does not decode
    │   ├── LiquidityError              liquidity could not be simulated for a token
    │   └── BytecodeUnanalysable        evmole could not work out a contract's layout
    ├── ConfigError                 start-up: the operator's configuration is invalid
    └── BuildError                  the devnet build tool failed (never raised when serving)
        ├── DevnetBuildError            a build step (deploy, trade, dump) failed
        └── SolcError                   the Solidity compiler failed

ConfigError and AbiDecodeError are ValueErrors too, so callers validating values may catch
either.

Third-party exceptions (httpx, eth-abi, SQLAlchemy) are mapped to these at the module
boundary with ``raise X from exc``; none of them reach the API layer.  Messages never
contain an RPC URL, because operators' URLs often embed keys.

``message`` may quote the node (an RpcError carries the node's own text, which revert
reasons need); ``public`` is the stable text of our own that clients, logs and
``/health`` show for upstream failures, so node text never leaves the process.
"""

from __future__ import annotations

import asyncio
from typing import Any


class TokenRiskError(Exception):
    """Root of every error tokenrisk raises on purpose."""

    status = 500
    stable: str | None = None
    """Class-wide client text; None when ``message`` is always our own words."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__

    @property
    def public(self) -> str:
        """What may be shown outside the process (responses, logs, /health)."""
        return self.stable or self.message


class InputError(TokenRiskError):
    status = 400


class InvalidAddress(InputError):
    pass


class UnknownChain(InputError):
    pass


class MissingParameter(InputError):
    pass


class NotAToken(InputError):
    """The address holds a contract that is not a token (a router, a pool of two base
    tokens, ...); the message says what it is."""


class KeyNameError(InputError):
    """A key name that is malformed, taken, or not in a state that allows the operation."""


class NotFoundError(TokenRiskError):
    status = 404


class NoContract(NotFoundError):
    """No contract at the address on the searched chain(s): an externally owned account
    or an unused address (GetContractVerification answers it as "not a contract")."""


class UnknownKeyName(NotFoundError):
    """No key of that name exists in the store."""


class NoPairsFound(NotFoundError):
    """A token without any pool on the searched chain(s).

    The message is the live API's fixed ``"No pairs found"`` (clients branch on the 404);
    ``reason`` says what was searched and ``token`` what the token is, so a person still
    learns why.  ``token`` is a :class:`tokenrisk.analysis.TokenInfo` (typed loosely here:
    this module imports nothing of tokenrisk).
    """

    def __init__(self, reason: str, token: Any = None) -> None:
        super().__init__("No pairs found")
        self.reason = reason
        self.token = token


class AuthError(TokenRiskError):
    status = 401


class Forbidden(TokenRiskError):
    status = 403


class RateLimited(TokenRiskError):
    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UpstreamError(TokenRiskError):
    status = 502
    stable = "the node answered with an error"


class RpcError(UpstreamError):
    """The node returned a JSON-RPC error object.

    ``code`` and ``data`` are the node's own; ``data`` often holds revert bytes.
    """

    def __init__(self, message: str, code: int = 0, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class CallReverted(RpcError):
    """The node executed the call and the EVM failed it (revert, invalid opcode, out of
    gas): a fact about the contract, unlike every other RpcError."""


class MethodUnsupported(RpcError):
    stable = "the node does not support a method this check needs"


class StateUnavailable(RpcError):
    """The node has no state for the block read: a full (non-archive) node keeps only
    its most recent states (geth: 128) and answers older reads with "missing trie node"
    or "historical state ... is not available".  A limit of the node, not a failure:
    callers say what could not be read (docs/chains.md)."""

    stable = "the node does not keep the state of that block (not an archive node)"


class BatchTooLarge(RpcError):
    """The node (or the provider in front of it) refused a whole JSON-RPC batch as too
    large; ``limit`` is the size it named, when it named one.  Nothing of the batch
    ran, so the client sends it again split (:mod:`tokenrisk.chain.rpc`)."""

    stable = "the node refused a batch of requests as too large"

    def __init__(self, message: str, code: int = 0, data: Any = None, limit: int | None = None):
        super().__init__(message, code, data)
        self.limit = limit


class RequestTooLarge(BatchTooLarge):
    """A large batch answered with ONE error object instead of an array of replies: the
    node refused the request body by its bytes (anvil answers a body over 2 MiB with a
    lone ``-32600 "Invalid request"``), so none of its calls ran.  Unlike a refusal by
    the number of calls, no count limit is learnt: the client sends the batch again in
    two halves (:mod:`tokenrisk.chain.rpc`)."""

    stable = "the node refused a request as too large"


class MalformedResponse(UpstreamError):
    stable = "the node sent a malformed reply"


class ReplyTooLarge(MalformedResponse):
    stable = "the node's reply exceeded the size limit"


class ReplyTooDeep(MalformedResponse):
    stable = "the node's reply was nested too deeply"


class ProviderKeyRejected(UpstreamError):
    """The provider rejected the configured API key (missing, invalid or revoked)."""

    stable = "the source-code provider rejected the configured key"


class NodeUnavailable(TokenRiskError):
    status = 503
    stable = "the node cannot be reached"


class NodeThrottled(NodeUnavailable):
    stable = "the node is refusing requests (rate limited); try again later"


class ChainMismatch(NodeUnavailable):
    """The node answers ``eth_chainId`` with another chain than the one it is configured
    for: no answer for ``expected`` may come from it (503 naming the chain, never the
    URL).  Checked at start and again whenever the node was unreachable.  The message
    is our own words (two chain ids), so it is also the public text."""

    def __init__(self, expected: int, served: int) -> None:
        super().__init__(
            f"the node configured for chain {expected} serves chain {served}; "
            f"chain {expected} is unavailable until its node serves chain {expected}"
        )
        self.expected = expected
        self.served = served

    @property
    def public(self) -> str:
        return self.message


class NodeBehind(NodeUnavailable):
    """The node kept answering as if a block we had read from it did not exist yet
    ("header not found", a null block), after every bounded retry: a load-balanced
    provider whose backends lag one another, or a node falling behind.  Asking again
    shortly may work (503), unlike an error about the request (:mod:`tokenrisk.chain.lag`)."""

    stable = "the node has not caught up with a block it reported; try again shortly"


class ProviderRateLimited(NodeUnavailable):
    """The provider answered "too many requests"; asking again later may work.

    ``retry_after`` is the provider's hint in seconds, when it gave one.
    """

    stable = "the source-code provider is rate limiting requests; try again later"

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DeadlineExceeded(TokenRiskError):
    status = 504


class StoreError(TokenRiskError):
    """The store could not be read or written (database down, locked, full, ...)."""

    status = 503
    stable = "the database cannot be read or written"


class StoreConflict(StoreError):
    """Another writer moved the index cursor first; re-read the cursor and retry."""


class SchemaTooNew(StoreError):
    """The database was migrated by a newer tokenrisk; this one must not write to it."""


class VerdictError(TokenRiskError):
    """Something a token did that becomes part of the verdict, never an HTTP error."""


class AbiDecodeError(VerdictError, ValueError):
    """Return data did not match the expected ABI types."""


class LiquidityError(VerdictError):
    """Liquidity could not be simulated; the message says why (becomes simulationError)."""


class BytecodeUnanalysable(VerdictError):
    """evmole's storage layout of a contract killed its worker twice or ran past its
    limit: the owner-power scan says it failed (its error) instead of answering without
    the layout's findings."""


class ConfigError(TokenRiskError, ValueError):
    """The configuration is invalid; the message names the key, never a secret value."""


class BuildError(TokenRiskError):
    """The devnet build tool failed; the running service never raises these."""


class DevnetBuildError(BuildError):
    """The devnet build failed; the message names the step (token id, action) and why."""


class SolcError(BuildError):
    """The compiler could not run, reported errors, or produced unusable artifacts.

    For compile errors the message holds solc's formatted error messages.
    """


class Overloaded(TokenRiskError):
    """503: this worker already runs as many uncached checks as it admits (see
    :mod:`tokenrisk.api.runner`); ``retry_after`` seconds is a fair wait."""

    status = 503

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retrieved(task: asyncio.Future[Any]) -> None:
    """A done-callback for a request sent ahead that may never be read: its exception
    (a node error, the deadline) counts as retrieved, so asyncio does not log "exception
    was never retrieved" for work the check dropped unread; a reader still gets it."""
    if not task.cancelled():
        task.exception()

"""The one exception tree of tokenrisk.

::

    TokenRiskError
    ├── InputError                  400: the request itself is wrong
    │   ├── InvalidAddress
    │   ├── UnknownChain
    │   └── MissingParameter
    ├── NotFoundError               404: nothing to check (e.g. no pair at all)
    ├── AuthError                   401: missing or wrong API key
    ├── RateLimited                 429: too many requests for one key
    ├── UpstreamError               502: the node answered, but not usefully
    │   ├── RpcError                    JSON-RPC error object (revert, unknown method, ...)
    │   │   └── MethodUnsupported       the node does not implement a method we need
    │   └── MalformedResponse           not JSON-RPC at all
    ├── NodeUnavailable             503: the node cannot be reached
    └── DeadlineExceeded            504: the node (or the check) was too slow

Third-party exceptions (httpx, eth-abi, SQLAlchemy) are mapped to these at the module
boundary with ``raise X from exc``; none of them reach the API layer.  Messages never
contain an RPC URL, because operators' URLs often embed keys.
"""

from __future__ import annotations

from typing import Any


class TokenRiskError(Exception):
    """Root of every error tokenrisk raises on purpose."""

    status = 500

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class InputError(TokenRiskError):
    status = 400


class InvalidAddress(InputError):
    pass


class UnknownChain(InputError):
    pass


class MissingParameter(InputError):
    pass


class NotFoundError(TokenRiskError):
    status = 404


class AuthError(TokenRiskError):
    status = 401


class RateLimited(TokenRiskError):
    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UpstreamError(TokenRiskError):
    status = 502


class RpcError(UpstreamError):
    """The node returned a JSON-RPC error object.

    ``code`` and ``data`` are the node's own; ``data`` often holds revert bytes.
    """

    def __init__(self, message: str, code: int = 0, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class MethodUnsupported(RpcError):
    pass


class MalformedResponse(UpstreamError):
    pass


class NodeUnavailable(TokenRiskError):
    status = 503


class DeadlineExceeded(TokenRiskError):
    status = 504

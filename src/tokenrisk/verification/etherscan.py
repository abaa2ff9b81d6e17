"""Etherscan and Etherscan-compatible explorers as a source provider.

One request, ``module=contract&action=getsourcecode&address=A`` on the configured
``api_url``.  With Etherscan's multichain API (``https://api.etherscan.io/v2/api``) the
chain goes in ``chainid``; single-chain explorers (V1-style ``/api`` URLs, Blockscout's
compatible API) ignore it, so limit such a provider to its chain with ``chains``.

Reading the answer (HTTP 200 in every case):

- ``status "1"`` and a non-empty ``result[0].SourceCode``: verified; ``ContractName``,
  ``CompilerVersion``, ``Proxy`` ("1") and ``Implementation`` are taken as given.
- ``status "1"`` with empty SourceCode (``ABI`` reads "Contract source code not
  verified"): not verified, None.
- ``status "0"``, ``result`` a message: "rate limit" → ProviderRateLimited; "API key"
  → ProviderKeyRejected; "not verified" or "unsupported chainid" → None (no answer for
  that chain); anything else → UpstreamError with the explorer's (redacted) text.

The key goes in the ``apikey`` query parameter, because that is the API.  It is never
put in an error message, never chained into an exception, and hidden from httpx's
request log (see :mod:`tokenrisk.verification.transport`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import httpx

from tokenrisk.errors import (
    MalformedResponse,
    ProviderKeyRejected,
    ProviderRateLimited,
    TokenRiskError,
    UpstreamError,
)
from tokenrisk.verification.source import ProviderName, SourceInfo, address_or_none, text_or_none
from tokenrisk.verification.transport import Reply, Request, get_json, hide_in_logs, redact

_NO_ANSWER = ("source code not verified", "unsupported chainid", "unsupported chain id")
_RATE_LIMITED = ("rate limit",)
_KEY_REJECTED = ("api key", "apikey")
_MAX_DETAIL = 200


class EtherscanProvider:
    """Asks an Etherscan-compatible explorer for a contract's verified source.

    ``api_key`` may be None for explorers that need none.  ``chains`` limits the
    chains this explorer is asked about (None: every chain); others get None without
    a request.  ``client`` is used as given and not closed by :meth:`aclose`.
    """

    name: ProviderName = "etherscan"

    def __init__(
        self,
        api_url: str,
        api_key: str | None = None,
        timeout: float = 5.0,
        *,
        client: httpx.AsyncClient | None = None,
        chains: Collection[int] | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._url = api_url
        self._key = api_key or None
        self._timeout = timeout
        self._chains = frozenset(chains) if chains is not None else None
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient()
        if self._key:
            hide_in_logs(self._key)

    def __repr__(self) -> str:
        return f"EtherscanProvider(chains={sorted(self._chains) if self._chains else 'any'})"

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def lookup(self, chain_id: int, address: str) -> SourceInfo | None:
        """The explorer's answer for ``address`` on ``chain_id`` (see the module docstring).

        Raises DeadlineExceeded, NodeUnavailable, ProviderRateLimited,
        ProviderKeyRejected, MalformedResponse, UpstreamError; none mentions the key.
        """
        if self._chains is not None and chain_id not in self._chains:
            return None
        reply = await get_json(self._client, self._request(chain_id, address))
        try:
            return read_reply(reply)
        except TokenRiskError as exc:
            exc.args = (redact(exc.message, self._secrets()),)
            raise

    def _request(self, chain_id: int, address: str) -> Request:
        params = {
            "chainid": str(chain_id),
            "module": "contract",
            "action": "getsourcecode",
            "address": address,
        }
        if self._key:
            params["apikey"] = self._key
        return Request(
            url=self._url, params=params, label=self.name, timeout=self._timeout, secret=self._key
        )

    def _secrets(self) -> tuple[str, ...]:
        return (self._key,) if self._key else ()


def read_reply(reply: Reply) -> SourceInfo | None:
    """Interpret a ``getsourcecode`` reply; the caller redacts the key from errors."""
    if reply.status in (401, 403):
        raise ProviderKeyRejected(f"etherscan refused the request (HTTP {reply.status})")
    if reply.status != 200:
        raise UpstreamError(f"etherscan answered HTTP {reply.status}")
    body = reply.body
    if not isinstance(body, dict) or "result" not in body:
        raise MalformedResponse("etherscan sent a reply without a result")
    if str(body.get("status")) == "1":
        return _verified_of(body["result"])
    _raise_for_failure(body)
    return None


def _verified_of(result: Any) -> SourceInfo | None:
    if not isinstance(result, list) or not result or not isinstance(result[0], dict):
        raise MalformedResponse("etherscan sent a source result that is not a list of objects")
    item = result[0]
    return SourceInfo(
        verified=text_or_none(item.get("SourceCode")) is not None,
        contract_name=text_or_none(item.get("ContractName")),
        compiler=text_or_none(item.get("CompilerVersion")),
        source="etherscan",
        is_proxy=str(item.get("Proxy")) == "1",
        implementation=address_or_none(item.get("Implementation")),
    )


def _raise_for_failure(body: dict[str, Any]) -> None:
    """Raise the typed error for a ``status "0"`` answer; return if it means "no answer"."""
    text = body["result"] if isinstance(body["result"], str) else str(body.get("message", ""))
    lowered = text.lower()
    if any(marker in lowered for marker in _NO_ANSWER):
        return
    if any(marker in lowered for marker in _RATE_LIMITED):
        raise ProviderRateLimited("etherscan rate limit reached")
    if any(marker in lowered for marker in _KEY_REJECTED):
        raise ProviderKeyRejected("etherscan rejected the API key")
    detail = " ".join(text.split())[:_MAX_DETAIL] or "no message"
    raise UpstreamError(f"etherscan error: {detail}")

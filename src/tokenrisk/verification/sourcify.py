"""Sourcify (sourcify.dev or a self-hosted server) as a source provider.

Two API generations are supported, chosen by the operator:

- ``v2`` (default): ``GET {base}/v2/contract/{chainId}/{address}`` with
  ``fields=compilation.name,compilation.compilerVersion,proxyResolution``.  200 with
  ``match`` "exact_match" (full) or "match" (partial) is verified; 404 (a JSON error
  body) or ``match: null`` is not.  A 400 ``unsupported_chain`` means Sourcify does not
  know the chain: no answer, not an error.  A 404 that is not JSON means the base URL
  does not point at a Sourcify server, which is an error, never "not verified".
- ``legacy``: ``GET {base}/check-all-by-addresses?addresses=A&chainIds=N`` for older
  servers: ``[{"address", "chainIds": [{"chainId", "status": "perfect"|"partial"}]}]``
  when verified, ``[{"address", "status": "false"}]`` when not.  It carries no name,
  compiler or proxy data.

``base_url`` is the server root that holds those paths (``https://sourcify.dev/server``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

import httpx

from tokenrisk.errors import MalformedResponse, UpstreamError
from tokenrisk.verification.source import (
    Match,
    ProviderName,
    SourceInfo,
    address_or_none,
    text_or_none,
)
from tokenrisk.verification.transport import Reply, Request, get_json

SourcifyApi = Literal["v2", "legacy"]

V2_FIELDS = "compilation.name,compilation.compilerVersion,proxyResolution"
_MATCHES: dict[str, Match] = {
    "exact_match": "full",
    "perfect": "full",
    "full": "full",
    "match": "partial",
    "partial": "partial",
}


class SourcifyProvider:
    """Asks a Sourcify server whether a contract is verified.

    ``client`` is used as given and not closed by :meth:`aclose`; without one the
    provider makes (and owns) its own.  ``timeout`` (seconds) bounds every request.
    ``chains`` limits the chains the server is asked about (None: every chain).
    """

    name: ProviderName = "sourcify"

    def __init__(
        self,
        base_url: str,
        client: httpx.AsyncClient | None = None,
        timeout: float = 5.0,
        *,
        api: SourcifyApi = "v2",
        chains: Collection[int] | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._base = base_url.rstrip("/")
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient()
        self._timeout = timeout
        self._api = api
        self._chains = frozenset(chains) if chains is not None else None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def lookup(self, chain_id: int, address: str) -> SourceInfo | None:
        """Sourcify's answer for ``address`` on ``chain_id`` (see the module docstring).

        Raises DeadlineExceeded, NodeUnavailable, ProviderRateLimited, MalformedResponse,
        UpstreamError.
        """
        if self._chains is not None and chain_id not in self._chains:
            return None
        if self._api == "legacy":
            return await self._lookup_legacy(chain_id, address)
        url = f"{self._base}/v2/contract/{chain_id}/{address}"
        reply = await get_json(self._client, self._request(url, {"fields": V2_FIELDS}))
        return v2_info(reply)

    async def _lookup_legacy(self, chain_id: int, address: str) -> SourceInfo | None:
        params = {"addresses": address, "chainIds": str(chain_id)}
        url = f"{self._base}/check-all-by-addresses"
        reply = await get_json(self._client, self._request(url, params))
        return legacy_info(reply, chain_id, address)

    def _request(self, url: str, params: dict[str, str]) -> Request:
        return Request(url=url, params=params, label=self.name, timeout=self._timeout)


def v2_info(reply: Reply) -> SourceInfo | None:
    """Interpret a ``/v2/contract`` reply."""
    body = reply.body
    if reply.status == 200:
        if not isinstance(body, dict):
            raise MalformedResponse("sourcify sent a contract that is not an object")
        return _v2_contract(body)
    code = body.get("customCode") if isinstance(body, dict) else None
    if reply.status == 404 and isinstance(body, dict):
        return None
    if reply.status == 400 and code == "unsupported_chain":
        return None
    detail = f" ({code})" if isinstance(code, str) and code.isidentifier() else ""
    raise UpstreamError(f"sourcify answered HTTP {reply.status}{detail}")


def _v2_contract(body: dict[str, Any]) -> SourceInfo | None:
    match = _MATCHES.get(str(body.get("match")))
    if match is None:
        return None
    compilation = body.get("compilation")
    compilation = compilation if isinstance(compilation, dict) else {}
    is_proxy, implementation = _proxy_of(body.get("proxyResolution"))
    return SourceInfo(
        verified=True,
        contract_name=text_or_none(compilation.get("name")),
        compiler=text_or_none(compilation.get("compilerVersion")),
        source="sourcify",
        match=match,
        is_proxy=is_proxy,
        implementation=implementation,
    )


def _proxy_of(resolution: Any) -> tuple[bool, str | None]:
    """(is_proxy, first implementation address) from a ``proxyResolution`` object."""
    if not isinstance(resolution, dict) or resolution.get("isProxy") is not True:
        return False, None
    implementations = resolution.get("implementations")
    if isinstance(implementations, list):
        for item in implementations:
            address = address_or_none(item.get("address") if isinstance(item, dict) else None)
            if address is not None:
                return True, address
    return True, None


def legacy_info(reply: Reply, chain_id: int, address: str) -> SourceInfo | None:
    """Interpret a ``/check-all-by-addresses`` reply for one address and chain."""
    if reply.status != 200:
        raise UpstreamError(f"sourcify answered HTTP {reply.status}")
    if not isinstance(reply.body, list):
        raise MalformedResponse("sourcify sent a check result that is not a list")
    for item in reply.body:
        if isinstance(item, dict) and str(item.get("address", "")).lower() == address.lower():
            return _legacy_match(item, chain_id)
    return None


def _legacy_match(item: dict[str, Any], chain_id: int) -> SourceInfo | None:
    chains = item.get("chainIds")
    for entry in chains if isinstance(chains, list) else ():
        if isinstance(entry, dict) and str(entry.get("chainId")) == str(chain_id):
            match = _MATCHES.get(str(entry.get("status")))
            if match is not None:
                return SourceInfo(verified=True, source="sourcify", match=match)
    return None

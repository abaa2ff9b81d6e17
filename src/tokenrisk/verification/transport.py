"""One HTTP GET for the remote providers: timeout, bounded retry, typed errors, redaction.

Providers differ in what a 404 or a 400 means, so :func:`get_json` maps only what is
the same for every provider: the network (timeouts, refused connections), overload
(429, 408, 5xx) and unparseable bodies.  It returns the status and JSON body for the
provider to interpret.

Keys travel in query strings (Etherscan's API has no other way), so a *secret* given
here is kept out of everything we produce: error messages, exception chains (the httpx
exception, whose request holds the URL, is not chained when a secret is in play) and
httpx's own ``INFO`` request log line (see :func:`hide_in_logs`).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from tokenrisk.errors import (
    DeadlineExceeded,
    MalformedResponse,
    NodeUnavailable,
    ProviderRateLimited,
)

REDACTED = "***"
_OVERLOADED = frozenset({408, 425, 502, 503, 504})


@dataclass(frozen=True)
class Reply:
    """A provider's answer: HTTP status and parsed JSON (None for a non-JSON 4xx body)."""

    status: int
    body: Any


@dataclass(frozen=True)
class Request:
    """Everything :func:`get_json` needs besides the client."""

    url: str
    params: Mapping[str, str]
    label: str
    timeout: float
    secret: str | None = None
    retries: int = 1
    backoff: float = 0.1


class _SecretFilter(logging.Filter):
    """Rewrites log records that would print a registered secret."""

    def __init__(self) -> None:
        super().__init__("tokenrisk.secrets")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        text = record.getMessage()
        if any(secret in text for secret in self.secrets):
            record.msg = redact(text, self.secrets)
            record.args = ()
        return True


_FILTER = _SecretFilter()


def hide_in_logs(secret: str) -> None:
    """Make the ``httpx`` logger print ``***`` instead of ``secret``.

    httpx logs every request URL at INFO; with a key in the query string that line
    would leak it to any operator who turns INFO on.
    """
    if not secret:
        return
    _FILTER.secrets.add(secret)
    logger = logging.getLogger("httpx")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def redact(text: str, secrets: set[str] | frozenset[str] | tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def retry_after(response: httpx.Response) -> float | None:
    """The Retry-After hint in seconds (delta or HTTP date), if present and sane."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def get_json(client: httpx.AsyncClient, request: Request) -> Reply:
    """GET ``request.url`` and return its status and JSON body.

    Only connection failures are retried (``request.retries`` times, exponential
    backoff): a GET is idempotent, but a timeout or a 429 means the provider is busy
    and asking again at once would make it worse.

    Raises DeadlineExceeded (timeout), NodeUnavailable (unreachable, 408/5xx),
    ProviderRateLimited (429), MalformedResponse (2xx that is not JSON).  Any other
    4xx is returned, with ``body`` None when it is not JSON.
    """
    for attempt in range(request.retries + 1):
        try:
            response = await _send(client, request)
        except NodeUnavailable:
            if attempt >= request.retries:
                raise
            await asyncio.sleep(request.backoff * (2**attempt))
        else:
            return _reply_of(response, request.label)
    raise AssertionError("unreachable")


async def _send(client: httpx.AsyncClient, request: Request) -> httpx.Response:
    try:
        return await client.get(request.url, params=request.params, timeout=request.timeout)
    except httpx.TimeoutException as exc:
        what = f"{request.label} did not answer in time ({type(exc).__name__})"
        raise DeadlineExceeded(what) from _chainable(exc, request)
    except httpx.TransportError as exc:
        what = f"{request.label} is unreachable ({type(exc).__name__})"
        raise NodeUnavailable(what) from _chainable(exc, request)


def _chainable(exc: Exception, request: Request) -> Exception | None:
    """The httpx exception to chain, or None when its request URL holds a secret."""
    return None if request.secret else exc


def _reply_of(response: httpx.Response, label: str) -> Reply:
    status = response.status_code
    if status == 429:
        raise ProviderRateLimited(f"{label} rate limit reached", retry_after(response))
    if status >= 500 or status in _OVERLOADED:
        raise NodeUnavailable(f"{label} answered HTTP {status}")
    try:
        body = json.loads(response.content)
    except ValueError as exc:
        if status >= 400:
            return Reply(status, None)
        raise MalformedResponse(f"{label} sent a reply that is not JSON") from exc
    return Reply(status, body)

"""Redaction: configured secrets and API keys never reach a log line.

Operators' RPC URLs often embed provider keys, API keys arrive in query strings
(``?apiKey=...``, which the access log prints), and node error text can quote either.
Responses are safe by construction (clients only ever see our own messages, see
:attr:`tokenrisk.errors.TokenRiskError.public`); logs are made safe here, once for the
whole process: :func:`install` wraps the log-record factory so every record, from any
logger (ours, uvicorn's access and error logs, httpx, asyncio), has each configured
secret and every ``apiKey`` query value replaced by ``***`` before any handler sees
it, exception tracebacks included.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

MASK = "***"
_KEY_PARAM = re.compile(r"(?i)(apikey=)[^&\s\"']*")
_MIN_SECRET = 6  # shorter configured values would mask ordinary words
_KEY_LIKE = re.compile(r"[A-Za-z0-9_\-]{12,}")
_secrets: set[str] = set()
_installed = False


def secret_parts(url: str) -> set[str]:
    """The URL itself plus the parts of it that may be a key on their own.

    Providers put keys in the path (``/v3/<key>``), the query or the userinfo; each
    key-like path segment or query value (12+ characters of letters, digits, ``-`` and
    ``_``, with at least one digit) and the password are kept too, so a message quoting
    only part of the URL is masked as well.  Plain words (``/tokenrisk``) are not.
    """
    split = urlsplit(url)
    pieces = split.path.split("/") + [p.partition("=")[2] for p in split.query.split("&")]
    parts = {url, *(p for p in pieces if _KEY_LIKE.fullmatch(p) and any(c.isdigit() for c in p))}
    if split.password:
        parts.add(split.password)
    return {p for p in parts if len(p) >= _MIN_SECRET}


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with each secret (longest first) and every apiKey value masked."""
    for secret in sorted(_secrets if secrets is None else set(secrets), key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return _KEY_PARAM.sub(r"\g<1>" + MASK, text)


def _clean(value: Any) -> Any:
    """Strings redacted; numbers and None kept (``%d`` needs them); any other object
    (an httpx.URL, an exception) becomes its redacted text."""
    if value is None or isinstance(value, int | float):
        return value
    return redact(value if isinstance(value, str) else str(value))


def _scrub(record: logging.LogRecord) -> None:
    """Redact the message, its arguments (keeping their shape: uvicorn's access
    formatter unpacks them) and the exception text."""
    record.msg = _clean(record.msg)
    if isinstance(record.args, tuple):
        record.args = tuple(_clean(a) for a in record.args)
    elif isinstance(record.args, dict):
        record.args = {k: _clean(v) for k, v in record.args.items()}
    if record.exc_info and record.exc_info[1] is not None:
        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip())
        record.exc_info = None


def install(secrets: Iterable[str]) -> None:
    """Mask ``secrets`` (added to those already installed) in every later log record."""
    global _installed
    _secrets.update(s for s in secrets if len(s) >= _MIN_SECRET)
    if _installed:
        return
    _installed = True
    make = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        _scrub(record)
        return record

    logging.setLogRecordFactory(factory)


def configured_secrets(
    api_keys: Iterable[str],
    urls: Iterable[str | None],
    verification: Any = None,
) -> set[str]:
    """Every secret an operator configures: API keys, node/fork/store URLs (and their
    key-like parts), the etherscan key of the ``[verification]`` table."""
    found = {k for k in api_keys if k}
    for url in urls:
        if url:
            found |= secret_parts(url)
    if isinstance(verification, dict) and verification.get("etherscan_key"):
        found.add(str(verification["etherscan_key"]))
    return found

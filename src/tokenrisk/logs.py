"""Log output of ``tokenrisk serve``: uvicorn's plain text, or one JSON object per line.

``log_format = "json"`` (``TOKENRISK_LOG_FORMAT=json``) gives every record, ours and
uvicorn's, as ``{"time", "level", "logger", "message"}`` plus ``exception`` when there
is a traceback; access-log records also carry ``client``, ``method``, ``path``,
``http_version`` and ``status``.  Secrets are already masked in the records by
:mod:`tokenrisk.redaction` before any formatter sees them.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            if len(record.args) == len(_ACCESS_FIELDS):
                out.update(zip(_ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:  # already formatted (and redacted) by tokenrisk.redaction
            out["exception"] = record.exc_text
        return json.dumps(out, ensure_ascii=False, default=str)


def uvicorn_log_config(log_format: str, level: str = "info") -> dict[str, Any] | None:
    """A ``logging.config.dictConfig`` for uvicorn, or None to keep uvicorn's own text."""
    if log_format != "json":
        return None
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    loggers = ("uvicorn", "uvicorn.error", "uvicorn.access", "tokenrisk", "httpx")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"json": handler},
        "loggers": {
            name: {
                "handlers": ["json"],
                "level": "WARNING" if name == "httpx" else level.upper(),
                "propagate": False,
            }
            for name in loggers
        },
    }

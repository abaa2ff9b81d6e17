"""Progress lines of a devnet build, on stderr."""

from __future__ import annotations

import sys
import time


def progress(message: str, started: float) -> None:
    """One progress line on stderr, prefixed with the seconds since the build started."""
    print(f"[devnet {time.monotonic() - started:5.1f}s] {message}", file=sys.stderr, flush=True)

"""Shared by the tests that start ``tokenrisk serve`` as a process of its own."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx


def wait_healthy(
    url: str,
    process: subprocess.Popen[bytes],
    log: Path | None,
    timeout: float = 300.0,
    path: str = "/health",
) -> None:
    """Wait until ``path`` answers 200; fail with the log's tail (when there is a log) if
    the process dies first.  One client serves every poll (each ``httpx.get`` would build
    a client and its TLS context)."""
    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited {process.returncode}: {_tail(log)}")
            try:
                if client.get(f"{url}{path}", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
    raise RuntimeError(f"serve did not become healthy: {_tail(log)}")


def _tail(log: Path | None) -> str:
    return log.read_text()[-2000:] if log is not None else "(no log)"

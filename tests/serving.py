"""Shared by the tests that start ``tokenrisk serve`` as a process of its own."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx


def wait_healthy(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 300.0
) -> None:
    """Wait until ``/health`` answers 200; fail with the log's tail if the process dies first."""
    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited {process.returncode}: {log.read_text()[-2000:]}")
            try:
                if client.get(f"{url}/health", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
    raise RuntimeError(f"serve did not become healthy: {log.read_text()[-2000:]}")

"""One real tokenrisk server for the whole conformance suite, and the devnet catalogue.

The server is the installed ``tokenrisk serve`` in its own process, on the embedded
devnet (the same built state the ``devnet`` fixture loads, so addresses agree), with its
own data directory: the clients talk to it over real HTTP exactly as they would talk to
the live API.  The catalogue (``manifest.json``) is read here, in tests only.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import wait_healthy

CHAIN = 31337
START_TIMEOUT = 300.0  # seconds for the server (and its devnet) to answer /health (a busy CI)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def server_url(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a running ``tokenrisk serve`` (stopped after the session)."""
    data_dir = tmp_path_factory.mktemp("conformance")
    port = _free_port()
    log = data_dir / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env |= {"TOKENRISK_DATA_DIR": str(data_dir), "TOKENRISK_DEADLINE": "120"}
    command = [str(Path(sys.executable).with_name("tokenrisk")), "serve", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log, START_TIMEOUT)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def catalogue(devnet: Any) -> list[dict[str, Any]]:
    """Every devnet catalogue token with its deployed address and pools."""
    return list(devnet.manifest["tokens"])

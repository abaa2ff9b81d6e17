"""A throwaway redis-server on a free loopback port, for tests and the bench.

Started from Debian's ``redis-server`` binary (scripts/with-redis.sh installs it) in a
temporary directory, without persistence, bound to 127.0.0.1 only; ``stop()`` ends it.
Like the devnet's anvil, a local development tool: the service itself only connects to
the operator's ``redis_url``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tokenrisk.devnet.node import free_port


class RedisServer:
    """One redis-server child process; ``url`` to connect, ``stop()`` to end it."""

    def __init__(self, binary: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tokenrisk-redis-"))
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(self.dir), "--protected-mode", "yes"]
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    @property
    def url(self) -> str:
        """The server's ``redis://`` URL (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def wait(self, timeout: float = 10.0) -> None:
        """Return once the server answers PING; raises RuntimeError otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("redis-server exited at start-up")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING")

    def stop(self) -> None:
        """End the server and remove its directory (safe to call twice)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)


def start_redis(port: int | None = None) -> RedisServer | None:
    """A running server (on ``port``: a restart of one that stopped), or None when
    redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    server = RedisServer(binary, port)
    try:
        server.wait()
    except RuntimeError:
        server.stop()
        raise
    return server

"""The service under test: the real app, served by uvicorn in its own process.

A separate process so that its peak memory (``VmHWM`` in ``/proc/<pid>/status``) is the
service's alone and the load generator's CPU is not mixed into it.  The process serves
a :class:`tokenrisk.service.Service` connected to an already running devnet node, so
every server of one bench run sees the same chain.  Run directly as::

    python -m bench.server --rpc-url URL --build-dir build/devnet --data-dir DIR --port N
"""

from __future__ import annotations

import argparse
import atexit
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from tokenrisk.api.app import create_app
from tokenrisk.config import OwnerPowersConfig, Settings
from tokenrisk.devnet.layout import read_manifest
from tokenrisk.devnet.node import free_port, repo_root
from tokenrisk.service import connect_devnet

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ServerOptions:
    """How to run one server; ``None`` keeps the Settings default.

    ``cache_ttl=0`` turns the results cache off, so every request is computed.
    """

    rpc_url: str
    build_dir: Path
    data_dir: Path
    holder_limit: int | None = None
    cache_ttl: float | None = None
    deadline: float = 60.0
    owner_powers: bool = True  # False: the owner-power scan is off
    powers_cache_ttl: float | None = None  # 0: every scan is computed
    head_reuse: float | None = None  # None: the default (every cache lookup reads the head)

    def argv(self, port: int) -> list[str]:
        args = ["--rpc-url", self.rpc_url, "--build-dir", str(self.build_dir)]
        args += ["--data-dir", str(self.data_dir), "--port", str(port)]
        args += ["--deadline", str(self.deadline)]
        if self.holder_limit is not None:
            args += ["--holder-limit", str(self.holder_limit)]
        if self.cache_ttl is not None:
            args += ["--cache-ttl", str(self.cache_ttl)]
        if not self.owner_powers:
            args += ["--no-owner-powers"]
        if self.powers_cache_ttl is not None:
            args += ["--powers-cache-ttl", str(self.powers_cache_ttl)]
        if self.head_reuse is not None:
            args += ["--head-reuse", str(self.head_reuse)]
        return args


class ServerProcess:
    """A running server child; ``stop()`` (or leaving the ``with`` block) ends it."""

    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.port = port
        atexit.register(self.stop)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def peak_rss_mib(self) -> float:
        """Peak resident memory of the server process so far, in MiB (Linux only)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM line in /proc/<pid>/status")

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(options: ServerOptions, timeout: float = 60.0) -> ServerProcess:
    """Start a server on a free loopback port and wait until it answers HTTP.

    Raises RuntimeError when it exits or does not answer within ``timeout`` seconds.
    """
    port = free_port()
    command = [sys.executable, "-m", "bench.server", *options.argv(port)]
    process = subprocess.Popen(command, cwd=repo_root(), stdin=subprocess.DEVNULL)
    server = ServerProcess(process, port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"bench server exited early with code {process.returncode}")
        try:
            if httpx.get(f"{server.url}/openapi.json", timeout=1.0).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"bench server did not answer within {timeout:.0f}s")


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="serve tokenrisk on a running devnet node")
    parser.add_argument("--rpc-url", required=True)
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--deadline", type=float, default=60.0)
    parser.add_argument("--holder-limit", type=int, default=None)
    parser.add_argument("--cache-ttl", type=float, default=None)
    parser.add_argument("--no-owner-powers", action="store_true")
    parser.add_argument("--powers-cache-ttl", type=float, default=None)
    parser.add_argument("--head-reuse", type=float, default=None)
    return parser.parse_args(argv)


def serve(argv: list[str]) -> None:
    args = _parse(argv)
    manifest = read_manifest(args.build_dir)
    if manifest is None:
        sys.exit(f"no devnet manifest in {args.build_dir}")
    extra = {
        key: value
        for key, value in (
            ("holder_limit", args.holder_limit),
            ("cache_ttl", args.cache_ttl),
            ("head_reuse", args.head_reuse),
        )
        if value is not None
    }
    powers = OwnerPowersConfig(enabled=not args.no_owner_powers)
    if args.powers_cache_ttl is not None:
        powers = powers.model_copy(update={"cache_ttl": args.powers_cache_ttl})
    settings = Settings(
        devnet=False, data_dir=args.data_dir, deadline=args.deadline, owner_powers=powers, **extra
    )
    service = connect_devnet(settings, args.rpc_url, manifest, args.build_dir)
    app = create_app(settings, service)
    uvicorn.run(app, host=HOST, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    serve(sys.argv[1:])

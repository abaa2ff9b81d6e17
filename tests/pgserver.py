"""A throwaway PostgreSQL server that a test can stop and start again (the watcher's
restart tests): Debian's binaries (scripts/with-postgres.sh installs them), a fresh
cluster in a temporary directory, loopback only, run as ``postgres`` when we are root."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tokenrisk.devnet.node import free_port


def _bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
    return found[-1] if found and (found[-1] / "pg_ctl").exists() else None


class PgServer:
    """``start()``/``stop()`` as often as needed; ``close()`` removes everything."""

    def __init__(self, binaries: Path) -> None:
        self.bin = binaries
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tokenrisk-pgtest-"))
        self.runas = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.runas:
            shutil.chown(self.dir, "postgres")
        self._run("initdb", "-D", str(self.dir / "data"), "-U", "tokenrisk", "--auth=trust")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://tokenrisk@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        command = [*self.runas, str(self.bin / tool), *args]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.dir} -c fsync=off"
        )
        data, log = str(self.dir / "data"), str(self.dir / "log")
        self._run("pg_ctl", "-D", data, "-l", log, "-w", "-o", options, "start")

    def stop(self, mode: str = "immediate") -> None:
        """``immediate``: as a crash (no shutdown checkpoint; recovery on the next start)."""
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", mode, "-w", "stop")

    def close(self) -> None:
        try:
            self.stop("fast")
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(self.dir, ignore_errors=True)


def start_postgres() -> PgServer | None:
    """A running server, or None when PostgreSQL is not installed."""
    binaries = _bin()
    if binaries is None:
        return None
    server = PgServer(binaries)
    server.start()
    return server

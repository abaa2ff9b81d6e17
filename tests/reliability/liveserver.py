"""The real app served by uvicorn on a loopback socket, from a thread of the test process.

The server thread runs its own event loop; the :class:`tokenrisk.service.Service` is
created and closed inside that loop, so none of its connections or semaphores is shared
with the tests' loop.  ``service`` may be read from tests once requests are finished
(the store is thread-safe; nothing else should be touched).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from tokenrisk.api.app import create_app
from tokenrisk.api.server import server_options
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import Service, connect_devnet


class LiveServer:
    def __init__(self, settings: Settings, devnet: RunningDevnet, **overrides: Any) -> None:
        """``overrides``: uvicorn options on top of the production ones (server_options)."""
        self.settings = settings
        self.overrides = overrides
        self.devnet = devnet
        self.service: Service | None = None
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._server: uvicorn.Server | None = None
        self._thread = threading.Thread(target=self._run, name="live-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    @property
    def in_progress(self) -> int:
        """The requests the server is answering now (uvicorn's request tasks)."""
        return 0 if self._server is None else len(self._server.server_state.tasks)

    def start(self, timeout: float = 20.0) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not (self._server is not None and self._server.started):
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the live server did not start")
            time.sleep(0.02)

    def __enter__(self) -> LiveServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, timeout: float = 20.0) -> None:
        """Shut down as SIGTERM does (uvicorn's graceful shutdown); a server that does not
        stop within ``timeout`` fails the test instead of being left running."""
        if self._server is not None:
            self._server.should_exit = True
        self._thread.join(timeout=timeout)
        self._socket.close()
        if self._thread.is_alive():
            raise AssertionError(f"the live server did not stop within {timeout} s")

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        d = self.devnet
        self.service = connect_devnet(self.settings, d.url, d.manifest, Path(d.build_dir))
        options = {**server_options(self.settings), "log_level": "warning", "access_log": False}
        options.update(self.overrides)
        config = uvicorn.Config(create_app(self.settings, self.service), lifespan="on", **options)
        self._server = uvicorn.Server(config)
        try:
            await self._server.serve(sockets=[self._socket])
        finally:
            await self.service.close()

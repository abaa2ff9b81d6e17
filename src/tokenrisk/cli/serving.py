"""``tokenrisk serve`` with N workers and ``tokenrisk worker``: running the service at scale.

One process is the embedded default.  ``serve --workers N`` (N > 1) runs N uvicorn
worker processes; they share what must be shared through Redis (``redis_url``: results
cache, single flight, rate limits, the index job queue) and the store (``store_url``,
PostgreSQL for several hosts), so N > 1 without ``redis_url`` is refused rather than
run as N services that each believe they are alone.  On the embedded devnet the parent
starts ONE devnet and hands its URL to the workers (``TOKENRISK_DEVNET_URL``), so every
worker sees the same chain.  ``tokenrisk worker`` runs the background holder-index jobs
(:mod:`tokenrisk.jobs`); docs/deployment.md shows a whole deployment.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import TYPE_CHECKING

from tokenrisk.config import Settings
from tokenrisk.errors import ConfigError

if TYPE_CHECKING:
    from tokenrisk.api.server import Listening


def require_redis(settings: Settings, what: str) -> None:
    """Raises ConfigError (one line, exit 3) when ``what`` needs Redis and none is set."""
    if not settings.redis_url:
        raise ConfigError(
            f"{what} needs redis_url: workers share their cache, single flight, rate "
            "limits and job queue through Redis (docs/deployment.md)"
        )


def serve_api(settings: Settings, listening: Listening, workers: int) -> bool:
    """Serve on ``listening`` with ``workers`` processes (blocking until it stops); False
    when a single-process server could not start its app."""
    from tokenrisk.api import server

    with ExitStack() as stack:
        if workers > 1 and settings.devnet and not settings.devnet_url:
            from tokenrisk.devnet.instance import start_devnet

            settings.data_dir.mkdir(parents=True, exist_ok=True)
            devnet = stack.enter_context(start_devnet(log_path=settings.data_dir / "devnet.log"))
            os.environ["TOKENRISK_DEVNET_URL"] = devnet.url
        return server.run(settings, listening, workers=workers, log_level="info")


def run_worker(settings: Settings, burst: bool) -> None:
    """Run index jobs from the Redis queue until stopped (or, ``burst``, until it is empty)."""
    from tokenrisk.jobs import build_worker

    build_worker(settings, burst=burst).run()

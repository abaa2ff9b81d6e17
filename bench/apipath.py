"""The IsHoneypot request path without its check: ``python -m bench.apipath``.

``PYTHONPATH=src:. python -m bench.apipath [--requests 3000] [--repeats 3] [--profile N]``
(~15 s: the devnet starts for the service the app is built on).

What every recomputed check pays around its work: the app's middleware, routing, the
gate (key, rate limit), the query's parameters, the runner (deadline, admission) and the
response.  The real app (:func:`tokenrisk.api.app.create_app`, results cache off) is
called directly over ASGI, in this process, with :meth:`Runner.cached` answering a fixed
body at once, so nothing of the check itself runs; the figure is process CPU per request
(``time.process_time``), hot (the same request repeated), the best of ``--repeats``.  No
HTTP server and no client are involved (uvicorn's parsing and writing come on top).
``--profile N`` prints cProfile's top N functions by own time over one more round.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from tokenrisk.api.app import create_app
from tokenrisk.api.runner import JSONBytes, Runner
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import start_devnet
from tokenrisk.service import connect_devnet

BODY = b'{"answer":"fixed"}'


async def _fixed(self: Runner, endpoint: str, chain_id: int | None, params: Any, work: Any) -> Any:
    return JSONBytes(BODY, headers={"X-Cache": "miss"})


def _scope(token: str) -> dict[str, Any]:
    query = f"address={token}&chainID=31337".encode()
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/v2/IsHoneypot",
        "raw_path": b"/v2/IsHoneypot",
        "query_string": query,
        "headers": [(b"host", b"bench"), (b"user-agent", b"bench")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "root_path": "",
        "state": {},
    }


async def run(args: argparse.Namespace) -> str:
    Runner.cached = _fixed  # type: ignore[method-assign]
    lines = []
    with tempfile.TemporaryDirectory(prefix="tokenrisk-apipath-") as tmp, start_devnet() as devnet:
        settings = Settings(devnet=False, data_dir=Path(tmp), deadline=60.0, cache_ttl=0)
        service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
        app = create_app(settings, service)
        scope = _scope(devnet.manifest["tokens"][0]["address"])
        statuses: list[int] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        async def requests(n: int) -> None:
            for _ in range(n):
                await app(dict(scope), receive, send)

        try:
            async with app.router.lifespan_context(app):
                await requests(300)  # warm
                best = min([await _timed(requests, args.requests) for _ in range(args.repeats)])
                lines.append(f"apipath endpoint=IsHoneypot cpu_us={best * 1e6:.1f} per request")
                if args.profile:
                    profiler = cProfile.Profile()
                    profiler.enable()
                    await requests(args.requests)
                    profiler.disable()
                    out = io.StringIO()
                    stats = pstats.Stats(profiler, stream=out).sort_stats("tottime")
                    stats.print_stats(args.profile)
                    lines.append(out.getvalue())
        finally:
            await service.close()
        if set(statuses) != {200}:
            raise RuntimeError(f"unexpected statuses {sorted(set(statuses))}")
    return "\n".join(lines)


async def _timed(requests: Any, n: int) -> float:
    started = time.process_time()
    await requests(n)
    return (time.process_time() - started) / n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.apipath", description=__doc__)
    parser.add_argument("--requests", type=int, default=3000, help="requests per round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the best is printed")
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N functions")
    print(asyncio.run(run(parser.parse_args(sys.argv[1:] if argv is None else argv))))


if __name__ == "__main__":
    main()

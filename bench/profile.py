"""Profile one IsHoneypot check alone: ``python -m bench.profile [--token ID] [--top N]``.

The quick loop for working on the hot path (the full ``make bench`` takes minutes).  It
starts the devnet, serves the app in this process with the results cache off, warms the
holder index with one request, then prints for ``--requests`` more requests of the same
catalogue token: wall time, process CPU, JSON-RPC calls by method, HTTP round trips
and the *sequential* round trips (the longest chain of round trips that did not
overlap in time, i.e. the depth of the critical path), followed by cProfile's top
functions by own time and the own time grouped by library.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
from pathlib import Path

from bench.hotpath import profile_is_honeypot
from bench.table import profile_text
from tokenrisk.devnet.instance import start_devnet


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--token", default="plain", help="catalogue id of the token")
    parser.add_argument("--holder-limit", type=int, default=0, help="0: no holder analysis")
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--top", type=int, default=25, help="functions listed by own time")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="tokenrisk-profile-") as tmp, start_devnet() as devnet:
        token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == args.token)
        profiler = cProfile.Profile()
        breakdown = await profile_is_honeypot(
            devnet.url,
            devnet.manifest,
            devnet.build_dir,
            Path(tmp),
            token,
            requests=args.requests,
            holder_limit=args.holder_limit,
            profiler=profiler,
        )
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.top)
    return "\n\n".join([profile_text(breakdown), breakdown.top, out.getvalue()])


def main(argv: list[str] | None = None) -> None:
    print(asyncio.run(run(parse_args(sys.argv[1:] if argv is None else argv))))


if __name__ == "__main__":
    main()

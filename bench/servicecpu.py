"""Service CPU per answer and cached p50s: ``python -m bench.servicecpu [--passes N]``.

Issue #27's CPU targets in about a minute, on the devnet: a real server process
(:mod:`bench.server`) per cache setting, every catalogue token asked once untimed (holder
index, verifier and per-token memories warm), then ``--passes`` timed passes over all of
them.  The service's CPU is read from ``/proc`` (:mod:`bench.cpu`: the server process
and its children, user + system) around each request, so the figure is the service's
alone, not the node's or this load generator's; ``--top`` tokens with the most CPU are
listed (the mean hides which checks cost most).  Lines printed::

    servicecpu kind=recomputed endpoint=IsHoneypot answers=N cpu_ms=X p50_ms=Y
    servicecpu kind=cached endpoint=GetContractVerification answers=N cpu_ms=X p50_ms=Y

The CPU clock ticks at ``SC_CLK_TCK`` (100 Hz here), so one request reads 0 or 10 ms;
only sums over many requests mean anything, and those are what is printed.  The machine's
other load moves the figures by +-15 %; compare runs made back to back.

The devnet's head stands still, so a recomputed check there meets every memory kept per
head block (the holder index's derived reads, docs/holders.md).  ``--new-head`` mines an
empty block (``evm_mine``, untimed, outside the CPU reading) before every timed request
of the recomputed cases, as on a live chain where a recomputed check is one at a new
head: the index then reads that block and its per-head memories start again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import httpx

from bench.client import BenchClient
from bench.cpu import cpu_seconds, descendants
from bench.latency import Samples, timed_get
from bench.server import ServerOptions, start_server
from tokenrisk.devnet.instance import RunningDevnet, start_devnet

CHAIN = 31337
CASES = (
    ("recomputed", 0.0, "/v2/IsHoneypot"),
    ("recomputed", 0.0, "/v2/GetContractVerification"),
    ("cached", None, "/v2/IsHoneypot"),
    ("cached", None, "/v2/GetContractVerification"),
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.servicecpu", description=__doc__)
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the tokens")
    parser.add_argument("--top", type=int, default=5, help="costliest tokens listed")
    parser.add_argument(
        "--new-head", action="store_true", help="mine a block before each recomputed request"
    )
    parser.add_argument("--only", choices=("recomputed", "cached"), help="one kind of case")
    return parser.parse_args(argv)


async def mine(node_url: str) -> None:
    """One new (empty) block on the devnet's anvil."""
    async with httpx.AsyncClient() as client:
        reply = await client.post(
            node_url, json={"jsonrpc": "2.0", "id": 1, "method": "evm_mine", "params": []}
        )
        reply.raise_for_status()


async def measure(
    url: str,
    pid: int,
    path: str,
    tokens: list[tuple[str, str]],
    passes: int,
    node_url: str | None = None,
) -> tuple[Samples, dict[str, float]]:
    """Latencies of ``passes`` timed passes and the service CPU seconds per token id;
    ``node_url``: mine a block there before each timed request."""
    samples, cpu = Samples(), defaultdict(float)
    async with BenchClient(url) as http:
        for _, address in tokens:  # untimed: warm every per-token memory
            await timed_get(http, path, {"address": address, "chainID": CHAIN})
        pids = descendants(pid)
        for _ in range(passes):
            for name, address in tokens:
                if node_url is not None:
                    await mine(node_url)
                before = cpu_seconds(pids)
                samples.add(*await timed_get(http, path, {"address": address, "chainID": CHAIN}))
                cpu[name] += cpu_seconds(pids) - before
    return samples, cpu


async def run(args: argparse.Namespace, devnet: RunningDevnet, work: Path) -> list[str]:
    tokens = [(t["id"], t["address"]) for t in devnet.manifest["tokens"]]
    lines: list[str] = []
    for i, (kind, ttl, path) in enumerate(CASES):
        if args.only is not None and kind != args.only:
            continue
        data = work / str(i)
        data.mkdir()
        node_url = devnet.url if args.new_head and kind == "recomputed" else None
        kind += "-new-head" if node_url is not None else ""
        with start_server(ServerOptions(devnet.url, devnet.build_dir, data, None, ttl)) as server:
            pid = server.process.pid
            samples, cpu = await measure(server.url, pid, path, tokens, args.passes, node_url)
        answers = max(1, samples.n)
        summary = (
            f"servicecpu kind={kind} endpoint={path.rsplit('/', 1)[1]} answers={samples.n} "
            f"cpu_ms={sum(cpu.values()) / answers * 1000:.1f} p50_ms={samples.p50 * 1000:.2f} "
            f"p99_ms={samples.p99 * 1000:.1f}"
        )
        print(summary, file=sys.stderr)
        lines.append(summary)
        costliest = sorted(cpu, key=lambda n: -cpu[n])[: args.top if ttl == 0.0 else 0]
        lines += [f"  {name}: {cpu[name] / args.passes * 1000:.0f} ms" for name in costliest]
    return lines


async def main_async(args: argparse.Namespace) -> str:
    with (
        tempfile.TemporaryDirectory(prefix="tokenrisk-servicecpu-") as tmp,
        start_devnet() as devnet,
    ):
        return "\n".join(await run(args, devnet, Path(tmp)))


def main(argv: list[str] | None = None) -> None:
    print(asyncio.run(main_async(parse_args(sys.argv[1:] if argv is None else argv))))


if __name__ == "__main__":
    main()

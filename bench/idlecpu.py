"""Why the remote bench reads more service CPU per check than ``bench.servicecpu``.

``PYTHONPATH=src:. python -m bench.idlecpu [--rtt-ms 30] [--repeats 2]`` (~2 minutes)

The remote bench (``bench/remote.py``) reads ~1.5x the CPU per recomputed check that
``bench.servicecpu`` reads for the same checks.  This tool separates the candidates in
one process, on one devnet: a server (results cache off) reaches the node through
:class:`bench.proxy.LatencyProxy`; every catalogue token is checked once (first sight,
untimed), then each setting runs two timed passes of recomputed checks:

- ``direct``: the proxy adds no delay (the work of ``bench.servicecpu``, plus a hop);
- ``paused``: no delay, but the client waits ``rtt`` between checks, so the service
  idles as long as a remote check waits, only never inside a check;
- ``remote``: the proxy adds ``rtt / 2`` each way, as in the remote bench.

Per pass it prints the service's CPU per check split into user and system time
(``/proc``, 10 ms ticks summed over the pass), the HTTP requests and new connections
the proxy saw, and the service's context switches.  When ``paused`` reads as ``remote``
while ``direct`` stays low, the extra CPU is not work a reply causes (requests,
connections, partial reads, timers) but the same instructions running slower after the
process went idle on a shared machine (other processes' work evicts its caches).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench.client import BenchClient
from bench.cpu import cpu_seconds, descendants
from bench.proxy import LatencyProxy
from bench.server import ServerOptions, start_server
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.devnet.uniswap import WETH

CHAIN = 31337
PATH = "/v2/IsHoneypot"


def _counters(pid: int) -> tuple[int, int, int]:
    """User ticks, system ticks and context switches of the server's main process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    switches = sum(int(line.split()[1]) for line in status if "ctxt_switches" in line)
    return int(fields[11]), int(fields[12]), switches


async def _setting(devnet: RunningDevnet, work: Path, name: str, rtt: float) -> list[str]:
    """Two timed recomputed passes in one setting (``direct``, ``paused``, ``remote``)."""
    tokens = [t["address"] for t in devnet.manifest["tokens"]]
    delay = rtt / 2 if name == "remote" else 0.0
    pause = rtt if name == "paused" else 0.0
    lines = []
    async with LatencyProxy(devnet.url, delay, 0.001 if delay else 0.0) as proxy:
        options = ServerOptions(proxy.url, devnet.build_dir, work, cache_ttl=0)
        with start_server(options) as server:
            pid = server.process.pid
            async with BenchClient(server.url) as http:
                for token in [WETH, *tokens]:  # first sight, untimed
                    await http.get(PATH, {"address": token, "chainID": CHAIN})
                for n in range(2):
                    pids, before = descendants(pid), _counters(pid)
                    started, requests, connections = cpu_seconds(descendants(pid)), 0, 0
                    for token in tokens:
                        if pause:
                            await asyncio.sleep(pause)
                        window = proxy.window()
                        await http.get(PATH, {"address": token, "chainID": CHAIN})
                        requests, connections = (
                            requests + window.requests,
                            connections + window.connections,
                        )
                    after = _counters(pid)
                    user, system, switches = (b - a for a, b in zip(before, after, strict=True))
                    lines.append(
                        f"idlecpu setting={name} pass={n} cpu_ms="
                        f"{(cpu_seconds(pids) - started) / len(tokens) * 1000:.2f} "
                        f"user_ticks={user} system_ticks={system} requests={requests} "
                        f"connections={connections} switches={switches}"
                    )
                    print(lines[-1], file=sys.stderr)
    return lines


async def main_async(args: argparse.Namespace) -> str:
    lines = []
    with start_devnet() as devnet, tempfile.TemporaryDirectory(prefix="tokenrisk-idle-") as tmp:
        for repeat in range(args.repeats):
            for name in ("direct", "paused", "remote"):
                work = Path(tmp) / f"{name}-{repeat}"
                work.mkdir()
                lines += await _setting(devnet, work, name, args.rtt_ms / 1000)
    lines.append(f"(load average at the end: {Path('/proc/loadavg').read_text().split()[0]})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.idlecpu", description=__doc__)
    parser.add_argument("--rtt-ms", type=float, default=30.0, help="the remote setting's RTT")
    parser.add_argument("--repeats", type=int, default=2, help="times the three settings run")
    started = time.perf_counter()
    text = asyncio.run(main_async(parser.parse_args(sys.argv[1:] if argv is None else argv)))
    print(f"{text}\n(whole run {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()

"""The whole bench run (``make bench`` = ``python -m bench``); prints Markdown tables,
first issue #17's figures against their targets, then each section's own table.

Phases, all on loopback:

1. FLOOR: start the devnet; time one eth_simulateV1 buy+transfer+sell on it.
2. LATENCY: per endpoint a fresh server process (empty store, so the first request per
   catalogue token is cold), one cold pass and ``--repeats`` warm passes.
3. THROUGHPUT: on one warm server, 1/8/32 concurrent clients; then 1 worker against
   2 workers + Redis (``bench.scaleout``).
4. PROFILE: IsHoneypot without holder analysis in-process: calls, round trips (and how
   many are sequential), CPU, cProfile top.
   OWNER POWERS: IsHoneypot with the owner-power scan off, cold and cached (bench/powers.py).
5. HOLDERS: tokens with 1,000 and 10,000 holders on a throwaway devnet copy.
6. INDEX: ``bench_index`` (Transfer-log indexing, logs/s) on its own anvil.
7. REMOTE: IsHoneypot through a latency-injecting proxy (``bench.remote``); with
   ``--only remote`` only this, ending with one ``remote kind=...`` line per kind.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from bench import bench_index
from bench.client import BenchClient
from bench.floor import node_floor
from bench.holders import holder_scaling
from bench.hotpath import profile_is_honeypot, work_floor
from bench.latency import Samples, timed_get
from bench.load import Throughput, throughput
from bench.powers import owner_power_cost
from bench.remote import remote_runs, remote_text
from bench.scaleout import measure_workers
from bench.server import ServerOptions, start_server
from bench.table import (
    EndpointRun,
    Figures,
    IndexRun,
    holders_table,
    index_line,
    latency_table,
    profile_text,
    targets_table,
    throughput_table,
    work_floor_text,
)
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.devnet.node import start_anvil
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.store.engine import create_store

CHAIN = 31337
WARM_UP = WETH
CLIENTS = (1, 8, 32)


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: str
    holder_limit: int | None = None  # None: the Settings default
    head_reuse: float | None = None  # None: the default (exact: every lookup reads the head)


REUSE = 0.25
ENDPOINTS = (
    Endpoint("IsHoneypot (holder analysis)", "/v2/IsHoneypot"),
    Endpoint(f"IsHoneypot (head_reuse={REUSE})", "/v2/IsHoneypot", head_reuse=REUSE),
    Endpoint("IsHoneypot (holder_limit=0)", "/v2/IsHoneypot", holder_limit=0),
    Endpoint("GetPairs", "/v1/GetPairs"),
    Endpoint("GetContractVerification", "/v2/GetContractVerification"),
    Endpoint("TopHolders", "/v1/TopHolders"),
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="warm passes per endpoint")
    parser.add_argument("--floor-samples", type=int, default=30)
    parser.add_argument("--holders", type=int, nargs="*", default=[1000, 10_000])
    parser.add_argument("--index-transfers", type=int, default=10_000)
    parser.add_argument("--output", type=Path, default=None, help="also write the report here")
    parser.add_argument("--skip-powers", action="store_true", help="skip the owner-power figure")
    parser.add_argument(
        "--remote-rtt-ms", type=float, default=30.0, help="remote section's RTT (0: skip it)"
    )
    parser.add_argument("--remote-jitter-ms", type=float, default=1.0, help="added each way, 0..N")
    parser.add_argument(
        "--remote-rounds", type=Path, default=None, help="write each remote check's rounds here"
    )
    parser.add_argument(
        "--remote-new-head", action="store_true",
        help="remote section: also recomputed checks each at a newly mined head block",
    )  # fmt: skip
    parser.add_argument(
        "--remote-verification", action="store_true",
        help="remote section: also GetContractVerification, recomputed",
    )  # fmt: skip
    parser.add_argument("--only", choices=["remote"], default=None, help="run one section only")
    return parser.parse_args(argv)


def _options(
    devnet: RunningDevnet, data_dir: Path, endpoint: Endpoint, cache_ttl: float | None
) -> ServerOptions:
    data_dir.mkdir(parents=True)
    return ServerOptions(
        devnet.url, devnet.build_dir, data_dir, endpoint.holder_limit, cache_ttl,
        head_reuse=endpoint.head_reuse,
    )  # fmt: skip


async def _passes(
    base_url: str, path: str, tokens: list[str], repeats: int
) -> tuple[Samples, Samples]:
    """The first pass over ``tokens`` and ``repeats`` passes after it.

    One untimed request on WETH (not in ``tokens``) first, so that the cold numbers
    are about the token, not about the server's own first request.
    """
    first, again = Samples(), Samples()
    async with BenchClient(base_url) as http:
        await timed_get(http, path, {"address": WARM_UP, "chainID": CHAIN})
        for token in tokens:
            first.add(*await timed_get(http, path, {"address": token, "chainID": CHAIN}))
        for _ in range(repeats):
            for token in tokens:
                again.add(*await timed_get(http, path, {"address": token, "chainID": CHAIN}))
    return first, again


async def measure_endpoint(
    devnet: RunningDevnet, endpoint: Endpoint, tokens: list[str], work: Path, repeats: int
) -> EndpointRun:
    """Two fresh servers: results cache off (recomputed), then on (cached)."""
    data = work / endpoint.name.replace(" ", "-")
    with start_server(_options(devnet, data / "nocache", endpoint, 0)) as server:
        cold, recomputed = await _passes(server.url, endpoint.path, tokens, repeats)
        rss = server.peak_rss_mib()
    with start_server(_options(devnet, data / "cache", endpoint, None)) as server:
        cold_again, cached = await _passes(server.url, endpoint.path, tokens, repeats)
        rss = max(rss, server.peak_rss_mib())
    cold.merge(cold_again)
    return EndpointRun(endpoint.name, cold, recomputed, cached, rss)


async def measure_throughput(
    devnet: RunningDevnet, tokens: list[str], work: Path
) -> tuple[list[tuple[str, Throughput]], float]:
    """Throughput rows and the highest peak RSS of the servers (MiB)."""
    params: list[dict[str, str | int]] = [{"address": t, "chainID": CHAIN} for t in tokens]
    cases = (
        ("IsHoneypot, cached", "/v2/IsHoneypot", None, 64),
        ("IsHoneypot, recomputed", "/v2/IsHoneypot", 0, 32),
        ("GetPairs, cached", "/v1/GetPairs", None, 200),
    )
    rows: list[tuple[str, Throughput]] = []
    rss = 0.0
    for i, (name, path, cache_ttl, base) in enumerate(cases):
        options = _options(devnet, work / f"throughput-{i}", Endpoint(name, path), cache_ttl)
        with start_server(options) as server:
            await _passes(server.url, path, tokens, 0)  # fill the holder index and the cache
            for clients in CLIENTS:
                requests = max(base, 4 * clients)
                retry = cache_ttl == 0  # recomputed: refused clients come back (bench.load)
                rows.append(
                    (name, await throughput(server.url, path, params, clients, requests, retry))
                )
            rss = max(rss, server.peak_rss_mib())
    return rows, rss


async def measure_index(transfers: int) -> IndexRun:
    """``bench_index``'s measurement at a smaller default size (see bench/bench_index.py)."""
    args = argparse.Namespace(
        transfers=transfers, blocks=200, holders=1_000, window=None,
        windows_per_batch=8, repeat=2, store_url=None,
    )  # fmt: skip
    with start_anvil(["--no-mining", "--gas-limit", "10000000000"]) as node:
        rpc = RpcClient(node.url)
        try:
            owner = (await rpc.call("eth_accounts"))[0]
            token = await bench_index.deploy_token(rpc, owner)
            await bench_index.make_history(rpc, token, owner, args)
            with tempfile.TemporaryDirectory() as tmp:
                store = create_store(f"sqlite:///{Path(tmp) / 'index.db'}")
                stats, recording = await bench_index.best_index(rpc, store, token, args)
                holders = store.holder_count(CHAIN, token)
                store.close()
            raw_seconds, raw_logs = await bench_index.raw_get_logs(rpc, recording.filters)
        finally:
            await rpc.aclose()
    return IndexRun(stats.logs, stats.logs_per_second, raw_logs / raw_seconds, holders)


async def devnet_sections(args: argparse.Namespace) -> tuple[Figures, list[str]]:
    """FLOOR, LATENCY, THROUGHPUT and PROFILE, all on one devnet node."""
    with tempfile.TemporaryDirectory(prefix="tokenrisk-bench-") as tmp, start_devnet() as devnet:
        work = Path(tmp)
        tokens = [t["address"] for t in devnet.manifest["tokens"]]
        plain = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == "plain")
        rpc = RpcClient(devnet.url)
        try:
            floor = await node_floor(rpc, devnet.manifest, plain, args.floor_samples)
        finally:
            await rpc.aclose()
        print(f"floor p50 {floor.p50 * 1000:.1f} ms; endpoints:", file=sys.stderr)
        runs = []
        for endpoint in ENDPOINTS:
            runs.append(await measure_endpoint(devnet, endpoint, tokens, work, args.repeats))
            print(f"  {endpoint.name}: {runs[-1].recomputed.p50 * 1000:.1f} ms", file=sys.stderr)
        powers = ""
        if not args.skip_powers:
            print("owner powers...", file=sys.stderr)
            powers = await owner_power_cost(
                devnet.url, devnet.build_dir, devnet.manifest, work / "powers", args.repeats
            )
        print("throughput...", file=sys.stderr)
        rows, rss = await measure_throughput(devnet, tokens, work)
        print("workers...", file=sys.stderr)
        workers = await measure_workers(devnet, tokens, work)
        print("profile...", file=sys.stderr)
        (work / "profile").mkdir()
        breakdown = await profile_is_honeypot(
            devnet.url, devnet.manifest, devnet.build_dir, work / "profile", plain, holder_limit=0
        )
        print("the node replaying a check's own requests...", file=sys.stderr)
        floors = []
        for name, limit in (("without holder analysis", 0), ("with holder analysis", None)):
            (work / f"replay-{limit}").mkdir()
            floors.append((name, await work_floor(
                devnet.url, devnet.manifest, devnet.build_dir, work / f"replay-{limit}", plain,
                holder_limit=limit,
            )))  # fmt: skip
    figures = Figures(
        runs, floor, rows, breakdown, [], [(n, t) for n, t, _ in workers], floors,
        [(n, u) for n, _, u in workers],
    )  # fmt: skip
    return figures, [
        latency_table(runs, floor),
        *([powers] if powers else []),
        throughput_table(rows),
        "Scale-out (recomputed IsHoneypot, `tokenrisk serve`, results cache off):",
        throughput_table([(name, t) for name, t, _ in workers]),
        "\n".join(f"- {name}: {use.text()}" for name, _, use in workers),
        f"Peak RSS of the service processes in the throughput runs: {rss:.0f} MiB.",
        profile_text(breakdown),
        work_floor_text(floors),
        breakdown.top,
    ]


async def remote_section(args: argparse.Namespace) -> str:
    """REMOTE on its own devnet node (``bench.remote``): every catalogue token twice."""
    rtt, jitter = args.remote_rtt_ms / 1000, args.remote_jitter_ms / 1000
    with tempfile.TemporaryDirectory(prefix="tokenrisk-bench-") as tmp, start_devnet() as devnet:
        tokens = [t["address"] for t in devnet.manifest["tokens"]]
        print(f"remote node, {args.remote_rtt_ms:g} ms away...", file=sys.stderr)
        runs = await remote_runs(
            devnet, Path(tmp) / "remote", rtt, jitter, tokens, args.remote_rounds,
            args.remote_new_head, args.remote_verification,
        )  # fmt: skip
    return remote_text(runs, jitter)


async def run(args: argparse.Namespace) -> str:
    if args.only == "remote":
        return await remote_section(args)
    figures, sections = await devnet_sections(args)
    if args.holders:
        print("holder scaling...", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="tokenrisk-bench-") as tmp:
            holder_runs, setup = await holder_scaling(tuple(args.holders), Path(tmp))
        sections.append(holders_table(holder_runs))
        figures = replace(figures, holders=holder_runs)
        sections.append(f"Creating the holder tokens took {setup:.1f} s.")
    if args.index_transfers > 0:
        print("indexing...", file=sys.stderr)
        try:
            sections.append(index_line(await measure_index(args.index_transfers)))
        except Exception as exc:  # noqa: BLE001 - the other sections are still worth printing
            sections.append(f"Indexing failed: {type(exc).__name__}: {exc}")
    remote = [await remote_section(args)] if args.remote_rtt_ms > 0 else []
    return "\n\n".join([targets_table(figures), *sections, *remote])


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    report = asyncio.run(run(args))
    elapsed = f"Whole bench run: {time.perf_counter() - started:.0f} s."
    if args.only is None:
        report += f"\n\n{elapsed}"
    else:  # the section's last lines stay last (scripts read them)
        print(elapsed, file=sys.stderr)
    print(report)
    if args.output is not None:
        args.output.write_text(report + "\n", encoding="utf-8")

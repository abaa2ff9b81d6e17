"""The printed report: Markdown tables, so a run can be pasted into docs/performance.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.cpu import CpuUse
from bench.holders import HolderRun
from bench.hotpath import Breakdown, WorkFloor
from bench.latency import Samples, status_text
from bench.load import Throughput


@dataclass(frozen=True)
class EndpointRun:
    """Latencies of one endpoint over the catalogue tokens.

    ``cold``: first request per token on a fresh server (empty store and cache);
    ``recomputed``: repeats with the results cache off (indexes and verifier cache warm);
    ``cached``: repeats with the results cache on.
    """

    name: str
    cold: Samples
    recomputed: Samples
    cached: Samples
    peak_rss_mib: float


@dataclass(frozen=True)
class IndexRun:
    logs: int
    logs_per_second: float
    raw_logs_per_second: float
    holders: int


def ms(seconds: float) -> str:
    """Milliseconds, as every latency column is."""
    return f"{seconds * 1000:,.1f}"


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def latency_table(runs: Sequence[EndpointRun], floor: Samples) -> str:
    header = [
        "endpoint", "cold p50", "cold p99", "recomputed p50", "recomputed p99", "cached p50",
        "cached p99", "cold / floor", "recomputed / floor", "cached / floor", "statuses",
        "peak RSS MiB",
    ]  # fmt: skip
    rows = [
        [
            r.name, ms(r.cold.p50), ms(r.cold.p99), ms(r.recomputed.p50), ms(r.recomputed.p99),
            ms(r.cached.p50), ms(r.cached.p99), ratio(r.cold, floor), ratio(r.recomputed, floor),
            ratio(r.cached, floor),
            status_text(r.cold.statuses + r.recomputed.statuses + r.cached.statuses),
            f"{r.peak_rss_mib:.0f}",
        ]
        for r in runs
    ]  # fmt: skip
    rows.append(
        ["node floor (1 eth_simulateV1 buy+transfer+sell)", "", "", ms(floor.p50),
         ms(floor.p99), "", "", "", "1.0x", "", f"{floor.n} samples", ""]
    )  # fmt: skip
    return markdown(header, rows)


def ratio(samples: Samples, floor: Samples) -> str:
    return f"{samples.p50 / floor.p50:.1f}x"


def throughput_table(results: Sequence[tuple[str, Throughput]]) -> str:
    header = ["endpoint", "clients", "requests", "req/s", "p50 ms", "p99 ms", "statuses"]
    rows = [
        [name, str(t.clients), str(t.samples.n), f"{t.per_second:,.1f}", ms(t.samples.p50),
         ms(t.samples.p99), status_text(t.samples.statuses)]
        for name, t in results
    ]  # fmt: skip
    return markdown(header, rows)


def holders_table(runs: Sequence[HolderRun]) -> str:
    header = ["holders", "holder_limit", "cold ms (index + check)", "warm p50 ms", "warm p99 ms"]
    rows = [
        [str(r.holders), str(r.holder_limit), ms(r.cold), ms(r.warm.p50), ms(r.warm.p99)]
        for r in runs
    ]
    return markdown(header, rows)


def index_line(run: IndexRun) -> str:
    return (
        f"Indexing: {run.logs:,} Transfer logs ({run.holders:,} holders) at "
        f"{run.logs_per_second:,.0f} logs/s; the node alone answers the same eth_getLogs "
        f"ranges at {run.raw_logs_per_second:,.0f} logs/s "
        f"(index/raw time {run.raw_logs_per_second / run.logs_per_second:.2f}x)."
    )


def profile_text(b: Breakdown) -> str:
    python = max(0.0, b.wall - b.node)
    methods = ", ".join(f"{m} {c / b.requests:g}" for m, c in b.methods.most_common())
    return "\n".join(
        [
            f"IsHoneypot hot path (warm, mean of {b.requests}): wall {ms(b.wall)} ms; "
            f"waiting on the node {ms(b.node)} ms ({b.node / b.wall:.0%}); "
            f"Python outside round trips {ms(python)} ms ({python / b.wall:.0%}); "
            f"process CPU {ms(b.cpu)} ms.",
            f"Round trips per request: {b.round_trips:g} HTTP requests carrying "
            f"{b.calls:g} JSON-RPC calls ({methods}); {b.sequential:g} of them sequential "
            "(critical path).",
        ]
    )


@dataclass(frozen=True)
class Figures:
    """What issue #17's table asks for, gathered from the bench's sections."""

    runs: Sequence[EndpointRun]
    floor: Samples
    throughput: Sequence[tuple[str, Throughput]]
    profile: Breakdown
    holders: Sequence[HolderRun]
    workers: Sequence[tuple[str, Throughput]]
    work: Sequence[tuple[str, WorkFloor]] = ()
    workers_cpu: Sequence[tuple[str, CpuUse]] = ()


def _ok_rate(t: Throughput) -> float:
    """Answers with status 200 per second (refusals are not throughput)."""
    return t.samples.statuses[200] / t.seconds if t.seconds > 0 else 0.0


def _row(rows: Sequence[tuple[str, Throughput]], name: str, clients: int) -> Throughput | None:
    return next((t for n, t in rows if n.startswith(name) and t.clients == clients), None)


def _reused(by_name: dict[str, EndpointRun]) -> str:
    """``; 0.6 ms with head_reuse=0.25`` when that server ran."""
    run = next((r for name, r in by_name.items() if "head_reuse" in name), None)
    if run is None:
        return ""
    return f"; {ms(run.cached.p50)} ms with {run.name.split('(')[1].rstrip(')')}"


def _replayed(work: dict[str, WorkFloor], prefix: str) -> str:
    """`` (one prepared simulation); 1.3x (the check's own requests replayed)``."""
    floor = next((w for name, w in work.items() if name.startswith(prefix)), None)
    if floor is None:
        return ""
    return f" of one simulation; {floor.ratio:.1f}x its own node requests replayed"


def work_floor_text(floors: Sequence[tuple[str, WorkFloor]]) -> str:
    """The check against the node replaying that check's requests (bench/replay.py)."""
    rows = [
        [name, f"{w.requests}", ms(w.check.p50), ms(w.replayed.p50), f"{w.ratio:.2f}x"]
        for name, w in floors
    ]
    header = [
        "plain token, warm, in process", "node requests", "check p50 ms",
        "the node replaying them, p50 ms", "check / replay",
    ]  # fmt: skip
    return markdown(header, rows)


def targets_table(f: Figures) -> str:
    """The issue's figures, this run's value next to the target."""
    by_name = {r.name: r for r in f.runs}
    holders = by_name.get("IsHoneypot (holder analysis)")
    no_holders = by_name.get("IsHoneypot (holder_limit=0)")
    out: list[list[str]] = []
    if no_holders and holders:
        work = dict(f.work)
        out += [
            ["IsHoneypot without holder analysis, p50 / node floor",
             ratio(no_holders.recomputed, f.floor) + _replayed(work, "without"), "<= 10x"],
            ["IsHoneypot with holder analysis, p50 / node floor",
             ratio(holders.recomputed, f.floor) + _replayed(work, "with "), "<= 20x"],
            ["cached IsHoneypot p50", f"{ms(holders.cached.p50)} ms (exact: the default)"
             + _reused(by_name), "<= 1 ms"],
        ]  # fmt: skip
    b = f.profile
    out += [
        ["JSON-RPC calls / sequential round trips per check (no holders)",
         f"{b.calls:g} / {b.sequential:g} ({b.round_trips:g} HTTP requests)", "<= 40 / <= 6"],
        ["Python CPU per check (no holders)", f"{ms(b.cpu)} ms", "<= 10 ms"],
    ]  # fmt: skip
    for count, target in ((1000, "<= 300 ms"), (10_000, "<= 3,000 ms (2,000 sampled)")):
        full = next((h for h in f.holders if h.holders == h.holder_limit == count), None)
        if full is not None:
            name = f"{count:,}-holder analysis (warm p50)"
            out.append([name, f"{ms(full.warm.p50)} ms", target])
    one, many = (_row(f.throughput, "IsHoneypot, recomputed", c) for c in (1, 32))
    if one and many:
        ok = many.samples.only(200)
        refused = many.samples.only(503)
        fast = f"{ms(refused.p99)} ms" if refused.n else "none"
        out.append(
            ["32 clients, distinct tokens, recomputed: 200s/s vs one client; p99 of 200s; "
             "503s (p99)",
             f"{_ok_rate(many) / _ok_rate(one):.2f}x; {ms(ok.p99) if ok.n else '-'} ms; "
             f"{refused.n} ({fast})",
             ">= 1.5x, p99 <= 2 s, fast 503"]
        )  # fmt: skip
    single, double = (_row(f.workers, n, 32) for n in ("1 worker", "2 workers"))
    if single and double:
        use = next((u for n, u in f.workers_cpu if n.startswith("1 worker, 32")), None)
        room = (
            f" (1 worker already at {use.reached / use.ceiling:.0%} of the "
            f"{use.ceiling:.0f} answers/s the cores allow: at most "
            f"{use.ceiling / use.reached:.2f}x is left)"
            if use is not None and use.reached > 0
            else ""
        )
        out.append(
            ["same, 2 workers + Redis vs 1 worker (200s/s)",
             f"{_ok_rate(double) / _ok_rate(single):.2f}x{room}", ">= 1.6x"]
        )  # fmt: skip
    elif single:
        out.append(["same, 2 workers + Redis vs 1 worker", "not run: no redis-server", ">= 1.6x"])
    return markdown(["figure (issue #17)", "this run", "target"], out)

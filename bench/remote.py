"""IsHoneypot against a node far away: ``python -m bench --remote-rtt-ms 30 --only remote``.

The service (a server process, results cache off) reaches the devnet node through
:class:`bench.proxy.LatencyProxy`, which adds ``rtt/2`` (+ up to ``jitter``) each way.
Two passes over the catalogue tokens on one fresh server:

- *first-sight*: the first check of each token (pool discovery, owner-power scan,
  holder index; one untimed check on WETH first, so the server's own warm-up is not
  counted);
- *recomputed*: the same tokens again, everything per token known, the answer computed;
- *verification-recomputed* (``--remote-verification``): GetContractVerification of the
  same tokens, recomputed (each token's verification asked once, untimed, first): its
  resolution, journey and call trace at the head this server knows;
- *recomputed-new-head* (``--remote-new-head``): the same tokens a third time, one empty
  block mined (``evm_mine`` straight to the node, untimed) before each check.  The
  devnet's head never moves, so the *recomputed* pass meets every memory kept per head
  block; on a live chain a recomputed check is almost always at a new head (the results
  cache answers repeats within a block), which this pass reproduces.

Per check the proxy counts the sequential round trips (critical path), the node's
own time (union of the intervals requests spent at the node) and the service's gaps
(the time none of the check's requests was at the node or on the wire: before the
first, between a round's last reply and the next round's first request, after the
last; ``bench.proxy.gaps``); the service's CPU is read
from ``/proc`` over each pass (clock ticks are 10 ms, so only a pass's total divided by
its checks is meaningful).  The model a result is compared with is ``round trips x RTT
+ node time``: the least the same structure could take at that distance.

The section ends with exactly one line per kind::

    remote kind=recomputed round_trips=N p50_ms=X rtt_ms=30 node_ms=Y cpu_ms=Z
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.client import BenchClient
from bench.cpu import cpu_seconds, descendants
from bench.latency import percentile
from bench.proxy import Gaps, LatencyProxy, gaps
from bench.rounds import rounds_text
from bench.server import ServerOptions, start_server
from bench.servicecpu import mine
from bench.yardstick import yardstick_text
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.devnet.uniswap import WETH

CHAIN = 31337
PATH = "/v2/IsHoneypot"
VERIFICATION = "/v2/GetContractVerification"


@dataclass
class RemoteRun:
    """One pass: per-check wall seconds, sequential round trips and node seconds."""

    kind: str
    rtt: float
    wall: list[float] = field(default_factory=list)
    trips: list[int] = field(default_factory=list)
    node: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    gaps: list[Gaps] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    cpu: float = 0.0  # service CPU seconds over the whole pass
    node_cpu: float = 0.0  # the node's (anvil's) CPU seconds over the whole pass

    @property
    def n(self) -> int:
        return len(self.wall)

    @property
    def round_trips(self) -> int:
        return round(statistics.median(self.trips))

    @property
    def node_p50(self) -> float:
        return statistics.median(self.node)

    @property
    def model(self) -> float:
        """Seconds the critical path costs at this RTT: round trips x RTT + node time."""
        return self.round_trips * self.rtt + self.node_p50

    def line(self) -> str:
        """The one summary line the issue asks for (``remote kind=...``)."""
        return (
            f"remote kind={self.kind} round_trips={self.round_trips} "
            f"p50_ms={percentile(self.wall, 50) * 1000:.1f} rtt_ms={self.rtt * 1000:g} "
            f"node_ms={self.node_p50 * 1000:.1f} cpu_ms={self.cpu / max(1, self.n) * 1000:.1f}"
        )

    def detail(self) -> str:
        """p99, the ratio to the model and the spread of round trips and requests."""
        p50, p99 = percentile(self.wall, 50), percentile(self.wall, 99)
        trips = f"{min(self.trips)}-{max(self.trips)}"
        statuses = " ".join(f"{code}x{count}" for code, count in sorted(self.statuses.items()))
        return (
            f"{self.kind}: {self.n} checks ({statuses}); p50 {p50 * 1000:.1f} ms, p99 "
            f"{p99 * 1000:.1f} ms; round trips p50 {self.round_trips} (range {trips}), HTTP "
            f"requests p50 {statistics.median(self.requests):g}; p50 / (round trips x RTT + "
            f"node time) = {p50 / self.model:.2f}; {self.own_model_text()}; {self.gaps_text()}; "
            f"{self.capacity()}"
        )

    def own_model_text(self) -> str:
        """Each check against its own model (its round trips x RTT + its node time), p50,
        and how many checks took more round trips than the p50: the pass's p50 latency
        is read against a model built from the p50 round trips, and those checks, slower
        as a rule, lift it above the typical check's own excess."""
        checks = zip(self.wall, self.trips, self.node, strict=True)
        excess = [wall - (trips * self.rtt + node) for wall, trips, node in checks]
        more = sum(t > self.round_trips for t in self.trips)
        return (
            f"each check over its own model p50 {statistics.median(excess) * 1000:.1f} ms, "
            f"{more} of {self.n} checks with more than {self.round_trips} round trips"
        )

    def gaps_text(self) -> str:
        """p50 of the service's own time on the critical path (``bench.proxy.gaps``)
        and of its parts: before the first request, between rounds, after the last reply."""
        if not self.gaps:
            return "service gaps: none measured"
        parts = [[g.total for g in self.gaps], [g.lead for g in self.gaps],
                 [g.between for g in self.gaps], [g.tail for g in self.gaps]]  # fmt: skip
        total, lead, between, tail = (statistics.median(p) * 1000 for p in parts)
        return (
            f"service gaps p50 {total:.1f} ms (start -> first request {lead:.1f}, between "
            f"rounds {between:.1f}, last reply -> answer {tail:.1f})"
        )

    def capacity(self) -> str:
        """Checks per second one core of the service, and one core of the node, can give
        at this pass's CPU per check (a pass is sequential: no contention inflates it)."""
        n = max(1, self.n)
        service, node = self.cpu / n, self.node_cpu / n
        per = [f"{1 / c:.0f} checks/s per {who} core" for who, c in (("service", service),
               ("node", node)) if c > 0]  # fmt: skip
        return (
            f"CPU per check: service {service * 1000:.1f} ms, node {node * 1000:.1f} ms "
            f"({', '.join(per)})"
        )


async def _pass(
    http: BenchClient,
    proxy: LatencyProxy,
    pids: tuple[int, int],
    tokens: list[str],
    run: RemoteRun,
    rounds: Path | None = None,
    mine_at: str | None = None,
    path: str = PATH,
) -> RemoteRun:
    """``pids``: the server's and the node's; ``rounds``: a file each check's requests
    per sequential round are appended to (``bench/rounds.py``); ``mine_at``: the node's
    own URL, a block mined there (not through the proxy) before each check; ``path``:
    the endpoint asked."""
    pid, node = pids
    cpu_started, node_started = cpu_seconds(descendants(pid)), cpu_seconds([node])
    for token in tokens:
        if mine_at is not None:  # the mining's CPU at the node is counted; it is small
            await mine(mine_at)
        window = proxy.window()
        window.bodies = [] if rounds is not None else None
        started = time.perf_counter()
        status, _ = await http.get(path, {"address": token, "chainID": CHAIN})
        ended = time.perf_counter()
        run.wall.append(ended - started)
        run.gaps.append(gaps((started, ended), window.in_flight(ended)))
        run.statuses[status] = run.statuses.get(status, 0) + 1
        run.trips.append(window.round_trips)
        run.node.append(window.node_seconds)
        run.requests.append(window.requests)
        if rounds is not None:
            with rounds.open("a") as out:
                note = (
                    f" wall_ms={run.wall[-1] * 1000:.1f} node_ms={run.node[-1] * 1000:.1f}"
                    f" gaps_ms={run.gaps[-1].total * 1000:.1f}"
                )
                bodies = window.bodies or []
                out.write(rounds_text(f"{run.kind} {token}", window.client, bodies, note))
    run.cpu = cpu_seconds(descendants(pid)) - cpu_started
    run.node_cpu = cpu_seconds([node]) - node_started
    return run


async def remote_runs(
    devnet: RunningDevnet,
    work: Path,
    rtt: float,
    jitter: float,
    tokens: list[str],
    rounds: Path | None = None,
    new_head: bool = False,
    verification: bool = False,
) -> list[RemoteRun]:
    """First-sight and recomputed passes over ``tokens`` through a proxy ``rtt`` away;
    ``rounds``: where to write each check's requests per round (None: nowhere);
    ``new_head``: a third pass, recomputed at a new head block each check;
    ``verification``: a GetContractVerification pass, recomputed (after an untimed one)."""
    work.mkdir(parents=True, exist_ok=True)
    async with LatencyProxy(devnet.url, rtt / 2, jitter) as proxy:
        options = ServerOptions(proxy.url, devnet.build_dir, work, cache_ttl=0)
        with start_server(options) as server:
            async with BenchClient(server.url) as http:
                await http.get(PATH, {"address": WETH, "chainID": CHAIN})
                pids = (server.process.pid, devnet.node.process.pid)
                first = await _pass(
                    http, proxy, pids, tokens, RemoteRun("first-sight", rtt), rounds
                )
                again = await _pass(http, proxy, pids, tokens, RemoteRun("recomputed", rtt), rounds)
                runs = [again, first]
                if verification:
                    for token in tokens:  # untimed: each token's verification seen once
                        await http.get(VERIFICATION, {"address": token, "chainID": CHAIN})
                    run = RemoteRun("verification-recomputed", rtt)
                    runs.append(
                        await _pass(http, proxy, pids, tokens, run, rounds, None, VERIFICATION)
                    )
                if new_head:
                    run = RemoteRun("recomputed-new-head", rtt)
                    runs.append(await _pass(http, proxy, pids, tokens, run, rounds, devnet.url))
    return runs


def remote_text(runs: list[RemoteRun], jitter: float) -> str:
    """The section's report: details first, the summary lines last."""
    rtt = runs[0].rtt
    head = (
        f"Remote node (proxy: {rtt * 500:g} ms each way + up to {jitter * 1000:g} ms jitter; "
        "results cache off; default holder analysis and owner-power scan):"
    )
    details = [f"- {run.detail()}" for run in runs]
    return "\n".join([head, yardstick_text(), *details, *(r.line() for r in runs)])

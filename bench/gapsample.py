"""What the service runs while a first-sight check waits for nothing but itself.

``PYTHONPATH=src python -m bench.gapsample [--rtt-ms 30] [--top 40] [--tokens N]``

The remote bench (``bench/remote.py``) measures a check's *service gaps*: the time
none of its requests was at the node or on the wire (``bench.proxy.gap_spans``).
This tool says what fills them.  The server process (``bench.server``, results cache
off) runs with a timer (``SIGALRM`` every ``--interval-ms``) whose handler records
the loop thread's Python stack, the other threads' busy ones, and, when the loop is
idle, what each task awaits; the handler runs between two bytecodes, so a C call is
counted to the Python function that made it.  Samples are stamped with
``time.perf_counter`` (the system's monotonic clock, shared with this process).  One
first-sight pass over the catalogue tokens goes through the latency proxy, and the
samples inside a check's gaps are counted by function (inclusive: each function on
the stack once), by leaf, and by the kind of gap (before the first request, between
rounds, after the last reply); a sample whose leaf is the selector's wait is the loop
idle.  Sampling costs the server some CPU, so the gaps here are larger than the
bench's; the shares are what matter.  With ``TOKENRISK_GAPSAMPLE_CPROFILE=FILE`` the
server runs under cProfile instead (every function's calls and CPU over the pass, not
only the gaps) and leaves its stats in FILE.  The samples and the gaps are left in a
``tokenrisk-gapsample-*`` temporary directory for a closer look.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from bench.client import BenchClient
from bench.proxy import LatencyProxy, gap_spans
from bench.server import HOST, ServerOptions, ServerProcess
from tokenrisk.devnet.instance import start_devnet
from tokenrisk.devnet.node import free_port, repo_root
from tokenrisk.devnet.uniswap import WETH

Sample = tuple[float, float, tuple[str, ...], tuple[tuple[str, ...], ...]]
"""(perf_counter, the loop thread's CPU seconds, its stack leaf first, other notes)"""
IDLE = ("selectors.py:EpollSelector.select",)
PLUMBING = {"server.py", "base_events.py", "gapsample.py", "main.py", "runners.py", "_compat.py",
            "<frozen runpy>", "events.py", "h11_impl.py", "proxy_headers.py", "applications.py",
            "_asgi.py", "errors.py", "middleware.py", "_body_limit.py", "cors.py", "routing.py",
            "_exception_handler.py", "exceptions.py", "asyncexitstack.py"}  # fmt: skip
WAITING = (
    "thread.py:_worker",
    "threading.py:Condition.wait",
    "threading.py:Event.wait",
    # the evmole thread (simulate/bytecode.py) waiting for a code: a C queue get, so its
    # own frame is its leaf (the layouts are worked out in a worker process, not here)
    "bytecode.py:Layouts._serve",
)


_NAMES: dict[CodeType, str] = {}


def _stack(frame: FrameType | None, depth: int = 60) -> tuple[str, ...]:
    out: list[str] = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        name = _NAMES.get(code)
        if name is None:
            name = _NAMES[code] = f"{os.path.basename(code.co_filename)}:{code.co_qualname}"
        out.append(name)
        frame = frame.f_back
    return tuple(out)  # leaf first


def _timers(loop: asyncio.AbstractEventLoop) -> tuple[str, ...]:
    """The idle loop's next timer (what it waits for, when nothing else comes): when it
    is due, and the coroutine chain of the task an ``asyncio.sleep`` holds."""
    scheduled = list(getattr(loop, "_scheduled", []))
    if not scheduled:
        return ("timer: none",)
    first = min(scheduled, key=lambda h: h.when())
    due = (first.when() - loop.time()) * 1000
    where = "?"
    for arg in getattr(first, "_args", None) or ():
        for callback in getattr(arg, "_callbacks", None) or ():
            task = getattr(
                callback[0] if isinstance(callback, tuple) else callback, "__self__", None
            )
            if isinstance(task, asyncio.Task):
                where = " > ".join(_awaits(task.get_coro()))
    return (f"timer in {min(int(due), 50)} ms: {where}",)


def _awaits(coro: Any) -> list[str]:
    out: list[str] = []
    while coro is not None and len(out) < 80:
        code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
        if code is None:
            break
        out.append(code.co_qualname)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return out[-4:]


def sampled_serve(argv: list[str], out: Path, interval: float) -> None:
    """Serve (``bench.server``) with the main thread's stack sampled every ``interval``
    seconds; the samples are written to ``out`` when the server stops."""
    from bench.server import serve

    main_id = threading.get_ident()
    samples: list[Sample] = []

    def sample(signum: int, frame: FrameType | None) -> None:
        del signum
        if frame is not None and frame.f_code.co_filename == __file__:
            return  # the handler itself, interrupted
        others = tuple(
            stack for ident, other in sys._current_frames().items() if ident != main_id
            if (stack := _stack(other, 20)) and stack[0] not in WAITING
        )  # fmt: skip
        main = _stack(frame)
        if main and main[0] in IDLE and loops:
            others += (_timers(loops[0]),)
            waits = sorted(
                {" > ".join(_awaits(t.get_coro())[-3:]) for t in asyncio.all_tasks(loops[0])}
            )
            others += (("awaits: " + " | ".join(waits),),)
        samples.append((time.perf_counter(), time.thread_time(), main, others))

    import uvicorn

    served: list[tuple[float, float]] = []
    loops: list[asyncio.AbstractEventLoop] = []
    run = uvicorn.run

    def timed_run(app: Any, **kwargs: Any) -> None:
        async def timed(scope: Any, receive: Any, send: Any) -> None:
            started = time.perf_counter()
            if not loops:
                loops.append(asyncio.get_running_loop())
            try:
                await app(scope, receive, send)
            finally:
                if scope.get("type") == "http":
                    served.append((started, time.perf_counter()))

        run(timed, **kwargs)

    uvicorn.run = timed_run
    profile = os.environ.get("TOKENRISK_GAPSAMPLE_CPROFILE")
    profiler = cProfile.Profile() if profile else None
    if profiler is None:
        signal.signal(signal.SIGALRM, sample)
        signal.setitimer(signal.ITIMER_REAL, interval, interval)
    try:
        if profiler is not None:
            profiler.runcall(serve, argv)
        else:
            serve(argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        out.write_bytes(pickle.dumps((samples, served)))
        if profiler is not None and profile:
            profiler.dump_stats(profile)


def _start(options: ServerOptions, out: Path, interval: float) -> ServerProcess:
    import subprocess

    import httpx

    port = free_port()
    command = [sys.executable, "-m", "bench.gapsample", "--serve", str(out),
               "--interval-ms", str(interval * 1000), "--", *options.argv(port)]  # fmt: skip
    process = subprocess.Popen(command, cwd=repo_root(), stdin=subprocess.DEVNULL)
    server = ServerProcess(process, port)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://{HOST}:{port}/openapi.json", timeout=1.0).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.05)
    server.stop()
    raise RuntimeError("the sampled server did not start")


async def first_sight_gaps(
    args: argparse.Namespace,
) -> tuple[list[list[tuple[float, float]]], Path]:
    """One first-sight pass; each check's gap spans, and the samples' file."""
    tmp = Path(tempfile.mkdtemp(prefix="tokenrisk-gapsample-"))
    out = tmp / "samples.pickle"
    per_check: list[list[tuple[float, float]]] = []
    with start_devnet() as devnet:
        tokens = [t["address"] for t in devnet.manifest["tokens"]][: args.tokens or None]
        async with LatencyProxy(devnet.url, args.rtt_ms / 2000, 0.001) as proxy:
            options = ServerOptions(proxy.url, devnet.build_dir, tmp / "data", cache_ttl=0)
            with _start(options, out, args.interval_ms / 1000) as server:
                async with BenchClient(server.url) as http:
                    await http.get("/v2/IsHoneypot", {"address": WETH, "chainID": 31337})
                    for token in tokens:
                        window = proxy.window()
                        started = time.perf_counter()
                        await http.get("/v2/IsHoneypot", {"address": token, "chainID": 31337})
                        ended = time.perf_counter()
                        per_check.append(gap_spans((started, ended), window.in_flight(ended)))
    return per_check, out


def report(
    per_check: list[list[tuple[float, float]]],
    samples: list[Sample],
    served: list[tuple[float, float]],
    top: int,
) -> str:
    """Samples inside the gaps, by function inclusive and by leaf, per kind of gap;
    ``served``: the app's own start and end of each HTTP request (the first, WETH's,
    and any other than the checks' are matched by time)."""
    outside = 0.0
    for check in per_check:
        start, end = check[0][0], check[-1][1]
        mine = [(a, b) for a, b in served if a >= start and b <= end]
        if mine:
            outside += (mine[0][0] - start) + (end - mine[-1][1])
    spans = sorted(
        (a, b, "lead" if i == 0 else "tail" if i == len(g) - 1 else "between")
        for g in per_check for i, (a, b) in enumerate(g)
    )  # fmt: skip
    gap_seconds: dict[str, float] = {"lead": 0.0, "between": 0.0, "tail": 0.0}
    for a, b, kind in spans:
        gap_seconds[kind] += b - a
    inclusive, leaves, kinds = Counter[str](), Counter[str](), Counter[str]()
    threads = Counter[str]()
    per_kind: dict[str, Counter[str]] = {k: Counter() for k in ("lead", "between", "tail")}
    cpu: dict[str, float] = {"lead": 0.0, "between": 0.0, "tail": 0.0}
    index, total, last_cpu = 0, 0, 0.0
    for at, used, stack, others in sorted(samples):
        used, last_cpu = used - last_cpu, used
        while index < len(spans) and spans[index][1] < at:
            index += 1
        if index == len(spans) or spans[index][0] > at:
            continue
        total += 1
        kind = spans[index][2]
        cpu[kind] += used  # the loop's CPU since the sample before (one interval)
        idle = bool(stack) and stack[0] in IDLE
        kinds[f"{kind} {'idle' if idle else 'busy'}"] += 1
        for other in others:
            threads[f"{'idle' if idle else 'busy'} loop, thread in " + " < ".join(other[:4])] += 1
        if idle:
            continue
        leaves[stack[0] if stack else "?"] += 1
        for name in set(stack):
            inclusive[name] += 1
            per_kind[kind][name] += 1
    lines = [
        f"checks {len(per_check)}; gap seconds "
        + ", ".join(f"{k} {v * 1000 / max(1, len(per_check)):.1f} ms/check"
                    for k, v in gap_seconds.items()),
        f"of which outside the app (bench client, uvicorn's parsing and writing): "
        f"{outside * 1000 / max(1, len(per_check)):.1f} ms/check",
        "the loop thread's CPU in them (sampled; load-independent, unlike the seconds): "
        + ", ".join(f"{k} {v * 1000 / max(1, len(per_check)):.1f} ms/check"
                    for k, v in cpu.items())
        + f", total {sum(cpu.values()) * 1000 / max(1, len(per_check)):.1f} ms/check",
        f"samples in gaps {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
        "", "inclusive (share of samples in gaps):",
        *(f"  {n / max(1, total):6.1%} {name}" for name, n in inclusive.most_common(top)),
        "", "leaf:", *(f"  {n / max(1, total):6.1%} {name}" for name, n in leaves.most_common(top)),
        *(line for kind, found in per_kind.items() for line in (
            "", f"{kind} (share of all samples in gaps):",
            *(f"  {n / max(1, total):6.1%} {name}" for name, n in [
                (name, n) for name, n in found.most_common()
                if name.split(":")[0] not in PLUMBING][:top]),
        )),
        "", "other threads busy:",
        *(f"  {n / max(1, total):6.1%} {name}" for name, n in threads.most_common(top)),
    ]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.gapsample", description=__doc__)
    parser.add_argument("--rtt-ms", type=float, default=30.0)
    parser.add_argument("--interval-ms", type=float, default=1.0)
    parser.add_argument("--tokens", type=int, default=0, help="0: every catalogue token")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--serve", type=Path, default=None, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.serve is not None:
        sampled_serve([a for a in rest if a != "--"], args.serve, args.interval_ms / 1000)
        return
    per_check, out = asyncio.run(first_sight_gaps(args))
    (out.parent / "gaps.pickle").write_bytes(pickle.dumps(per_check))
    samples, served = pickle.loads(out.read_bytes())
    print(report(per_check, samples, served, args.top))


if __name__ == "__main__":
    main()

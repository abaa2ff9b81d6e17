"""What the owner-power scan costs an IsHoneypot answer, and how many simulations it sends.

Three fresh servers on the same devnet node, results cache off (``cache_ttl=0``) so
every request is computed:

- *off*: ``owner_powers.enabled = false``;
- *scan cold*: scan cache off (``owner_powers.cache_ttl = 0``): every request scans;
- *scan cached*: the default; one untimed pass fills the scan cache first.

For each, one pass over the tokens that have a pool plus ``repeats`` more; the table
gives p50/p99 and the added p50 against *off*.  The scan runs concurrently with the
call trace and the holder sells, so what it adds is less than its own duration.  The
per-token line counts the ``eth_simulateV1`` runs the scan sent (``ownerPowers.simulations``).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.client import BenchClient
from bench.latency import Samples
from bench.server import ServerOptions, start_server
from bench.table import markdown, ms

CHAIN = 31337


@dataclass
class ScanRun:
    name: str
    samples: Samples = field(default_factory=Samples)
    simulations: dict[str, int] = field(default_factory=dict)


async def _pass(http: BenchClient, tokens: dict[str, str], run: ScanRun | None) -> None:
    for token_id, address in tokens.items():
        started = time.perf_counter()
        status, raw = await http.get("/v2/IsHoneypot", {"address": address, "chainID": CHAIN})
        body: dict[str, Any] = json.loads(raw)
        if run is None:
            continue
        run.samples.add(time.perf_counter() - started, status)
        powers = body.get("ownerPowers")
        if powers and powers.get("scanned") and not powers.get("cached"):
            run.simulations[token_id] = int(powers["simulations"])


async def _measure(
    options: ServerOptions, name: str, tokens: dict[str, str], repeats: int
) -> ScanRun:
    """One untimed pass (holder index, verifier and, when on, the scan cache), then timed."""
    run = ScanRun(name)
    with start_server(options) as server:
        async with BenchClient(server.url) as http:
            await _pass(http, tokens, None)
            for _ in range(repeats):
                await _pass(http, tokens, run)
    return run


async def owner_power_cost(
    rpc_url: str, build_dir: Path, manifest: dict[str, Any], work: Path, repeats: int
) -> str:
    """The Markdown section: latency table and simulations per token."""
    tokens = {t["id"]: t["address"] for t in manifest["tokens"] if t["pools"]}
    runs = []
    for name, enabled, ttl in (("off", False, None), ("scan cold", True, 0.0),
                               ("scan cached", True, None)):  # fmt: skip
        data = work / f"powers-{name.replace(' ', '-')}"
        data.mkdir(parents=True)
        options = ServerOptions(
            rpc_url, build_dir, data, cache_ttl=0, owner_powers=enabled, powers_cache_ttl=ttl
        )
        runs.append(await _measure(options, name, tokens, max(1, repeats)))
    return _report(runs)


def _report(runs: list[ScanRun]) -> str:
    off = runs[0].samples.p50
    rows = [
        [r.name, ms(r.samples.p50), ms(r.samples.p99), ms(r.samples.p50 - off), str(r.samples.n)]
        for r in runs
    ]
    table = markdown(["IsHoneypot", "p50 ms", "p99 ms", "added p50 ms", "samples"], rows)
    sims = runs[1].simulations
    if not sims:
        return table
    counts = sorted(sims.values())
    line = (
        f"Owner-power scan: {len(sims)} tokens scanned; eth_simulateV1 runs per token: "
        f"median {statistics.median(counts):.0f}, min {counts[0]}, max {counts[-1]} "
        "(one JSON-RPC batch plus one amounts simulation).\n\n"
        + ", ".join(f"`{t}` {n}" for t, n in sorted(sims.items()))
    )
    return table + "\n\n" + line


def main() -> None:
    """``python -m bench.powers [repeats]``: this figure alone, on a fresh devnet."""
    import asyncio
    import sys
    import tempfile

    from tokenrisk.devnet.instance import start_devnet

    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with tempfile.TemporaryDirectory(prefix="tokenrisk-bench-") as tmp, start_devnet() as devnet:
        report = asyncio.run(
            owner_power_cost(devnet.url, devnet.build_dir, devnet.manifest, Path(tmp), repeats)
        )
    print(report)


if __name__ == "__main__":
    main()

"""Benchmark the Transfer-log indexer against the node's own eth_getLogs time.

Starts a throwaway anvil, deploys the repository's PlainToken, and makes ``--transfers``
real transfer transactions spread over ``--blocks`` blocks between ``--holders``
addresses.  Then it measures

* **raw**: the node answering the very eth_getLogs requests the indexer sent (same
  block ranges), one after another, JSON parsed, nothing else;
* **index**: ``index_token`` from scratch into a fresh store (SQLite in a temp dir by
  default, or ``--store-url``), i.e. fetch + decode + aggregate + commit;
* **incremental**: a second ``index_token`` call with nothing new to read.

and prints logs/s and the ratio index/raw.  Usage::

    PYTHONPATH=src .venv/bin/python bench/bench_index.py [--transfers 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import checksum, encode_args, encode_call
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.devnet.node import repo_root, start_anvil
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.holders import IndexSettings, IndexStats, index_token
from tokenrisk.store.engine import Store, create_store

CHAIN = 31337
SEND_BATCH = 500


class Recording:
    """Passes calls to the client and remembers every eth_getLogs filter it sent."""

    def __init__(self, rpc: RpcClient) -> None:
        self._rpc = rpc
        self.filters: list[dict[str, Any]] = []

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        return await self._rpc.call(method, params)

    async def batch(self, calls: Sequence[tuple[str, Sequence[Any]]], **options: Any) -> list[Any]:
        self.filters += [dict(p[0]) for m, p in calls if m == "eth_getLogs"]
        return await self._rpc.batch(calls, **options)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=20_000)
    parser.add_argument("--blocks", type=int, default=400)
    parser.add_argument("--holders", type=int, default=2_000)
    parser.add_argument("--window", type=int, default=None, help="first eth_getLogs span")
    parser.add_argument("--windows-per-batch", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--store-url", default=None, help="default: SQLite in a temp dir")
    return parser.parse_args()


async def deploy_token(rpc: RpcClient, owner: str) -> str:
    root = repo_root()
    artifacts = load_artifacts(compile_contracts(root, root / "build" / "contracts"))
    args = encode_args(["string", "string", "uint8", "uint256"], ["Bench", "BNCH", 18, 10**30])
    data = artifacts["contracts"]["PlainToken"]["bytecode"] + args.hex()
    tx_hash = await rpc.call("eth_sendTransaction", [{"from": owner, "data": data}])
    await rpc.call("anvil_mine", ["0x1"])
    receipt = await rpc.call("eth_getTransactionReceipt", [tx_hash])
    return checksum(receipt["contractAddress"])


async def make_history(rpc: RpcClient, token: str, owner: str, args: argparse.Namespace) -> None:
    """``args.transfers`` transfers from the owner to random holders, in ``args.blocks``."""
    rng = random.Random(7)
    holders = [checksum("0x" + keccak(text=f"bench-{i}")[-20:].hex()) for i in range(args.holders)]
    per_block = max(1, args.transfers // args.blocks)
    sent = 0
    while sent < args.transfers:
        count = min(per_block, args.transfers - sent)
        txs = [
            {
                "from": owner,
                "to": token,
                "gas": hex(80_000),
                "data": encode_call(
                    "transfer(address,uint256)", [rng.choice(holders), rng.randrange(1, 10**20)]
                ),
            }
            for _ in range(count)
        ]
        for i in range(0, len(txs), SEND_BATCH):
            replies = await rpc.batch(
                [("eth_sendTransaction", [tx]) for tx in txs[i : i + SEND_BATCH]]
            )
            if any(isinstance(r, Exception) for r in replies):
                raise SystemExit(f"sending failed: {replies[0]}")
        await rpc.call("anvil_mine", ["0x1"])
        sent += count


async def raw_get_logs(rpc: RpcClient, filters: list[dict[str, Any]]) -> tuple[float, int]:
    """Seconds the node takes to answer ``filters`` one by one, and the logs returned."""
    started = time.perf_counter()
    logs = 0
    for query in filters:
        logs += len(await rpc.call("eth_getLogs", [query]))
    return time.perf_counter() - started, logs


async def bench(args: argparse.Namespace) -> None:
    with start_anvil(["--no-mining", "--gas-limit", "10000000000"]) as node:
        rpc = RpcClient(node.url)
        try:
            await run(rpc, args)
        finally:
            await rpc.aclose()


async def best_index(
    rpc: RpcClient, store: Store, token: str, args: argparse.Namespace
) -> tuple[IndexStats, Recording]:
    """The fastest of ``args.repeat`` from-scratch runs (the token is reset between)."""
    settings = IndexSettings(windows_per_batch=args.windows_per_batch)
    best: tuple[IndexStats, Recording] | None = None
    for _ in range(args.repeat):
        store.reset_token(CHAIN, token)
        recording = Recording(rpc)
        stats = await index_token(
            recording, store, CHAIN, token, window=args.window, settings=settings
        )
        if best is None or stats.seconds < best[0].seconds:
            best = (stats, recording)
    assert best is not None
    return best


async def run(rpc: RpcClient, args: argparse.Namespace) -> None:
    owner = checksum((await rpc.call("eth_accounts"))[0])
    token = await deploy_token(rpc, owner)
    started = time.perf_counter()
    await make_history(rpc, token, owner, args)
    print(f"setup: {args.transfers} transfers in {time.perf_counter() - started:.1f} s")

    with tempfile.TemporaryDirectory() as tmp:
        store = create_store(args.store_url or f"sqlite:///{Path(tmp) / 'bench.db'}")
        stats, recording = await best_index(rpc, store, token, args)
        again = await index_token(rpc, store, CHAIN, token)
        holders = store.holder_count(CHAIN, token)
        backend = store.backend
        store.reset_token(CHAIN, token)
        store.close()
    raw = [await raw_get_logs(rpc, recording.filters) for _ in range(args.repeat)]
    raw_seconds, raw_logs = min(raw)
    whole = {**recording.filters[0], "toBlock": "latest"}
    whole_seconds = min([(await raw_get_logs(rpc, [whole]))[0] for _ in range(args.repeat)])
    report(stats, again, backend, holders, len(recording.filters), raw_seconds, raw_logs)
    print(f"raw eth_getLogs, one request for the whole range: {whole_seconds:.3f} s")


def report(
    stats: IndexStats,
    again: IndexStats,
    backend: str,
    holders: int,
    requests: int,
    raw_seconds: float,
    raw_logs: int,
) -> None:
    print(f"store: {backend}; {holders} holders; {stats.blocks} blocks")
    print(
        f"index: {stats.logs} logs in {stats.seconds:.3f} s = {stats.logs_per_second:,.0f} logs/s"
        f" ({stats.requests} eth_getLogs, {stats.shrinks} shrinks)"
    )
    print(
        f"raw eth_getLogs, same {requests} ranges one by one: {raw_logs} logs in "
        f"{raw_seconds:.3f} s = {raw_logs / raw_seconds:,.0f} logs/s"
    )
    print(f"ratio index/raw: {stats.seconds / raw_seconds:.2f}x")
    print(f"incremental re-run: {again.seconds * 1000:.1f} ms, {again.requests} eth_getLogs")


def main() -> None:
    args = parse_args()
    if min(args.transfers, args.blocks, args.holders, args.repeat) < 1:
        sys.exit("--transfers, --blocks, --holders and --repeat must be positive")
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()

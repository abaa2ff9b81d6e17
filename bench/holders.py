"""Holder-analysis scaling: IsHoneypot on tokens with 100 and 1,000 holders.

On a throwaway copy of the devnet (same build state, so the same Uniswap and WETH
addresses) it deploys the repository's ``PlainToken`` (through ``bench_index``), adds a
deep V2 pool against WETH the way a deployer would, and sends one transfer to each of N
fresh EOAs (blocks of up to 500 transfers, automine off).  Then three
servers answer IsHoneypot for each token:

* ``holder_limit=0``: the journey only (the holder index is still brought up to date,
  because ``totalHolders`` needs it);
* the default ``holder_limit`` (100 largest holders sell);
* ``holder_limit=N``: every holder sells.

The servers run without the results cache: a server's first request per token is cold
(empty holder index), the repeats after it recompute everything on a warm index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from eth_utils.crypto import keccak

from bench.bench_index import deploy_token
from bench.latency import Samples, timed_get
from bench.server import ServerOptions, start_server
from tokenrisk.chain.abi import checksum, encode_call
from tokenrisk.config import Settings
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.instance import start_devnet
from tokenrisk.devnet.liquidity import add_v2_liquidity, approve
from tokenrisk.devnet.uniswap import V2_ROUTER, WETH

POOL_TOKENS = 10**27  # 0.1% of PlainToken's 10**30 supply
POOL_ETH = 1_000 * 10**18
HOLDER_AMOUNT = 10**21
TRANSFER_GAS = 80_000  # PlainToken.transfer to a new holder uses ~52k
BLOCK_TXS = 500


@dataclass(frozen=True)
class HolderRun:
    """IsHoneypot latencies of one token under one holder_limit."""

    holders: int
    holder_limit: int
    cold: float
    warm: Samples


def holder_addresses(n: int) -> list[str]:
    return [checksum("0x" + keccak(text=f"bench-holder-{n}-{i}")[-20:].hex()) for i in range(n)]


async def make_holder_token(chain: Chain, owner: str, holders: int) -> str:
    """A PlainToken with a WETH pool and ``holders`` EOAs holding it (plus the owner)."""
    token = await deploy_token(chain.rpc, owner)
    await approve(chain, owner, token, V2_ROUTER, "bench")
    await add_v2_liquidity(chain, owner, token, WETH, (POOL_TOKENS, POOL_ETH), "bench")
    data = [
        encode_call("transfer(address,uint256)", [a, HOLDER_AMOUNT])
        for a in holder_addresses(holders)
    ]
    txs = [Tx(owner, token, d, gas=TRANSFER_GAS, label=f"holder {i}") for i, d in enumerate(data)]
    await chain.cheat("evm_setAutomine", False)
    try:
        for start in range(0, len(txs), BLOCK_TXS):  # the node refuses huge batches
            head = await chain.block()
            block = txs[start : start + BLOCK_TXS]
            outcomes = await chain.send_block(block, int(head["timestamp"], 16) + 12)
            if not all(o.ok for o in outcomes):
                raise RuntimeError("a holder transfer failed")
    finally:
        await chain.cheat("evm_setAutomine", True)
    return token


async def _measure(base_url: str, token: str, repeats: int) -> tuple[float, Samples]:
    params: dict[str, str | int] = {"address": token, "chainID": 31337}
    warm = Samples()
    async with httpx.AsyncClient(base_url=base_url, timeout=300.0) as http:
        await timed_get(http, "/v2/IsHoneypot", {"address": WETH, "chainID": 31337})  # warm-up
        cold, status = await timed_get(http, "/v2/IsHoneypot", params)
        if status != 200:
            raise RuntimeError(f"IsHoneypot on the {token} holder token answered {status}")
        for _ in range(repeats):
            warm.add(*await timed_get(http, "/v2/IsHoneypot", params))
    return cold, warm


async def holder_scaling(
    counts: tuple[int, ...], work_dir: Path, repeats: int = 3
) -> tuple[list[HolderRun], float]:
    """Runs for every (count, limit) pair, and the seconds spent creating the tokens."""
    started = time.perf_counter()
    with start_devnet(extra_args=["--auto-impersonate"]) as devnet:
        chain = Chain(devnet.url)
        try:
            owner = (await chain.accounts())[0]
            tokens = {n: await make_holder_token(chain, owner, n) for n in counts}
        finally:
            await chain.aclose()
        setup = time.perf_counter() - started
        runs: list[HolderRun] = []
        for limit in sorted({0, Settings().holder_limit, *counts}):
            data_dir = work_dir / f"holders-{limit}"
            options = ServerOptions(devnet.url, devnet.build_dir, data_dir, limit, 0, 300.0)
            options.data_dir.mkdir(parents=True)
            with start_server(options) as server:
                for n, token in tokens.items():
                    if limit <= n:
                        cold, warm = await _measure(server.url, token, repeats)
                        runs.append(HolderRun(n, limit, cold, warm))
    return runs, setup


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.holders [--holders 1000 10000] [--repeats 3]``: this section alone."""
    import argparse
    import asyncio
    import sys
    import tempfile

    from bench.table import holders_table

    parser = argparse.ArgumentParser(prog="python -m bench.holders", description=__doc__)
    parser.add_argument("--holders", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="tokenrisk-bench-") as tmp:
        runs, setup = asyncio.run(holder_scaling(tuple(args.holders), Path(tmp), args.repeats))
    print(holders_table(runs))
    print(f"\nCreating the holder tokens took {setup:.1f} s.")


if __name__ == "__main__":
    main()

"""tokenrisk against a single-call checker on the same node in the same run.

The peer is TokenChecks' state-override check (github.com/devanoneth/TokenChecks,
``contracts/ToleranceCheckOverride.sol``): ONE ``eth_call`` to a fresh address whose
code is the checker contract, placed there by a state override with an ETH balance; the
contract buys the token through the router and sells it back in that one call.  It is
not vendored: build its artifact from the peer's repository (bench/PEER.md) and pass it::

    python -m bench.peer --artifact PATH/ToleranceCheckOverride.json [--rtt-ms 30]

The peer is asked with the same buy size as tokenrisk's default buy, through the same
:class:`~tokenrisk.chain.rpc.RpcClient` and, with ``--rtt-ms``, the same
:class:`bench.proxy.LatencyProxy`; tokenrisk is the real server (results cache off:
every answer recomputed, with its holder analysis and owner-power scan).  Both are
timed warm (one untimed request each first).  The last line is::

    peer token=plain tokenchecks_p50_ms=X tokenrisk_p50_ms=Y ratio=Y/X rtt_ms=R
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bench.client import BenchClient
from bench.floor import time_calls
from bench.latency import Samples
from bench.proxy import LatencyProxy
from bench.server import ServerOptions, start_server
from tokenrisk.chain import dex
from tokenrisk.chain.abi import encode_call
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.service import devnet_chain
from tokenrisk.simulate.simulator import SimSettings

CALLER = "0x0000000000000000000000000000000000000124"
CHAIN = 31337


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.peer", description=__doc__)
    parser.add_argument("--artifact", type=Path, required=True, help="peer's compiled JSON")
    parser.add_argument("--token", default="plain", help="catalogue id (a V2 WETH pool)")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--rtt-ms", type=float, default=0.0, help="through the proxy (0: not)")
    return parser.parse_args(argv)


def deployed_code(artifact: Path) -> str:
    """The runtime bytecode from a Hardhat artifact or a ``{"deployedBytecode": ...}``."""
    data = json.loads(artifact.read_text(encoding="utf-8"))
    code = data["deployedBytecode"]
    code = code["object"] if isinstance(code, dict) else code
    return code if code.startswith("0x") else "0x" + code


async def peer_params(rpc: RpcClient, devnet: RunningDevnet, token: str, code: str) -> list[Any]:
    """The peer's one ``eth_call``: checkToken(router, token, tolerance) from an address
    holding the checker's code and tokenrisk's default buy size in ETH."""
    chain = devnet_chain(devnet.manifest)
    pools = [p for p in await dex.find_pools(rpc, chain, token) if p.version == "V2"]
    if not pools:
        raise RuntimeError("the peer trades through a V2 router: pick a token with a V2 pool")
    pool = pools[0]
    amount = SimSettings().buy_amount(dex.base_reserve(pool))
    data = encode_call(
        "checkToken(address,address,uint256)", [dex.dex_of(chain, pool).router, token, amount]
    )
    call = {"to": CALLER, "data": data, "gas": hex(10_000_000)}
    return [call, "latest", {CALLER: {"code": code, "balance": hex(amount)}}]


async def time_peer(rpc: RpcClient, params: list[Any], samples: int) -> Samples:
    reply = await rpc.call("eth_call", params)
    if reply != "0x01":
        print(f"note: the peer answered {reply} (0x01: sold within tolerance)", file=sys.stderr)
    return await time_calls(rpc, "eth_call", params, samples)


async def time_tokenrisk(url: str, devnet: RunningDevnet, token: str, samples: int) -> Samples:
    with tempfile.TemporaryDirectory(prefix="tokenrisk-peer-") as tmp:
        options = ServerOptions(url, devnet.build_dir, Path(tmp), cache_ttl=0)
        with start_server(options) as server:
            out = Samples()
            async with BenchClient(server.url) as http:
                params = {"address": token, "chainID": CHAIN}
                await http.get("/v2/IsHoneypot", params)
                for _ in range(samples):
                    started = time.perf_counter()
                    status, _ = await http.get("/v2/IsHoneypot", params)
                    out.add(time.perf_counter() - started, status)
    return out


@contextlib.asynccontextmanager
async def node_url(devnet: RunningDevnet, rtt_ms: float) -> AsyncIterator[str]:
    if rtt_ms <= 0:
        yield devnet.url
        return
    async with LatencyProxy(devnet.url, rtt_ms / 2000) as proxy:
        yield proxy.url


async def run(args: argparse.Namespace) -> str:
    code = deployed_code(args.artifact)
    with start_devnet() as devnet:
        token = next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == args.token)
        async with node_url(devnet, args.rtt_ms) as url:
            rpc = RpcClient(url)
            try:
                params = await peer_params(rpc, devnet, token, code)
                peer = await time_peer(rpc, params, args.samples)
            finally:
                await rpc.aclose()
            ours = await time_tokenrisk(url, devnet, token, args.samples)
    ratio = ours.p50 / peer.p50
    return (
        f"TokenChecks' one eth_call: p50 {peer.p50 * 1000:.1f} ms, p99 {peer.p99 * 1000:.1f} ms; "
        f"tokenrisk recomputed IsHoneypot: p50 {ours.p50 * 1000:.1f} ms, p99 "
        f"{ours.p99 * 1000:.1f} ms ({' '.join(f'{k}x{v}' for k, v in ours.statuses.items())})\n"
        f"peer token={args.token} tokenchecks_p50_ms={peer.p50 * 1000:.1f} "
        f"tokenrisk_p50_ms={ours.p50 * 1000:.1f} ratio={ratio:.2f} rtt_ms={args.rtt_ms:g}"
    )


def main(argv: list[str] | None = None) -> None:
    print(asyncio.run(run(parse_args(sys.argv[1:] if argv is None else argv))))


if __name__ == "__main__":
    main()

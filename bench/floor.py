"""The node's floor: one ``eth_simulateV1`` buy -> transfer -> sell, nothing else.

This is the least an IsHoneypot answer can cost on a given node: one simulation of the
journey the service simulates, sent through the same :class:`tokenrisk.chain.rpc.RpcClient`,
with the parameters built once up front (so no Python planning is timed).  Endpoint
latencies are reported as multiples of its median.
"""

from __future__ import annotations

import time
from typing import Any

from bench.latency import Samples
from tokenrisk.chain import dex
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.service import devnet_chain
from tokenrisk.simulate.calls import Route, find_balance_slot, fresh_address
from tokenrisk.simulate.simulator import ChainHead, Funding, SimSettings, Simulator


async def journey_params(rpc: RpcClient, manifest: dict[str, Any], token: str) -> list[Any]:
    """``eth_simulateV1`` params of a buy, a 10% wallet transfer and a sell of the rest.

    Raises RuntimeError when the token has no pool or the simulated sell fails (the floor
    must be measured on a token that trades normally).
    """
    chain = devnet_chain(manifest)
    pools = await dex.find_pools(rpc, chain, token)
    if not pools:
        raise RuntimeError(f"{token} has no pool on the devnet")
    pool = pools[0]
    route = Route(pool, dex.dex_of(chain, pool), token, pool.base_token)
    slot = await find_balance_slot(rpc, route.base)
    block = await rpc.call("eth_getBlockByNumber", ["latest", False])
    head = ChainHead(int(block["number"], 16), int(block["timestamp"], 16))
    funding = Funding(route.base, slot)
    sim = Simulator(rpc, route, head, funding, SimSettings())
    amount = max(1, dex.base_reserve(pool) * sim.settings.buy_bps // 10_000)
    bought = (await sim.run_one(sim.buy_only(amount)))["bought"].uint or 0
    plan = sim.plan()
    buyer, receiver = fresh_address(), fresh_address()
    sim.add_buy(plan, buyer, amount)
    sim.add_transfer(plan, buyer, receiver, bought // 10)
    plan.block(3)
    sim.add_sell(plan, buyer, bought - bought // 10, "buyer")
    if not (await sim.run_one(plan))["buyer.sell"].ok:
        raise RuntimeError("the floor journey's sell failed; pick a plain token")
    return plan.params()


async def node_floor(
    rpc: RpcClient, manifest: dict[str, Any], token: str, samples: int = 30
) -> Samples:
    """Latency of ``samples`` sequential eth_simulateV1 journeys (after one warm-up)."""
    params = await journey_params(rpc, manifest, token)
    await rpc.call("eth_simulateV1", params)
    return await time_calls(rpc, "eth_simulateV1", params, samples)


async def time_calls(rpc: RpcClient, method: str, params: list[Any], samples: int) -> Samples:
    """Latency of ``samples`` sequential calls of ``method`` with the same ``params``."""
    out = Samples()
    for _ in range(samples):
        started = time.perf_counter()
        await rpc.call(method, params)
        out.add(time.perf_counter() - started, 200)
    return out

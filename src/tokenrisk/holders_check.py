"""Holder-facing checks: TopHolders, totalHolders, and real holders selling as themselves.

The Transfer-log index (``holders.index``) is brought up to date first (incremental);
then each analysed holder sells its whole balance in its own ``eth_simulateV1`` (an EOA
call from the holder's address, no overrides of its balance), all sent as JSON-RPC
batches of independent simulations.  Analysed: the largest holders up to
``holder_limit``, skipping pools, the zero/dead addresses and contracts (a contract
cannot sign a transaction, so "can it sell like a person" does not apply).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tokenrisk import wire
from tokenrisk.abi import checksum, parse_address
from tokenrisk.analysis import HolderStats, Pool
from tokenrisk.chains import Chain
from tokenrisk.errors import NotFoundError, RpcError
from tokenrisk.holders.index import (
    holder_count,
    index_token,
    total_supply,
)
from tokenrisk.holders.index import (
    top_holders as indexed_top,
)
from tokenrisk.holders.siphon import siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate
from tokenrisk.service import Service
from tokenrisk.simulation import Outcome, Simulator, sold_tax
from tokenrisk.tokens import is_contract

_SKIP = {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
_BATCH = 25


async def refresh_index(svc: Service, chain_id: int, token: str) -> None:
    await index_token(svc.client(chain_id), svc.store, chain_id, token)


async def top_holders(svc: Service, address: str, chain_id: int) -> dict[str, Any]:
    token = parse_address(address)
    rpc = svc.client(chain_id)
    svc.chain(chain_id)
    (flags,) = [await is_contract(rpc, [token])]
    if not flags[0]:
        raise NotFoundError("no contract at this address on this chain")
    await refresh_index(svc, chain_id, token)
    supply, rows = await asyncio.gather(
        total_supply(rpc, token), indexed_top(svc.store, chain_id, token, 50)
    )
    contracts = await is_contract(rpc, [a for a, _ in rows]) if rows else []
    holders = [_Row(checksum(a), b, c) for (a, b), c in zip(rows, contracts, strict=True)]
    return wire.dump(wire.top_holders_response(supply or 0, holders))


class _Row:
    def __init__(self, address: str, balance: int, is_contract: bool) -> None:
        self.address, self.balance, self.is_contract = address, balance, is_contract


async def total_holders(svc: Service, chain_id: int, token: str) -> int:
    await refresh_index(svc, chain_id, token)
    return await holder_count(svc.store, chain_id, token)


async def _candidates(
    svc: Service, chain: Chain, token: str, pools: list[Pool]
) -> list[tuple[str, int]]:
    skip = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    rows = await indexed_top(svc.store, chain.id, token, svc.settings.holder_limit * 2)
    rows = [(a, b) for a, b in rows if a.lower() not in skip and b > 0]
    flags = await is_contract(svc.client(chain.id), [a for a, _ in rows]) if rows else []
    people = [(checksum(a), b) for (a, b), c in zip(rows, flags, strict=True) if not c]
    return people[: svc.settings.holder_limit]


def _sell_plan(sim: Simulator, holder: str, amount: int) -> Any:
    plan = sim.plan()
    plan.block(1, {holder: {"balance": hex(10**30)}})
    sim.add_sell(plan, holder, amount, "holder")
    return plan


def _holder_result(holder: str, outcome: Outcome | RpcError, siphoned: bool) -> HolderSell:
    if isinstance(outcome, RpcError) or not outcome["holder.sell"].ok:
        return HolderSell(holder, ok=False, siphoned=siphoned)
    return HolderSell(
        holder,
        ok=True,
        tax=sold_tax(outcome, "holder"),
        gas=outcome["holder.sell"].gas,
        siphoned=siphoned,
    )


async def analyse_holders(
    svc: Service, chain: Chain, sim: Simulator, pools: list[Pool]
) -> HolderStats | None:
    """Sell simulations of the analysed holders; None when there is nobody to analyse."""
    token = sim.route.token
    await refresh_index(svc, chain.id, token)
    people = await _candidates(svc, chain, token, pools)
    if not people:
        return None
    siphoned = await siphoned_holders(
        svc.client(chain.id), svc.store, chain.id, token, [a for a, _ in people]
    )
    results: list[HolderSell] = []
    for start in range(0, len(people), _BATCH):
        chunk = people[start : start + _BATCH]
        outcomes = await sim.run([_sell_plan(sim, a, b) for a, b in chunk])
        results += [
            _holder_result(a, o, a in siphoned) for (a, _), o in zip(chunk, outcomes, strict=True)
        ]
    return aggregate(results)

"""Holder-facing checks: TopHolders, totalHolders, and real holders selling as themselves.

The Transfer-log index (``holders.index``) is brought up to date first (incremental);
then each analysed holder sells its whole balance in its own ``eth_simulateV1`` (an EOA
call from the holder's address, no overrides of its balance), all sent as JSON-RPC
batches of independent simulations, several batches at once.  Analysed: the largest
holders up to ``holder_limit``, skipping pools, the zero/dead addresses and contracts (a
contract cannot sign a transaction, so "can it sell like a person" does not apply); past
``SAMPLE_MAX`` candidates, a sample by balance (:func:`sample_by_balance`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Set
from dataclasses import replace
from typing import Any

from tokenrisk import metrics
from tokenrisk.api import wire
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, parse_address
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.tokens import balances_of, is_contract
from tokenrisk.errors import CallReverted, NotFoundError, StoreConflict
from tokenrisk.holders import launch
from tokenrisk.holders.index import (
    DEVNET_CHAIN_IDS,
    head_block,
    holder_count,
    index_token,
    top_holders_checked,
    total_supply,
)
from tokenrisk.holders.index import (
    top_holders as indexed_top,
)
from tokenrisk.holders.siphon import siphoned_holders
from tokenrisk.holders.stats import HolderSell, aggregate
from tokenrisk.model import AirdropSummary, HolderStats, Pool
from tokenrisk.service import Service
from tokenrisk.simulate.engine import Outcome, Plan, Simulator, sell_leg

V2_MAX_RESERVE = 2**112 - 1
"""A Uniswap V2 pair stores reserves as uint112: a sell that would lift the pair's token
balance above this reverts (``UniswapV2: OVERFLOW``), whoever the seller is."""
_SKIP = {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
_BATCH = 50  # holder sells per JSON-RPC batch
_BATCHES_IN_FLIGHT = 4  # batches sent at once (the node client folds them into one request)
SAMPLE_MAX = 2_000
"""Most holders whose sells are simulated in one check.  A larger candidate set is
sampled by balance: the largest ``SAMPLE_MAX // 2`` always, the rest evenly spaced by
balance rank over the remaining candidates (see :func:`sample_by_balance`)."""


async def refresh_index(svc: Service, chain_id: int, token: str) -> None:
    """Bring the token's index up to the head, or have a background job do it.

    With a job queue (Redis configured, see :mod:`tokenrisk.jobs`) an index more than
    ``index_inline_blocks`` behind the head is left to ``tokenrisk worker``: the check
    goes on with the index as stored.  Otherwise concurrent requests for one token wait
    for a single indexer; when another process holds the token's cursor
    (StoreConflict), a few short retries follow, then the stored index is used as it is
    (at most a few blocks behind).
    """
    queue = svc.index_queue
    if queue is not None and await _blocks_behind(svc, chain_id, token) > queue.inline_blocks:
        await queue.enqueue(chain_id, token)
        return
    lock = svc.index_locks.setdefault((chain_id, token.lower()), asyncio.Lock())
    async with lock:
        for attempt in range(3):
            try:
                stats = await index_token(svc.client(chain_id), svc.store, chain_id, token)
                metrics.index_refreshed(chain_id, stats.blocks)
                return
            except StoreConflict:
                await asyncio.sleep(0.05 * (attempt + 1))


async def _blocks_behind(svc: Service, chain_id: int, token: str) -> int:
    """Blocks between the token's index cursor and the head (the whole chain if never
    indexed: the indexer's start block is not known before it runs)."""
    head, cursor = await asyncio.gather(
        head_block(svc.client(chain_id)),
        asyncio.to_thread(svc.store.get_cursor, chain_id, token.lower()),
    )
    return head - (cursor.last_block if cursor is not None else -1)


async def top_holders(svc: Service, address: str, chain_id: int, limit: int = 50) -> dict[str, Any]:
    """The ``limit`` largest holders now (the API bounds ``limit`` by the caller's tier)."""
    token = parse_address(address)
    rpc = svc.client(chain_id)
    svc.chain(chain_id)
    (flags,) = [await is_contract(rpc, [token])]
    if not flags[0]:
        raise NotFoundError("no contract at this address on this chain")
    await refresh_index(svc, chain_id, token)
    supply, rows = await asyncio.gather(
        total_supply(rpc, token), top_holders_checked(rpc, svc.store, chain_id, token, limit)
    )
    contracts = await is_contract(rpc, [a for a, _ in rows]) if rows else []
    holders = [_Row(checksum(a), b, c) for (a, b), c in zip(rows, contracts, strict=True)]
    return wire.dump(wire.top_holders_response(supply or 0, holders))


class _Row:
    def __init__(self, address: str, balance: int, is_contract: bool) -> None:
        self.address, self.balance, self.is_contract = address, balance, is_contract


async def largest_holders(
    svc: Service, chain: Chain, token: str, pools: list[Pool]
) -> list[tuple[str, int]]:
    """The largest EOA holders with their balances read from the chain, not the index.

    The index says who holds; ``balanceOf`` says how much (reflection and rebasing tokens
    change balances without Transfer logs).
    """
    skip = _SKIP | {p.address.lower() for p in pools} | {token.lower()}
    rows = await indexed_top(svc.store, chain.id, token, svc.settings.holder_limit * 2)
    rows = sample_by_balance(rows, SAMPLE_MAX)
    addresses = [checksum(a) for a, _ in rows if a.lower() not in skip]
    if not addresses:
        return []
    rpc = svc.client(chain.id)
    flags, balances = await asyncio.gather(
        is_contract(rpc, addresses), balances_of(rpc, token, addresses)
    )
    people = [(a, b) for a, c, b in zip(addresses, flags, balances, strict=True) if not c and b]
    return people[: svc.settings.holder_limit]


def pool_sell_limit(sim: Simulator) -> int | None:
    """The largest sell a V2 pair can take (None for V3: no such bound in practice)."""
    if sim.route.v3:
        return None
    pool = sim.route.pool
    reserve = pool.reserves0 if pool.token0 == sim.route.token else pool.reserves1
    return max(0, V2_MAX_RESERVE - reserve)


def sample_by_balance(rows: list[tuple[str, int]], cap: int) -> list[tuple[str, int]]:
    """At most ``cap`` of ``rows`` (largest balance first): the top half of the cap as
    they are, then every k-th of the rest, so small holders are represented in
    proportion to their number rather than left out.  Order is kept."""
    if len(rows) <= cap:
        return rows
    top = cap // 2
    rest = rows[top:]
    picks = cap - top
    step = len(rest) / picks
    return rows[:top] + [rest[int(i * step)] for i in range(picks)]


def _sell_plan(sim: Simulator, holder: str, amount: int) -> Plan:
    plan = sim.plan()
    plan.block(1, {holder: {"balance": hex(10**30)}})
    sim.add_sell(plan, holder, amount, "holder")
    return plan


def _holder_result(
    sim: Simulator, holder: tuple[str, int], outcome: Outcome | CallReverted, siphoned: bool
) -> HolderSell:
    address, amount = holder
    if isinstance(outcome, CallReverted) or not outcome["holder.sell"].ok:
        return HolderSell(address, ok=False, siphoned=siphoned)
    tax, gas = sell_leg(outcome, sim.route, "holder", amount), outcome["holder.sell"].gas
    return HolderSell(
        address,
        ok=True,
        tax=tax.effective,
        gas=gas,
        siphoned=siphoned,
        tax_token_unit=tax.token_unit,
    )


async def base_token_holders(svc: Service, chain: Chain, base: str) -> int | None:
    """Holder count of the pair's other token where it is indexed; None when unknown.

    On a devnet the base token's Transfer logs are few, so they are indexed here; on a
    real chain (millions of WETH transfers) only a background index job can, and until
    one has, the count stays unknown (None) rather than a partial number.
    """
    if chain.id in DEVNET_CHAIN_IDS:
        await refresh_index(svc, chain.id, base)
    return await holder_count(svc.store, chain.id, base)


async def _pool_transfers(svc: Service, chain: Chain, token: str, pools: list[Pool]) -> list[Any]:
    """Indexed transfers out of the token's pools, oldest first (the launch window)."""
    senders = {p.address.lower() for p in pools}
    return await asyncio.to_thread(svc.store.transfers_sent, chain.id, token, senders, None, 5_000)


async def airdrop_summary(
    svc: Service, chain: Chain, token: str, pools: list[Pool]
) -> AirdropSummary | None:
    """``token.airdropSummary`` (rule in :mod:`tokenrisk.holders.launch`); None when the
    deployer cannot be found (no indexed mint, or the node lacks the transaction).

    The deployer is the sender of the transaction that minted the first tokens.
    """
    first_buy = launch.launch_block(await _pool_transfers(svc, chain, token, pools))
    mints = await asyncio.to_thread(
        svc.store.transfers_sent, chain.id, token, [ZERO_ADDRESS], first_buy, 1
    )
    if not mints:
        return None
    tx = await svc.client(chain.id).call("eth_getTransactionByHash", [mints[0].tx_hash])
    if not isinstance(tx, dict) or not isinstance(tx.get("from"), str):
        return None
    sources = {tx["from"].lower(), token.lower()}
    sent = await asyncio.to_thread(svc.store.transfers_sent, chain.id, token, sources, first_buy)
    pool_addresses = {p.address.lower() for p in pools}
    return launch.airdrop(sent, sources, pool_addresses, first_buy)


async def analyse_holders(
    svc: Service, chain: Chain, sim: Simulator, pools: list[Pool], skip: Set[str] = frozenset()
) -> HolderStats | None:
    """Sell simulations of the analysed holders and of the snipers that still hold;
    None when there is nobody to analyse.

    Reads the holder index: the caller brings it up to date (``refresh_index``).
    ``skip``: addresses not to analyse (the provider of simulated liquidity, whose
    balance the simulation has already changed).
    """
    token = sim.route.token
    people = [p for p in await largest_holders(svc, chain, token, pools) if p[0] not in skip]
    if not people:
        return None
    rpc = svc.client(chain.id)
    siphoned = await siphoned_holders(rpc, svc.store, chain.id, token, [a for a, _ in people])
    limit = pool_sell_limit(sim)
    capped = [(a, min(b, limit)) if limit is not None else (a, b) for a, b in people]
    results = await _sell_all(sim, capped, siphoned)
    over = sum(1 for (_, b), (_, c) in zip(people, capped, strict=True) if c < b)
    snipers = await _sniper_sells(svc, chain, sim, pools, skip, results)
    stats = aggregate(results)
    if over:
        stats = replace(stats, sold_at_pool_limit=over, pool_limit_wei=limit)
    return replace(
        stats,
        snipers_success=sum(1 for r in snipers if r.ok),
        snipers_failed=sum(1 for r in snipers if not r.ok),
    )


async def _sell_all(
    sim: Simulator, people: list[tuple[str, int]], siphoned: set[str]
) -> list[HolderSell]:
    """Each of ``people`` sells ``amount``: batches of ``_BATCH``, a few in flight at once."""
    in_flight = asyncio.Semaphore(_BATCHES_IN_FLIGHT)

    async def chunk_of(start: int) -> list[HolderSell]:
        async with in_flight:
            return await _sell_chunk(sim, people[start : start + _BATCH], siphoned)

    parts = await asyncio.gather(*(chunk_of(i) for i in range(0, len(people), _BATCH)))
    return [result for part in parts for result in part]


async def _sniper_sells(
    svc: Service,
    chain: Chain,
    sim: Simulator,
    pools: list[Pool],
    skip: Set[str],
    analysed: list[HolderSell],
) -> list[HolderSell]:
    """Sell results of the snipers that still hold a balance and are not contracts.

    Snipers already among the analysed holders reuse their result; the others sell now
    (capped at what the pool can take, as for every holder).
    """
    token = sim.route.token
    pool_addresses = {p.address.lower() for p in pools}
    found = launch.snipers(await _pool_transfers(svc, chain, token, pools), pool_addresses)
    found = [checksum(a) for a in found if a not in {s.lower() for s in skip} | {token.lower()}]
    if not found:
        return []
    rpc = svc.client(chain.id)
    flags, balances = await asyncio.gather(is_contract(rpc, found), balances_of(rpc, token, found))
    holding = [(a, b) for a, c, b in zip(found, flags, balances, strict=True) if b and not c]
    known = {r.holder: r for r in analysed}
    limit = pool_sell_limit(sim)
    todo = [(a, min(b, limit) if limit is not None else b) for a, b in holding if a not in known]
    fresh = await _sell_all(sim, todo, set())
    return [known[a] for a, _ in holding if a in known] + fresh


async def _sell_chunk(
    sim: Simulator, chunk: list[tuple[str, int]], siphoned: set[str]
) -> list[HolderSell]:
    """Each holder sells everything; who cannot gets a second try with 99.9% of it.

    A person who can exit 99.9% of a position is not trapped (some tokens refuse to
    sell a whole balance; the journey's maxSell reports that quirk).
    """
    outcomes = await sim.run([_sell_plan(sim, a, b) for a, b in chunk])
    results = [
        _holder_result(sim, h, o, h[0] in siphoned) for h, o in zip(chunk, outcomes, strict=True)
    ]
    retry = [i for i, r in enumerate(results) if not r.ok and chunk[i][1] >= 1_000]
    if retry:
        smaller = [(chunk[i][0], chunk[i][1] * 999 // 1_000) for i in retry]
        plans = [_sell_plan(sim, a, b) for a, b in smaller]
        for i, h, outcome in zip(retry, smaller, await sim.run(plans), strict=True):
            results[i] = _holder_result(sim, h, outcome, h[0] in siphoned)
    return results

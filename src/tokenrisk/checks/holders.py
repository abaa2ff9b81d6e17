"""TopHolders: the largest holders now, from the Transfer-log index brought up to date."""

from __future__ import annotations

import asyncio

from tokenrisk.chain.abi import checksum, parse_address
from tokenrisk.chain.tokens import is_contract
from tokenrisk.checks.deps import HoldersDeps
from tokenrisk.checks.indexing import refresh_index
from tokenrisk.checks.results import HolderBalance, TopHoldersResult
from tokenrisk.errors import NotFoundError
from tokenrisk.holders.index import top_holders_checked, total_supply


async def top_holders(
    deps: HoldersDeps, address: str, chain_id: int, limit: int = 50
) -> TopHoldersResult:
    """The ``limit`` largest holders now (the API bounds ``limit`` by the caller's tier).

    Raises UnknownChain, and NotFoundError when there is no contract at ``address``.
    """
    token = parse_address(address)
    node = deps.nodes.node(chain_id)
    (flags,) = [await is_contract(node.rpc, [token])]
    if not flags[0]:
        raise NotFoundError("no contract at this address on this chain")
    await refresh_index(deps.index, node, token)
    store = deps.index.store
    supply, rows = await asyncio.gather(
        total_supply(node.rpc, token), top_holders_checked(node.rpc, store, chain_id, token, limit)
    )
    contracts = await is_contract(node.rpc, [a for a, _ in rows]) if rows else []
    holders = tuple(
        HolderBalance(checksum(a), b, c) for (a, b), c in zip(rows, contracts, strict=True)
    )
    return TopHoldersResult(supply or 0, holders)

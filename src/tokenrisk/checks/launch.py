"""The token's launch as the holder index saw it: transfers out of its pools in the first
blocks of trading (snipers) and the deployer's airdrop (``token.airdropSummary``)."""

from __future__ import annotations

import asyncio
from typing import Any

from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.chain.node import Node
from tokenrisk.holders import launch
from tokenrisk.holders.index import memo_at_index_head
from tokenrisk.model import AirdropSummary, Pool
from tokenrisk.store.engine import Store


async def pool_transfers(store: Store, chain_id: int, token: str, pools: list[Pool]) -> list[Any]:
    """Indexed transfers out of the token's pools, oldest first (the launch window)."""
    senders = {p.address.lower() for p in pools}
    return await asyncio.to_thread(store.transfers_sent, chain_id, token, senders, None, 5_000)


async def sniper_addresses(store: Store, chain_id: int, token: str, pools: list[Pool]) -> list[str]:
    """Addresses that bought from the token's pools in the first blocks of trading."""
    pool_addresses = {p.address.lower() for p in pools}
    return launch.snipers(await pool_transfers(store, chain_id, token, pools), pool_addresses)


async def airdrop_summary(
    node: Node, store: Store, token: str, pools: list[Pool]
) -> AirdropSummary | None:
    """``token.airdropSummary`` (rule in :mod:`tokenrisk.holders.launch`); None when the
    deployer cannot be found (no indexed mint, or the node lacks the transaction).

    The deployer is the sender of the transaction that minted the first tokens.  Read
    once per index state (:func:`~tokenrisk.holders.index.memo_at_index_head`).
    """
    key = ("airdrop", tuple(sorted({p.address.lower() for p in pools})))
    work = lambda: _airdrop_summary(node, store, token, pools)  # noqa: E731
    return await memo_at_index_head(store, node.id, token, key, work)


async def _airdrop_summary(
    node: Node, store: Store, token: str, pools: list[Pool]
) -> AirdropSummary | None:
    chain_id = node.id
    first_buy = launch.launch_block(await pool_transfers(store, chain_id, token, pools))
    mints = await asyncio.to_thread(
        store.transfers_sent, chain_id, token, [ZERO_ADDRESS], first_buy, 1
    )
    if not mints:
        return None
    tx = await node.rpc.call("eth_getTransactionByHash", [mints[0].tx_hash])
    if not isinstance(tx, dict) or not isinstance(tx.get("from"), str):
        return None
    sources = {tx["from"].lower(), token.lower()}
    sent = await asyncio.to_thread(store.transfers_sent, chain_id, token, sources, first_buy)
    pool_addresses = {p.address.lower() for p in pools}
    return launch.airdrop(sent, sources, pool_addresses, first_buy)

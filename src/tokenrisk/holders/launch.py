"""What happened around a token's launch: its snipers and its pre-launch airdrops.

The rules (:func:`snipers`, :func:`launch_block`, :func:`airdrop`) are pure: they take
Transfer logs and decide who is a sniper and what counts as an airdrop; the readers at
the end (:func:`sniper_addresses`, :func:`airdrop_summary`) feed them the indexed
transfers of the token's pools, for IsHoneypot's ``holderAnalysis`` and
``token.airdropSummary``.

**Launch** is the block of the first transfer *out of* one of the token's pools, i.e. the
first buy.  A pool is often created long before trading is enabled (the devnet's
anti-sniper token creates its pair 150 blocks before it opens trading), so the pool's
creation block would call nobody a sniper; the first buy is when sniping happens.

**Snipers** are the wallets that received the token from a pool in the first
``SNIPER_BLOCKS`` blocks from launch (launch block included): the first buyers.

**Airdrop** transfers are transfers out of the token's deployer or the token contract to
wallets (not a pool, not the zero/dead address, not the token or the deployer) mined at
or before the launch block.  They are summarised only when they reach at least
``AIRDROP_MIN_WALLETS`` distinct wallets: a handful of team or exchange allocations is not
an airdrop, and then the summary counts zero.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence, Set
from typing import Any

from tokenrisk import metrics
from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.chain.node import Node
from tokenrisk.holders.index import memo_at_index_head
from tokenrisk.model import AirdropSummary, Pool
from tokenrisk.store.engine import Store, TransferLog

SNIPER_BLOCKS = 3
"""Blocks from the first buy (that block included) whose buyers count as snipers."""

AIRDROP_MIN_WALLETS = 10
"""Distinct receiving wallets below which pre-launch transfers are not an airdrop."""

NOT_WALLETS = frozenset(
    {"0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead"}
)


NO_AIRDROP = AirdropSummary(0, 0, 0)


def launch_block(pool_transfers: Iterable[TransferLog]) -> int | None:
    """Block of the first transfer out of a pool; None when nobody has bought yet."""
    return min((t.block for t in pool_transfers), default=None)


def snipers(pool_transfers: Sequence[TransferLog], pools: Set[str]) -> list[str]:
    """Wallets that bought from a pool within ``SNIPER_BLOCKS`` blocks of launch, sorted.

    ``pool_transfers`` are transfers whose sender is one of ``pools`` (lowercase);
    transfers between pools (routing through two pools) are not buys.
    """
    start = launch_block(pool_transfers)
    if start is None:
        return []
    last = start + SNIPER_BLOCKS - 1
    bought = {
        t.recipient.lower()
        for t in pool_transfers
        if start <= t.block <= last and t.sender.lower() in pools
    }
    return sorted(bought - pools - NOT_WALLETS)


def airdrop(
    transfers: Sequence[TransferLog],
    sources: Set[str],
    not_wallets: Set[str],
    launch: int | None,
) -> AirdropSummary:
    """Summary of transfers from ``sources`` to wallets at or before ``launch``.

    ``sources`` are the deployer and the token (lowercase); ``not_wallets`` are
    addresses that are not recipients of an airdrop (pools, the token, the deployer).
    ``launch`` None means no buy yet: every transfer so far is before launch.
    """
    excluded = NOT_WALLETS | not_wallets | sources
    dropped = [
        t
        for t in transfers
        if t.sender.lower() in sources
        and t.recipient.lower() not in excluded
        and (launch is None or t.block <= launch)
    ]
    if len({t.recipient.lower() for t in dropped}) < AIRDROP_MIN_WALLETS:
        return NO_AIRDROP
    return AirdropSummary(
        transactions=len({t.tx_hash for t in dropped}),
        transfers=len(dropped),
        amount=sum(t.amount for t in dropped),
    )


# READ FROM THE INDEX (the rules above over the indexed transfers of a token's pools)


LAUNCH_WINDOW = 5_000
"""Transfers out of the pools read for the launch rules: the first this many, oldest first."""


async def pool_transfers(store: Store, chain_id: int, token: str, pools: list[Pool]) -> list[Any]:
    """Indexed transfers out of the token's pools, oldest first (the launch window)."""
    senders = {p.address.lower() for p in pools}
    return await asyncio.to_thread(
        store.transfers_sent, chain_id, token, senders, None, LAUNCH_WINDOW
    )


def logged_pool_transfers(logs: Iterable[TransferLog], pools: list[Pool]) -> list[TransferLog]:
    """:func:`pool_transfers` from a token's logs in memory (a first index's, before the
    store holds them: :func:`~tokenrisk.holders.index.first_logs`)."""
    senders = {p.address.lower() for p in pools}
    return sorted((t for t in logs if t.sender in senders), key=_order)[:LAUNCH_WINDOW]


async def sniper_addresses(store: Store, chain_id: int, token: str, pools: list[Pool]) -> list[str]:
    """Addresses that bought from the token's pools in the first blocks of trading.

    Read once per index state (:func:`~tokenrisk.holders.index.memo_at_index_head`):
    the query is a SQL round of its own, and every check with holder analysis asks it.
    """
    pool_addresses = frozenset(p.address.lower() for p in pools)

    async def read() -> list[str]:
        return snipers(await pool_transfers(store, chain_id, token, pools), pool_addresses)

    key = ("snipers", tuple(sorted(pool_addresses)))
    return list(await memo_at_index_head(store, chain_id, token, key, read))


async def airdrop_summary(
    node: Node, store: Store, token: str, pools: list[Pool]
) -> AirdropSummary | None:
    """``token.airdropSummary`` (rule: :func:`airdrop`); None when the
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
    first_buy, mints = await asyncio.to_thread(_first_mint, store, chain_id, token, pools)
    if not mints:
        return None
    tx = await _transaction(node, store, token, mints[0].tx_hash)
    if not isinstance(tx, dict) or not isinstance(tx.get("from"), str):
        return None
    sources = {tx["from"].lower(), token.lower()}
    sent = await asyncio.to_thread(store.transfers_sent, chain_id, token, sources, first_buy)
    pool_addresses = {p.address.lower() for p in pools}
    return airdrop(sent, sources, pool_addresses, first_buy)


def _first_mint(
    store: Store, chain_id: int, token: str, pools: list[Pool]
) -> tuple[int | None, list[TransferLog]]:
    """The launch block and the first mint at or before it, in one thread hop: the
    deployer's transaction is read as soon after the index as it can be (issue #27)."""
    senders = {p.address.lower() for p in pools}
    first_buy = launch_block(store.transfers_sent(chain_id, token, senders, None, LAUNCH_WINDOW))
    return first_buy, store.transfers_sent(chain_id, token, [ZERO_ADDRESS], first_buy, 1)


# THE DEPLOYER'S TRANSACTION, READ FROM A FIRST INDEX'S LOGS

_READ_TTL = 60.0
"""Seconds a transaction read ahead waits for the summary that takes it."""


def read_deployer_ahead(
    node: Node, store: Store, tokens: tuple[str, Sequence[TransferLog]], pools: list[Pool]
) -> None:
    """Start reading the transaction of the first mint before the launch, from a token's
    whole history of logs in memory while the index stores them
    (:func:`~tokenrisk.holders.index.first_logs`), so it leaves with the logs, not after
    the store's commit and queries (issue #27).  :func:`airdrop_summary` takes it when
    the stored index names the same transaction; a transaction's sender is fixed by its
    hash.  ``tokens``: the token and its logs."""
    logs = tokens[1]
    first_buy = launch_block(logged_pool_transfers(logs, pools))
    last = first_buy if first_buy is not None else max((t.block for t in logs), default=0)
    mints = [t for t in logs if t.sender == ZERO_ADDRESS and t.block <= last]
    if not mints:
        return
    tx_hash = min(mints, key=_order).tx_hash
    read = asyncio.ensure_future(node.rpc.call("eth_getTransactionByHash", [tx_hash]))
    read.add_done_callback(_retrieve)
    store.memo.put(_ahead_key(node, tokens[0]), (tx_hash, read), ttl=_READ_TTL)


def _ahead_key(node: Node, token: str) -> tuple[str, int, str]:
    return ("deployer read", node.id, token.lower())


async def _transaction(node: Node, store: Store, token: str, tx_hash: str) -> Any:
    """``eth_getTransactionByHash``: the read started ahead when it is this transaction
    and sound (counted ``deployer_read`` used, else dropped)."""
    key = _ahead_key(node, token)
    ahead = store.memo.value(key)
    if isinstance(ahead, tuple):
        store.memo.forget(key)
        planned, read = ahead
        used = planned == tx_hash and _sound(read)
        metrics.sent_ahead("deployer_read", used)
        if used:
            return await asyncio.shield(read)
    return await node.rpc.call("eth_getTransactionByHash", [tx_hash])


def _sound(read: asyncio.Future[Any]) -> bool:
    """Started on this event loop, and not failed or cancelled."""
    if read.get_loop() is not asyncio.get_running_loop() or read.cancelled():
        return False
    return not read.done() or read.exception() is None


def _retrieve(read: asyncio.Future[Any]) -> None:
    """A read nobody took: its failure is retrieved, not reported."""
    if not read.cancelled():
        read.exception()


def _order(log: TransferLog) -> tuple[int, int]:
    return log.block, log.log_index

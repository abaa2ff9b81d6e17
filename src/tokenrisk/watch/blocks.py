"""What the watcher reads from a node for a range of blocks: new pools, and what may
change a watched token's answer.

One ``eth_getLogs`` per range for the factories' creation events (V2 ``PairCreated``,
V3 ``PoolCreated``) of the chain's registry DEXes and the Uniswap V4 PoolManager's
``Initialize`` events (a V4 pool lives in the manager: its "pool" is the manager's address,
which IsHoneypot's ``pair`` takes to select the token's V4 pool, docs/uniswap-v4.md),
one for the watched tokens' own control events (ownership, roles, pauses) and their
pools' liquidity events (V2/V3 ``Mint`` and ``Burn``: a pending pool's first liquidity,
a liquidity change), and
``eth_getBlockByNumber`` (full transactions) for each block, in one batch, to see calls
made to a watched token by anyone but a router.  Reads follow the execution-apis spec:
block numbers as hex quantities, logs filtered by address and first topic.

A privileged caller is approximated by "a transaction sent straight to the token that is
not a plain ERC-20 transfer or approval": holders trade through routers, the owner calls
the token.  That over-counts (a holder may call ``transfer`` directly; those are
skipped) rather than missing a trap being armed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain import v4
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, topic_address
from tokenrisk.chain.node import Node
from tokenrisk.chain.signatures import (
    APPROVE,
    BALANCE_OF,
    INITIALIZE_TOPIC,
    PAIR_CREATED,
    POOL_CREATED,
    TOKEN0,
    TOKEN1,
    TRANSFER,
    TRANSFER_FROM,
)


def topic(signature: str) -> str:
    return "0x" + bytes(keccak(text=signature)).hex()


CONTROL_TOPICS = tuple(
    topic(s)
    for s in (
        "OwnershipTransferred(address,address)",
        "RoleGranted(bytes32,address,address)",
        "RoleRevoked(bytes32,address,address)",
        "Paused(address)",
        "Unpaused(address)",
    )
)
LIQUIDITY_WORDS = {
    # event -> the data words holding (amount0, amount1)
    topic("Mint(address,uint256,uint256)"): 0,  # V2 added (a pending pool's first)
    topic("Burn(address,uint256,uint256,address)"): 0,  # V2 removed
    topic("Mint(address,address,int24,int24,uint128,uint256,uint256)"): 2,  # V3 added
    topic("Burn(address,int24,int24,uint128,uint256,uint256)"): 1,  # V3 removed
}
LIQUIDITY_TOPICS = tuple(LIQUIDITY_WORDS)
PLAIN_SELECTORS = frozenset({TRANSFER, APPROVE, TRANSFER_FROM})


@dataclass(frozen=True)
class NewPool:
    """A pool the range created: its tokens, block and transaction."""

    pool: str
    token0: str
    token1: str
    block: int
    tx: str


@dataclass(frozen=True)
class Trigger:
    """Something in the range that may change ``token``'s answer."""

    token: str  # lowercase
    block: int
    tx: str
    why: str  # "call", "control", "liquidity"


async def block_hash(node: Node, number: int) -> str:
    """The hash of block ``number`` ("" when the node has no such block: a reorg made
    the chain shorter)."""
    block = await node.rpc.call("eth_getBlockByNumber", [hex(number), False])
    return str(block["hash"]) if block else ""


async def timestamp(node: Node, tag: str) -> int:
    """The timestamp of block ``tag`` (a hex number or "latest")."""
    block = await node.rpc.call("eth_getBlockByNumber", [tag, False])
    return int(block["timestamp"], 16) if block else 0


async def head(node: Node) -> tuple[int, int]:
    """The latest block's number and timestamp."""
    block = await node.rpc.call("eth_getBlockByNumber", ["latest", False])
    return int(block["number"], 16), int(block["timestamp"], 16)


async def new_pools(node: Node, start: int, end: int) -> list[NewPool]:
    """Pools the registry's factories (and the V4 PoolManager) created in ``start..end``
    (inclusive)."""
    manager = node.chain.uniswap_v4.pool_manager if node.chain.uniswap_v4 else None
    factories = [d.factory for d in node.chain.dexes if d.version != "V4"]
    topics = [PAIR_CREATED, POOL_CREATED] + ([INITIALIZE_TOPIC] if manager else [])
    addresses = factories + ([manager] if manager else [])
    if not addresses:
        return []
    logs = await _logs(node, start, end, addresses, topics)
    found = (_v4_pool_of(log, manager) if manager else None for log in logs)
    return [f or _pool_of(log) for f, log in zip(found, logs, strict=True)]


def tokens_of(pool: NewPool, bases: set[str]) -> list[str]:
    """The pool's tokens worth checking: neither a registry base token nor native ETH
    (the zero address a V4 pool names it by)."""
    skip = bases | {ZERO_ADDRESS}
    return [t for t in (pool.token0, pool.token1) if t.lower() not in skip]


def _v4_pool_of(log: dict[str, Any], manager: str) -> NewPool | None:
    """A V4 ``Initialize`` log as a new pool of the manager; None for any other log.  A
    native-ETH pool's currency0 is the zero address, which :func:`tokens_of` leaves out."""
    created = v4.read_initialize(log)
    if created is None or str(log.get("address", "")).lower() != manager.lower():
        return None
    key = created.key
    return NewPool(checksum(manager), key.currency0, key.currency1, created.block, created.tx_hash)


def _pool_of(log: dict[str, Any]) -> NewPool:
    topics, data = log["topics"], bytes.fromhex(str(log["data"])[2:])
    token0, token1 = _address(topics[1]), _address(topics[2])
    if topics[0] == PAIR_CREATED:
        pool = checksum("0x" + data[12:32].hex())
    else:
        pool = checksum("0x" + data[44:64].hex())
    return NewPool(pool, token0, token1, int(log["blockNumber"], 16), str(log["transactionHash"]))


def _address(word: str) -> str:
    return checksum(topic_address(str(word)))


async def triggers(
    node: Node,
    start: int,
    end: int,
    tokens: dict[str, str | None],
    large: float = 0.0,
    pending: frozenset[str] = frozenset(),
) -> list[Trigger]:
    """Re-check triggers for ``tokens`` (lowercase token -> its pool or None).  A
    liquidity event counts when it moves at least ``large`` percent of the pool's base
    reserve (0: any); any liquidity event of a ``pending`` token's pool counts."""
    if not tokens:
        return []
    found = await _control(node, start, end, list(tokens))
    for trigger, log in await _liquidity(node, start, end, tokens):
        if large <= 0 or trigger.token in pending or await _large(node, trigger, log, large):
            found.append(trigger)
    numbers = range(start, end + 1)  # one JSON-RPC batch (cut to the node's batch limit)
    fetched = await node.rpc.batch([("eth_getBlockByNumber", [hex(n), True]) for n in numbers])
    for number, block in zip(numbers, fetched, strict=True):
        found += _calls((block or {}).get("transactions") or [], set(tokens), number)
    return found


async def _control(node: Node, start: int, end: int, tokens: list[str]) -> list[Trigger]:
    logs = await _logs(node, start, end, tokens, list(CONTROL_TOPICS))
    return [
        Trigger(
            str(g["address"]).lower(),
            int(g["blockNumber"], 16),
            str(g["transactionHash"]),
            "control",
        )
        for g in logs
    ]


async def _liquidity(
    node: Node, start: int, end: int, tokens: dict[str, str | None]
) -> list[tuple[Trigger, dict[str, Any]]]:
    by_pool = {p.lower(): t for t, p in tokens.items() if p}
    if not by_pool:
        return []
    logs = await _logs(node, start, end, list(by_pool), list(LIQUIDITY_TOPICS))
    return [
        (
            Trigger(
                by_pool[str(g["address"]).lower()],
                int(g["blockNumber"], 16),
                str(g["transactionHash"]),
                "liquidity",
            ),
            g,
        )
        for g in logs
    ]


async def _large(node: Node, trigger: Trigger, log: dict[str, Any], percent: float) -> bool:
    """Whether a Mint/Burn moved at least ``percent`` of the pool's base reserve (the
    other token's balance of the pool before the event's block).  The pool's own
    ``token0()``/``token1()`` name the sides (V2 and V3 alike); an empty pool's first
    liquidity is always large."""
    pool = str(log["address"])
    token0 = _address(await _call(node, pool, TOKEN0, "latest"))
    base_side = 1 if token0.lower() == trigger.token else 0
    base = _address(await _call(node, pool, TOKEN1 if base_side else TOKEN0, "latest"))
    data = bytes.fromhex(str(log["data"])[2:])
    word = LIQUIDITY_WORDS[log["topics"][0]] + base_side
    moved = int.from_bytes(data[32 * word : 32 * word + 32], "big")
    holder = "0" * 24 + pool[2:].lower()
    before = hex(max(trigger.block - 1, 0))
    reserve = int(await _call(node, base, BALANCE_OF + holder, before), 16)
    return reserve == 0 or moved * 100 >= reserve * percent


async def _call(node: Node, to: str, data: str, block: str) -> str:
    result = await node.rpc.call("eth_call", [{"to": to, "data": data}, block])
    return str(result)


def _calls(txs: Iterable[dict[str, Any]], tokens: set[str], number: int) -> list[Trigger]:
    found = []
    for tx in txs:
        to = str(tx.get("to") or "").lower()
        selector = str(tx.get("input") or "0x")[:10]
        if to in tokens and selector not in PLAIN_SELECTORS:
            found.append(Trigger(to, number, str(tx["hash"]), "call"))
    return found


async def _logs(
    node: Node, start: int, end: int, addresses: Sequence[str], topics: Sequence[str]
) -> list[dict[str, Any]]:
    query = {
        "fromBlock": hex(start),
        "toBlock": hex(end),
        "address": list(addresses),
        "topics": [list(topics)],
    }
    logs: list[dict[str, Any]] = await node.rpc.call("eth_getLogs", [query])
    return [g for g in logs if not g.get("removed")]

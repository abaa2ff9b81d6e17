"""Uniswap V4 pools: discovery from the PoolManager's ``Initialize`` events, their state,
hook permissions, and the pool's own swap maths without its hook.

V4 keeps every pool inside one contract, the PoolManager; a pool is its *key*
(currency0, currency1, fee, tick spacing, hooks) and its id is the key's keccak.
Discovery reads ``Initialize`` logs with the token as currency0 or currency1 (two
topic-filtered ``eth_getLogs``, one batch), keeps pools against native ETH or a registry
base token, then reads each pool's ``slot0`` and active liquidity in one batch of
``extsload`` calls (the storage StateView reads; no StateView needed).

Reserves are the *virtual* reserves of the active liquidity at the current price
(``L / sqrtP`` and ``L * sqrtP``): exact for full-range positions, an approximation
for concentrated ones (docs/uniswap-v4.md).  :func:`expected_out` is
what the pool's curve gives for an exact-input swap with the pool's LP fee and no hook:
the "quote" a V4 trade is held against, so a hook's fee, a returned delta or a raised
dynamic fee shows as tax (the V4Quoter runs the hook and would hide it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from tokenrisk.chain import dex
from tokenrisk.chain.abi import (
    ZERO_ADDRESS,
    checksum,
    encode_args,
    encode_call,
    keccak256,
    to_bytes,
    topic_address,
    word_address,
)
from tokenrisk.chain.created import range_refused
from tokenrisk.chain.registry import Chain, UniswapV4
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import INITIALIZE_TOPIC
from tokenrisk.chain.tokens import call_params
from tokenrisk.errors import CallReverted, MethodUnsupported, RpcError, TokenRiskError
from tokenrisk.model import Pool, Unsearched

POOLS_SLOT = 6  # PoolManager's ``mapping(PoolId => Pool.State) _pools`` (StateLibrary)
_POOLS_SLOT_WORD = POOLS_SLOT.to_bytes(32, "big")
LIQUIDITY_OFFSET = 3
DYNAMIC_FEE = 0x800000
FEE_UNIT = 1_000_000
Q96 = 2**96

HOOK_PERMISSIONS = (
    "beforeInitialize",
    "afterInitialize",
    "beforeAddLiquidity",
    "afterAddLiquidity",
    "beforeRemoveLiquidity",
    "afterRemoveLiquidity",
    "beforeSwap",
    "afterSwap",
    "beforeDonate",
    "afterDonate",
    "beforeSwapReturnsDelta",
    "afterSwapReturnsDelta",
    "afterAddLiquidityReturnsDelta",
    "afterRemoveLiquidityReturnsDelta",
)
"""Hook permission names from bit 13 down to bit 0 of the hook's address (v4-core Hooks)."""


@dataclass(frozen=True)
class PoolKey:
    currency0: str
    currency1: str
    fee: int
    tick_spacing: int
    hooks: str

    @property
    def id(self) -> str:
        """The pool id: keccak of the ABI-encoded key."""
        return _pool_id(self.as_tuple())

    @property
    def dynamic(self) -> bool:
        return self.fee == DYNAMIC_FEE

    def as_tuple(self) -> tuple[str, str, int, int, str]:
        return (self.currency0, self.currency1, self.fee, self.tick_spacing, self.hooks)


_KEY_TYPES = ("address", "address", "uint24", "int24", "address")


@lru_cache(maxsize=1024)
def _pool_id(key: tuple[str, str, int, int, str]) -> str:
    """Remembered: every quote and state read of a V4 check asks it again; a first
    check asks ~20 new ones (:func:`guessed_keys`), so they are hashed directly."""
    return "0x" + keccak256(encode_key(key)).hex()


def encode_key(key: tuple[str, str, int, int, str]) -> bytes:
    """The ABI encoding of a pool key: five static words, which :func:`~.abi.encode_args`
    writes itself (eth_abi's generic encoder cost ~0.3 ms a key, issue #27); a value eth_abi
    would refuse goes to it."""
    return encode_args(_KEY_TYPES, list(key))


def hook_permissions(hooks: str) -> tuple[str, ...]:
    """The permissions a hook address's low 14 bits grant (empty for no hook)."""
    bits = int(hooks, 16) & 0x3FFF
    return tuple(name for i, name in enumerate(HOOK_PERMISSIONS) if bits >> (13 - i) & 1)


def state_slot(pool_id: str) -> int:
    """The first storage slot of the pool's state in the PoolManager (its ``slot0``)."""
    return int.from_bytes(keccak256(to_bytes(pool_id) + _POOLS_SLOT_WORD), "big")


def state_call(manager: str, pool_id: str) -> dict[str, str]:
    """``extsload(bytes32[])`` of the pool's slot0 and liquidity words (a call)."""
    first = state_slot(pool_id)
    slots = [first.to_bytes(32, "big"), (first + LIQUIDITY_OFFSET).to_bytes(32, "big")]
    return {"to": manager, "data": encode_call("extsload(bytes32[])", [slots])}


@dataclass(frozen=True)
class PoolState:
    sqrt_price_x96: int
    liquidity: int
    lp_fee: int

    @property
    def reserves(self) -> tuple[int, int]:
        """Virtual reserves (currency0, currency1) of the active liquidity."""
        if self.sqrt_price_x96 == 0:
            return 0, 0
        return (
            self.liquidity * Q96 // self.sqrt_price_x96,
            self.liquidity * self.sqrt_price_x96 // Q96,
        )


def decode_state(data: Any) -> PoolState | None:
    """The two words of :func:`state_call`'s answer; None when malformed."""
    if not isinstance(data, str):
        return None
    raw = to_bytes(data)
    if len(raw) < 128:
        return None
    slot0, liquidity = (int.from_bytes(raw[64 + 32 * i : 96 + 32 * i], "big") for i in range(2))
    return PoolState(slot0 % 2**160, liquidity % 2**128, (slot0 >> 208) % 2**24)


def expected_out(state: PoolState, amount_in: int, zero_for_one: bool, fee: int) -> int:
    """What the pool's own curve pays for ``amount_in`` (exact input), LP fee ``fee``
    (hundredths of a bip) taken, no hook: the constant product of the virtual reserves."""
    return curve_out(state.reserves, amount_in, zero_for_one, fee)


def curve_out(reserves: tuple[int, int], amount_in: int, zero_for_one: bool, fee: int) -> int:
    """:func:`expected_out` from the virtual reserves (currency0, currency1) themselves."""
    r0, r1 = reserves
    reserve_in, reserve_out = (r0, r1) if zero_for_one else (r1, r0)
    paid = amount_in * (FEE_UNIT - fee) // FEE_UNIT
    if reserve_in + paid == 0:
        return 0
    return reserve_out * paid // (reserve_in + paid)


def static_fee(key: PoolKey) -> int:
    """The LP fee a wallet is shown for the pool: its key's fee, 0 for a dynamic-fee pool
    (whatever the hook sets is then the hook's doing and shows as tax)."""
    return 0 if key.dynamic else key.fee


@dataclass(frozen=True)
class Found:
    """One pool from an ``Initialize`` event."""

    key: PoolKey
    block: int
    tx_hash: str
    stamp: int | None = None
    """The block's time, when the node gives it with the log (``blockTimestamp``,
    execution-apis' log object; None: it is read with the block, :func:`_read_state`)."""


def read_initialize(log: Any) -> Found | None:
    """Decode one ``Initialize`` log; None for anything malformed."""
    try:
        topics, data = log["topics"], to_bytes(log["data"])
        if str(topics[0]).lower() != INITIALIZE_TOPIC or len(data) < 96:
            return None
        c0, c1 = (checksum(topic_address(str(t))) for t in topics[2:4])
        fee = int.from_bytes(data[:32], "big")
        spacing = int.from_bytes(data[32:64], "big", signed=True)
        hooks = word_address(data[64:96])
        key = PoolKey(c0, c1, fee, spacing, hooks)
        when = dex.log_time(log.get("blockTimestamp"))
        return Found(key, int(log["blockNumber"], 16), str(log["transactionHash"]), when)
    except (KeyError, IndexError, TypeError, ValueError):
        return None


REREAD = 64
"""Blocks read again below the last head a token's events were read at (a shallow reorg
or a lagging backend cannot hide a pool)."""
FALLBACK_SPAN = 2_000
"""Window (blocks) of the bounded search when the node refused the full-range
``eth_getLogs`` although the capability probe saw no range cap (e.g. "query returned
more than 10000 results")."""


@dataclass(frozen=True)
class Search:
    """The ``Initialize`` events read, oldest first, and the oldest block read
    (``floor``; the PoolManager's deployment block or below when nothing was missed)."""

    found: list[Found]
    floor: int
    head: int | None


def _memo_key(v4: UniswapV4, token: str) -> str:
    return f"v4-initialize:{v4.pool_manager.lower()}:{token.lower()}"


def _queries(v4: UniswapV4, token: str) -> list[dict[str, Any]]:
    mine = dex.topic(token)
    topics = ([INITIALIZE_TOPIC, None, mine], [INITIALIZE_TOPIC, None, None, mine])
    return [{"address": v4.pool_manager, "topics": list(t)} for t in topics]


def _logs_calls(v4: UniswapV4, token: str, low: int, high: str) -> list[tuple[str, list[Any]]]:
    span = {"fromBlock": hex(low), "toBlock": high}
    return [("eth_getLogs", [query | span]) for query in _queries(v4, token)]


def _refused(reply: Any) -> bool:
    """True for a log reply the node refused as too wide (or has no logs for); raises
    any other error (a rate limit is no missing history)."""
    if isinstance(reply, list):
        return False
    if isinstance(reply, MethodUnsupported) or (
        isinstance(reply, RpcError) and range_refused(reply)
    ):
        return True
    if isinstance(reply, RpcError):
        raise reply
    return True  # not a list: nothing read


def windows(first: int, head: int, span: int, budget: int) -> list[tuple[int, int]]:
    """(low, high) block windows of at most ``span`` blocks from ``head`` down to
    ``first``, newest first, at most ``budget`` of them (new tokens have new pools)."""
    out: list[tuple[int, int]] = []
    high = head
    while high >= first and len(out) < budget:
        low = max(first, high - span + 1)
        out.append((low, high))
        high = low - 1
    return out


async def _windowed(
    rpc: RpcClient, v4: UniswapV4, token: str, first: int, head: int, span: int
) -> tuple[int, list[Any]]:
    """(floor, logs) of the newest windows read without a gap (one batch)."""
    spans = windows(first, head, max(1, span), v4.log_windows)
    calls = [c for low, high in spans for c in _logs_calls(v4, token, low, hex(high))]
    replies = await rpc.batch(calls, tolerate=RpcError)
    floor, logs = head + 1, list[Any]()
    for i, (low, _) in enumerate(spans):
        pair = replies[2 * i : 2 * i + 2]
        if any([_refused(r) for r in pair]):
            break
        floor, logs = low, [*logs, *pair]
    return floor, logs


async def _read(
    rpc: RpcClient, v4: UniswapV4, token: str, block: str, first: int, span: int | None
) -> tuple[int, int, list[Any]]:
    """(head, floor, logs): one full-range batch when the node has no range cap, else
    (or when it refuses that) bounded windows from the head down."""
    pinned = None if block == "latest" else int(block, 16)
    if span is None:
        calls: list[tuple[str, list[Any]]] = [("eth_blockNumber", [])] if pinned is None else []
        calls += _logs_calls(v4, token, first, block)
        replies = await rpc.batch(calls, tolerate=RpcError)
        if isinstance(replies[0], RpcError):
            raise replies[0]
        head = pinned if pinned is not None else _number(replies[0])
        if not any([_refused(r) for r in replies[-2:]]):
            return head, first, replies[-2:]
        span = FALLBACK_SPAN
    else:
        head = pinned if pinned is not None else _number(await rpc.call("eth_blockNumber"))
    if span <= 0:
        return head, head + 1, []  # the node answers no eth_getLogs at all
    floor, logs = await _windowed(rpc, v4, token, first, head, span)
    return head, floor, logs


async def initialized(
    rpc: RpcClient,
    v4: UniswapV4,
    token: str,
    block: str,
    memo: dex.NativePools | None = None,
    span: int | None = None,
) -> Search:
    """Every V4 pool with ``token`` as currency0 or currency1 that the node let the
    search read, oldest first, and how far back it read.

    ``span`` is the node's ``eth_getLogs`` range cap (capability probe; None: none seen,
    0: no logs at all).  Without a cap one full-range batch reads the history back to
    the PoolManager's deployment block; with one (or when the node refuses the wide
    query) bounded windows are read from the head down, at most ``log_windows`` of them,
    and ``floor`` says where they stopped.  Later searches at "latest" (with the Node's
    ``memo``) read only the blocks since the head it was read at, less :data:`REREAD`;
    a chain found below that head is read again in full.
    """
    key = _memo_key(v4, token)
    kept = memo.value(key) if memo is not None and block == "latest" else None
    start = max(v4.deployed_block, int(kept[0]) - REREAD + 1) if kept else v4.deployed_block
    try:
        head, floor, replies = await _read(rpc, v4, token, block, start, span)
    except RpcError:
        if kept is None:
            raise
        head, floor, replies = -1, 0, []  # e.g. the chain went back below the kept head
    if kept is not None and (head < int(kept[0]) or floor > start):
        return await initialized(rpc, v4, token, block, None, span)  # read it all again
    found = {f.key.id: f for f in (kept[2:] if kept else [])}
    for logs in replies:
        for log in logs if isinstance(logs, list) else []:
            item = read_initialize(log)
            if item is not None:
                found.setdefault(item.key.id, item)
    pools = sorted(found.values(), key=lambda f: (f.block, f.key.id))
    floor = int(kept[1]) if kept else floor
    if memo is not None and block == "latest" and floor <= head:
        memo.put(key, [head, floor, *pools])
    return Search(pools, floor, head)


def kept_found(v4: UniswapV4, token: str, block: str, memo: dex.NativePools | None) -> list[Found]:
    """The pools of the Node's remembered search of ``token`` (``memo``), oldest first;
    empty when nothing is remembered or the search is pinned to a block (the memo is
    for "latest" only, as in :func:`initialized`)."""
    kept = memo.value(_memo_key(v4, token)) if memo is not None and block == "latest" else None
    return [f for f in (kept or [])[2:] if isinstance(f, Found)]


def _number(reply: Any) -> int:
    return int(reply, 16) if isinstance(reply, str) else -1


def remembered(chain: Chain, memo: dex.NativePools, token: str) -> Unsearched | None:
    """What the last remembered search of ``token`` (the Node's memo) could not read: so
    an answer served from a cache says so too (None: nothing missed, or nothing kept)."""
    v4 = chain.uniswap_v4
    kept = memo.value(_memo_key(v4, token)) if v4 is not None else None
    if not kept:
        return None
    return unsearched(chain, Search([], int(kept[1]), int(kept[0])))


def unsearched(chain: Chain, search: Search | None) -> Unsearched | None:
    """What ``search`` missed of the V4 history (None: nothing; ``search`` None: the
    whole search failed)."""
    v4 = chain.uniswap_v4
    if v4 is None:
        return None
    if search is None:
        return Unsearched(chain.id, v4.deployed_block, None)
    if search.floor <= v4.deployed_block:
        return None
    return Unsearched(chain.id, v4.deployed_block, search.floor - 1)


def _base_of(chain: Chain, key: PoolKey, token: str) -> tuple[str, bool] | None:
    """(base token address, native) of a pool against ETH or a base token, else None."""
    other = key.currency1 if key.currency0.lower() == token.lower() else key.currency0
    if other == ZERO_ADDRESS:
        return chain.wrapped_native.address, True
    base = chain.base_token(other)
    return (base.address, False) if base is not None else None


@dataclass(frozen=True)
class _State:
    """What the pools of one list need beside their events: each pool's state reply,
    their blocks' (time, hash) and the native token's USD price."""

    replies: list[Any]
    stamps: dict[int, tuple[int, str]]
    native_usd: float | None


async def _read_state(
    rpc: RpcClient,
    chain: Chain,
    v4: UniswapV4,
    found: Sequence[Found],
    block: str,
    native: dex.NativePools | None,
) -> _State:
    """The :class:`_State` of ``found`` (one round trip: everything at once); a block's
    time is read only for an event that did not carry it (``Found.stamp``)."""
    calls = [state_call(v4.pool_manager, f.key.id) for f in found]
    replies, stamps, native_usd = await asyncio.gather(
        rpc.batch([("eth_call", call_params(c["to"], c["data"], block)) for c in calls]),
        dex.block_stamps(rpc, [f.block for f in found if f.stamp is None]),
        dex.native_usd_price(rpc, chain, block, native),
    )
    return _State(replies, _stamped(found) | stamps, native_usd)


def _stamped(found: Sequence[Found]) -> dict[int, tuple[int, str]]:
    """The block times the events carried, as :func:`~.dex.block_stamps` gives them
    (:func:`_pools` reads the time only)."""
    return {f.block: (f.stamp, "") for f in found if f.stamp is not None}


def _based(chain: Chain, found: Sequence[Found], token: str) -> list[Found]:
    """The pools of ``found`` against ETH or a registry base token."""
    return [f for f in found if _base_of(chain, f.key, token)]


async def _ahead(
    rpc: RpcClient,
    chain: Chain,
    v4: UniswapV4,
    found: list[Found],
    block: str,
    native: dex.NativePools | None,
) -> _State | None:
    """The remembered pools' state, read beside the search for newer events (None:
    nothing remembered, or the read failed; then it is read after the search as for
    pools seen the first time, so a speculative read's failure changes nothing)."""
    if not found:
        return None
    try:
        return await _read_state(rpc, chain, v4, found, block, native)
    except TokenRiskError:  # a node error, an outage: read again after the search
        return None


async def find_v4_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    native: dex.NativePools | None = None,
    span: int | None = None,
) -> tuple[list[Pool], Search | None]:
    """The token's V4 pools against ETH or a base token, as :class:`Pool` rows whose
    ``address`` is the PoolManager (where the pool's tokens are) and ``pool_id``,
    ``hooks`` and ``tick_spacing`` say which pool; deepest first; and the search
    (how far back it read, see :func:`initialized`; ``span``: the node's log range cap).

    The pools' state, their blocks' times and the native token's USD price (``native``:
    the Node's memo of its pools) are read at once.  For pools whose ``Initialize``
    events the Node remembers (``memo``), that read goes out beside the search for
    newer events and is used when the search finds exactly those pools again: one
    round trip for a known token.  Pools seen the first time (first sight, or a pool the
    new events add) are read after the search: two round trips, one without V4 pools.
    On a token's first search the pools the Node's recent ``Initialize`` events name
    (:func:`recent_found`) are read the same way, and used on the same condition."""
    v4 = chain.uniswap_v4
    if v4 is None:
        return [], None
    first = _first(v4, token, block, memo)
    kept = kept_found(v4, token, block, memo) or (recent_found(v4, token, memo) if first else [])
    known = _based(chain, kept, token)
    search, ahead, guessed = await asyncio.gather(
        initialized(rpc, v4, token, block, memo, span),
        _ahead(rpc, chain, v4, known, block, native),
        _guessed(rpc, chain, v4, token, block, native) if first else _nothing(),
    )
    if first and memo is not None:  # for the tokens searched after this one
        refresh_recent(rpc, v4, memo, search.head, span)
    found = _based(chain, search.found, token)
    if not found:
        return [], search
    if ahead is None or found != known:
        ahead = _from_guess(found, guessed) or await _read_state(
            rpc, chain, v4, found, block, native
        )
    return _pools(chain, v4, token, found, ahead), search


# HOOKLESS POOLS' STATE, READ WITH A FIRST SEARCH

GUESSED_TIERS = ((100, 1), (500, 10), (3_000, 60), (10_000, 200))
"""(fee, tick spacing) of the hookless pools whose state a first search reads beside
the ``Initialize`` logs: the tiers Uniswap's interfaces create (V4 allows any pair)."""

Guess = tuple[dict[str, Any], float | None]
"""Each guessed pool's state reply by pool id, and the native token's USD price."""


def guessed_keys(chain: Chain, token: str) -> list[PoolKey]:
    """The hookless keys of ``token`` against ETH and each registry base token in the
    :data:`GUESSED_TIERS` (currencies in the PoolManager's order: lower address first)."""
    keys = []
    for base in (ZERO_ADDRESS, *(b.address for b in chain.base_tokens)):
        c0, c1 = sorted((checksum(token), checksum(base)), key=lambda a: int(a, 16))
        keys += [PoolKey(c0, c1, fee, spacing, ZERO_ADDRESS) for fee, spacing in GUESSED_TIERS]
    return keys


def states_call(manager: str, ids: Sequence[str]) -> dict[str, str]:
    """One ``extsload(bytes32[])`` of every pool's slot0 and liquidity words, in order."""
    slots = []
    for pool_id in ids:
        first = state_slot(pool_id)
        slots += [first.to_bytes(32, "big"), (first + LIQUIDITY_OFFSET).to_bytes(32, "big")]
    return {"to": manager, "data": encode_call("extsload(bytes32[])", [slots])}


def split_states(data: Any, count: int) -> list[str] | None:
    """:func:`states_call`'s answer as ``count`` answers of :func:`state_call` (each
    pool's two words); None when malformed."""
    if not isinstance(data, str):
        return None
    raw = to_bytes(data)
    if len(raw) != 64 + 64 * count or int.from_bytes(raw[32:64], "big") != 2 * count:
        return None
    head = (32).to_bytes(32, "big") + (2).to_bytes(32, "big")
    return ["0x" + (head + raw[64 + 64 * i : 128 + 64 * i]).hex() for i in range(count)]


async def _guessed(
    rpc: RpcClient,
    chain: Chain,
    v4: UniswapV4,
    token: str,
    block: str,
    native: dex.NativePools | None,
) -> Guess | None:
    """The state of ``token``'s likely hookless pools (:func:`guessed_keys`, one call)
    and the native token's price, read beside a first search's events: a V4 pool found
    then was a round trip late, its state asked only once the events named it (issue
    #27).  None when the read failed (the found pools' state is then read after).
    Only on a first search (:func:`_first`)."""
    keys = guessed_keys(chain, token)
    call = states_call(v4.pool_manager, [k.id for k in keys])
    try:
        reply, usd = await asyncio.gather(
            rpc.call("eth_call", call_params(call["to"], call["data"], block)),
            dex.native_usd_price(rpc, chain, block, native),
        )
    except TokenRiskError:
        return None
    replies = split_states(reply, len(keys))
    if replies is None:
        return None
    return dict(zip([k.id for k in keys], replies, strict=True)), usd


def _initialized(reply: Any) -> bool:
    state = decode_state(reply)
    return state is not None and state.sqrt_price_x96 != 0


async def _nothing() -> None:
    return None


def _first(v4: UniswapV4, token: str, block: str, memo: dex.NativePools | None) -> bool:
    """Whether this is the Node's first search of ``token`` at "latest" (nothing kept,
    not even a search that found no pool): only then are the hookless pools guessed, so
    a known token's check sends nothing more."""
    return memo is not None and block == "latest" and memo.value(_memo_key(v4, token)) is None


def _from_guess(found: Sequence[Found], guess: Guess | None) -> _State | None:
    """The :class:`_State` of ``found`` from the guessed read, when it read every found
    pool initialized and each event carried its block's time (else None: read after the
    events; a backend behind the one that served the events may not have the pool yet)."""
    if guess is None:
        return None
    replies, usd = guess
    if not all(f.key.id in replies and f.stamp is not None for f in found):
        return None
    if not all(_initialized(replies[f.key.id]) for f in found):
        return None
    return _State([replies[f.key.id] for f in found], _stamped(found), usd)


# EVERY TOKEN'S RECENT POOLS, FOR A TOKEN'S FIRST SEARCH

RECENT_BLOCKS = 50_000
"""Blocks below the head whose ``Initialize`` events, every token's, the Node keeps (about
a week at 12 s blocks): tokens checked for the first time are mostly new, and so are
their pools."""
RECENT_MAX = 20_000
"""Most pools kept (the newest); older ones are dropped and their tokens searched as
without the index."""


def _recent_key(v4: UniswapV4) -> str:
    return f"v4-recent:{v4.pool_manager.lower()}"


def _busy_key(v4: UniswapV4) -> str:
    """The memo entry holding the refresh in flight (one at a time; a strong reference)."""
    return f"v4-recent-refresh:{v4.pool_manager.lower()}"


def _in_flight(v4: UniswapV4, memo: dex.NativePools) -> asyncio.Future[None] | None:
    busy = memo.value(_busy_key(v4))
    task = busy[0] if busy else None
    return task if isinstance(task, asyncio.Future) and not task.done() else None


def recent_found(v4: UniswapV4, token: str, memo: dex.NativePools | None) -> list[Found]:
    """The pools of ``token`` among the Node's recent ``Initialize`` events of every token
    (:func:`refresh_recent`), oldest first as :func:`initialized` gives them; empty when
    none is kept.  A prediction: a first search reads their state beside its own events
    and uses it only when those events name exactly these pools (:func:`find_v4_pools`),
    so a pool with a hook (its key unknown until the events) is ready in one round trip
    when the Node read its event before (issue #27)."""
    kept = memo.value(_recent_key(v4)) if memo is not None else None
    if not kept or not isinstance(kept[1], dict):
        return []
    return list(kept[1].get(token.lower(), ()))


def refresh_recent(
    rpc: RpcClient, v4: UniswapV4, memo: dex.NativePools, head: int | None, span: int | None
) -> None:
    """Start reading the ``Initialize`` events since the kept index's head (less
    :data:`REREAD`), or of the last :data:`RECENT_BLOCKS` blocks when none is kept, up to
    ``head``; in the background: no check waits for it.  Nothing when the index is at
    ``head`` already, a refresh is in flight, or the node answers no logs."""
    kept = memo.value(_recent_key(v4))
    if head is None or head < 0 or span == 0 or _in_flight(v4, memo) is not None:
        return
    if kept and int(kept[0]) >= head:
        return
    task = asyncio.ensure_future(_refresh(rpc, v4, memo, head, span))
    memo.put(_busy_key(v4), [task])
    task.add_done_callback(lambda _: memo.put(_busy_key(v4), [None]))


async def recent_settled(v4: UniswapV4, memo: dex.NativePools) -> None:
    """Wait for the refresh of ``memo``'s index in flight, if any (tests, a warm-up)."""
    task = _in_flight(v4, memo)
    if task is not None:
        await asyncio.wait([task])


async def _refresh(
    rpc: RpcClient, v4: UniswapV4, memo: dex.NativePools, head: int, span: int | None
) -> None:
    """:func:`refresh_recent`'s read.  A node that refuses the range as too wide (too
    many events) is read in :data:`FALLBACK_SPAN` windows; refused again, the index goes
    on from ``head`` alone (later refreshes read only the new blocks, never the refused
    range again).  A failed read keeps the index as it was; either way a first search
    then reads its pools' state after its events, as without the index."""
    key = _recent_key(v4)
    kept = memo.value(key)
    oldest = max(v4.deployed_block, head - RECENT_BLOCKS + 1)
    low = max(oldest, int(kept[0]) - REREAD + 1) if kept else oldest
    old = [f for pools in kept[1].values() for f in pools] if kept and kept[1] else []
    try:
        spans = [(low, head)] if span is None else windows(low, head, span, v4.log_windows)
        replies = await _recent_logs(rpc, v4, spans, low)
        if replies is None and span is None:
            spans = windows(low, head, FALLBACK_SPAN, v4.log_windows)
            replies = await _recent_logs(rpc, v4, spans, low)
    except TokenRiskError:
        return
    if kept and kept[1] is not None and not _count(replies or []):
        memo.put(key, [head, kept[1]])  # nothing new (most heads): the index as it was
        return
    merge = (replies or [], old, oldest)
    # thousands of events (a first read, a busy chain's index): merged off the event loop
    large = _count(merge[0]) + len(old) > 256
    index = await asyncio.to_thread(_merged, *merge) if large else _merged(*merge)
    memo.put(key, [head, index])


async def _recent_logs(
    rpc: RpcClient, v4: UniswapV4, spans: list[tuple[int, int]], low: int
) -> list[Any] | None:
    """Every token's ``Initialize`` logs in ``spans`` (one batch); None when a window was
    refused or they do not reach down to ``low`` (the window budget)."""
    query = {"address": v4.pool_manager, "topics": [INITIALIZE_TOPIC]}
    calls = [("eth_getLogs", [query | {"fromBlock": hex(a), "toBlock": hex(b)}]) for a, b in spans]
    replies = await rpc.batch(calls, tolerate=RpcError)
    if not spans or spans[-1][0] != low or any([_refused(r) for r in replies]):
        return None
    return replies


def _count(replies: Sequence[Any]) -> int:
    return sum(len(logs) for logs in replies)


def _merged(
    replies: Sequence[Any], kept: Sequence[Found], oldest: int
) -> dict[str, tuple[Found, ...]]:
    """:func:`recent_index` of ``kept`` and the events of ``replies`` (lists of logs)."""
    found = [f for logs in replies for f in map(read_initialize, logs) if f is not None]
    return recent_index(kept, found, oldest)


def recent_index(
    kept: Sequence[Found], read: Sequence[Found], oldest: int
) -> dict[str, tuple[Found, ...]]:
    """The pools of ``kept`` and ``read`` from block ``oldest`` on, one per pool id, the
    newest :data:`RECENT_MAX`, by each currency (lowercase; native ETH not: every
    native pool would be listed under it), each oldest first."""
    pools = {f.key.id: f for f in [*kept, *read] if f.block >= oldest}
    newest = sorted(pools.values(), key=lambda f: (-f.block, f.key.id))[:RECENT_MAX]
    index: dict[str, list[Found]] = {}
    for item in sorted(newest, key=lambda f: (f.block, f.key.id)):
        for currency in {item.key.currency0.lower(), item.key.currency1.lower()}:
            if currency != ZERO_ADDRESS.lower():
                index.setdefault(currency, []).append(item)
    return {currency: tuple(pools) for currency, pools in index.items()}


def _pools(
    chain: Chain, v4: UniswapV4, token: str, found: list[Found], state: _State
) -> list[Pool]:
    """Rows of the pools of ``found`` whose state reads as initialized, deepest first."""
    pools = []
    for item, reply in zip(found, state.replies, strict=True):
        read = None if isinstance(reply, CallReverted) else decode_state(reply)
        if read is not None and read.sqrt_price_x96:
            pool = _pool(chain, v4, token, item, read, state.native_usd)
            stamp = state.stamps.get(item.block)
            created = stamp[0] if stamp is not None else None
            pools.append(replace(pool, created_at_timestamp=created, creation_tx_hash=item.tx_hash))
    pools.sort(key=lambda p: (-p.depth, p.pool_id or ""))
    return pools


def _pool(
    chain: Chain, v4: UniswapV4, token: str, item: Found, state: PoolState, usd: float | None
) -> Pool:
    base, native = _base_of(chain, item.key, token) or (ZERO_ADDRESS, False)
    r0, r1 = state.reserves
    token_first = item.key.currency0.lower() == token.lower()
    base_reserve = r1 if token_first else r0
    info = chain.base_token(base)
    return Pool(
        address=v4.pool_manager,
        dex="Uniswap",
        version="V4",
        token0=checksum(token) if token_first else base,
        token1=base if token_first else checksum(token),
        base_token=base,
        router=v4.universal_router,
        reserves0=r0,
        reserves1=r1,
        liquidity_usd=None if info is None else dex.liquidity_usd(base_reserve, info, usd),
        fee=item.key.fee,
        chain_id=chain.id,
        pool_id=item.key.id,
        hooks=item.key.hooks,
        tick_spacing=item.key.tick_spacing,
        native=native,
    )


def key_of(pool: Pool) -> PoolKey:
    """The V4 pool key of a :class:`Pool` row (native ETH is currency address 0)."""
    zero = ZERO_ADDRESS
    c0 = zero if pool.native and pool.token0 == pool.base_token else pool.token0
    c1 = zero if pool.native and pool.token1 == pool.base_token else pool.token1
    c0, c1 = sorted((c0, c1), key=lambda a: int(a, 16))
    return PoolKey(c0, c1, pool.fee or 0, pool.tick_spacing or 0, pool.hooks or zero)


def candidate_sort(pools: Sequence[Pool]) -> list[Pool]:
    """Pools of every version, deepest (USD) first (V2/V3 and V4 ranked together)."""
    return sorted(pools, key=lambda p: (-p.depth, p.pool_id or p.address))


async def v4_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
    span: int | None = None,
) -> tuple[list[Pool], Unsearched | None]:
    """The token's V4 pools (:func:`find_v4_pools`) and the blocks whose V4 pools the
    node kept the search from reading (None: all read).

    A node that caps ``eth_getLogs`` ranges is searched in bounded windows; what they do
    not reach, or a refused search, is returned so the answer says so
    (docs/uniswap-v4.md): the V2/V3 answer then stands, never as if it were all.
    """
    if chain.uniswap_v4 is None:
        return [], None
    try:
        found, search = await find_v4_pools(rpc, chain, token, block, events, memo, span)
    except RpcError:
        return [], unsearched(chain, None)
    return found, unsearched(chain, search)

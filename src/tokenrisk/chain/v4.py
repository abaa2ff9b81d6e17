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

from eth_utils.crypto import keccak

from tokenrisk.chain import dex
from tokenrisk.chain.abi import (
    ZERO_ADDRESS,
    checksum,
    encode_args,
    encode_call,
    to_bytes,
    topic_address,
    word_address,
)
from tokenrisk.chain.registry import Chain, UniswapV4
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import INITIALIZE_TOPIC
from tokenrisk.chain.tokens import call_params
from tokenrisk.errors import CallReverted, MethodUnsupported, RpcError
from tokenrisk.model import Pool

POOLS_SLOT = 6  # PoolManager's ``mapping(PoolId => Pool.State) _pools`` (StateLibrary)
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


@lru_cache(maxsize=1024)
def _pool_id(key: tuple[str, str, int, int, str]) -> str:
    """Remembered: every quote and state read of a V4 check asks it again."""
    types = ["address", "address", "uint24", "int24", "address"]
    return "0x" + bytes(keccak(encode_args(types, list(key)))).hex()


def hook_permissions(hooks: str) -> tuple[str, ...]:
    """The permissions a hook address's low 14 bits grant (empty for no hook)."""
    bits = int(hooks, 16) & 0x3FFF
    return tuple(name for i, name in enumerate(HOOK_PERMISSIONS) if bits >> (13 - i) & 1)


def state_slot(pool_id: str) -> int:
    """The first storage slot of the pool's state in the PoolManager (its ``slot0``)."""
    return int.from_bytes(keccak(to_bytes(pool_id) + POOLS_SLOT.to_bytes(32, "big")), "big")


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
    r0, r1 = state.reserves
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
        return Found(key, int(log["blockNumber"], 16), str(log["transactionHash"]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


REREAD = 64
"""Blocks read again below the last head a token's events were read at (a shallow reorg
or a lagging backend cannot hide a pool)."""


def _memo_key(v4: UniswapV4, token: str) -> str:
    return f"v4-initialize:{v4.pool_manager.lower()}:{token.lower()}"


async def initialized(
    rpc: RpcClient, v4: UniswapV4, token: str, block: str, memo: dex.NativePools | None = None
) -> list[Found]:
    """Every V4 pool with ``token`` as currency0 or currency1, oldest first ([] when the
    node has no ``eth_getLogs``: V4 pools are then unknown, never guessed).

    The first search reads the whole history; later ones at "latest" (with the Node's
    ``memo``) only the blocks since the head it was read at, less :data:`REREAD`."""
    key = _memo_key(v4, token)
    kept = memo.value(key) if memo is not None and block == "latest" else None
    known = (int(kept[0]), list(kept[1:])) if kept else None
    start = max(0, known[0] - REREAD + 1) if known else 0
    calls: list[tuple[str, list[Any]]] = [("eth_blockNumber", [])] if block == "latest" else []
    mine = dex.topic(token)
    for topics in ([INITIALIZE_TOPIC, None, mine], [INITIALIZE_TOPIC, None, None, mine]):
        query = {"address": v4.pool_manager, "topics": topics}
        calls.append(("eth_getLogs", [query | {"fromBlock": hex(start), "toBlock": block}]))
    try:
        replies = await rpc.batch(calls, tolerate=MethodUnsupported)
    except RpcError:
        if known is None:
            raise
        replies = []  # e.g. the chain went back below the kept head (a devnet revert)
    if known is not None and (not replies or _number(replies[0]) < known[0]):
        return await initialized(rpc, v4, token, block)  # the chain moved back: read it all
    found = {f.key.id: f for f in (known[1] if known else [])}
    for logs in replies[-2:]:
        for log in logs if isinstance(logs, list) else []:
            item = read_initialize(log)
            if item is not None:
                found.setdefault(item.key.id, item)
    pools = sorted(found.values(), key=lambda f: (f.block, f.key.id))
    head = replies[0] if block == "latest" else None
    complete = all(isinstance(r, list) for r in replies[-2:])
    if memo is not None and isinstance(head, str) and complete:
        memo.put(key, [int(head, 16), *pools])
    return pools


def _number(reply: Any) -> int:
    return int(reply, 16) if isinstance(reply, str) else -1


def _base_of(chain: Chain, key: PoolKey, token: str) -> tuple[str, bool] | None:
    """(base token address, native) of a pool against ETH or a base token, else None."""
    other = key.currency1 if key.currency0.lower() == token.lower() else key.currency0
    if other == ZERO_ADDRESS:
        return chain.wrapped_native.address, True
    base = chain.base_token(other)
    return (base.address, False) if base is not None else None


async def find_v4_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    native: dex.NativePools | None = None,
) -> list[Pool]:
    """The token's V4 pools against ETH or a base token, as :class:`Pool` rows whose
    ``address`` is the PoolManager (where the pool's tokens are) and ``pool_id``,
    ``hooks`` and ``tick_spacing`` say which pool; deepest first.

    Two round trips when the token has V4 pools, one when it has none: the pools' state,
    their blocks' times and the native token's USD price (``native``: the Node's memo of
    its pools) are read at once, after the ``Initialize`` events (``memo``)."""
    v4 = chain.uniswap_v4
    if v4 is None:
        return []
    every = await initialized(rpc, v4, token, block, memo)
    found = [f for f in every if _base_of(chain, f.key, token)]
    if not found:
        return []
    calls = [state_call(v4.pool_manager, f.key.id) for f in found]
    replies, stamps, native_usd = await asyncio.gather(
        rpc.batch([("eth_call", call_params(c["to"], c["data"], block)) for c in calls]),
        dex.block_stamps(rpc, [f.block for f in found]),
        dex.native_usd_price(rpc, chain, block, native),
    )
    pools = []
    for item, reply in zip(found, replies, strict=True):
        state = None if isinstance(reply, CallReverted) else decode_state(reply)
        if state is not None and state.sqrt_price_x96:
            pool = _pool(chain, v4, token, item, state, native_usd)
            stamp = stamps.get(item.block)
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


async def with_v4(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    pools: list[Pool],
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
) -> list[Pool]:
    """``pools`` (V2/V3) and the token's V4 pools, ranked together by USD liquidity.

    A node that refuses the ``Initialize`` log search (a range cap, no logs) leaves the
    V4 pools unknown: the V2/V3 answer stands (docs/uniswap-v4.md).
    """
    return candidate_sort([*pools, *await v4_pools(rpc, chain, token, block, memo, events)])


async def v4_pools(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    block: str = "latest",
    memo: dex.NativePools | None = None,
    events: dex.NativePools | None = None,
) -> list[Pool]:
    """:func:`find_v4_pools`, or none when the node refuses the ``Initialize`` log search
    (a range cap, no logs): the V2/V3 answer then stands (docs/uniswap-v4.md)."""
    if chain.uniswap_v4 is None:
        return []
    try:
        return await find_v4_pools(rpc, chain, token, block, events, memo)
    except RpcError:
        return []

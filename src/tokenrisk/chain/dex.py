"""Pair discovery on V2- and V3-style DEXes, reserves and USD liquidity.

Discovery asks every DEX of the chain registry for the token against every base token
(wrapped native and stablecoins): ``getPair`` on V2 factories and ``getPool`` for each
fee tier on V3 factories, all in one JSON-RPC batch.  USD liquidity is twice the
base-side reserve valued in USD: stablecoins at 1 USD, the wrapped native token at the
price of its deepest stablecoin V2 pair (documented in docs/api.md).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, encode_call, to_bytes, word_address
from tokenrisk.chain.registry import BaseToken, Chain, Dex
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import call_params, decode_uint
from tokenrisk.errors import CallReverted, MethodUnsupported
from tokenrisk.model import Pool

PAIR_CREATED = "0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9"
POOL_CREATED = "0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118"


@dataclass(frozen=True)
class _Candidate:
    dex: Dex
    base: BaseToken
    fee: int | None
    address: str


def _lookup_calls(chain: Chain, token: str) -> list[tuple[Dex, BaseToken, int | None, str]]:
    out: list[tuple[Dex, BaseToken, int | None, str]] = []
    for dex in chain.dexes:
        for base in chain.base_tokens:
            if base.address.lower() == token.lower():
                continue
            if dex.version == "V2":
                out.append(
                    (
                        dex,
                        base,
                        None,
                        encode_call("getPair(address,address)", [token, base.address]),
                    )
                )
            else:
                for fee in dex.fee_tiers:
                    data = encode_call(
                        "getPool(address,address,uint24)", [token, base.address, fee]
                    )
                    out.append((dex, base, fee, data))
    return out


async def _candidates(rpc: RpcClient, chain: Chain, token: str, block: str) -> list[_Candidate]:
    lookups = _lookup_calls(chain, token)
    results = await rpc.batch(
        [("eth_call", call_params(d.factory, data, block)) for d, _, _, data in lookups]
    )
    found: list[_Candidate] = []
    for (dex, base, fee, _), result in zip(lookups, results, strict=True):
        if (
            isinstance(result, CallReverted)
            or not isinstance(result, str)
            or len(to_bytes(result)) < 32
        ):
            continue
        address = word_address(to_bytes(result)[:32])
        if address != ZERO_ADDRESS:
            found.append(_Candidate(dex, base, fee, address))
    return found


async def _reserves(
    rpc: RpcClient, token: str, cands: list[_Candidate], block: str
) -> list[tuple[int, int] | None]:
    """(token reserve, base reserve) per candidate: V2 from balances too, robust to skims."""
    calls: list[tuple[str, list[Any]]] = []
    for cand in cands:
        calls.append(
            (
                "eth_call",
                call_params(token, encode_call("balanceOf(address)", [cand.address]), block),
            )
        )
        calls.append(
            (
                "eth_call",
                call_params(
                    cand.base.address, encode_call("balanceOf(address)", [cand.address]), block
                ),
            )
        )
    results = await rpc.batch(calls)
    out: list[tuple[int, int] | None] = []
    for i in range(len(cands)):
        tok, base = (
            decode_uint(r) if not isinstance(r, CallReverted) else None
            for r in results[2 * i : 2 * i + 2]
        )
        out.append((tok, base) if tok is not None and base is not None else None)
    return out


def _usd(amount: int, base: BaseToken, native_usd: float | None) -> float | None:
    units: float = amount / 10**base.decimals
    if base.stable:
        return units
    return units * native_usd if native_usd is not None else None


NATIVE_POOLS_TTL = 300.0
"""Seconds the wrapped native token's stablecoin pools are remembered (their reserves
are always read fresh; only a pool created meanwhile is missed until then)."""
_native_pools: dict[tuple[int, str], tuple[float, list[_Candidate]]] = {}


async def _native_candidates(rpc: RpcClient, chain: Chain, block: str) -> list[_Candidate]:
    """The wrapped native token's pools against the chain's stablecoins (cached at "latest")."""
    weth = chain.wrapped_native.address
    key = (chain.id, weth)
    now = time.monotonic()
    cached = _native_pools.get(key)
    if block == "latest" and cached is not None and cached[0] > now:
        return cached[1]
    found = await _candidates(rpc, chain, weth, block)
    if block == "latest":
        _native_pools[key] = (now + NATIVE_POOLS_TTL, found)
    return found


async def native_usd_price(rpc: RpcClient, chain: Chain, block: str = "latest") -> float | None:
    """USD price of the wrapped native token from its deepest stablecoin pair (V2 preferred)."""
    weth = chain.wrapped_native
    found = await _native_candidates(rpc, chain, block)
    v2 = [c for c in found if c.dex.version == "V2"]
    cands = v2 or found  # V2 reserves give the spot price; V3 balances only approximate it
    if not cands:
        return None
    reserves = await _reserves(rpc, weth.address, cands, block)
    best: tuple[float, float] | None = None
    for cand, res in zip(cands, reserves, strict=True):
        if res is None or res[0] == 0:
            continue
        stable_units = res[1] / 10**cand.base.decimals
        price = stable_units / (res[0] / 10**weth.decimals)
        if best is None or stable_units > best[0]:
            best = (stable_units, price)
    return best[1] if best else None


async def find_pools(rpc: RpcClient, chain: Chain, token: str, block: str = "latest") -> list[Pool]:
    """All pools of ``token`` against the chain's base tokens, deepest (USD) first."""
    cands, price = await asyncio.gather(
        _candidates(rpc, chain, token, block), native_usd_price(rpc, chain, block)
    )
    if not cands:
        return []
    reserves = await _reserves(rpc, token, cands, block)
    pools = [
        _pool(chain, token, cand, res, price)
        for cand, res in zip(cands, reserves, strict=True)
        if res is not None
    ]
    pools.sort(key=lambda p: (-p.depth, p.address))
    return pools


def _pool(
    chain: Chain, token: str, cand: _Candidate, res: tuple[int, int], price: float | None
) -> Pool:
    token_first = int(token, 16) < int(cand.base.address, 16)
    token0, token1 = (token, cand.base.address) if token_first else (cand.base.address, token)
    r0, r1 = res if token_first else (res[1], res[0])
    return Pool(
        address=cand.address,
        dex=cand.dex.name,
        version=cand.dex.version,
        token0=checksum(token0),
        token1=checksum(token1),
        base_token=cand.base.address,
        router=cand.dex.router,
        reserves0=r0,
        reserves1=r1,
        liquidity_usd=_liquidity(res[1], cand.base, price),
        fee=cand.fee,
        chain_id=chain.id,
    )


def _liquidity(base_reserve: int, base: BaseToken, price: float | None) -> float | None:
    usd = _usd(base_reserve, base, price)
    return None if usd is None else round(2 * usd, 2)


def token_reserve(pool: Pool) -> int:
    return pool.reserves1 if pool.token0 == pool.base_token else pool.reserves0


def base_reserve(pool: Pool) -> int:
    return pool.reserves0 if pool.token0 == pool.base_token else pool.reserves1


def dex_of(chain: Chain, pool: Pool) -> Dex:
    return next(d for d in chain.dexes if d.router == pool.router and d.version == pool.version)


async def resolve_pair(
    rpc: RpcClient, chain: Chain, address: str, block: str = "latest"
) -> tuple[str, str] | None:
    """If ``address`` is a pair/pool of a registry DEX, return (token, pair address).

    The token is the side that is not a base token (token0 when both are bases).
    """
    calls = [
        ("eth_call", call_params(address, encode_call(sig), block))
        for sig in ("token0()", "token1()", "factory()")
    ]
    results = await rpc.batch(calls)
    if any(
        isinstance(r, CallReverted) or not isinstance(r, str) or len(to_bytes(r)) < 32
        for r in results
    ):
        return None
    token0, token1, factory = (word_address(to_bytes(r)[:32]) for r in results)
    if factory not in {d.factory for d in chain.dexes}:
        return None
    token = token1 if chain.base_token(token0) and not chain.base_token(token1) else token0
    return token, checksum(address)


async def creation_info(rpc: RpcClient, chain: Chain, pool: Pool) -> tuple[int | None, str | None]:
    """(timestamp, tx hash) of the factory event that created ``pool``; (None, None) if unknown.

    Unknown only when the node lacks eth_getLogs or no event matches; a failing
    eth_getLogs (rate limit, range refused) raises rather than drop the fields.
    """
    dex = dex_of(chain, pool)
    topic0 = PAIR_CREATED if dex.version == "V2" else POOL_CREATED
    topics = [topic0, _topic(pool.token0), _topic(pool.token1)]
    try:
        logs = await rpc.call(
            "eth_getLogs",
            [{"address": dex.factory, "topics": topics, "fromBlock": "0x0", "toBlock": "latest"}],
        )
    except MethodUnsupported:
        return None, None  # a node without eth_getLogs: unknown, not an error
    match = next(
        (log for log in logs if pool.address.lower()[2:] in log.get("data", "").lower()), None
    )
    if match is None:
        return None, None
    block = await rpc.call("eth_getBlockByNumber", [match["blockNumber"], False])
    return int(block["timestamp"], 16), str(match["transactionHash"])


def _topic(address: str) -> str:
    return "0x" + address[2:].lower().rjust(64, "0")

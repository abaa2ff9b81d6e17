"""Uniswap V4 on the devnet: PoolManager, StateView, V4Quoter, the Universal Router 2.1.0
and Permit2 at their Ethereum mainnet addresses, and V4 pools with the catalogue's hooks.

The V4 contracts come from their published npm artifacts (``@uniswap/v4-core`` 1.0.2,
``@uniswap/v4-periphery`` 1.0.3 ``foundry-out``, ``@uniswap/universal-router`` 2.1.0)
and are placed like the V2/V3 ones (:func:`tokenrisk.devnet.uniswap.place`): deployed
with canonical constructor arguments, then code and constructor storage copied to the
canonical address.  The PoolManager (``NoDelegateCall``) and the Universal Router each
embed their deploy address once, which is relocated.  The PositionManager is not deployed (the
router only records its address); pools get their liquidity from ``V4Seeder``.

A hook's permissions are the low 14 bits of its address, so each hook is deployed, then
placed at an address derived from the token's id with exactly the permission bits its
pool needs (what mining a CREATE2 salt gives on a real chain).
"""

from __future__ import annotations

import math
from pathlib import Path

from eth_utils.crypto import keccak

from tokenrisk.chain import universal
from tokenrisk.chain import v4 as pools_v4
from tokenrisk.chain.abi import ZERO_ADDRESS, checksum, encode_call, to_bytes
from tokenrisk.chain.v4 import PoolState as PoolState  # re-exported: the ground truth reads it
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.npm_artifacts import NpmArtifact, load_npm_artifact
from tokenrisk.devnet.permit2 import PERMIT2 as PERMIT2
from tokenrisk.devnet.permit2 import place_permit2
from tokenrisk.devnet.uniswap import (
    NPM,
    V2_FACTORY,
    V2_PAIR_INIT_CODE_HASH,
    V3_FACTORY,
    V3_POOL_INIT_CODE_HASH,
    WETH,
    Placement,
    place,
)
from tokenrisk.errors import DevnetBuildError

POOL_MANAGER = "0x000000000004444c5dc75cB358380D2e3dE08A90"
POSITION_MANAGER = "0xbD216513d74C8cf14cf4747E6AaA6420FF64ee9e"
STATE_VIEW = "0x7fFE42C4a5DEeA5b0feC41C94C136Cf115597227"
V4_QUOTER = "0x52F0E24D1c21C8A0cB1e5a5dD6198556BD9E1203"
UNIVERSAL_ROUTER = "0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af"

_ROUTER_PARAMS = "(address,address,address,address,bytes32,bytes32,address,address,address,address)"
DYNAMIC_FEE = 0x800000
MIN_TICK, MAX_TICK = -887272, 887272
V4Key = tuple[str, str, int, int, str]
"""(currency0, currency1, fee, tickSpacing, hooks); native ETH is address 0."""

HOOK_FLAGS = {
    "beforeSwap": 1 << 7,
    "afterSwap": 1 << 6,
    "beforeSwapReturnsDelta": 1 << 3,
    "afterSwapReturnsDelta": 1 << 2,
}
HOOKS: dict[str, int] = {
    "V4SellBlockHook": HOOK_FLAGS["beforeSwap"],
    "V4SwapFeeHook": HOOK_FLAGS["afterSwap"] | HOOK_FLAGS["afterSwapReturnsDelta"],
    "V4SwallowHook": HOOK_FLAGS["beforeSwap"] | HOOK_FLAGS["beforeSwapReturnsDelta"],
    "V4DynamicFeeHook": HOOK_FLAGS["beforeSwap"],
    "V4OwnedFeeHook": HOOK_FLAGS["afterSwap"] | HOOK_FLAGS["afterSwapReturnsDelta"],
}
"""The devnet's hook contracts and the permission bits each one's address carries."""


def placements(owner: str) -> list[Placement]:
    """The V4 contracts to place (Permit2 apart: it is compiled, not shipped)."""
    params = (
        PERMIT2,
        WETH,
        V2_FACTORY,
        V3_FACTORY,
        to_bytes(V2_PAIR_INIT_CODE_HASH),
        to_bytes(V3_POOL_INIT_CODE_HASH),
        POOL_MANAGER,
        NPM,
        POSITION_MANAGER,
        ZERO_ADDRESS,
    )
    return [
        Placement("POOL_MANAGER", "PoolManager", POOL_MANAGER, ("address",), (owner,), 1),
        Placement("STATE_VIEW", "StateView", STATE_VIEW, ("address",), (POOL_MANAGER,)),
        Placement("V4_QUOTER", "V4Quoter", V4_QUOTER, ("address",), (POOL_MANAGER,)),
        Placement(
            "UNIVERSAL_ROUTER", "UniversalRouter", UNIVERSAL_ROUTER, (_ROUTER_PARAMS,), (params,), 1
        ),
    ]


def addresses(owner: str) -> dict[str, str]:
    """``$NAME`` placeholders of the V4 contracts."""
    return {p.key: p.address for p in placements(owner)} | {"PERMIT2": PERMIT2}


async def deploy_v4(chain: Chain, root: Path, deployer: str, owner: str) -> NpmArtifact:
    """Place Permit2 and the V4 contracts; returns the compiled Permit2 (for its source)."""
    permit2 = await place_permit2(chain, root, deployer)
    for placement in placements(owner):
        await place(chain, load_npm_artifact(root, placement.artifact), placement, deployer)
    return permit2


def hook_address(token_id: str, flags: int) -> str:
    """Where the build places a token's hook: derived from the id, low 14 bits = flags."""
    word = int.from_bytes(bytes(keccak(f"tokenrisk v4 hook {token_id}".encode()))[12:], "big")
    return checksum(f"0x{(word & ~0x3FFF) | flags:040x}")


async def place_hook(
    chain: Chain,
    bytecode: str,
    name: str,
    ctor: tuple[tuple[str, ...], tuple[object, ...]],
    token_id: str,
    deployer: str,
) -> str:
    """Deploy hook ``name`` and move it to its flagged address; returns that address."""
    artifact = NpmArtifact(name, bytecode, [], "", None, None, None, None)
    target = hook_address(token_id, HOOKS[name])
    await place(chain, artifact, Placement(name, name, target, ctor[0], ctor[1]), deployer)
    return target


def full_range(spacing: int) -> tuple[int, int]:
    return -(-MIN_TICK // spacing) * spacing, (MAX_TICK // spacing) * spacing


def seed_args(key: tuple[str, str, int, int, str], amount0: int, amount1: int) -> str:
    """``V4Seeder.seed`` calldata: price from the amounts, full-range liquidity that
    needs at most them (99.9%: the tick bounds round up what full range costs)."""
    sqrt_price = math.isqrt((amount1 << 192) // amount0)
    liquidity = math.isqrt(amount0 * amount1) * 999 // 1000
    lower, upper = full_range(key[3])
    sig = "seed((address,address,uint24,int24,address),uint160,int24,int24,int256)"
    return encode_call(sig, [key, sqrt_price, lower, upper, liquidity])


async def seed_pool(
    chain: Chain,
    owner: str,
    seeder: str,
    key: tuple[str, str, int, int, str],
    amounts: tuple[int, int],
    label: str,
) -> None:
    """Create the pool and add its liquidity (ETH as value, each ERC-20 approved)."""
    for currency in (c for c in key[:2] if c != ZERO_ADDRESS):
        await chain.send(
            Tx(
                owner,
                currency,
                encode_call("approve(address,uint256)", [seeder, 2**256 - 1]),
                label=f"{label}: approve seeder",
            )
        )
    data = seed_args(key, amounts[0], amounts[1])
    value = amounts[0] if key[0] == ZERO_ADDRESS else 0
    await chain.send(Tx(owner, seeder, data, value, label=f"{label}: initialize + liquidity"))


def ctor_of(
    name: str, token: str, owner: str, extra: tuple[int, ...]
) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """Constructor types and arguments of a hook: (manager, token, owner, *extra)."""
    types = ("address", "address", "address", *("uint256",) * len(extra))
    return types, (POOL_MANAGER, token, owner, *extra)


# TRADES THROUGH THE UNIVERSAL ROUTER (history and ground truth)


def v4_trade(key: V4Key, token: str, amount: int, selling: bool, weth: bool) -> str:
    """Universal Router calldata: paid in ETH (value) and paid out in ETH, or (``weth``)
    paid and paid out in WETH as the simulation trades (:mod:`tokenrisk.chain.universal`).
    A pool against an ERC-20 is paid in it through Permit2 and pays out in it, either way."""
    if weth:
        return universal.trade(key, token, WETH, is_native(key), amount, selling)
    return universal.eth_in(key, (key[0].lower() == token.lower()) == selling, amount)


def is_native(key: V4Key) -> bool:
    """The pool trades native ETH (a currency is address 0)."""
    return ZERO_ADDRESS in key[:2]


def permit2_approve(token: str, spender: str) -> str:
    return universal.permit2_approve(token, spender)


async def v4_key_state(chain: Chain, key: V4Key) -> PoolState:
    """The pool's price and active liquidity now (the PoolManager's ``extsload``)."""
    call = pools_v4.state_call(POOL_MANAGER, pools_v4.PoolKey(*key).id)
    state = pools_v4.decode_state("0x" + (await chain.call(POOL_MANAGER, call["data"])).hex())
    if state is None:
        raise DevnetBuildError("the V4 pool's state could not be read")
    return state


async def v4_key_quote(chain: Chain, key: V4Key, token: str, amount: int, selling: bool) -> int:
    """The pool's own curve for ``amount`` in, its LP fee taken, no hook."""
    pool = pools_v4.PoolKey(*key)
    zero_for_one = (pool.currency0.lower() == token.lower()) == selling
    state = await v4_key_state(chain, key)
    return pools_v4.expected_out(state, amount, zero_for_one, pools_v4.static_fee(pool))

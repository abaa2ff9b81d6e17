"""Create Uniswap V2 pairs and V3 pools and fill them, through the real periphery.

Liquidity goes in the way a token deployer would add it: Router02 ``addLiquidity`` /
``addLiquidityETH`` for V2, and for V3 ``createAndInitializePoolIfNecessary`` plus a
full-range ``mint`` on the NonfungiblePositionManager.  Amounts are raw token units.
Creating the pool and filling it are separate steps so the caller can register the pool
with the token (``setAmm``) in between, as real tokens know their pair before trading.
"""

from __future__ import annotations

import math
from decimal import Decimal

from tokenrisk.chain.abi import decode, encode_call, word_address
from tokenrisk.chain.signatures import TRANSFER_TOPIC
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.uniswap import NPM, V2_FACTORY, V2_ROUTER, V3_FACTORY, WETH
from tokenrisk.devnet.v4 import V4Key, ctor_of, place_hook, seed_pool
from tokenrisk.errors import DevnetBuildError

DEADLINE = 2**63
"""Far-future swap/liquidity deadline (the devnet clock is not the wall clock)."""

MAX_UINT256 = 2**256 - 1
MIN_TICK = -887272
MAX_TICK = 887272
MIN_SQRT_RATIO = 4295128739
MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342
TICK_SPACING = {100: 1, 500: 10, 2500: 50, 3000: 60, 10000: 200}
"""Fee tier (hundredths of a bip) -> tick spacing, as enabled in the canonical factories
(2500 is PancakeSwap V3's tier, 3000 Uniswap V3's; the others are both's)."""

_NPM_MINT = (
    "mint((address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256))"
)


def raw_amount(whole: str | int, decimals: int) -> int:
    """Raw units of a decimal amount of whole tokens (``"0.5"`` of an 18-decimal token)."""
    return int(Decimal(str(whole)) * (Decimal(10) ** decimals))


def sorted_pair(token_a: str, token_b: str) -> tuple[str, str]:
    """The (token0, token1) order Uniswap uses: by address as a number."""
    return (token_a, token_b) if int(token_a, 16) < int(token_b, 16) else (token_b, token_a)


def sqrt_price_x96(amount0: int, amount1: int) -> int:
    """V3 ``sqrtPriceX96`` for the price implied by raw amounts (token1 per token0).

    Raw units already carry the decimals, so no further scaling is needed.  Raises
    DevnetBuildError when the price is outside what a V3 pool can represent.
    """
    if amount0 <= 0 or amount1 <= 0:
        raise DevnetBuildError("a V3 pool needs positive amounts of both tokens")
    price = math.isqrt((amount1 << 192) // amount0)
    if not MIN_SQRT_RATIO <= price < MAX_SQRT_RATIO:
        raise DevnetBuildError(f"price {amount1}/{amount0} is outside the V3 range")
    return price


def full_range_ticks(fee: int) -> tuple[int, int]:
    """The widest (lower, upper) ticks usable at a fee tier's tick spacing."""
    spacing = TICK_SPACING[fee]
    upper = (MAX_TICK // spacing) * spacing
    return -upper, upper


async def approve(chain: Chain, owner: str, token: str, spender: str, label: str) -> None:
    """Unlimited allowance, the way wallets usually approve routers."""
    data = encode_call("approve(address,uint256)", [spender, MAX_UINT256])
    await chain.send(Tx(sender=owner, to=token, data=data, label=f"{label}: approve"))


async def wrap_eth(chain: Chain, owner: str, amount: int, label: str) -> None:
    """Turn ETH into WETH9 (for V3 mints, which pull WETH like any ERC-20)."""
    data = encode_call("deposit()")
    await chain.send(Tx(sender=owner, to=WETH, data=data, value=amount, label=f"{label}: wrap"))


# V2


async def create_v2_pair(
    chain: Chain, sender: str, token_a: str, token_b: str, label: str, factory: str = V2_FACTORY
) -> str:
    """``UniswapV2Factory.createPair`` (on ``factory``); returns the pair address."""
    data = encode_call("createPair(address,address)", [token_a, token_b])
    await chain.send(Tx(sender=sender, to=factory, data=data, label=f"{label}: createPair"))
    return await v2_pair_of(chain, token_a, token_b, factory)


async def v2_pair_of(chain: Chain, token_a: str, token_b: str, factory: str = V2_FACTORY) -> str:
    """``getPair`` on a V2 factory, the canonical one by default (zero when there is none)."""
    data = encode_call("getPair(address,address)", [token_a, token_b])
    return word_address(await chain.call(factory, data))


async def add_v2_liquidity(
    chain: Chain,
    owner: str,
    token: str,
    base: str,
    amounts: tuple[int, int],
    label: str,
    router: str = V2_ROUTER,
) -> None:
    """Add ``amounts`` = (token, base) raw units through Router02 (ETH when base is WETH).

    The caller has already approved Router02 for ``token`` (and ``base`` if not WETH).
    """
    token_amount, base_amount = amounts
    if base == WETH:
        sig = "addLiquidityETH(address,uint256,uint256,uint256,address,uint256)"
        data = encode_call(sig, [token, token_amount, 0, 0, owner, DEADLINE])
        tx = Tx(owner, router, data, value=base_amount, label=f"{label}: addLiquidityETH")
    else:
        sig = "addLiquidity(address,address,uint256,uint256,uint256,uint256,address,uint256)"
        args = [token, base, token_amount, base_amount, 0, 0, owner, DEADLINE]
        tx = Tx(owner, router, encode_call(sig, args), label=f"{label}: addLiquidity")
    await chain.send(tx)


# V3


async def create_v3_pool(
    chain: Chain,
    sender: str,
    token: str,
    base: str,
    fee: int,
    amounts: tuple[int, int],
    label: str,
    contracts: tuple[str, str] = (NPM, V3_FACTORY),
) -> str:
    """Create and initialise a V3 pool at the price implied by (token, base) amounts,
    through ``contracts`` = (position manager, factory): Uniswap's by default."""
    token0, token1 = sorted_pair(token, base)
    amount0, amount1 = amounts if token0 == token else (amounts[1], amounts[0])
    sig = "createAndInitializePoolIfNecessary(address,address,uint24,uint160)"
    data = encode_call(sig, [token0, token1, fee, sqrt_price_x96(amount0, amount1)])
    npm, factory = contracts
    await chain.send(Tx(sender=sender, to=npm, data=data, label=f"{label}: create V3 pool"))
    return await v3_pool_of(chain, token, base, fee, factory)


async def v3_pool_of(
    chain: Chain, token_a: str, token_b: str, fee: int, factory: str = V3_FACTORY
) -> str:
    """``getPool`` on a V3 factory, the canonical one by default (zero when there is none)."""
    data = encode_call("getPool(address,address,uint24)", [token_a, token_b, fee])
    return word_address(await chain.call(factory, data))


async def mint_v3_full_range(
    chain: Chain,
    owner: str,
    token: str,
    base: str,
    fee: int,
    amounts: tuple[int, int],
    label: str,
    npm: str = NPM,
) -> int:
    """Mint a full-range position (``npm`` already approved for both); returns the NFT id."""
    token0, token1 = sorted_pair(token, base)
    amount0, amount1 = amounts if token0 == token else (amounts[1], amounts[0])
    lower, upper = full_range_ticks(fee)
    params = (token0, token1, fee, lower, upper, amount0, amount1, 0, 0, owner, DEADLINE)
    data = encode_call(_NPM_MINT, [params])
    outcome = await chain.send(Tx(sender=owner, to=npm, data=data, label=f"{label}: V3 mint"))
    return _minted_token_id(outcome.receipt, npm)


def _minted_token_id(receipt: dict[str, object], npm: str = NPM) -> int:
    transfer = TRANSFER_TOPIC
    logs = receipt.get("logs")
    for log in logs if isinstance(logs, list) else []:
        topics = log.get("topics", [])
        if log.get("address", "").lower() == npm.lower() and topics and topics[0] == transfer:
            return int(topics[3], 16)
    raise DevnetBuildError("V3 mint emitted no position NFT")


async def v2_reserves(chain: Chain, pair: str) -> tuple[int, int]:
    """(reserve0, reserve1) of a V2 pair."""
    data = await chain.call(pair, encode_call("getReserves()"))
    reserve0, reserve1, _ = decode(["uint112", "uint112", "uint32"], data)
    return int(reserve0), int(reserve1)


async def create_v4_pool(
    chain: Chain,
    accounts: tuple[str, str, str],
    currencies: tuple[str, str],
    pool: tuple[int, int, str | None, tuple[int, ...], str],
    amounts: tuple[int, int],
    label: str,
) -> V4Key:
    """A Uniswap V4 pool of a token against native ETH or an ERC-20: its hook (if any)
    placed at a flagged address, initialized and filled through ``V4Seeder``; returns
    the pool key.

    ``accounts``: (owner, deployer of the hook, seeder contract); ``currencies``: (the
    token, what it is paired with: address 0 for ETH); ``pool``: (fee, tick spacing, hook
    contract name, hook's extra constructor args, hook bytecode); ``amounts``: (token,
    pair side) raw, which the owner holds.
    """
    owner, deployer, seeder = accounts
    token, paired = currencies
    fee, spacing, hook_name, hook_args, bytecode = pool
    hooks = "0x" + "00" * 20
    if hook_name is not None:
        ctor = ctor_of(hook_name, token, owner, hook_args)
        hooks = await place_hook(chain, bytecode, hook_name, ctor, label, deployer)
    paired_first = int(paired, 16) < int(token, 16)
    c0, c1 = (paired, token) if paired_first else (token, paired)
    key: V4Key = (c0, c1, fee, spacing, hooks)
    sides = (amounts[1], amounts[0]) if paired_first else amounts
    await seed_pool(chain, owner, seeder, key, sides, label)
    return key

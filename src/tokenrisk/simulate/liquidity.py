"""Simulated liquidity: a V2 pool that exists only inside the simulation.

For tokens not (yet) listed, or when the caller forces it, the token's largest EOA
holder (usually the deployer, about to launch) adds liquidity against the chain's
wrapped native token through the first V2 router of the registry, in a *prelude* block
that every later simulation starts with.  The holder's own tokens are used (no balance
is invented); the wrapped native side is given by a balance override.  Nothing is sent
to the chain.  When the pair already exists, the liquidity is added to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.abi import checksum, encode_call, to_bytes, word_address
from tokenrisk.chain.dex import NativePools, native_usd_price
from tokenrisk.chain.registry import Chain, Dex
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import LiquidityError, MalformedResponse
from tokenrisk.model import Pool
from tokenrisk.simulate.calls import DEADLINE, BalanceSlot, approve, balance_of, fresh_randao
from tokenrisk.simulate.simulator import ChainHead, funds, parse_call, price

SIMULATED_NATIVE = 10  # whole units of the wrapped native token put in the pool
TOKEN_SHARE = 2  # the provider puts 1/TOKEN_SHARE of its balance in the pool
_ADD_GAS = 5_000_000  # addLiquidity (a new pair's creation is ~2.5M)
_CALL_GAS = 500_000  # approvals and reads


@dataclass(frozen=True)
class SimulatedPool:
    pool: Pool
    prelude: list[dict[str, Any]]
    head: ChainHead  # the prelude block: simulations continue after it
    provider: str  # the holder whose tokens went into the pool
    base: ChainHead  # the head that was read: every simulation is pinned to it


def _v2(chain: Chain) -> Dex:
    dex = next((d for d in chain.dexes if d.version == "V2"), None)
    if dex is None:
        raise LiquidityError("no V2 exchange is configured on this chain to simulate liquidity")
    return dex


def _prelude(
    dex: Dex,
    token: str,
    weth: str,
    provider: str,
    amounts: tuple[int, int],
    slot: BalanceSlot,
    head: ChainHead,
) -> dict[str, Any]:
    token_amount, base_amount = amounts
    gas_price = price(head.base_fee)
    overrides = {
        # a real holder: its own nonce, and what its four calls cost
        provider: {"balance": hex(funds([_ADD_GAS, *[_CALL_GAS] * 3], gas_price))},
        weth: {"stateDiff": slot.override(provider, base_amount)},
    }
    add = encode_call(
        "addLiquidity(address,address,uint256,uint256,uint256,uint256,address,uint256)",
        [token, weth, token_amount, base_amount, 0, 0, provider, DEADLINE],
    )
    calls = [
        (approve(token, provider, dex.router), _CALL_GAS),
        (approve(weth, provider, dex.router), _CALL_GAS),
        ({"from": provider, "to": dex.router, "data": add}, _ADD_GAS),
        (
            {
                "from": provider,
                "to": dex.factory,
                "data": encode_call("getPair(address,address)", [token, weth]),
            },
            _CALL_GAS,
        ),
    ]
    return {
        "blockOverrides": {
            "number": hex(head.number + 1),
            "time": hex(head.timestamp + 12),
            "baseFeePerGas": hex(head.base_fee),
            "feeRecipient": head.miner,
            "prevRandao": fresh_randao(),
        },
        "stateOverrides": overrides,
        "calls": [{**c, "gas": hex(g), "gasPrice": hex(gas_price)} for c, g in calls],
    }


async def _run(rpc: RpcClient, blocks: list[dict[str, Any]], base: ChainHead) -> list[Any]:
    """``blocks`` simulated on ``base`` (pinned: a block landing meanwhile changes
    nothing); one reply block per block sent (the prelude has no gaps)."""
    reply = await rpc.call(
        "eth_simulateV1", [{"blockStateCalls": blocks, "validation": False}, base.tag]
    )
    if not isinstance(reply, list) or len(reply) != len(blocks):
        raise MalformedResponse("eth_simulateV1 returned an unexpected shape")
    return reply


async def simulate_pool(
    rpc: RpcClient,
    chain: Chain,
    token: str,
    provider: tuple[str, int],
    slot: BalanceSlot | None,
    head: ChainHead,
    memo: NativePools | None = None,
) -> SimulatedPool:
    """Create (or deepen) the token/wrapped-native V2 pool inside a prelude block;
    ``memo`` (the Node's) remembers the native token's pools that price it in USD.

    ``provider`` is (holder address, token balance).  Raises LiquidityError when the
    liquidity cannot be added (the message names the node's reason).
    """
    if slot is None:
        raise LiquidityError("cannot fund the simulated liquidity with the wrapped native token")
    dex, weth = _v2(chain), chain.wrapped_native
    base_amount = SIMULATED_NATIVE * 10**weth.decimals
    amounts = (provider[1] // TOKEN_SHARE, base_amount)
    prelude = _prelude(dex, token, weth.address, provider[0], amounts, slot, head)
    calls = (await _run(rpc, [prelude], head))[0]["calls"]
    added = parse_call(calls[2])
    if not added.ok:
        raise LiquidityError(f"adding simulated liquidity failed: {added.reason}")
    pair = word_address(to_bytes(calls[3]["returnData"])[:32])
    reserves = await _reserves(rpc, prelude, token, weth.address, pair, head)
    usd = await native_usd_price(rpc, chain, memo=memo)
    pool = _pool(chain, dex, token, pair, reserves, usd)
    return SimulatedPool(pool, [prelude], head.after(1, 12), provider[0], head)


async def _reserves(
    rpc: RpcClient, prelude: dict[str, Any], token: str, weth: str, pair: str, head: ChainHead
) -> tuple[int, int]:
    provider = prelude["calls"][0]["from"]  # funded for these reads too (its extra)
    reads = [balance_of(token, pair, provider), balance_of(weth, pair, provider)]
    gas_price = prelude["calls"][0]["gasPrice"]
    probe = {"calls": [{**c, "gas": hex(_CALL_GAS), "gasPrice": gas_price} for c in reads]}
    calls = (await _run(rpc, [prelude, probe], head))[1]["calls"]
    token_res, weth_res = (parse_call(c).uint or 0 for c in calls)
    return token_res, weth_res


def _pool(
    chain: Chain, dex: Dex, token: str, pair: str, reserves: tuple[int, int], price: float | None
) -> Pool:
    weth = chain.wrapped_native
    token_first = int(token, 16) < int(weth.address, 16)
    r_token, r_weth = reserves
    native = r_weth / 10**weth.decimals
    return Pool(
        address=checksum(pair),
        dex=dex.name,
        version="V2",
        token0=checksum(token if token_first else weth.address),
        token1=checksum(weth.address if token_first else token),
        base_token=weth.address,
        router=dex.router,
        reserves0=r_token if token_first else r_weth,
        reserves1=r_weth if token_first else r_token,
        liquidity_usd=round(2 * native * price, 2) if price is not None else None,
        chain_id=chain.id,
        label=dex.label,
    )

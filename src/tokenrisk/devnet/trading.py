"""Execute a history plan: real transactions from real (impersonated) EOAs, block by block.

Each round of the plan is mined as one block at an advancing timestamp.  What each
transaction is allowed to do is decided up front: launches, owner calls, buys and
siphons must succeed; a sell must succeed when the catalogue says the token is
sellable, and may fail otherwise (failures are recorded, they are the honeypot at
work).  A transaction that fails where nothing allowed it stops the build with the
token id, the step and the revert reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tokenrisk.chain.abi import decode, encode_call
from tokenrisk.chain.signatures import APPROVE
from tokenrisk.devnet.catalogue import resolve_args
from tokenrisk.devnet.chain import Outcome, Tx
from tokenrisk.devnet.deployment import Deployed, Devnet, Pool
from tokenrisk.devnet.history import HistoryPlan, Step
from tokenrisk.devnet.swaps import (
    approvals,
    balance_of_calldata,
    buy_calldata,
    paying,
    routers,
    sell_calldata,
)
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.errors import DevnetBuildError

GAS_MONEY = 10**18
"""ETH each fresh EOA gets on top of what it spends (10M gas at a few gwei fits)."""


@dataclass
class TokenLog:
    """What happened to one token during the history (goes into the manifest)."""

    failed_sells: list[dict[str, Any]] = field(default_factory=list)
    sells: int = 0
    buys: int = 0


@dataclass(frozen=True)
class Planned:
    """A transaction plus whether it may fail (``must`` = failure stops the build)."""

    tx: Tx
    step: Step
    must: bool


async def run_history(devnet: Devnet, plan: HistoryPlan) -> dict[str, TokenLog]:
    """Mine every round of ``plan``; returns per-token logs.  Leaves automine on."""
    chain = devnet.chain
    logs = {token_id: TokenLog() for token_id in devnet.tokens}
    await _fund_actors(devnet, plan)
    timestamp = int((await chain.block())["timestamp"], 16)
    await chain.cheat("evm_setAutomine", False)
    try:
        for steps, seconds in zip(plan.rounds, plan.seconds, strict=True):
            timestamp += seconds
            planned = await _round_txs(devnet, steps)
            outcomes = await chain.send_block([p.tx for p in planned], timestamp)
            _check(planned, outcomes, logs)
            timestamp = max(timestamp, int((await chain.block())["timestamp"], 16))
    finally:
        await chain.cheat("evm_setAutomine", True)
    return logs


async def _fund_actors(devnet: Devnet, plan: HistoryPlan) -> None:
    """ETH for every actor (buy amount + gas money), stablecoins where a route needs them."""
    balances: dict[str, int] = {}
    for steps in plan.rounds:
        for step in steps:
            if step.kind in ("buy", "snipe"):
                pool = buy_pool(devnet.tokens[step.token], step.index)
                spend = _spend(pool, step)
                eth = spend if pool.base_address == WETH else 0
                balances[step.actor] = balances.get(step.actor, 0) + eth
                if pool.base_address != WETH:
                    await _mint_for_buy(devnet, pool, step.actor, spend, step.token)
            elif step.kind in ("sell", "sniper_sell"):
                balances.setdefault(step.actor, 0)
    await devnet.chain.set_balances({a: v + GAS_MONEY for a, v in balances.items()})


async def _mint_for_buy(devnet: Devnet, pool: Pool, buyer: str, amount: int, token_id: str) -> None:
    symbol = pool.spec.base
    data = encode_call("mint(address,uint256)", [buyer, amount])
    tx = Tx(devnet.infra, devnet.addresses[symbol], data, label=f"{token_id}: fund buyer {symbol}")
    await devnet.chain.send(tx)


def buy_pool(token: Deployed, n: int) -> Pool:
    """The pool buyer ``n`` uses: a WETH pool (every third buyer on V3 when both exist)."""
    pools = list(token.pools.values())
    weth = [p for p in pools if p.base_address == WETH]
    v2 = [p for p in weth if p.spec.dex == "v2"]
    v3 = [p for p in weth if p.spec.dex == "v3"]
    if v2 and v3:
        return v3[0] if n % 3 == 2 else v2[0]
    return (v2 or v3 or pools)[0]


def sell_pool(token: Deployed) -> Pool:
    """The pool sellers use: V2 WETH if any, else the first WETH pool, else the first."""
    return buy_pool(token, 0)


def _spend(pool: Pool, step: Step) -> int:
    return max(int(pool.base_raw * step.share), 1)


# BUILDING A ROUND


async def _round_txs(devnet: Devnet, steps: list[Step]) -> list[Planned]:
    balances = await _balances(devnet, steps)
    planned: list[Planned] = []
    for step in steps:
        planned.extend(_txs_for(devnet, step, balances.get((step.token, step.actor), 0)))
    return planned


async def _balances(devnet: Devnet, steps: list[Step]) -> dict[tuple[str, str], int]:
    """Token balances of the actors whose steps spend a share of their holdings."""
    wanted = [(s.token, s.actor) for s in steps if s.kind in ("sell", "sniper_sell", "siphon")]
    calls = [
        ("eth_call", [{"to": devnet.tokens[t].address, "data": balance_of_calldata(a)}, "latest"])
        for t, a in wanted
    ]
    results = await devnet.chain.rpc.batch(calls)
    out: dict[tuple[str, str], int] = {}
    for key, result in zip(wanted, results, strict=True):
        if isinstance(result, Exception):
            raise DevnetBuildError(f"{key[0]}: balanceOf({key[1]}) failed: {result}")
        out[key] = int(decode(["uint256"], str(result))[0])
    return out


def _txs_for(devnet: Devnet, step: Step, balance: int) -> list[Planned]:
    token = devnet.tokens[step.token]
    builders = {
        "launch": _launch,
        "owner": _owner_call,
        "buy": _buy,
        "snipe": _buy,
        "sell": _sell,
        "sniper_sell": _sell,
        "siphon": _siphon,
    }
    return builders[step.kind](devnet, token, step, balance)


def _launch(devnet: Devnet, token: Deployed, step: Step, _: int) -> list[Planned]:
    tx = Tx(devnet.owner, token.address, encode_call("launch()"), label=f"{token.spec.id}: launch")
    return [Planned(tx, step, must=True)]


def _owner_call(devnet: Devnet, token: Deployed, step: Step, _: int) -> list[Planned]:
    call = token.spec.after_launch[step.index]
    label = f"{token.spec.id}: afterLaunch {call.signature}"
    args = resolve_args(_types(call.signature), call.args, devnet.scope(token), label)
    tx = Tx(devnet.owner, token.address, encode_call(call.signature, args), label=label)
    return [Planned(tx, step, must=True)]


def _buy(devnet: Devnet, token: Deployed, step: Step, _: int) -> list[Planned]:
    pool = buy_pool(token, step.index)
    amount = _spend(pool, step)
    data, value = buy_calldata(pool.route, token.address, step.actor, amount)
    label = f"{token.spec.id}: {step.kind} by {step.actor}"
    before = paying(pool.route, step.actor, pool.base_address, amount, label)
    out = [Planned(tx, step, must=True) for tx in before]
    out.append(Planned(Tx(step.actor, pool.route.router, data, value, label=label), step, True))
    return out


def _sell(devnet: Devnet, token: Deployed, step: Step, balance: int) -> list[Planned]:
    amount = int(balance * step.share)
    if amount == 0:
        return []
    route = sell_pool(token).route
    label = f"{token.spec.id}: {step.kind} by {step.actor}"
    must = sell_must_succeed(token, step)
    allow = [Planned(tx, step, must) for tx in approvals(route, step.actor, token.address, label)]
    sell = Tx(
        step.actor,
        route.router,
        sell_calldata(route, token.address, step.actor, amount),
        label=label,
    )
    return [*allow, Planned(sell, step, must)]


def _siphon(devnet: Devnet, token: Deployed, step: Step, balance: int) -> list[Planned]:
    signature = token.spec.siphon_call
    label = f"{token.spec.id}: siphon {step.actor}"
    if not signature:
        raise DevnetBuildError(f"{label}: history.siphoned > 0 but no siphonCall")
    args = _siphon_args(_types(signature), step.actor, devnet.owner, int(balance * step.share))
    tx = Tx(devnet.owner, token.address, encode_call(signature, args), label=label)
    return [Planned(tx, step, must=True)]


def _siphon_args(types: list[str], holder: str, owner: str, amount: int) -> list[Any]:
    """Arguments by type: first address = victim, second = owner, integers = amount."""
    addresses = iter([holder, owner])
    args: list[Any] = []
    for abi_type in types:
        if abi_type == "address":
            args.append(next(addresses, owner))
        elif abi_type.startswith(("uint", "int")):
            args.append(amount)
        else:
            raise DevnetBuildError(f"siphonCall has an unsupported parameter type {abi_type}")
    return args


def sell_must_succeed(token: Deployed, step: Step) -> bool:
    """Whether a history sell failing means the build (or the catalogue) is wrong.

    Only when the catalogue calls the token sellable; and a sniper's sell may fail when
    it also expects some holders to fail (``expected.holderFailures``: blacklists).
    """
    expected = token.spec.expected
    if not expected.get("sellable", False):
        return False
    return not (step.kind == "sniper_sell" and expected.get("holderFailures", False))


def _types(signature: str) -> list[str]:
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    return [t for t in inner.split(",") if t]


# CHECKING A ROUND


def _check(planned: list[Planned], outcomes: list[Outcome], logs: dict[str, TokenLog]) -> None:
    """Stop on a forbidden failure; count trades and record allowed failed sells."""
    for item, outcome in zip(planned, outcomes, strict=True):
        log = logs[item.step.token]
        swap = _is_swap(item)
        if outcome.ok:
            if swap and item.step.kind in ("buy", "snipe"):
                log.buys += 1
            elif swap and item.step.kind in ("sell", "sniper_sell"):
                log.sells += 1
        elif item.must:
            raise DevnetBuildError(f"{item.tx.label}: unexpected revert: {outcome.reason}")
        elif swap:
            log.failed_sells.append(_failure(item, outcome))


def _is_swap(item: Planned) -> bool:
    """True for the router call of a trade (not its approval, not an owner call)."""
    is_router_call = item.tx.to in routers()
    return is_router_call and not item.tx.data.startswith(APPROVE)


def _failure(item: Planned, outcome: Outcome) -> dict[str, Any]:
    return {
        "address": item.step.actor,
        "role": "sniper" if item.step.kind == "sniper_sell" else "holder",
        "block": outcome.block,
        "txHash": outcome.receipt["transactionHash"],
        "reason": outcome.reason,
    }

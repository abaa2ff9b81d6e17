"""Ground truth by mined transactions: what a person really pays to trade each token.

After the history, inside an ``evm_snapshot`` that is reverted before the state is
dumped (so the dump is exactly the state a check sees), a fresh EOA per token makes the
journey a check simulates, as real mined transactions on the token's WETH pool (its V2
pair, else its V3 pool, through Router02 or SwapRouter): buy
for 0.5% of the pair's WETH, send 10% of the tokens to a second fresh wallet a minute
later, sell the rest five minutes after the buy; then the receiver sells half of what it
received (a partial sell: a token that takes more from the seller's balance than the
amount sold shows only when something is left to take).  When the buy fails, an existing
holder sells instead (can anybody get out?).  Router02's quote read just before each
trade, the receipts' Transfer logs and the wallets' balances give both figures of each
leg, with the definitions of :mod:`tokenrisk.simulate.accounting` applied to what the
chain really did, with the gas price the mined sell paid (``sellGasPrice``: anvil prices
it like a wallet would, at least the base fee).  The manifest records them per token as
``groundTruth``; tests hold the service's simulated answers against them.  Nothing here
is typed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.abi import ZERO_ADDRESS
from tokenrisk.chain.signatures import DEPOSIT
from tokenrisk.devnet.chain import Chain, Outcome, Tx
from tokenrisk.devnet.deployment import Deployed, Devnet
from tokenrisk.devnet.history import actor_address, holder_address
from tokenrisk.devnet.swaps import (
    Route,
    approvals,
    balance,
    transfer_calldata,
    v2_quote,
    v2_swap_tokens,
    v3_exact_input,
    v3_quote,
    v4_quote,
    v4_state,
    v4_swap,
)
from tokenrisk.devnet.trading import sell_pool
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.simulate.accounting import (
    BuyFacts,
    LegTax,
    SellFacts,
    TransferFacts,
    buy_tax,
    parse_logs,
    sell_tax,
    transfer_tax,
)

BUY_BPS = 50  # buy size: 0.5% of the pair's WETH, as a check's default buy
TRANSFER_BPS = 1_000  # share of the bought tokens sent wallet-to-wallet
SECONDS = (12, 72, 300, 312)  # buy, transfer, sell, partial sell: after the last block
HOLDERS_TRIED = 5  # history buyers tried, in order, for a holder's sell after a failed buy


@dataclass(frozen=True)
class _Journey:
    token: str
    pair: str
    buyer: str
    receiver: str
    start: int
    holders: tuple[str, ...] = ()  # history buyers, for a holder's sell
    route: Route = Route("v2", WETH)

    def swap(self, amount: int, recipient: str, selling: bool) -> str:
        """Calldata of a swap paid and paid out in WETH (router already approved)."""
        path = [self.token, WETH] if selling else [WETH, self.token]
        if self.route.dex == "v4":  # paid and paid out in WETH, like the simulation
            return v4_swap(self.route, self.token, amount, selling, weth=True)
        if self.route.dex == "v2":
            return v2_swap_tokens(path, amount, recipient)
        return v3_exact_input(path[0], path[1], self.route.fee or 3000, recipient, amount)

    async def quote(self, chain: Chain, amount: int, selling: bool) -> int | None:
        """The venue's router's (V2) or QuoterV2's (V3) quote; None when it cannot quote."""
        path = [self.token, WETH] if selling else [WETH, self.token]
        if self.route.dex == "v4":
            return await v4_quote(chain, self.route, self.token, amount, selling)
        if self.route.dex == "v2":
            return await v2_quote(chain, amount, path, self.route.router)
        fee = self.route.fee or 3000
        return await v3_quote(chain, amount, path[0], path[1], fee, self.route.quoter)

    async def base_reserve(self, chain: Chain) -> int:
        """The pool's WETH (V4: the ETH or WETH side of its active liquidity)."""
        if self.route.dex == "v4" and self.route.key is not None:
            side = 0 if self.route.key[0] in (ZERO_ADDRESS, WETH) else 1
            return (await v4_state(chain, self.route)).reserves[side]
        return await balance(chain, WETH, self.pair)


async def measure_tokens(devnet: Devnet) -> dict[str, dict[str, Any]]:
    """``groundTruth`` per token id with a WETH pool; the chain is left as it was.

    Each token is measured from the same post-history state (a snapshot reverted after
    each), so one token's trades never move another's clock or pools.
    """
    chain = devnet.chain
    start = int((await chain.block())["timestamp"], 16)
    truths: dict[str, dict[str, Any]] = {}
    for token_id, token in devnet.tokens.items():
        journey = _journey(token, start)
        if journey is None:
            continue
        snapshot = await chain.cheat("evm_snapshot")
        try:
            truths[token_id] = await _measure(chain, journey)
        finally:
            await chain.cheat("evm_revert", snapshot)
    return truths


def _journey(token: Deployed, start: int) -> _Journey | None:
    if not token.pools:
        return None
    pool = sell_pool(token)
    if pool.spec.dex not in ("v2", "v3", "v4") or pool.base_address != WETH:
        return None
    tid = token.spec.id
    buyer, receiver = (actor_address(tid, "groundtruth", n) for n in (0, 1))
    holders = tuple(holder_address(tid, n) for n in range(HOLDERS_TRIED))
    return _Journey(token.address, pool.address, buyer, receiver, start, holders, pool.route)


async def _measure(chain: Chain, j: _Journey) -> dict[str, Any]:
    amount_in = await j.base_reserve(chain) * BUY_BPS // 10_000
    await _fund(chain, j, amount_in)
    # BUY
    quote = await j.quote(chain, amount_in, selling=False)
    buy = await _send_at(
        chain,
        j.start + SECONDS[0],
        Tx(
            j.buyer,
            j.route.router,
            j.swap(amount_in, j.buyer, selling=False),
            label="ground truth: buy",
        ),
    )
    if not buy.ok:
        return {"buyOk": False, "reason": buy.reason} | await _holder_sell(chain, j)
    bought = await balance(chain, j.token, j.buyer)
    truth = {"buyOk": True} | _figures(
        "buy", buy_tax(BuyFacts(j.token, j.buyer, quote, bought, _logs(buy), j.pair))
    )
    # TRANSFER
    sent = bought * TRANSFER_BPS // 10_000
    data = transfer_calldata(j.receiver, sent)
    moved = await _send_at(
        chain, j.start + SECONDS[1], Tx(j.buyer, j.token, data, label="ground truth: transfer")
    )
    truth["transferOk"] = moved.ok
    if moved.ok:
        received = await balance(chain, j.token, j.receiver)
        truth |= _figures(
            "transfer",
            transfer_tax(TransferFacts(j.token, j.buyer, j.receiver, sent, received, _logs(moved))),
        )
    # SELL (the whole balance), then the receiver's partial sell
    truth |= await _sell(chain, j, j.buyer, "sell", SECONDS[2])
    if moved.ok:
        await _approve(chain, j, j.receiver, j.start + SECONDS[2] + 1)
        truth |= await _sell(chain, j, j.receiver, "partialSell", SECONDS[3], half=True)
    return truth


async def _sell(
    chain: Chain, j: _Journey, seller: str, leg: str, at: int, half: bool = False
) -> dict[str, Any]:
    """``seller`` sells its balance (``half``: half of it) ``at`` seconds after the start."""
    held = await balance(chain, j.token, seller)
    amount = held // 2 if half else held
    quote = await j.quote(chain, amount, selling=True)
    weth_before = await balance(chain, WETH, seller)
    tx = Tx(
        seller, j.route.router, j.swap(amount, seller, selling=True), label=f"ground truth: {leg}"
    )
    sell = await _send_at(chain, j.start + at, tx)
    price = {} if half else {"sellGasPrice": _gas_price(sell)}
    if not sell.ok:
        return {f"{leg}Ok": False, f"{leg}Reason" if half else "reason": sell.reason} | price
    spent = held - await balance(chain, j.token, seller)
    received = await balance(chain, WETH, seller) - weth_before
    facts = SellFacts(j.token, seller, j.pair, amount, spent, quote, received, _logs(sell))
    extra = {f"{leg}ExtraTaken": str(max(0, spent - amount))} if half else {}
    return {f"{leg}Ok": True} | price | extra | _figures(leg, sell_tax(facts))


async def _holder_sell(chain: Chain, j: _Journey) -> dict[str, Any]:
    """After a failed buy: the first history buyer still holding sells its whole balance."""
    for holder in j.holders:
        held = await balance(chain, j.token, holder)
        if held == 0:
            continue
        await _approve(chain, j, holder, j.start + SECONDS[1])
        tx = Tx(
            holder,
            j.route.router,
            j.swap(held, holder, selling=True),
            label="ground truth: holder sell",
        )
        sell = await _send_at(chain, j.start + SECONDS[2], tx)
        return {"holderSellOk": sell.ok, "holderSellReason": sell.reason}
    return {}


def _figures(leg: str, tax: LegTax) -> dict[str, Any]:
    rounded = (None if v is None else round(v, 4) for v in (tax.effective, tax.token_unit))
    effective, token_unit = rounded
    return {f"{leg}TaxEffective": effective, f"{leg}TaxTokenUnit": token_unit}


# CHAIN HELPERS


async def _fund(chain: Chain, j: _Journey, amount_in: int) -> None:
    """ETH for gas and the buy, wrapped into WETH; both approvals given up front."""
    await chain.set_balances({j.buyer: amount_in + 10**18})
    wrap = Tx(j.buyer, WETH, DEPOSIT, amount_in, label="ground truth: wrap")
    allow = [
        tx
        for token in (WETH, j.token)
        for tx in approvals(j.route, j.buyer, token, "ground truth: approve")
    ]
    for second, tx in enumerate([wrap, *allow], start=1):
        await chain.cheat("evm_setNextBlockTimestamp", j.start + second)
        await chain.send(tx)


async def _approve(chain: Chain, j: _Journey, wallet: str, timestamp: int) -> None:
    """``wallet`` lets the router spend its tokens (and has ETH for gas)."""
    await chain.set_balances({wallet: 10**18})
    for n, tx in enumerate(approvals(j.route, wallet, j.token, "ground truth: approve")):
        await _send_at(chain, timestamp + n, tx)


async def _send_at(chain: Chain, timestamp: int, tx: Tx) -> Outcome:
    await chain.cheat("evm_setNextBlockTimestamp", timestamp)
    return await chain.send(tx, allow_revert=True)


def _gas_price(outcome: Outcome) -> int:
    """What the mined sell paid per gas (wei): a real price, at least the block's base fee,
    so a token that traps sellers by ``tx.gasprice`` shows it in the ground truth."""
    return int(outcome.receipt.get("effectiveGasPrice", "0x0"), 16)


def _logs(outcome: Outcome) -> tuple[Any, ...]:
    return parse_logs(outcome.receipt.get("logs"))

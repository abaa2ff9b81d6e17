"""Ground truth by mined transactions: what a person really pays to trade each token.

After the history, inside an ``evm_snapshot`` that is reverted before the state is
dumped (so the dump is exactly the state a check sees), a fresh EOA per token makes the
journey a check simulates, as real mined transactions on the token's V2 WETH pair: buy
for 0.5% of the pair's WETH, send 10% of the tokens to a second fresh wallet a minute
later, sell the rest five minutes after the buy.  Router02's quote read just before each
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

from tokenrisk.devnet.chain import Chain, Outcome, Tx
from tokenrisk.devnet.deployment import Deployed, Devnet
from tokenrisk.devnet.history import actor_address
from tokenrisk.devnet.swaps import (
    approve_calldata,
    balance,
    transfer_calldata,
    v2_quote,
    v2_swap_tokens,
)
from tokenrisk.devnet.trading import sell_pool
from tokenrisk.devnet.uniswap import V2_ROUTER, WETH
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
SECONDS = (12, 72, 300)  # buy, transfer, sell: seconds after the last history block


@dataclass(frozen=True)
class _Journey:
    token: str
    pair: str
    buyer: str
    receiver: str
    start: int


async def measure_tokens(devnet: Devnet) -> dict[str, dict[str, Any]]:
    """``groundTruth`` per token id with a V2 WETH pair; the chain is left as it was.

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
    if pool.spec.dex != "v2" or pool.base_address != WETH:
        return None
    tid = token.spec.id
    buyer, receiver = (actor_address(tid, "groundtruth", n) for n in (0, 1))
    return _Journey(token.address, pool.address, buyer, receiver, start)


async def _measure(chain: Chain, j: _Journey) -> dict[str, Any]:
    amount_in = await balance(chain, WETH, j.pair) * BUY_BPS // 10_000
    await _fund(chain, j, amount_in)
    # BUY
    quote = await v2_quote(chain, amount_in, [WETH, j.token])
    buy = await _send_at(
        chain,
        j.start + SECONDS[0],
        Tx(
            j.buyer,
            V2_ROUTER,
            v2_swap_tokens([WETH, j.token], amount_in, j.buyer),
            label="ground truth: buy",
        ),
    )
    if not buy.ok:
        return {"buyOk": False, "reason": buy.reason}
    bought = await balance(chain, j.token, j.buyer)
    truth = {"buyOk": True} | _figures(
        "buy", buy_tax(BuyFacts(j.token, j.buyer, quote, bought, _logs(buy)))
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
    # SELL
    return truth | await _sell(chain, j)


async def _sell(chain: Chain, j: _Journey) -> dict[str, Any]:
    amount = await balance(chain, j.token, j.buyer)
    quote = await v2_quote(chain, amount, [j.token, WETH])
    weth_before = await balance(chain, WETH, j.buyer)
    tx = Tx(
        j.buyer,
        V2_ROUTER,
        v2_swap_tokens([j.token, WETH], amount, j.buyer),
        label="ground truth: sell",
    )
    sell = await _send_at(chain, j.start + SECONDS[2], tx)
    price = {"sellGasPrice": _gas_price(sell)}
    if not sell.ok:
        return {"sellOk": False, "reason": sell.reason} | price
    left = await balance(chain, j.token, j.buyer)
    received = await balance(chain, WETH, j.buyer) - weth_before
    facts = SellFacts(j.token, j.buyer, j.pair, amount, amount - left, quote, received, _logs(sell))
    return {"sellOk": True} | price | _figures("sell", sell_tax(facts))


def _figures(leg: str, tax: LegTax) -> dict[str, Any]:
    rounded = (None if v is None else round(v, 4) for v in (tax.effective, tax.token_unit))
    effective, token_unit = rounded
    return {f"{leg}TaxEffective": effective, f"{leg}TaxTokenUnit": token_unit}


# CHAIN HELPERS


async def _fund(chain: Chain, j: _Journey, amount_in: int) -> None:
    """ETH for gas and the buy, wrapped into WETH; both approvals given up front."""
    await chain.set_balances({j.buyer: amount_in + 10**18})
    wrap = Tx(j.buyer, WETH, "0xd0e30db0", amount_in, label="ground truth: wrap")
    approvals = [
        Tx(j.buyer, token, approve_calldata(V2_ROUTER), label="ground truth: approve")
        for token in (WETH, j.token)
    ]
    for second, tx in enumerate([wrap, *approvals], start=1):
        await chain.cheat("evm_setNextBlockTimestamp", j.start + second)
        await chain.send(tx)


async def _send_at(chain: Chain, timestamp: int, tx: Tx) -> Outcome:
    await chain.cheat("evm_setNextBlockTimestamp", timestamp)
    return await chain.send(tx, allow_revert=True)


def _gas_price(outcome: Outcome) -> int:
    """What the mined sell paid per gas (wei): a real price, at least the block's base fee,
    so a token that traps sellers by ``tx.gasprice`` shows it in the ground truth."""
    return int(outcome.receipt.get("effectiveGasPrice", "0x0"), 16)


def _logs(outcome: Outcome) -> tuple[Any, ...]:
    return parse_logs(outcome.receipt.get("logs"))

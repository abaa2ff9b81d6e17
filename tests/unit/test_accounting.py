"""Tax accounting on hand-built simulation results: logs, balances and quotes."""

from __future__ import annotations

import pytest

from tokenrisk.chain.signatures import TRANSFER_TOPIC
from tokenrisk.simulate.accounting import (
    BuyFacts,
    Log,
    SellFacts,
    TransferFacts,
    buy_tax,
    explain,
    lost_value,
    parse_logs,
    sell_tax,
    shortfall,
    transfer_tax,
    transfers,
)

TOKEN = "0x" + "70" * 20
PAIR = "0x" + "9a" * 20
SELLER = "0x" + "5e" * 20
OTHER = "0x" + "0e" * 20
WALLET = "0x" + "ee" * 20
WETH = "0x" + "c0" * 20
ZERO = "0x" + "00" * 20


def _topic(address: str) -> str:
    return "0x" + address[2:].rjust(64, "0")


def transfer_log(sender: str, receiver: str, value: int, token: str = TOKEN) -> Log:
    return Log(token, (TRANSFER_TOPIC, _topic(sender), _topic(receiver)), "0x" + f"{value:064x}")


def test_parse_logs_reads_simulate_v1_shape_and_skips_garbage() -> None:
    raw = [
        {
            "address": TOKEN.upper().replace("0X", "0x"),
            "topics": [TRANSFER_TOPIC, _topic(SELLER), _topic(PAIR)],
            "data": "0x" + f"{42:064x}",
        },
        {"address": TOKEN, "topics": "nope"},
        "not a log",
    ]
    logs = parse_logs(raw)
    assert len(logs) == 1
    (event,) = transfers(logs, TOKEN)
    assert (event.sender, event.receiver, event.value) == (SELLER, PAIR, 42)
    assert parse_logs(None) == ()


def test_transfers_ignore_other_tokens_and_non_transfer_events() -> None:
    logs = [
        transfer_log(SELLER, PAIR, 5, token=WETH),
        Log(TOKEN, ("0x" + "11" * 32, _topic(SELLER), _topic(PAIR)), "0x" + f"{5:064x}"),
        Log(TOKEN, (TRANSFER_TOPIC, _topic(SELLER), _topic(PAIR)), "0x12"),  # short data
        transfer_log(SELLER, PAIR, 7),
    ]
    assert [e.value for e in transfers(logs, TOKEN)] == [7]


def test_plain_fee_on_transfer_reads_the_nominal_fee_both_ways() -> None:
    # 10% fee: 1000 sent, 900 reach the pair; the pair pays for 900 (curve: a bit more
    # than 90% of the quote for 1000).
    facts = SellFacts(
        token=TOKEN,
        seller=SELLER,
        pair=PAIR,
        amount=1000,
        seller_spent=1000,
        quote=100_000,
        received=90_050,
        logs=(transfer_log(SELLER, OTHER, 100), transfer_log(SELLER, PAIR, 900)),
    )
    tax = sell_tax(facts)
    assert tax.token_unit == pytest.approx(10.0)
    assert tax.effective == pytest.approx(9.95)
    assert explain("Sell", tax) is None  # within a point: nothing to explain


def test_swap_back_loss_shows_in_the_effective_figure_only() -> None:
    # 5% fee to the contract, and the contract dumps 3000 of its own tokens into the same
    # pair during the sell; the pool's balance grew by far more than the seller's 950.
    logs = (
        transfer_log(TOKEN, PAIR, 3000),  # the swap-back (not the seller's tokens)
        transfer_log(SELLER, TOKEN, 50),
        transfer_log(SELLER, PAIR, 950),
    )
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 1000, quote=100_000, received=78_000, logs=logs)
    tax = sell_tax(facts)
    assert tax.token_unit == pytest.approx(5.0)
    assert tax.effective == pytest.approx(22.0)
    assert tax.difference == pytest.approx(17.0)
    text = explain("Sell", tax)
    assert text is not None and "22.0%" in text and "5.0%" in text


def test_swap_back_honeypot_is_95_percent_in_both_figures() -> None:
    logs = (transfer_log(SELLER, TOKEN, 950), transfer_log(SELLER, PAIR, 50))
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 1000, quote=100_000, received=4_000, logs=logs)
    tax = sell_tax(facts)
    assert tax.token_unit == pytest.approx(95.0)
    assert tax.effective == pytest.approx(96.0)


def test_reflection_to_the_pair_makes_the_effective_tax_lower_than_the_fee() -> None:
    # RFI: Transfer(seller, pair, 960) is the only log; the pair's own reflection share
    # (no log) is credited to the seller by the fee-on-transfer router.
    logs = (transfer_log(SELLER, PAIR, 960),)
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 1000, quote=100_000, received=97_600, logs=logs)
    tax = sell_tax(facts)
    assert tax.token_unit == pytest.approx(4.0)
    assert tax.effective == pytest.approx(2.4)
    text = explain("Sell", tax)
    assert text is not None and "reflections" in text


def test_rebasing_token_without_fee_reads_zero() -> None:
    # A rebase between the quote and the trade is not part of a leg: same-state quote,
    # every token that left the seller arrived at the pair.
    logs = (transfer_log(SELLER, PAIR, 1234),)
    facts = SellFacts(TOKEN, SELLER, PAIR, 1234, 1233, quote=50_000, received=50_000, logs=logs)
    tax = sell_tax(facts)
    assert tax.token_unit == 0.0 and tax.effective == 0.0


def test_seller_charged_more_than_asked_counts_in_both_figures() -> None:
    """The pair gets all 1,000 tokens and the seller the full quote for them, but 250 more
    left the seller's balance: both figures say 20%, neither reads 0."""
    logs = (transfer_log(SELLER, PAIR, 1000), transfer_log(SELLER, ZERO, 250))
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 1250, quote=10_000, received=10_000, logs=logs)
    tax = sell_tax(facts)
    assert tax.token_unit == pytest.approx(20.0)
    assert tax.effective == pytest.approx(20.0)


def test_extra_tokens_are_valued_at_the_quotes_rate() -> None:
    assert lost_value(10_000, 1000, 1500) == 15_000
    assert lost_value(10_000, 1000, 1000) == 10_000
    assert lost_value(10_000, 1000, 900) == 10_000  # a reflection refund is no extra loss
    assert lost_value(None, 1000, 1500) is None
    assert lost_value(10_000, 0, 5) == 10_000


def test_a_seller_spending_less_than_the_amount_keeps_the_plain_quote() -> None:
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 980, quote=10_000, received=9_900, logs=())
    assert sell_tax(facts).effective == pytest.approx(1.0)


def test_token_without_transfer_logs_has_no_token_unit_figure() -> None:
    facts = SellFacts(TOKEN, SELLER, PAIR, 1000, 1000, quote=10_000, received=9_000, logs=())
    tax = sell_tax(facts)
    assert tax.token_unit is None and tax.effective == pytest.approx(10.0)
    assert tax.difference is None


def test_buy_compares_logs_and_balance_with_the_quote() -> None:
    logs = (transfer_log(PAIR, SELLER, 970), transfer_log(PAIR, OTHER, 30))
    tax = buy_tax(BuyFacts(TOKEN, SELLER, quote=1000, balance_gain=971, logs=logs))
    assert tax.token_unit == pytest.approx(3.0)
    assert tax.effective == pytest.approx(2.9)


def test_silent_transfer_logs_everything_but_moves_nothing() -> None:
    logs = (transfer_log(SELLER, WALLET, 500),)
    tax = transfer_tax(TransferFacts(TOKEN, SELLER, WALLET, 500, received=0, logs=logs))
    assert tax.token_unit == 0.0
    assert tax.effective == 100.0


def test_shortfall_is_clamped_and_undefined_without_a_basis() -> None:
    assert shortfall(100, 150) == 0.0
    assert shortfall(100, -5) == 100.0
    assert shortfall(0, 5) is None
    assert shortfall(None, 5) is None
    assert shortfall(100, None) is None

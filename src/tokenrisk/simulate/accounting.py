"""Tax accounting: what each trade leg cost the user, in token units and in value.

Pure (no node): the journey and the holder sells hand over what a simulated call
returned (its logs, balances read around it, the router's quote) and get two figures
per leg, both percentages of what the user should have got:

- **token-unit tax**: tokens lost on the way, from the leg's own ``Transfer`` logs.
  Sell: tokens the seller sent vs tokens that arrived at the pair *from the seller*.
  Buy: tokens the AMM quoted vs tokens that arrived at the buyer.  Transfer: tokens
  sent vs tokens logged as arriving at the receiver.  Logs of the token moving its own
  fee tokens (a swap-back dumping them into the same pair) do not count, which is why a
  balance delta of the pair is never used.
- **effective tax**: the user's real loss against the router's quote for the same
  amount in the same pre-trade state.  Sell: base token received vs the quote for the
  amount the seller sent (scaled up, at the quote's rate, when more tokens left the
  seller's balance than it sold).  Buy: tokens the buyer's balance grew by vs the quote.
  Transfer: the receiver's balance growth vs the amount sent.  Swap-back dumps,
  reflections to the pair and rebases show up here and only here.

The verdict follows the effective figure.  Worked example (docs/simulation.md): a plain
10% fee-on-transfer token, selling 1,000 tokens into a pool quoted at 0.1 ETH for them,
pays 100 tokens in fee; the pair gets 900, so the token-unit tax is 10%; the seller
receives the pool's output for 900 tokens, about 0.0900 ETH, so the effective tax is
about 10% too (the curve makes 900 tokens worth slightly more than 90% of the output for
1,000).  Quoting the *sent* amount is what keeps a plain fee reading as its nominal size
instead of the ~9.2% a round trip through the curve would suggest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tokenrisk.chain.signatures import TRANSFER_TOPIC


class Log(NamedTuple):
    """One event log of a simulated call (address and topics lower-case hex).  A
    NamedTuple (immutable) rather than a frozen dataclass: cheaper to build, and a check
    with holder analysis builds hundreds (issue #27)."""

    address: str
    topics: tuple[str, ...]
    data: str


class Transfer(NamedTuple):
    """An ERC-20 ``Transfer`` event, addresses lower-case.  This and the facts below are
    NamedTuples (immutable) rather than frozen dataclasses: built per sell, a few dozen
    times per check, each at about half the cost (issue #27)."""

    token: str
    sender: str
    receiver: str
    value: int


@dataclass(frozen=True)
class LegTax:
    """Both figures of one leg, percent 0..100; None where not measurable."""

    effective: float | None
    token_unit: float | None

    @property
    def difference(self) -> float | None:
        """Effective minus token-unit (positive: the user lost more than the fee shows)."""
        if self.effective is None or self.token_unit is None:
            return None
        return self.effective - self.token_unit


def parse_logs(raw: object) -> tuple[Log, ...]:
    """Logs of one ``eth_simulateV1`` call result (malformed entries are skipped).

    One plain loop per log (no generator per log): a check with holder analysis parses
    a few hundred calls' logs."""
    if not raw or not isinstance(raw, list):
        return ()  # most calls log nothing
    logs: list[Log] = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        topics = item.get("topics")
        if not isinstance(topics, list):
            continue
        lowered: list[str] = []
        for topic in topics:
            if not isinstance(topic, str):
                break
            lowered.append(topic.lower())
        else:
            address = str(item.get("address", "")).lower()
            logs.append(Log(address, tuple(lowered), str(item.get("data") or "0x")))
    return tuple(logs)


def transfers(logs: Iterable[Log], token: str) -> list[Transfer]:
    """The token's ``Transfer`` events in ``logs`` (non-standard encodings skipped)."""
    wanted = token.lower()
    found: list[Transfer] = []
    for log in logs:
        if log.address != wanted or len(log.topics) != 3 or log.topics[0] != TRANSFER_TOPIC:
            continue
        value = _word(log.data)
        if value is None:
            continue
        found.append(
            Transfer(wanted, _topic_address(log.topics[1]), _topic_address(log.topics[2]), value)
        )
    return found


def moved(events: Sequence[Transfer], sender: str | None, receiver: str | None) -> int:
    """Sum of the values from ``sender`` to ``receiver`` (None matches any address)."""
    s, r = (a.lower() if a else None for a in (sender, receiver))
    return sum(
        e.value for e in events if (s is None or e.sender == s) and (r is None or e.receiver == r)
    )


def shortfall(expected: int | None, got: int | None) -> float | None:
    """How much of ``expected`` is missing from ``got``, in percent clamped to 0..100."""
    if expected is None or got is None or expected <= 0:
        return None
    return max(0.0, min(100.0, (expected - got) * 100 / expected))


# LEGS


class SellFacts(NamedTuple):
    """What one simulated sell showed.

    ``amount``: tokens the seller asked the router to sell; ``seller_spent``: the
    seller's own balance decrease (None when unread); ``quote``: the router's base-token
    output for ``amount`` read just before the sell; ``received``: the seller's
    base-token balance increase; ``logs``: the sell call's logs.
    """

    token: str
    seller: str
    pair: str
    amount: int
    seller_spent: int | None
    quote: int | None
    received: int | None
    logs: tuple[Log, ...]


def sell_tax(facts: SellFacts) -> LegTax:
    """Both sell figures (see the module docstring).

    Tokens that left the seller are the larger of the amount sold and the seller's
    balance decrease, so a token that takes more than it was asked to (a second
    transfer out, a burn from what the seller keeps) is counted in both figures: in
    token units directly, and effectively by valuing every token that left at the
    quote's rate (:func:`lost_value`).  Without any Transfer log of the token (a
    non-standard token), the token-unit figure is None rather than a guess.
    """
    sent = max(facts.amount, facts.seller_spent or 0)
    events = transfers(facts.logs, facts.token)
    arrived = moved(events, facts.seller, facts.pair) if events else None
    return LegTax(
        effective=shortfall(lost_value(facts.quote, facts.amount, sent), facts.received),
        token_unit=shortfall(sent, arrived),
    )


def lost_value(quote: int | None, amount: int, sent: int) -> int | None:
    """What the ``sent`` tokens that left the seller were worth, at the rate the router
    quoted for the ``amount`` sold (``quote``): the quote itself when nothing more left.

    Worked example: selling 1,000 tokens quoted at 0.1 ETH while the token burns 500 more
    from the seller's balance: 1,500 tokens left, worth 0.15 ETH at that rate; the seller
    got 0.1 ETH, an effective loss of 33.3%, as in token units (500 of 1,500).  The rate
    of the whole amount is used (not a fresh quote for 1,500, which the pool's curve
    would price lower): the extra tokens never reached the pool.
    """
    if quote is None or amount <= 0 or sent <= amount:
        return quote
    return quote * sent // amount


class BuyFacts(NamedTuple):
    """What one simulated buy showed: the quote in tokens, the buyer's balance growth;
    ``pool``: the pool bought from (None: unknown)."""

    token: str
    buyer: str
    quote: int | None
    balance_gain: int | None
    logs: tuple[Log, ...]
    pool: str | None = None


def buy_tax(facts: BuyFacts) -> LegTax:
    """Both buy figures.  Without a quote (a router or quoter that cannot quote the
    amount) the token-unit figure compares the tokens that arrived with the tokens the
    pool logged sending out in the buy, what the AMM paid; the effective figure stays
    unmeasured (None), never a guess."""
    events = transfers(facts.logs, facts.token)
    arrived = moved(events, None, facts.buyer) if events else None
    expected = facts.quote
    if expected is None and facts.pool and events:
        expected = moved(events, facts.pool, None) or None
    return LegTax(
        effective=shortfall(facts.quote, facts.balance_gain),
        token_unit=shortfall(expected, arrived),
    )


class TransferFacts(NamedTuple):
    """A wallet-to-wallet transfer: amount sent, receiver's balance growth, the logs."""

    token: str
    sender: str
    receiver: str
    amount: int
    received: int | None
    logs: tuple[Log, ...]


def transfer_tax(facts: TransferFacts) -> LegTax:
    events = transfers(facts.logs, facts.token)
    arrived = moved(events, facts.sender, facts.receiver) if events else None
    return LegTax(
        effective=shortfall(facts.amount, facts.received),
        token_unit=shortfall(facts.amount, arrived),
    )


def explain(leg: str, tax: LegTax) -> str | None:
    """A sentence for the report when the two figures differ by a point or more."""
    diff = tax.difference
    if diff is None or abs(diff) < 1.0 or tax.effective is None or tax.token_unit is None:
        return None
    if diff > 0:
        why = "the token's own trades or balance changes during the trade cost the user more"
    else:
        why = "the pair received more than the user's tokens (e.g. reflections), softening the fee"
    return (
        f"{leg} tax is {tax.effective:.1f}% of the quote but {tax.token_unit:.1f}% in token "
        f"units: {why}"
    )


# HELPERS


def _word(data: str) -> int | None:
    text = data[2:] if data.startswith("0x") else data
    if len(text) < 64:
        return None
    try:
        return int(text[:64], 16)
    except ValueError:
        return None


def _topic_address(topic: str) -> str:
    return "0x" + topic[-40:]

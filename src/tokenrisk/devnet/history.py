"""Plan the devnet's trading history: who does what to which token, in which block.

Pure and deterministic (seeded): the same catalogue always gives the same actors,
amounts and order, so builds are reproducible and ``$holder:<n>`` can name a buyer
before the token is even deployed.  :mod:`tokenrisk.devnet.trading` executes a plan.

The plan is a list of rounds; each round becomes one mined block (or a few, if it
overflows the block gas limit) holding steps of many tokens, so the chain reads like a
chain: launches spread over the first part, snipers in the block right after their
token's launch, buyers spread over many blocks, sells and siphons later, and the
owner's ``afterHistory`` calls at the end.  Constraints honoured on purpose:

- regular buyers start ``SNIPER_GAP`` rounds after launch, beyond any sniper window;
- a seller sells at least ``SELL_GAP`` rounds (so >= ``SELL_GAP * MIN_BLOCK_SECONDS``
  seconds) after buying, past sell cooldowns;
- at most one sell per token per round (a "one sell per block" token stays fair).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import checksum
from tokenrisk.devnet.catalogue import TokenSpec

ROUNDS = 150
LAUNCH_SPAN = 0.35
LAUNCH_SLOTS = 38
"""Launches are ``ROUNDS * LAUNCH_SPAN / LAUNCH_SLOTS`` rounds apart, in catalogue order.
The spacing is a constant (it was fixed when the catalogue held 38 tokens) rather than
depending on the catalogue's length, so appending a token never moves the launches, and
therefore the histories, holders and fee balances, of the tokens before it."""
BUY_END = 0.8
SNIPER_GAP = 4
SELL_GAP = 8
MIN_BLOCK_SECONDS = 12
MAX_BLOCK_SECONDS = 600
SEED = "tokenrisk-devnet-v1"


@dataclass(frozen=True)
class Step:
    """One action in a round.

    ``kind`` is ``launch``, ``owner`` (``index`` = position in ``afterLaunch``),
    ``snipe``/``buy`` (``share`` = fraction of the pool's base reserve to spend),
    ``sell``/``sniper_sell`` (``share`` = fraction of the actor's balance) or
    ``siphon`` (``actor`` = the holder; ``share`` = fraction of their balance).
    """

    kind: str
    token: str
    actor: str = ""
    index: int = 0
    share: float = 0.0


@dataclass
class TokenRoles:
    """The addresses that play each role for one token."""

    holders: list[str] = field(default_factory=list)
    snipers: list[str] = field(default_factory=list)
    sellers: list[str] = field(default_factory=list)
    siphoned: list[str] = field(default_factory=list)


@dataclass
class HistoryPlan:
    rounds: list[list[Step]]
    seconds: list[int]
    """Seconds between the previous block and each round's block."""
    roles: dict[str, TokenRoles]


def actor_address(token_id: str, role: str, n: int) -> str:
    """A fresh, deterministic EOA address (nobody holds its key; the devnet impersonates)."""
    digest = keccak(text=f"{SEED}/{token_id}/{role}/{n}")
    return checksum("0x" + bytes(digest)[12:].hex())


def holder_address(token_id: str, n: int) -> str:
    """The n-th (0-based) history buyer of a token: what ``$holder:<n>`` resolves to."""
    return actor_address(token_id, "buyer", n)


def plan_history(tokens: Sequence[TokenSpec], rounds: int = ROUNDS) -> HistoryPlan:
    """Schedule launches and trading of every token over ``rounds`` blocks."""
    rng = random.Random(SEED)
    plan = HistoryPlan(
        rounds=[[] for _ in range(rounds)],
        seconds=[rng.randint(MIN_BLOCK_SECONDS, MAX_BLOCK_SECONDS) for _ in range(rounds)],
        roles={},
    )
    for k, token in enumerate(tokens):
        launch = min(int(k * rounds * LAUNCH_SPAN / LAUNCH_SLOTS), rounds - 1)
        plan.roles[token.id] = _plan_token(plan, token, launch, random.Random(f"{SEED}/{token.id}"))
    return plan


def _plan_token(plan: HistoryPlan, token: TokenSpec, launch: int, rng: random.Random) -> TokenRoles:
    last = len(plan.rounds) - 1
    plan.rounds[launch].append(Step("launch", token.id))
    for i, call in enumerate(token.after_launch):
        at = launch if call.when != "afterHistory" else last
        plan.rounds[at].append(Step("owner", token.id, index=i))
    roles = TokenRoles()
    if not token.pools:
        return roles
    _plan_snipers(plan, token, launch, rng, roles)
    bought = _plan_buyers(plan, token, launch, rng, roles)
    _plan_sells_and_siphons(plan, token, bought, rng, roles)
    return roles


def _plan_snipers(
    plan: HistoryPlan, token: TokenSpec, launch: int, rng: random.Random, roles: TokenRoles
) -> None:
    last = len(plan.rounds) - 1
    sell_rounds: set[int] = set()
    for n in range(token.history.snipers):
        sniper = actor_address(token.id, "sniper", n)
        roles.snipers.append(sniper)
        plan.rounds[launch + 1].append(
            Step("snipe", token.id, sniper, n, rng.uniform(0.003, 0.008))
        )
        at = _free_round(rng, launch + SELL_GAP, last - 1, sell_rounds)
        plan.rounds[at].append(Step("sniper_sell", token.id, sniper, n, rng.uniform(0.3, 0.9)))


def _plan_buyers(
    plan: HistoryPlan, token: TokenSpec, launch: int, rng: random.Random, roles: TokenRoles
) -> dict[str, int]:
    """Schedule buys; returns buyer address -> round of the buy."""
    end = max(int(len(plan.rounds) * BUY_END), launch + SNIPER_GAP + 1)
    bought: dict[str, int] = {}
    for n in range(token.history.buyers):
        buyer = holder_address(token.id, n)
        at = rng.randint(launch + SNIPER_GAP, end)
        share = 10 ** rng.uniform(-3.3, -2.3)
        plan.rounds[at].append(Step("buy", token.id, buyer, n, share))
        roles.holders.append(buyer)
        bought[buyer] = at
    return bought


def _plan_sells_and_siphons(
    plan: HistoryPlan,
    token: TokenSpec,
    bought: dict[str, int],
    rng: random.Random,
    roles: TokenRoles,
) -> None:
    last = len(plan.rounds) - 1
    buyers = list(bought)
    sellers = rng.sample(buyers, min(token.history.sellers, len(buyers)))
    others = [b for b in buyers if b not in sellers]
    siphoned = rng.sample(others, min(token.history.siphoned, len(others)))
    sell_rounds = {i for i, steps in enumerate(plan.rounds) if _sells_token(steps, token.id)}
    for seller in sellers:
        at = _free_round(rng, bought[seller] + SELL_GAP, last - 1, sell_rounds)
        plan.rounds[at].append(Step("sell", token.id, seller, share=rng.uniform(0.3, 0.8)))
        roles.sellers.append(seller)
    for holder in siphoned:
        at = rng.randint(min(bought[holder] + 2, last - 1), last - 1)
        plan.rounds[at].append(Step("siphon", token.id, holder, share=rng.uniform(0.6, 0.95)))
        roles.siphoned.append(holder)


def _sells_token(steps: list[Step], token_id: str) -> bool:
    return any(s.token == token_id and s.kind in ("sell", "sniper_sell") for s in steps)


def _free_round(rng: random.Random, low: int, high: int, taken: set[int]) -> int:
    """A random round in [low, high] not in ``taken`` (then marked taken)."""
    low = min(low, high)
    choices = [r for r in range(low, high + 1) if r not in taken] or [high]
    at = rng.choice(choices)
    taken.add(at)
    return at

"""Buy -> wallet transfer -> sell as a fresh EOA, in the node, with eth_simulateV1.

The plan (DESIGN.md "be the user"): a never-seen EOA funded with the base token
buys through the pool's router in one block, sends 10% to a second fresh wallet in the
next, and both sell everything in later blocks (block times in ``BLOCK_TIMES``).  Because
amounts must be fixed when a simulation is sent, it runs in rounds: the buy alone
(learn the amount bought), buy + transfer (learn balances), then three variants in one
JSON-RPC batch:

- ``main``: buyer sells in block 3, the receiver in block 4;
- ``same_block``: both sell in block 3 (a second sell failing only here means a
  one-sell-per-block limit);
- ``delayed``: the buyer sells ``delayed_blocks`` blocks and ``delayed_seconds`` later
  (a failure only here is a time bomb: ``delayed_sell_failed``).

Taxes are measured twice per leg (:mod:`tokenrisk.simulate.accounting`): in token units
from the call's Transfer logs, and effectively, as what the user received against the
router's quote read just before the trade in the same block (the sell quote is a call of
its own, ``<tag>.quote``).  Limits (``max_buy``, ``max_sell``) are searched with batches of
independent simulations; see :mod:`tokenrisk.simulate.limits`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from tokenrisk.chain.abi import decode_revert
from tokenrisk.chain.coalesce import LARGE_SIMULATION
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import decode_uint
from tokenrisk.errors import CallReverted, MalformedResponse
from tokenrisk.simulate.accounting import (
    BuyFacts,
    LegTax,
    Log,
    SellFacts,
    TransferFacts,
    buy_tax,
    parse_logs,
    sell_tax,
    transfer_tax,
)
from tokenrisk.simulate.calls import (
    BalanceSlot,
    Route,
    approve,
    balance_of,
    fresh_address,
    quoted_amount,
    transfer,
)

BLOCK_SECONDS = 12
# Seconds after the head at which each block of the journey happens: a person buys, sends
# some tokens a minute later and sells a few minutes after buying.  Blocks past the end
# of the table follow 12 s apart.
BLOCK_TIMES = (0, 12, 72, 300, 312)


@dataclass(frozen=True)
class SimSettings:
    """Knobs of the simulation; the defaults are what a careful person would try."""

    gas_limit: int = 10_000_000  # per simulated call: a gas burner ends here
    buy_bps: int = 50  # buy size: 0.5% of the pool's base-token reserve
    transfer_bps: int = 1_000  # share of the bought amount sent wallet-to-wallet
    delayed_blocks: int = 50_400  # ~7 days of 12 s blocks
    delayed_seconds: int = 7 * 86_400

    def buy_amount(self, base_reserve: int) -> int:
        """The default buy size for a pool holding ``base_reserve`` of the base token."""
        return max(1, base_reserve * self.buy_bps // 10_000)


@dataclass(frozen=True)
class Head:
    number: int
    timestamp: int


@dataclass(frozen=True)
class CallResult:
    ok: bool
    data: str
    gas: int
    reason: str | None
    logs: tuple[Log, ...] = ()

    @property
    def uint(self) -> int | None:
        return decode_uint(self.data) if self.ok else None


@dataclass(frozen=True)
class Funding:
    """How the buyer gets base tokens: a balance-slot override, or wrapping native coin."""

    base: str
    slot: BalanceSlot | None  # None: wrap native coin with ``deposit()``

    def apply(self, wallet: str, amount: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        overrides: dict[str, Any] = {wallet: {"balance": hex(10**30)}}
        if self.slot is not None:
            overrides[self.base] = {"stateDiff": self.slot.override(wallet, amount)}
            return overrides, []
        deposit = {"from": wallet, "to": self.base, "data": "0xd0e30db0", "value": hex(amount)}
        return overrides, [deposit]


def block_time(offset: int) -> int:
    if offset < len(BLOCK_TIMES):
        return BLOCK_TIMES[offset]
    return BLOCK_TIMES[-1] + (offset - len(BLOCK_TIMES) + 1) * BLOCK_SECONDS


def _reason(call: dict[str, Any]) -> str:
    revert = decode_revert(call.get("returnData"))
    if revert:
        return f"execution reverted: {revert}"
    error = call.get("error") or {}
    message = str(error.get("message") or "execution reverted")
    gas_used = int(call.get("gasUsed", "0x0"), 16)
    return message if gas_used == 0 else f"{message} (gas used {gas_used})"


def parse_call(call: dict[str, Any]) -> CallResult:
    ok = call.get("status") == "0x1"
    gas = int(call.get("gasUsed", "0x0"), 16)
    data = str(call.get("returnData") or "0x")
    reason = None if ok else _reason(call)
    return CallResult(ok=ok, data=data, gas=gas, reason=reason, logs=parse_logs(call.get("logs")))


# TYPED REPLIES: a large simulation's reply decoded straight into what parse_call reads
# (RpcClient.call_typed); block headers and log metadata are skipped, not built.


class SimLog(msgspec.Struct):
    address: str = ""
    topics: list[str] = []
    data: str | None = None


class SimCall(msgspec.Struct):
    status: str | None = None
    returnData: str | None = None  # the node's member names
    gasUsed: str = "0x0"
    logs: list[SimLog] = []
    error: dict[str, Any] | None = None


class SimBlock(msgspec.Struct):
    calls: list[SimCall] = []


SIMULATION = list[SimBlock]
"""The typed form of an ``eth_simulateV1`` result."""


def parse_typed_call(call: SimCall) -> CallResult:
    """:func:`parse_call` of a typed call (the same result for the same reply)."""
    ok = call.status == "0x1"
    reason = None
    if not ok:
        reason = _reason(
            {"returnData": call.returnData, "error": call.error, "gasUsed": call.gasUsed}
        )
    logs = tuple(
        Log(log.address.lower(), tuple(t.lower() for t in log.topics), log.data or "0x")
        for log in call.logs
    )
    data = call.returnData or "0x"
    return CallResult(ok=ok, data=data, gas=int(call.gasUsed, 16), reason=reason, logs=logs)


@dataclass
class Plan:
    """Blocks of one simulation; ``mark`` names calls so results are found by name."""

    head: Head
    gas_limit: int
    prelude: list[dict[str, Any]] = field(default_factory=list)  # blocks run before ours
    blocks: list[dict[str, Any]] = field(default_factory=list)
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    actors: dict[str, str] = field(default_factory=dict)  # role ("buyer", a sell tag) -> address

    def block(
        self,
        offset: int,
        overrides: dict[str, Any] | None = None,
        number: int | None = None,
        seconds: int | None = None,
    ) -> None:
        time = self.head.timestamp + (seconds if seconds is not None else block_time(offset))
        block: dict[str, Any] = {
            "blockOverrides": {
                "number": hex(number if number is not None else self.head.number + offset),
                "time": hex(time),
                "gasLimit": hex(max(30_000_000, self.gas_limit * 12)),
            },
            "calls": [],
        }
        if overrides:
            block["stateOverrides"] = overrides
        self.blocks.append(block)

    def call(self, call: dict[str, Any], mark: str | None = None) -> None:
        calls = self.blocks[-1]["calls"]
        calls.append({**call, "gas": hex(self.gas_limit)})
        if mark:
            self.marks[mark] = (len(self.blocks) - 1, len(calls) - 1)

    def params(self) -> list[Any]:
        return [
            {
                "blockStateCalls": self.prelude + self.blocks,
                "validation": False,
                "traceTransfers": False,
            },
            "latest",
        ]


@dataclass(frozen=True)
class Outcome:
    results: dict[str, CallResult]
    actors: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, mark: str) -> CallResult:
        return self.results[mark]

    def get(self, mark: str) -> CallResult | None:
        return self.results.get(mark)


def _outcome(plan: Plan, reply: Any) -> Outcome:
    """The marked calls of a reply, plain JSON or typed (:data:`SIMULATION`)."""
    skip = len(plan.prelude)
    if not isinstance(reply, list) or len(reply) != skip + len(plan.blocks):
        raise MalformedResponse("eth_simulateV1 returned an unexpected shape")
    out: dict[str, CallResult] = {}
    try:
        for mark, (b, c) in plan.marks.items():
            block = reply[skip + b]
            if isinstance(block, SimBlock):
                out[mark] = parse_typed_call(block.calls[c])
            else:
                out[mark] = parse_call(block["calls"][c])
    except (IndexError, KeyError, TypeError) as exc:
        raise MalformedResponse("eth_simulateV1 returned fewer calls than were sent") from exc
    return Outcome(out, dict(plan.actors))


class Simulator:
    """Runs plans for one route on one node at one head block."""

    def __init__(
        self,
        rpc: RpcClient,
        route: Route,
        head: Head,
        funding: Funding,
        settings: SimSettings,
        prelude: Sequence[dict[str, Any]] = (),
    ) -> None:
        """``prelude``: blocks every plan starts with (e.g. a simulated pool); ``head`` is
        then the last prelude block, so the plan's own blocks follow it."""
        self.prelude = list(prelude)
        self.rpc = rpc
        self.route = route
        self.head = head
        self.funding = funding
        self.settings = settings

    def plan(self) -> Plan:
        return Plan(self.head, self.settings.gas_limit, prelude=list(self.prelude))

    async def run(self, plans: Sequence[Plan]) -> list[Outcome | CallReverted]:
        """Send independent simulations as one batch.

        A simulation the EVM failed as a whole is returned as its CallReverted; any
        other node error raises (it says nothing about the token).
        """
        large = [i for i, plan in enumerate(plans) if len(plan.blocks) >= LARGE_SIMULATION]
        small = [i for i in range(len(plans)) if i not in set(large)]
        replies: list[Any] = [None] * len(plans)
        sent = [self._typed(plans[i]) for i in large]
        if small:
            sent.append(self.rpc.batch([("eth_simulateV1", plans[i].params()) for i in small]))
        done = await asyncio.gather(*sent)
        for i, reply in zip(large, done, strict=False):
            replies[i] = reply
        if small:
            for i, reply in zip(small, done[-1], strict=True):
                replies[i] = reply
        outcomes: list[Outcome | CallReverted] = []
        for plan, reply in zip(plans, replies, strict=True):
            outcomes.append(reply if isinstance(reply, CallReverted) else _outcome(plan, reply))
        return outcomes

    async def _typed(self, plan: Plan) -> Any:
        """One large plan on its own request, decoded typed; CallReverted as a value."""
        try:
            return await self.rpc.call_typed("eth_simulateV1", plan.params(), SIMULATION)
        except CallReverted as exc:
            return exc

    async def run_one(self, plan: Plan) -> Outcome:
        (outcome,) = await self.run([plan])
        if isinstance(outcome, CallReverted):
            raise outcome
        return outcome

    # -- building blocks -------------------------------------------------------------

    def add_buy(self, s: Plan, buyer: str, amount_in: int, offset: int = 1) -> None:
        """Block ``offset``: fund, approve, quote, buy, read the buyer's balance."""
        overrides, pre = self.funding.apply(buyer, amount_in)
        s.actors["buyer"] = buyer
        s.block(offset, overrides)
        for call in pre:
            s.call(call)
        route = self.route
        s.call(approve(route.base, buyer, route.dex.router))
        s.call({"from": buyer, **route.quote(amount_in)}, "quote")
        s.call(balance_of(route.base, buyer, buyer), "base_before")
        s.call(route.swap(buyer, amount_in), "buy")
        s.call(balance_of(route.token, buyer, buyer), "bought")

    def add_transfer(
        self, s: Plan, sender: str, receiver: str, amount: int, offset: int = 2
    ) -> None:
        s.block(offset)
        s.actors |= {"sender": sender, "receiver": receiver}
        s.call(transfer(self.route.token, sender, receiver, amount), "transfer")
        s.call(balance_of(self.route.token, sender, sender), "sender_after_transfer")
        s.call(balance_of(self.route.token, receiver, receiver), "received")

    def add_sell(self, s: Plan, seller: str, amount: int, tag: str, pool: bool = True) -> None:
        """Calls of one sell in the current block, marked ``<tag>.<step>``; ``pool``
        False leaves out the pool's balance before and after (only the owner-power
        scan's effects read them)."""
        route = self.route
        pair = route.pool.address
        s.actors[tag] = seller
        s.call(approve(route.token, seller, route.dex.router))
        s.call(balance_of(route.token, seller, seller), f"{tag}.seller_before")
        if pool:
            s.call(balance_of(route.token, pair, seller), f"{tag}.pool_before")
        s.call(balance_of(route.base, seller, seller), f"{tag}.base_before")
        s.call({"from": seller, **route.quote(amount, selling=True)}, f"{tag}.quote")
        s.call(route.swap(seller, amount, selling=True), f"{tag}.sell")
        if pool:
            s.call(balance_of(route.token, pair, seller), f"{tag}.pool_after")
        s.call(balance_of(route.token, seller, seller), f"{tag}.seller_after")
        s.call(balance_of(route.base, seller, seller), f"{tag}.base_after")

    def buy_only(self, amount_in: int) -> Plan:
        s = self.plan()
        self.add_buy(s, fresh_address(), amount_in)
        return s

    def buy_then_sell(self, amount_in: int, sell_amount: int) -> Plan:
        s = self.plan()
        buyer = fresh_address()
        self.add_buy(s, buyer, amount_in)
        s.block(3)
        self.add_sell(s, buyer, sell_amount, "buyer")
        return s


# ACCOUNTING: outcomes -> accounting facts


def _uint(outcome: Outcome, mark: str) -> int | None:
    result = outcome.get(mark)
    return result.uint if result is not None else None


def _quoted(outcome: Outcome, mark: str, v3: bool) -> int | None:
    result = outcome.get(mark)
    return quoted_amount(result.data, v3) if result is not None and result.ok else None


def buy_leg(outcome: Outcome, route: Route) -> LegTax:
    """Buy taxes: the quote before the buy vs the Transfer logs and the fresh buyer's balance."""
    buy = outcome["buy"]
    facts = BuyFacts(
        token=route.token,
        buyer=outcome.actors.get("buyer", ""),
        quote=_quoted(outcome, "quote", route.v3),
        balance_gain=_uint(outcome, "bought"),
        logs=buy.logs,
    )
    return buy_tax(facts)


def transfer_leg(outcome: Outcome, route: Route, sent: int) -> LegTax:
    """Wallet-transfer taxes: ``sent`` vs the logs and the fresh receiver's balance."""
    facts = TransferFacts(
        token=route.token,
        sender=outcome.actors.get("sender", ""),
        receiver=outcome.actors.get("receiver", ""),
        amount=sent,
        received=_uint(outcome, "received"),
        logs=outcome["transfer"].logs,
    )
    return transfer_tax(facts)


def sell_leg(outcome: Outcome, route: Route, tag: str, amount: int) -> LegTax:
    """Sell taxes of the sell marked ``tag`` that offered ``amount`` tokens."""
    before, after = _uint(outcome, f"{tag}.seller_before"), _uint(outcome, f"{tag}.seller_after")
    b0, b1 = _uint(outcome, f"{tag}.base_before"), _uint(outcome, f"{tag}.base_after")
    facts = SellFacts(
        token=route.token,
        seller=outcome.actors.get(tag, ""),
        pair=route.pool.address,
        amount=amount,
        seller_spent=before - after if before is not None and after is not None else None,
        quote=_quoted(outcome, f"{tag}.quote", route.v3),
        received=b1 - b0 if b0 is not None and b1 is not None else None,
        logs=outcome[f"{tag}.sell"].logs,
    )
    return sell_tax(facts)

"""Buy -> wallet transfer -> sell as a fresh EOA, in the node, with eth_simulateV1.

The plan (DESIGN.md "be the user"): a never-seen EOA funded with the base token
buys through the pool's router in one block, sends 10% to a second fresh wallet in the
next, and both sell everything in later blocks (block times in ``BLOCK_TIMES``).  Because
amounts must be fixed when a simulation is sent, it runs in rounds: the buy alone
(learn the amount bought), buy + transfer (learn balances), then four variants in one
JSON-RPC batch:

- ``main``: buyer sells in block 3, the receiver in block 4;
- ``same_block``: both sell in block 3 (a second sell failing only here means a
  one-sell-per-block limit);
- ``delayed``: the buyer sells ``delayed_blocks`` blocks and ``delayed_seconds`` later
  (a failure only here is a time bomb: ``delayed_sell_failed``);
- ``half``: the buyer sells half its balance in block 3 (a token that takes more than
  the amount sold from what the seller keeps shows only then, see ``journey``).

Taxes are measured twice per leg (:mod:`tokenrisk.simulate.accounting`): in token units
from the call's Transfer logs, and effectively, as what the user received against the
router's quote read just before the trade in the same block (the sell quote is a call of
its own, ``<tag>.quote``).  Limits (``max_buy``, ``max_sell``) are searched with batches of
independent simulations; see :mod:`tokenrisk.simulate.limits`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, cast

import msgspec

from tokenrisk.chain.abi import decode_revert, decode_uint
from tokenrisk.chain.coalesce import LARGE_SIMULATION
from tokenrisk.chain.head import ChainHead as ChainHead  # plans are pinned to it
from tokenrisk.chain.rpc import (
    NULL,
    RpcClient,
    RpcSettings,
    Shallow,
    TypedCall,
    decode_reply,
    raw_json,
)
from tokenrisk.chain.signatures import DEPOSIT
from tokenrisk.errors import CallReverted, MalformedResponse, RpcError
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
    V4Quote,
    balance_of,
    fresh_address,
    fresh_randao,
    quoted_amount,
    transfer,
)

# re-exported: checks build the limits, the other simulations price their calls alike
from tokenrisk.simulate.gas import NodeLimits as NodeLimits
from tokenrisk.simulate.gas import funds as funds
from tokenrisk.simulate.gas import nonce, shares
from tokenrisk.simulate.gas import price as price

T = TypeVar("T")

BuyReads = Literal["all", "bought", "none"]
"""What a plan's buy reads (issue #27: a check's plans sent ~50 reads nobody used):
``all`` the quote before it and the tokens bought (``quote``, ``buy``, ``bought``: the
buy whose taxes are measured); ``bought`` the tokens bought only (``buy``, ``bought``:
a limit search's sizes, the transfer plan); ``none`` nothing, unmarked (a buy a later
plan replays)."""
SellReads = Literal["all", "received", "none"]
"""What a sell reads around it: ``all`` the seller's token and base balances and the
quote (its taxes); ``received`` the base balances only (a large sell's proceeds);
``none`` nothing (``<tag>.sell`` alone: a sell whose success is all that is read)."""


class Memo(Protocol):
    """Where :meth:`Simulator.remembered` keeps results (a ``caching.MemoryCache``)."""

    def get(self, key: Hashable) -> tuple[bool, Any]: ...

    def put(self, key: Hashable, value: Any, ttl: float | None = None) -> None: ...


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
    delayed_blocks: int = 50_400  # ~7 days of 12 s blocks (checked by eth_call, see journey)
    delayed_seconds: int = 7 * 86_400

    def buy_amount(self, base_reserve: int) -> int:
        """The default buy size for a pool holding ``base_reserve`` of the base token."""
        return max(1, base_reserve * self.buy_bps // 10_000)


class CallResult(NamedTuple):
    """One simulated call's outcome.  A NamedTuple (immutable, like the frozen dataclass
    it was): a check builds ~300 of these, and a frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` per field) cost about twice as much (issue #27)."""

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
        """(state overrides, calls to make first) giving ``wallet`` ``amount`` of the base
        token; the native coin it needs is :meth:`native` (the plan funds it)."""
        if self.slot is not None:
            return {self.base: {"stateDiff": self.slot.override(wallet, amount)}}, []
        deposit = {"from": wallet, "to": self.base, "data": DEPOSIT, "value": hex(amount)}
        return {}, [deposit]

    def native(self, amount: int) -> int:
        """Native coin spent to get ``amount`` of the base token (wrapping it, or none)."""
        return amount if self.slot is None else 0


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
    logs = call.get("logs")
    return CallResult(ok, data, gas, reason, parse_logs(logs) if logs else ())


# TYPED REPLIES: a simulation's reply decoded straight into what parse_call reads (a
# large one by RpcClient.call_typed, the others in their batch as rpc.TypedCall); block
# headers and log metadata are skipped, not built.  A reply of another shape comes back
# as plain JSON, which _outcome reads too.


class SimLog(msgspec.Struct):
    address: str = ""
    topics: list[str] = []
    data: str | None = None


NO_LOGS = msgspec.Raw(b"[]")


class SimCall(msgspec.Struct):
    """One call of a typed reply.  Its ``logs`` are kept as the reply's JSON text and
    decoded only when the call's result is read (:func:`typed_logs`): a check reads
    under a third of its marked calls and none of the unmarked ones (approvals, the
    buys a sell variant repeats), whose logs were most of what a reply decoded into."""

    status: str | None = None
    returnData: str | None = None  # the node's member names
    gasUsed: str = "0x0"
    logs: msgspec.Raw = NO_LOGS
    error: msgspec.Raw = NULL  # read (depth-guarded) only for a failed call: raw_json


class SimBlock(msgspec.Struct):
    number: str | None = None
    calls: list[SimCall] = []


SIMULATION = Shallow(list[SimBlock])
"""The typed form of an ``eth_simulateV1`` result (shallow by construction: its reply
is decoded without the depth guard's scan first, :class:`~tokenrisk.chain.rpc.Shallow`)."""


def parse_typed_call(call: SimCall) -> CallResult:
    """:func:`parse_call` of a typed call (the same result for the same reply)."""
    ok = call.status == "0x1"
    reason = None
    if not ok:
        error = raw_json(call.error, RpcSettings.max_depth)
        reason = _reason(
            {
                "returnData": call.returnData,
                "error": error if isinstance(error, dict) else None,
                "gasUsed": call.gasUsed,
            }
        )
    data = call.returnData or "0x"
    return CallResult(ok, data, int(call.gasUsed, 16), reason, typed_logs(call.logs))


_LOGS = msgspec.json.Decoder(list[SimLog])


def typed_logs(raw: msgspec.Raw) -> tuple[Log, ...]:
    """A typed call's logs as :func:`parse_logs` reads them from plain JSON: decoded
    typed, or, when they are not a list of well-formed logs, parsed plain (which skips
    malformed entries; ``null`` is none), as when the whole reply was read plain.  The
    plain parse keeps the depth guard (the reply was not scanned: ``Shallow``)."""
    if raw == NO_LOGS:
        return ()
    try:
        entries = _LOGS.decode(raw)
    except msgspec.MsgspecError:
        return parse_logs(decode_reply(bytes(raw), RpcSettings.max_depth))
    return tuple(
        [
            Log(log.address.lower(), tuple([t.lower() for t in log.topics]), log.data or "0x")
            for log in entries
        ]
    )


@dataclass
class Plan:
    """Blocks of one simulation; ``mark`` names calls so results are found by name.

    The rules every node enforces hold by construction (NODES.md): the request is pinned
    to ``base`` (the head that was read, never "latest"); block ``offset`` is numbered
    ``head.number + offset`` (``head``: the base, or a prelude's last block) and its time
    is above every earlier block's; each block keeps the chain's gas limit and carries
    the base's base fee and fee recipient; gas and wallet funding are filled in when the
    plan is sent (:mod:`tokenrisk.simulate.gas`).
    """

    head: ChainHead
    gas_limit: int
    prelude: list[dict[str, Any]] = field(default_factory=list)  # blocks run before ours
    blocks: list[dict[str, Any]] = field(default_factory=list)
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    actors: dict[str, str] = field(default_factory=dict)  # role ("buyer", a sell tag) -> address
    quotes: dict[str, V4Quote] = field(default_factory=dict)  # V4 quote mark -> how to read it
    base: ChainHead | None = None  # the pinned base block; None: ``head`` itself
    limits: NodeLimits = field(default_factory=NodeLimits)
    heavy: list[list[bool]] = field(default_factory=list)  # per call: a trade, not a read
    wallets: list[tuple[int, str, int, bool]] = field(default_factory=list)

    @property
    def pinned(self) -> ChainHead:
        """The base block the node simulates on."""
        return self.base or self.head

    @property
    def span(self) -> int:
        """How far past the base the last block is (a node allows ``limits.max_blocks``)."""
        numbers = [_number_of(b) for b in self.prelude + self.blocks]
        return max((n for n in numbers if n is not None), default=self.pinned.number) - (
            self.pinned.number
        )

    def block(
        self, offset: int, overrides: dict[str, Any] | None = None, seconds: int | None = None
    ) -> None:
        """Start block ``offset`` (1 = the first after ``head``), ``seconds`` after the
        head (default :func:`block_time`)."""
        time = self.head.timestamp + (seconds if seconds is not None else block_time(offset))
        base = self.pinned
        block: dict[str, Any] = {
            "blockOverrides": {
                "number": hex(self.head.number + offset),
                "time": hex(time),
                "baseFeePerGas": hex(base.base_fee),
                "feeRecipient": base.miner,
                "prevRandao": fresh_randao(),
            },
            "calls": [],
        }
        if overrides:
            block["stateOverrides"] = overrides
        self.blocks.append(block)
        self.heavy.append([])

    def fund(self, wallet: str, value: int = 0, fresh: bool = True) -> None:
        """Give ``wallet`` native coin for ``value`` and its calls' gas from this block on;
        a ``fresh`` wallet also gets a used wallet's small nonce."""
        self.wallets.append((len(self.blocks) - 1, wallet, value, fresh))

    def call(self, call: dict[str, Any], mark: str | None = None, heavy: bool = False) -> None:
        """Add ``call`` to the current block; ``heavy``: a trade (gets the larger gas)."""
        calls = self.blocks[-1]["calls"]
        calls.append(call)
        self.heavy[-1].append(heavy)
        if mark:
            self.marks[mark] = (len(self.blocks) - 1, len(calls) - 1)

    def quote(self, route: Route, wallet: str, amount: int, mark: str, selling: bool) -> None:
        """The route's quote for ``amount`` as call ``mark`` (a V4 quote reads the pool's
        state; how to turn it into an amount is kept for :func:`quoted_of`)."""
        self.call({"from": wallet, **route.quote(amount, selling=selling)}, mark)
        if route.v4:
            self.quotes[mark] = route.v4_quote(amount, selling)

    def params(self) -> list[Any]:
        spent = sum(int(c.get("gas", "0x0"), 16) for b in self.prelude for c in b["calls"])
        base = self.pinned
        gas = shares(self.heavy, self.gas_limit, base.gas_limit, self.limits.request_gas, spent)
        gas_price = price(base.base_fee)
        blocks, spent_by, senders = _priced(self.blocks, self.heavy, gas, hex(gas_price))
        funded: dict[int, dict[str, Any]] = {}  # block -> its overrides with the funding
        for b, wallet, value, fresh in self._funded(senders):
            used = spent_by.get(wallet.lower())
            account = {"balance": hex(funds(used[b:] if used else (), gas_price, value))}
            if fresh:
                account["nonce"] = hex(nonce())
            overrides = funded.setdefault(b, dict(blocks[b].get("stateOverrides") or {}))
            overrides[wallet] = {**overrides.get(wallet, {}), **account}
        for b, overrides in funded.items():
            blocks[b] = {**blocks[b], "stateOverrides": overrides}
        return [
            {
                "blockStateCalls": self.prelude + blocks,
                "validation": False,
                "traceTransfers": False,
            },
            base.tag,
        ]

    def _funded(self, senders: list[tuple[int, str]]) -> list[tuple[int, str, int, bool]]:
        """The wallets to fund: those :meth:`fund` named, and every other sender from the
        first block it sends in (``senders``: each sender's first block, in the order
        they first send; a fresh wallet: a nonce too)."""
        named = {w.lower() for _, w, _, _ in self.wallets}
        out = list(self.wallets)
        out += [(b, sender, 0, True) for b, sender in senders if sender.lower() not in named]
        return out


def _priced(
    plan_blocks: list[dict[str, Any]],
    heavy: list[list[bool]],
    gas: tuple[int, int],
    price_hex: str,
) -> tuple[list[dict[str, Any]], dict[str, list[int]], list[tuple[int, str]]]:
    """The blocks with each call's declared gas (``gas``: a light call's, a heavy
    call's; ``heavy[b][c]`` says which) and price; the gas every lower-case sender
    declares in each block (a list indexed by block); and each non-empty sender's first
    (block, sender) in order.

    One pass over the calls (a check prices ~330, a first check ~2,400): funding a
    hundred holders' wallets is not a pass per wallet.  A call whose sender is the very
    string the previous call had (a wallet's approve, quote, reads and trade in a row)
    adds to its list (no lower-casing, no lookup); a call is copied and its two fields
    set (cheaper than a merged literal, same keys in the same order)."""
    light, trade = gas
    light_hex, trade_hex = hex(light), hex(trade)
    spent_by: dict[str, list[int]] = {}
    senders: list[tuple[int, str]] = []
    blocks: list[dict[str, Any]] = []
    count = len(plan_blocks)
    last: Any = None
    spent: list[int] = []
    for b, block in enumerate(plan_blocks):
        calls: list[dict[str, Any]] = []
        for call, is_heavy in zip(block["calls"], heavy[b], strict=True):
            priced = call.copy()
            priced["gas"] = trade_hex if is_heavy else light_hex
            priced["gasPrice"] = price_hex
            calls.append(priced)
            sender = call.get("from", "")
            if sender is not last or last is None:
                last = sender
                sender = str(sender)
                key = sender.lower()
                found = spent_by.get(key)
                if found is None:
                    found = spent_by[key] = [0] * count
                    if sender:
                        senders.append((b, sender))
                spent = found
            spent[b] += trade if is_heavy else light
        blocks.append({**block, "calls": calls})
    return blocks, spent_by, senders


def _number_of(block: Any) -> int | None:
    """A block's number: a plan block's override, or a reply block's ``number``."""
    if isinstance(block, SimBlock):
        raw: Any = block.number
    elif isinstance(block, dict):
        raw = (block.get("blockOverrides") or {}).get("number", block.get("number"))
    else:
        raw = None
    try:
        return int(raw, 16) if isinstance(raw, str) else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Outcome:
    results: Mapping[str, CallResult]
    actors: dict[str, str] = field(default_factory=dict)
    quotes: dict[str, V4Quote] = field(default_factory=dict)

    def __getitem__(self, mark: str) -> CallResult:
        return self.results[mark]

    def get(self, mark: str) -> CallResult | None:
        return self.results.get(mark)


class Marked(Mapping[str, CallResult]):
    """The marked calls of a typed reply, each one's :class:`CallResult` built when it
    is first read (then kept).

    A check marks ~1,000 calls and reads under a third of them (a limit ladder reads
    one mark of each rung, a holder sell a few of its ten): building every result
    up front was the largest share of the service's CPU between a reply and the next
    request (issue #27).  The reply's shape is checked when the mapping is made
    (:func:`_outcome`), so a missing call still raises there, not at a later read; it
    keeps only the marked calls, their logs copied out of the reply's body: a
    ``msgspec.Raw`` decoded from a body is a view that keeps the whole body alive, and
    an outcome kept a while must not hold a reply of megabytes."""

    __slots__ = ("_calls", "_done")

    def __init__(self, calls: dict[str, SimCall]) -> None:
        self._calls = calls
        self._done: dict[str, CallResult] = {}

    def __getitem__(self, mark: str) -> CallResult:
        done = self._done.get(mark)
        if done is None:
            done = self._done[mark] = _typed_result(self._calls[mark])
        return done

    def get(self, mark: str, default: Any = None) -> Any:
        """``Mapping.get`` without its extra frame (:meth:`Outcome.get` is the hot read)."""
        done = self._done.get(mark)
        if done is None:
            call = self._calls.get(mark)
            if call is None:
                return default
            done = self._done[mark] = _typed_result(call)
        return done

    def __iter__(self) -> Iterator[str]:
        return iter(self._calls)

    def __len__(self) -> int:
        return len(self._calls)


def _typed_result(call: SimCall) -> CallResult:
    """:func:`parse_typed_call`, a successful call without logs (most marks: a read)
    built straight."""
    if call.status == "0x1" and call.logs == NO_LOGS:
        return CallResult(True, call.returnData or "0x", int(call.gasUsed, 16), None)
    return parse_typed_call(call)


def _own_blocks(plan: Plan, reply: Any) -> list[Any]:
    """The reply's blocks for the plan's own blocks.

    Matched by number: geth fills a gap between two numbers with empty blocks and
    returns them too.  A node that numbers blocks otherwise but returns exactly one
    block per block sent (anvil without gaps) is matched by position.
    """
    if not isinstance(reply, list):
        raise MalformedResponse("eth_simulateV1 returned an unexpected shape")
    skip = len(plan.prelude)
    if _in_place(plan, reply, skip):
        return reply[skip:]
    wanted = [_number_of(b) for b in plan.blocks]
    by_number = {n: block for block in reply if (n := _number_of(block)) is not None}
    if all(n is not None and n in by_number for n in wanted):
        return [by_number[n] for n in wanted if n is not None]
    if len(reply) == skip + len(plan.blocks):
        return reply[skip:]
    raise MalformedResponse("eth_simulateV1 returned an unexpected shape")


def _in_place(plan: Plan, reply: list[Any], skip: int) -> bool:
    """The usual typed reply: one block per block sent, each numbered with the hex the
    plan's block at its place was given, the plan's numbers distinct.  Matching by
    number then picks exactly these blocks, so it is skipped (no number parsed)."""
    blocks = plan.blocks
    if len(reply) != skip + len(blocks):
        return False
    numbers: list[str] = []
    for sent, got in zip(blocks, reply[skip:], strict=True):
        number = (sent.get("blockOverrides") or {}).get("number")
        if not isinstance(got, SimBlock) or not isinstance(number, str) or got.number != number:
            return False
        numbers.append(number)
    try:
        return len({int(n, 16) for n in numbers}) == len(numbers)
    except ValueError:
        return False


def _outcome(plan: Plan, reply: Any) -> Outcome:
    """The marked calls of a reply, plain JSON or typed (:data:`SIMULATION`; a typed
    reply's results are built when read: :class:`Marked`)."""
    own = _own_blocks(plan, reply)
    actors, quotes = dict(plan.actors), dict(plan.quotes)
    if all(isinstance(block, SimBlock) for block in own):
        marked: dict[str, SimCall] = {}
        try:
            for mark, (b, c) in plan.marks.items():
                call = marked[mark] = own[b].calls[c]
                logs, error = call.logs, call.error  # out of the body (see Marked)
                if logs is not NO_LOGS:
                    call.logs = NO_LOGS if logs == NO_LOGS else logs.copy()
                if error is not NULL:
                    call.error = NULL if error == NULL else error.copy()
        except IndexError as exc:
            raise MalformedResponse("eth_simulateV1 returned fewer calls than were sent") from exc
        return Outcome(Marked(marked), actors, quotes)
    out: dict[str, CallResult] = {}
    try:
        for mark, (b, c) in plan.marks.items():
            block = own[b]
            if isinstance(block, SimBlock):
                out[mark] = _typed_result(block.calls[c])
            else:
                out[mark] = parse_call(block["calls"][c])
    except (IndexError, KeyError, TypeError) as exc:
        raise MalformedResponse("eth_simulateV1 returned fewer calls than were sent") from exc
    return Outcome(out, actors, quotes)


def too_many_blocks(exc: RpcError) -> bool:
    """The node refused a simulation's span (geth ``-38026 too many blocks``)."""
    return exc.code == -38026 or "too many blocks" in exc.message.lower()


class Simulator:
    """Runs plans for one route on one node, pinned to one head block."""

    def __init__(
        self,
        rpc: RpcClient,
        route: Route,
        head: ChainHead,
        funding: Funding,
        settings: SimSettings,
        prelude: Sequence[dict[str, Any]] = (),
        base: ChainHead | None = None,
        limits: NodeLimits | None = None,
        learned: Callable[[int], None] | None = None,
    ) -> None:
        """``prelude``: blocks every plan starts with (e.g. a simulated pool); ``head`` is
        then the last prelude block, so the plan's own blocks follow it, and ``base`` the
        head that was read (the block every request is pinned to).  ``limits``: the
        node's; ``learned`` is told a smaller block cap the node taught (see :meth:`run`)."""
        self.prelude = list(prelude)
        self.rpc = rpc
        self.route = route
        self.head = head
        self.base = base or head
        self.funding = funding
        self.settings = settings
        self.limits = limits or NodeLimits()
        self.learned = learned
        self.token_slot: asyncio.Future[BalanceSlot | None] | None = None
        """The checked token's balance slot, possibly still being found (set by the caller)."""
        self.memo: Memo | None = None
        """Results of deterministic simulations per head block (:meth:`remembered`; set
        by the caller, shared by the checks of a process)."""

    @property
    def pinned(self) -> ChainHead | None:
        """The real block the simulations start after, when what they see is a function
        of that block alone (a known hash, no prelude of simulated blocks, whose
        liquidity provider is fresh): what may be kept per head block (:meth:`remembered`,
        the checked token's slot and metadata); None otherwise."""
        return None if self.prelude or not self.base.hash else self.base

    async def remembered(self, key: Hashable, work: Callable[[], Awaitable[T]]) -> T:
        """``work()``'s result, computed once per head block for ``key``.

        For simulations that are a pure function of the state they are pinned to and of
        what ``key`` names (no fresh wallet, nothing random: e.g. the holder sells, whose
        sellers are the holders themselves): the same request at the same block (by
        hash) gets the same reply from any node, so a recomputed check at an unchanged
        head does not send it again.  The key carries the block's hash and number, the
        route (pool, reserves read at that head), the settings and the node's limits;
        a plan with a prelude (simulated liquidity, whose provider is fresh) is never
        kept, nor is a failed ``work`` (its exception propagates)."""
        memo, base = self.memo, self.pinned
        if memo is None or base is None:
            return await work()
        limits = self.limits
        full = (
            base.hash,
            base.number,
            self.route,
            self.settings,
            (limits.max_blocks, limits.request_gas, limits.block_overrides),
            key,
        )
        found, kept = memo.get(full)
        if found:
            return cast(T, kept)
        value = await work()
        memo.put(full, value)
        return value

    def plan(self) -> Plan:
        return Plan(
            self.head,
            self.settings.gas_limit,
            prelude=list(self.prelude),
            base=self.base,
            limits=self.limits,
        )

    @property
    def room(self) -> int:
        """How many blocks a plan may add after the prelude within the node's cap."""
        return max(1, self.limits.max_blocks - (self.head.number - self.base.number))

    async def run(self, plans: Sequence[Plan]) -> list[Outcome | CallReverted]:
        """Send independent simulations as one batch.

        A simulation the EVM failed as a whole is returned as its CallReverted; any
        other node error raises (it says nothing about the token).  A refused span
        (:func:`too_many_blocks`) first lowers ``limits.max_blocks`` for every later
        plan (and tells ``learned``): the caller may plan again within it.
        """
        try:
            return await self._run(plans)
        except RpcError as exc:
            if isinstance(exc, CallReverted) or not too_many_blocks(exc):
                raise
            cap = self.limits.lower(max(plan.span for plan in plans), exc.message)
            if self.learned is not None:
                self.learned(cap)
            raise

    async def _run(self, plans: Sequence[Plan]) -> list[Outcome | CallReverted]:
        large = [i for i, plan in enumerate(plans) if len(plan.blocks) >= LARGE_SIMULATION]
        small = [i for i in range(len(plans)) if len(plans[i].blocks) < LARGE_SIMULATION]
        replies: list[Any] = [None] * len(plans)
        sent = [self._typed(plans[i]) for i in large]
        if small:
            calls = [TypedCall("eth_simulateV1", plans[i].params(), SIMULATION) for i in small]
            sent.append(self.rpc.batch(calls))
        # one request (the usual case) is awaited as it is: gather would wrap it in a task
        done = [await sent[0]] if len(sent) == 1 else await asyncio.gather(*sent)
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

    def add_buy(
        self, s: Plan, buyer: str, amount_in: int, offset: int = 1, reads: BuyReads = "all"
    ) -> None:
        """Block ``offset``: fund, approve, quote, buy, read the buyer's balance;
        ``reads``: :data:`BuyReads`.

        The buyer's base-token balance is not read: no plan's result used it, and a
        check's ~10 buys each sent it (issue #27)."""
        overrides, pre = self.funding.apply(buyer, amount_in)
        s.actors["buyer"] = buyer
        s.block(offset, overrides)
        s.fund(buyer, self.funding.native(amount_in))
        for call in pre:
            s.call(call)  # wrapping the base token: a WETH deposit, not the token
        route = self.route
        for call in route.approvals(route.base, buyer):
            s.call(call)
        if reads == "none":
            s.call(route.swap(buyer, amount_in), heavy=True)
            return
        if reads == "all":
            s.quote(route, buyer, amount_in, "quote", selling=False)
        s.call(route.swap(buyer, amount_in), "buy", heavy=True)
        s.call(balance_of(route.token, buyer, buyer), "bought")

    def add_transfer(
        self,
        s: Plan,
        sender: str,
        receiver: str,
        amount: int,
        offset: int = 2,
        reads: bool = True,
    ) -> None:
        """Block ``offset``: the wallet transfer and both wallets' balances after it;
        ``reads`` False: the transfer alone, unmarked (replayed by a later plan)."""
        s.block(offset)
        s.actors |= {"sender": sender, "receiver": receiver}
        sent = transfer(self.route.token, sender, receiver, amount)
        if not reads:
            s.call(sent, heavy=True)
            return
        s.call(sent, "transfer", heavy=True)
        s.call(balance_of(self.route.token, sender, sender), "sender_after_transfer")
        s.call(balance_of(self.route.token, receiver, receiver), "received")

    def add_sell(
        self,
        s: Plan,
        seller: str,
        amount: int,
        tag: str,
        pool: bool = True,
        reads: SellReads = "all",
    ) -> None:
        """Calls of one sell in the current block, marked ``<tag>.<step>``; ``pool``
        False leaves out the pool's balance before and after (only the owner-power
        scan's effects read them); ``reads``: :data:`SellReads`."""
        route = self.route
        s.actors[tag] = seller
        for call in route.approvals(route.token, seller):
            s.call(call)
        if reads != "all":
            self._bare_sell(s, seller, amount, tag, reads == "received")
            return
        # each read's call is built once and sent before and after the sell (a copy:
        # a plan's calls are never shared); a holder analysis adds hundreds of sells
        held = balance_of(route.token, seller, seller)
        paid = balance_of(route.base, seller, seller)
        pooled = balance_of(route.token, route.pool.address, seller) if pool else None
        s.call(held, f"{tag}.seller_before")
        if pooled is not None:
            s.call(pooled, f"{tag}.pool_before")
        s.call(paid, f"{tag}.base_before")
        s.quote(route, seller, amount, f"{tag}.quote", selling=True)
        s.call(route.swap(seller, amount, selling=True), f"{tag}.sell", heavy=True)
        if pooled is not None:
            s.call(dict(pooled), f"{tag}.pool_after")
        s.call(dict(held), f"{tag}.seller_after")
        s.call(dict(paid), f"{tag}.base_after")

    def _bare_sell(self, s: Plan, seller: str, amount: int, tag: str, received: bool) -> None:
        """The sell of :meth:`add_sell` without the seller's token balance and quote
        around it; ``received``: with its base-token balance before and after."""
        route = self.route
        paid = balance_of(route.base, seller, seller) if received else None
        if paid is not None:
            s.call(paid, f"{tag}.base_before")
        s.call(route.swap(seller, amount, selling=True), f"{tag}.sell", heavy=True)
        if paid is not None:
            s.call(dict(paid), f"{tag}.base_after")

    def buy_only(self, amount_in: int, reads: BuyReads = "all") -> Plan:
        s = self.plan()
        self.add_buy(s, fresh_address(), amount_in, reads=reads)
        return s

    def buy_then_sell(self, amount_in: int, sell_amount: int) -> Plan:
        s = self.plan()
        buyer = fresh_address()
        self.add_buy(s, buyer, amount_in)
        s.block(3)
        self.add_sell(s, buyer, sell_amount, "buyer")
        return s


# SELLS FAR AHEAD BY BLOCK COUNT
#
# A simulation may end at most ``max_blocks`` (256, or 16 on some providers) past its
# base, so the delayed sell (7 days) and the owner-power future sells (1 h to 30 days)
# reach the future by *timestamp* inside that span.  A token that counts *blocks* (sells
# close N blocks after launch) would not see those blocks, so each horizon is also tried
# as one ``eth_call`` whose 4th parameter sets the block number and time that far ahead
# (geth's block overrides): a fresh wallet holding the tokens (a balance-slot override)
# transfers them to the pool, which is what the token sees of a sell.  A first call one
# block ahead is the control: only a transfer that works now and fails later counts.

NOW = (1, 12)
"""The control horizon: the next block, 12 s later."""


def _overrides(sim: Simulator, blocks: int, seconds: int) -> dict[str, str]:
    base = sim.base
    return {
        "number": hex(base.number + blocks),
        "time": hex(base.timestamp + seconds),
        "baseFeePerGas": hex(base.base_fee),
        "feeRecipient": base.miner,
    }


def _failure(reply: object) -> str | None:
    """None when the transfer went through; else why not."""
    if isinstance(reply, CallReverted):
        return reply.message or "execution reverted"
    if isinstance(reply, str) and len(reply) == 66 and decode_uint(reply) == 0:
        return "the transfer returned false"
    return None


async def sells_ahead(
    sim: Simulator, slot: BalanceSlot, amount: int, ahead: Sequence[tuple[int, int]]
) -> list[str | None] | str:
    """For each (blocks, seconds) of ``ahead``: None if a sell that far ahead goes
    through, else the reason it fails.  A str as a whole says why the test could not
    run (the control, :data:`NOW`, already fails; the node refused the block
    overrides): the caller states it as unchecked.  Raises transport errors."""
    seller, token = fresh_address(), sim.route.token
    base = sim.base
    gas = min(sim.settings.gas_limit, base.gas_limit, sim.limits.request_gas)
    gas_price = price(base.base_fee)
    call = {
        **transfer(token, seller, sim.route.pool.address, amount),
        "gas": hex(gas),
        "gasPrice": hex(gas_price),
    }
    state = {
        seller: {"balance": hex(funds([gas], gas_price)), "nonce": hex(nonce())},
        # holds a little more than it sells: some tokens refuse a sell of a whole balance
        token: {"stateDiff": slot.override(seller, amount + amount // 99)},
    }
    requests = [
        ("eth_call", [call, base.tag, state, _overrides(sim, blocks, seconds)])
        for blocks, seconds in (NOW, *ahead)
    ]
    replies = await sim.rpc.batch(requests, tolerate=RpcError)
    if any(isinstance(r, RpcError) and not isinstance(r, CallReverted) for r in replies):
        return "the node refused eth_call with block overrides"
    control, *later = [_failure(r) for r in replies]
    return "a transfer to the pool fails even now" if control is not None else later


# ACCOUNTING: outcomes -> accounting facts


def _uint(outcome: Outcome, mark: str) -> int | None:
    result = outcome.get(mark)
    return result.uint if result is not None else None


def _quoted(outcome: Outcome, mark: str, v3: bool) -> int | None:
    result = outcome.get(mark)
    if result is None or not result.ok:
        return None
    return quoted_amount(result.data, v3, outcome.quotes.get(mark))


def buy_leg(outcome: Outcome, route: Route) -> LegTax:
    """Buy taxes: the quote before the buy vs the Transfer logs and the fresh buyer's balance."""
    buy = outcome["buy"]
    facts = BuyFacts(
        token=route.token,
        buyer=outcome.actors.get("buyer", ""),
        quote=_quoted(outcome, "quote", route.v3),
        balance_gain=_uint(outcome, "bought"),
        logs=buy.logs,
        pool=route.pool.address,
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

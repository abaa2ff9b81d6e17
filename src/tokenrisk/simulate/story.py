"""The owner-power scan's story: one simulation per owner call, and its baseline.

Wallets A and B buy in block 1 (or, when no buy of any size works, hold tokens given in
storage as existing holders do); in block 2 the candidate caller calls the function
(the baseline skips this call) and every balance that could change is read before and
after it (the buyer's, the pool's, the caller's own, a neutral wallet's, the token
contract's) with the total supply; in block 3 A sends 10% to a fresh wallet and sells
the rest, and, if that failed, tries a 0.1% sell; in block 4 B sells and a fresh wallet
C buys.  :mod:`.effects` compares a trial with the baseline by these marks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tokenrisk.chain.abi import encode_call
from tokenrisk.chain.signatures import TOTAL_SUPPLY
from tokenrisk.errors import RpcError
from tokenrisk.simulate.ahead import SCAN_DUMPS, SCAN_PAIRS, SCAN_TRIALS, count, curve_buy
from tokenrisk.simulate.calls import balance_of, fresh_address, transfer
from tokenrisk.simulate.hostile import Targets as Targets
from tokenrisk.simulate.owners import supply_call
from tokenrisk.simulate.simulator import Plan, Simulator
from tokenrisk.simulate.slots import BalanceSlot


@dataclass(frozen=True)
class Story:
    """Amounts fixed before the batch: what A and B buy with (or, ``held``, hold), what A
    sends and sells."""

    a_in: int
    b_in: int
    a_sell: int
    a_sent: int
    b_sell: int
    owner_getter: bool
    other: str  # B, a second buyer
    receiver: str  # who A sends tokens to
    late: str  # C, who buys after the sells
    held: dict[str, Any] | None = None
    """When no buy works (an armed trap, a max-swap limit below every size tried): the
    token-storage override that gives A and B tokens as existing holders hold them."""
    a_held: int = 0
    b_held: int = 0
    pool: int | None = None
    """The pool's tokens after A's and B's buys (the amounts round's read): a mint-and-dump
    sell sent ahead is planned with it (:func:`~.trials.likely_dumps`)."""
    sells_fail: bool = False
    """The amounts round's sell after a buy failed (:func:`amounts`, ``predict``): the
    baseline's sells will likely fail too, so the batch from held positions is sent
    ahead with the trials (used only when the baseline's sells did fail)."""


async def fresh_targets(sim: Simulator) -> Targets:
    """New random wallets for one scan (A and the neutral wallet), the route's pair,
    router and token, and the token's total supply (for token amounts)."""
    return await with_supply(sim, new_targets(sim))


def new_targets(sim: Simulator) -> Targets:
    """:func:`fresh_targets` without the supply (0): enough for the amounts round, which
    needs only A's wallet, so that it need not wait for the supply read."""
    route = sim.route
    return Targets(
        buyer=fresh_address(),
        pair=route.pool.address,
        neutral=fresh_address(),
        router=route.dex.router,
        token=route.token,
        story=(fresh_address(), fresh_address(), fresh_address()),
    )


async def with_supply(sim: Simulator, targets: Targets) -> Targets:
    """``targets`` with the token's total supply read at the pinned head (0 when the
    token has no working ``totalSupply``: no token amounts)."""
    try:
        reply = await sim.rpc.call(*supply_read(sim))
    except RpcError:
        reply = None
    return supplied(targets, reply)


def supply_read(sim: Simulator) -> tuple[str, list[Any]]:
    """The ``eth_call`` of the token's ``totalSupply()`` at the pinned head."""
    return supply_call(sim.route.token, sim.base.tag)


def supplied(targets: Targets, reply: Any) -> Targets:
    """``targets`` with the supply :func:`supply_read` answered (0: no working getter)."""
    supply = int(reply, 16) if isinstance(reply, str) and len(reply) == 66 else 0
    return replace(targets, supply=supply)


SHRINK = (1, 10, 100, 1_000)
"""The trial buy, then 1/10, 1/100 and 1/1000 of it: a max-swap limit below a normal buy
must not stop the scan."""


async def amounts(
    sim: Simulator,
    targets: Targets,
    owner_getter: bool,
    other: str | None = None,
    predict: bool = False,
) -> tuple[Story | None, tuple[str, ...]]:
    """Round one: A and B buy at each size of :data:`SHRINK` (one batch), to learn the
    amounts the real batch must use; the largest size that works is kept.  When none
    works, A and B are given tokens in storage (an existing holder's position).
    ``other``: B's wallet (default the one ``targets`` chose, else a fresh one);
    ``predict``: a sell after a buy goes with them (:func:`_sell_plan`), its failure
    kept as ``Story.sells_fail``."""
    full = sim.settings.buy_amount(base_reserve(sim))
    other = other or targets.story[0] or fresh_address()
    plans = []
    for divisor in SHRINK:
        plan = sim.plan()
        a_in = max(1, full // divisor)
        _buy_block(sim, plan, [(targets.buyer, a_in, "a"), (other, a_in // 2, "b")], 1)
        plan.call(balance_of(sim.route.token, targets.pair, targets.buyer), "pool")
        plans.append(plan)
    sold = _sell_plan(sim, targets.buyer, full) if predict else None
    outcomes = await sim.run(plans + ([sold] if sold is not None else []))
    fails = sold is not None and _sell_failed(outcomes[-1])
    for divisor, outcome in zip(SHRINK, outcomes[: len(SHRINK)], strict=True):
        if isinstance(outcome, RpcError):
            continue
        a, b = outcome["a.bought"].uint or 0, outcome["b.bought"].uint or 0
        if outcome["a.buy"].ok and outcome["b.buy"].ok and a and b:
            a_in = max(1, full // divisor)
            note = () if divisor == 1 else (f"the trial buy was shrunk to 1/{divisor} of its size",)
            read = outcome.get("pool")
            pool = read.uint if read is not None else None
            _, receiver, late = targets.story
            kept = story_of(a_in, a, b, owner_getter, other, (receiver, late))
            return replace(kept, pool=pool, sells_fail=fails), note
    story = await held_story(sim, targets, owner_getter, other)
    return story, ("no buy worked: the trial wallets held tokens as existing holders do",)


def _sell_plan(sim: Simulator, buyer: str, amount_in: int) -> Plan | None:
    """A predictor of the baseline's sells, sent with the amounts round (issue #27): A buys
    with ``amount_in`` and, in block 3 as in the story, sells half the tokens the V2
    pool's curve says that buy delivers (half: a buy tax up to 50% still leaves them).
    The baseline's amounts are known only from the round's reply, so this is not the
    baseline; it only decides whether the batch from held positions goes ahead, and that
    batch is used only when the baseline's own sells failed.  None where the curve does
    not say (a V3 or V4 pool)."""
    route = sim.route
    tokens = curve_buy(not (route.v3 or route.v4), base_reserve(sim), token_reserve(sim), amount_in)
    if tokens is None or tokens < 2:
        return None
    plan = sim.plan()
    _buy_block(sim, plan, [(buyer, amount_in, "a")], 1)
    plan.block(3)
    sim.add_sell(plan, buyer, tokens // 2, "a")
    return plan


def _sell_failed(outcome: Any) -> bool:
    """The predictor's buy delivered tokens and its sell failed."""
    if isinstance(outcome, RpcError) or not outcome["a.buy"].ok:
        return False
    return bool(outcome["a.bought"].uint) and not outcome["a.sell"].ok


def count_ahead(used: bool) -> None:
    """The scan's trials sent with its screen: used, or dropped."""
    count(SCAN_TRIALS, used)


SCAN_CURVE = "scan_curve"
"""A first scan's trials sent on the story the pool's curve predicts (:func:`curve_story`)."""


def count_curve(used: bool) -> None:
    """The scan's trials sent on the curve's story, beside its amounts round: that round
    told exactly that story (used), or another (dropped; sent again on it)."""
    count(SCAN_CURVE, used)


SCAN_HELD = "scan_held"
"""The scan's batch from held positions sent with its trials (``Story.sells_fail``)."""


def count_held(used: bool) -> None:
    """The scan's batch from held positions sent ahead: used (the baseline's sells
    failed, as predicted) or dropped."""
    count(SCAN_HELD, used)


def count_pairs(used: bool) -> None:
    """The scan's two-step trials sent with its trials: all those the pairing names
    were among them (used), or some were not, or none was named (dropped)."""
    count(SCAN_PAIRS, used)


SCAN_READS = "scan_reads"
"""A first scan's facts, role grants and supply asked beside its check's head read
(:func:`tokenrisk.simulate.owners.reads_ahead`)."""


def count_reads(used: bool) -> None:
    """A first scan's reads asked before its head was read: at the head the scan then
    ran at (used), or at another (dropped)."""
    count(SCAN_READS, used)


def count_dumps(used: bool) -> None:
    """The scan's mint-and-dump sells sent with its trials: every dump the scan made was
    among them (used), or not, or it made none (dropped)."""
    count(SCAN_DUMPS, used)


async def owned(
    told: asyncio.Future[tuple[Story | None, tuple[str, ...]]], owner_getter: bool
) -> tuple[Story | None, tuple[str, ...]]:
    """The amounts round's story (:func:`amounts`, sent before the facts said whether the
    token has an owner getter) with that known: the story reads ``owner()`` when it has."""
    story, notes = await told
    return (replace(story, owner_getter=owner_getter) if story else None), notes


async def held_story(
    sim: Simulator, targets: Targets, owner_getter: bool, other: str | None = None
) -> Story | None:
    """The story from held positions (A and B given tokens in storage, never bought);
    None without a balance slot."""
    other = other or fresh_address()
    held = await held_by(sim, targets, other)
    if held is None:
        return None
    a, b = held[1], held[2]
    full = sim.settings.buy_amount(base_reserve(sim))
    return replace(story_of(full, a, b, owner_getter, other), held=held[0], a_held=a, b_held=b)


def story_of(
    a_in: int, a: int, b: int, owner_getter: bool, other: str, chosen: tuple[str, str] = ("", "")
) -> Story:
    """The story of A's and B's buys of ``a`` and ``b`` tokens; ``chosen``: A's receiver
    and C, when the scan's targets chose them (:attr:`Targets.story`), else fresh."""
    a_sell, sent, b_sell = _sold(a, b)
    receiver, late = chosen
    return Story(
        a_in,
        a_in // 2,
        a_sell,
        sent,
        b_sell,
        owner_getter,
        other=other,
        receiver=receiver or fresh_address(),
        late=late or fresh_address(),
    )


def curve_story(sim: Simulator, targets: Targets, owner_getter: bool) -> Story | None:
    """The story the amounts round (:func:`amounts`) should return on a V2 pool, from the
    curve (:func:`~tokenrisk.simulate.ahead.curve_buy`) and the reserves read with the
    pool: the trial buy works whole, A gets what the router quotes, B (buying half as
    much right after A, in the same block) what it quotes on the reserves A's buy left,
    and the pool keeps its reserve less both; no sell fails.  It equals the round's
    story exactly when the token takes nothing from a buy, so trials planned on it can
    leave with the round instead of after it (issue #27: a first scan's trials were a
    third round trip); whoever uses them compares the two.  None where the curve does
    not say (a V3 or V4 pool), and for targets without the story's wallets chosen."""
    route = sim.route
    v2 = not (route.v3 or route.v4)
    other, receiver, late = targets.story
    if not other:
        return None
    base, tokens = base_reserve(sim), token_reserve(sim)
    a_in = max(1, sim.settings.buy_amount(base))
    a = curve_buy(v2, base, tokens, a_in)
    b = curve_buy(v2, base + a_in, tokens - a, a_in // 2) if a else None
    if not a or not b:
        return None
    story = story_of(a_in, a, b, owner_getter, other, (receiver, late))
    return replace(story, pool=tokens - a - b)


def _sold(a: int, b: int) -> tuple[int, int, int]:
    """What A sells, what A sends and what B sells, of ``a`` and ``b`` bought: A sends a
    tenth; 99%, not 100%, is sold (some honest tokens refuse a sell of the whole balance)."""
    sent = a // 10
    return (a - sent) * 99 // 100, sent, b * 99 // 100


async def held_by(
    sim: Simulator, targets: Targets, other: str
) -> tuple[dict[str, Any], int, int] | None:
    """Storage overrides giving A and B a position as large as a normal buy would (half
    a percent of the pool's tokens, B half of that); None without a balance slot."""
    slot = await balance_slot(sim)
    if slot is None:
        return None
    a = max(2, token_reserve(sim) * sim.settings.buy_bps // 10_000)
    diff = slot.override(targets.buyer, a) | slot.override(other, a // 2)
    return {sim.route.token: {"stateDiff": diff}}, a, a // 2


async def balance_slot(sim: Simulator) -> BalanceSlot | None:
    """The token's balance slot, once found (None when the journey cancelled the search,
    it failed, or the token keeps balances another way)."""
    if sim.token_slot is None:
        return None
    await asyncio.wait([sim.token_slot])
    if sim.token_slot.cancelled() or sim.token_slot.exception() is not None:
        return None
    return sim.token_slot.result()


def base_reserve(sim: Simulator) -> int:
    pool = sim.route.pool
    return pool.reserves0 if pool.token0.lower() == sim.route.base.lower() else pool.reserves1


def token_reserve(sim: Simulator) -> int:
    pool = sim.route.pool
    return pool.reserves1 if pool.token0.lower() == sim.route.base.lower() else pool.reserves0


def _buy_block(
    sim: Simulator, plan: Plan, buys: Iterable[tuple[str, int, str]], offset: int
) -> None:
    """One block in which each (wallet, amount in, tag) is funded and buys."""
    overrides: dict[str, Any] = {}
    calls: list[tuple[dict[str, Any], str | None, bool]] = []
    route = sim.route
    for wallet, amount, tag in buys:
        extra, pre = sim.funding.apply(wallet, amount)
        _merge(overrides, extra)
        calls += [(c, None, False) for c in pre]
        calls += [(c, None, False) for c in route.approvals(route.base, wallet)]
        if route.v4:
            plan.quotes[f"{tag}.quote"] = route.v4_quote(amount, False)
        calls += [
            ({"from": wallet, **route.quote(amount)}, f"{tag}.quote", False),
            (route.swap(wallet, amount), f"{tag}.buy", True),
            (balance_of(route.token, wallet, wallet), f"{tag}.bought", False),
        ]
    plan.block(offset, overrides)
    for wallet, amount, _ in buys:
        plan.fund(wallet, sim.funding.native(amount))
    for call, mark, heavy in calls:
        plan.call(call, mark, heavy=heavy)


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    for address, override in extra.items():
        mine = into.setdefault(address, {})
        for key, value in override.items():
            if isinstance(value, dict):
                mine.setdefault(key, {}).update(value)
            else:
                mine[key] = value


def _start(sim: Simulator, p: Plan, targets: Targets, story: Story, with_b: bool = True) -> None:
    """Block 1: A (and B) buy, or hold the tokens the story's storage override gives."""
    if story.held is None:
        buys = [(targets.buyer, story.a_in, "a")]
        buys += [(story.other, story.b_in, "b")] if with_b else []
        _buy_block(sim, p, buys, 1)
        return
    token = sim.route.token
    p.block(1, {k: dict(v) for k, v in story.held.items()})
    p.call(balance_of(token, targets.buyer, targets.buyer), "a.bought")
    p.call(balance_of(token, story.other, story.other), "b.bought")


def story_plan(
    sim: Simulator,
    targets: Targets,
    story: Story,
    call: tuple[str, ...] | None,
    to: str | None = None,
) -> Plan:
    """The story (module docstring); ``call`` is the trial's (caller, calldata...): a
    two-step trap's setter comes before the switch.  The baseline has none.  ``to``:
    the contract called when it is not the token (the pool's V4 hook)."""
    p = sim.plan()
    _start(sim, p, targets, story)
    _before_call(p, sim.route.token, targets)
    _call_block(p, sim.route.token, targets, story, (call, to))
    _after_call(sim, p, targets, story)
    return p


def story_plans(
    sim: Simulator,
    targets: Targets,
    story: Story,
    trials: Sequence[tuple[tuple[str, ...], str | None]],
) -> list[Plan]:
    """:func:`story_plan` of the baseline, then of each trial's (call, to): the same plans,
    with the blocks every plan of the story shares (the buys, the sells, the late buy:
    most of a plan's encoding) built once and the owner call's block apart for each.
    A first scan plans dozens of trials between the amounts round's reply and its
    trials' request, so this is on the check's critical path."""
    base = story_plan(sim, targets, story, None)
    out = [base]
    shared, known = _Shared.of(base), dict[str, Reads]()
    for trial in trials:
        own = sim.plan()
        own.block(1)  # a placeholder: the shared first block is taken from ``base``
        _call_block(own, sim.route.token, targets, story, trial, known)
        out.append(shared.spliced(own))
    return out


@dataclass(frozen=True)
class _Shared:
    """What every trial's plan takes from the baseline's, split once per story (not
    once per trial: issue #27): its marks, actors, quotes and funded wallets outside
    the owner call's block (block 1 of the plan)."""

    base: Plan
    marks: dict[str, tuple[int, int]]
    before: list[tuple[int, str, int, bool]]
    after: list[tuple[int, str, int, bool]]

    @classmethod
    def of(cls, base: Plan) -> _Shared:
        marks = {k: v for k, v in base.marks.items() if v[0] != 1}
        before = [w for w in base.wallets if w[0] == 0]
        return cls(base, marks, before, [w for w in base.wallets if w[0] > 1])

    def spliced(self, own: Plan) -> Plan:
        """The baseline with its second block (the owner call's) replaced by ``own``'s:
        the calls, their marks and gas kinds, and the wallets funded there.  Every plan
        gets its own block lists; the call objects of the shared blocks are shared (a
        plan's ``params`` copies each call, never changing one)."""
        base = self.base
        blocks, heavy = base.blocks, base.heavy
        return replace(
            base,
            prelude=list(base.prelude),
            blocks=[_block_copy(blocks[0]), own.blocks[1], *map(_block_copy, blocks[2:4])],
            marks=self.marks | {k: v for k, v in own.marks.items() if v[0] == 1},
            actors=base.actors | own.actors,
            quotes=base.quotes | own.quotes,
            heavy=[list(heavy[0]), own.heavy[1], list(heavy[2]), list(heavy[3])],
            wallets=[*self.before, *(w for w in own.wallets if w[0] == 1), *self.after],
        )


def _block_copy(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "calls": list(block["calls"])}


def _before_call(p: Plan, token: str, targets: Targets) -> None:
    """The end of block 1: the supply and the pool's tokens before block 2's call."""
    p.call({"from": targets.buyer, "to": token, "data": TOTAL_SUPPLY}, "supply0")
    p.call(balance_of(token, targets.pair, targets.buyer), "pool0")


Reads = tuple[list[tuple[dict[str, Any], str]], list[tuple[dict[str, Any], str]]]
"""Block 2's reads by one caller, before and after its call: (call, mark) each."""


def _call_block(
    p: Plan,
    token: str,
    targets: Targets,
    story: Story,
    trial: tuple[tuple[str, ...] | None, str | None],
    known: dict[str, Reads] | None = None,
) -> None:
    """Block 2: the watched balances, the trial's call (none: the baseline) and what
    it changed.  ``known``: each caller's reads, built for its first trial of the story
    and shared by its others (a plan's ``params`` copies each call, never changing one)."""
    call, to = trial
    caller = call[0] if call else targets.buyer
    known = {} if known is None else known
    reads = known.get(caller) or known.setdefault(caller, _reads(token, targets, story, caller))
    p.block(2)
    for read, mark in reads[0]:
        p.call(read, mark)
    if call is not None:
        p.fund(caller, fresh=False)  # a real account: its own nonce
        _calls(p, to or token, call)
    for read, mark in reads[1]:
        p.call(read, mark)


def _reads(token: str, targets: Targets, story: Story, caller: str) -> Reads:
    """The balances :func:`_call_block` watches from ``caller``, before and after its
    call, with the supply, and the owner getter when the story reads it."""
    after = [
        ({"from": caller, "to": token, "data": TOTAL_SUPPLY}, "supply1"),
        (balance_of(token, targets.buyer, caller), "a.held"),
        (balance_of(token, targets.pair, caller), "pool1"),
        *_watched(token, caller, targets.neutral, "1"),
    ]
    if story.owner_getter:
        after.append(({"from": caller, "to": token, "data": encode_call("owner()")}, "owner1"))
    return _watched(token, caller, targets.neutral, "0"), after


def _after_call(sim: Simulator, p: Plan, targets: Targets, story: Story) -> None:
    """Blocks 3 and 4: A sends a tenth and sells, B sells, C buys."""
    token = sim.route.token
    p.block(3)
    p.call(transfer(token, targets.buyer, story.receiver, story.a_sent), "a.transfer", heavy=True)
    sim.add_sell(p, targets.buyer, story.a_sell, "a")
    sim.add_sell(p, targets.buyer, max(1, story.a_sell // 1000), "a_small")
    p.block(4)
    sim.add_sell(p, story.other, story.b_sell, "b")
    _late_buy(sim, p, story)


def _calls(p: Plan, to: str, call: tuple[str, ...]) -> None:
    """The caller's calls to ``to`` in order; the last is marked ``call`` (earlier:
    ``prior``)."""
    caller, *datas = call
    for i, data in enumerate(datas):
        mark = "call" if i == len(datas) - 1 else f"prior{i}"
        p.call({"from": caller, "to": to, "data": data}, mark, heavy=True)


def _watched(
    token: str, caller: str, neutral: str, suffix: str
) -> list[tuple[dict[str, Any], str]]:
    """Balances beside the buyer's and the pool's that an owner call may change."""
    return [
        (balance_of(token, caller, caller), f"caller{suffix}"),
        (balance_of(token, neutral, caller), f"neutral{suffix}"),
        (balance_of(token, token, caller), f"self{suffix}"),
    ]


def _late_buy(sim: Simulator, p: Plan, story: Story) -> None:
    route, late = sim.route, story.late
    extra, pre = sim.funding.apply(late, story.b_in)
    _merge(p.blocks[-1].setdefault("stateOverrides", {}), extra)
    p.fund(late, sim.funding.native(story.b_in))
    for c in pre:
        p.call(c)
    for call in route.approvals(route.base, late):
        p.call(call)
    p.quote(route, late, story.b_in, "c.quote", selling=False)
    p.call(route.swap(late, story.b_in), "c.buy", heavy=True)
    p.call(balance_of(route.token, late, late), "c.bought")


def future_plan(sim: Simulator, targets: Targets, story: Story, seconds: int) -> Plan:
    """A (only) buys or holds, then sells ``seconds`` later with no owner action."""
    p = sim.plan()
    _start(sim, p, targets, story, with_b=False)
    p.block(3, seconds=seconds)  # by time, within the node's block cap
    sim.add_sell(p, targets.buyer, story.a_sell, "a")
    return p


def dump_plan(
    sim: Simulator,
    targets: Targets,
    story: Story,
    call: tuple[str, ...],
    amount: int,
    to: str | None = None,
) -> Plan:
    """Mint and dump: the trial's call, then its caller sells ``amount`` of the new tokens
    into the pool in the same block; the pool's base token is read before and after."""
    p, route = sim.plan(), sim.route
    _start(sim, p, targets, story)
    caller, pair = call[0], route.pool.address
    p.block(2)
    p.fund(caller, fresh=False)
    p.call(balance_of(route.base, pair, caller), "pool_base0")
    _calls(p, to or route.token, call)
    sim.add_sell(p, caller, amount, "dump", pool=False)
    p.call(balance_of(route.base, pair, caller), "pool_base1")
    return p

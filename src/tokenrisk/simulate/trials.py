"""What the owner-power scan tries: privileged functions found in bytecode, and the
calls (function x caller x hostile arguments) a caller can actually make.

evmole reads selectors, argument types and mutability from the token's runtime code
(and its EIP-1967 implementation's); state-changing functions beyond the plain ERC-20
surface are candidates.  Names come from a bundled selector table and are only shown,
never used to decide anything.  One batch of ``eth_call``s screens every candidate call
at the pinned head; beside them, two kinds of calls are tried without a screen because
they only work on a holder's tokens or after another call: backdoors inside ERC-20-named
functions (:func:`backdoors`) and two-step traps (:func:`two_steps`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import evmole

from tokenrisk.chain.abi import encode_args
from tokenrisk.chain.abi import selector as signature_selector
from tokenrisk.chain.coalesce import TURNS
from tokenrisk.errors import RpcError
from tokenrisk.findings import Evidence, PowerFinding
from tokenrisk.simulate import layout
from tokenrisk.simulate.hostile import Targets, argument_sets, render, split_types
from tokenrisk.simulate.simulator import Simulator, funds, price

ERC20_SURFACE = frozenset(
    "0x" + signature_selector(s).hex()
    for s in (
        "transfer(address,uint256)",
        "transferFrom(address,address,uint256)",
        "approve(address,uint256)",
        "increaseAllowance(address,uint256)",
        "decreaseAllowance(address,uint256)",
        "permit(address,address,uint256,uint256,uint8,bytes32,bytes32)",
        "burn(uint256)",
        "burnFrom(address,uint256)",
        "multicall(bytes[])",
    )
)
"""What every holder may call on their own tokens: not screened as an owner power (a
privileged branch inside them is tried by :func:`backdoors`)."""
_SCREEN_GAS = 3_000_000
SELECTOR_FILE = Path(__file__).resolve().parents[1] / "data" / "selectors.tsv"


@dataclass(frozen=True)
class ScanBounds:
    """Limits that keep one scan small; ``deadline`` is in seconds."""

    max_functions: int = 24
    max_callers: int = 6
    max_arg_sets: int = 20
    max_trials: int = 60
    storage_slots: int = 16
    deadline: float = 3.0
    otterscan: bool = True
    """The node serves ``ots_*`` (probed): the deployer is asked of it, else searched."""
    state_floor: int = 0
    """The oldest block whose state the node kept when probed (0: all): the deployer
    search stays above it."""


@dataclass(frozen=True)
class Function:
    """A function found in bytecode; ``proxy_own`` when it lives in the proxy itself."""

    selector: str
    types: tuple[str, ...]
    proxy_own: bool

    @property
    def label(self) -> str:
        return signature_of(self.selector) or f"{self.selector}({','.join(self.types)})"


@dataclass(frozen=True)
class Trial:
    """One call to try: ``prior`` calldata (a two-step trap's setter) runs first;
    ``target`` is the contract called when it is not the token (the pool's V4 hook)."""

    function: Function
    caller: str
    args: tuple[Any, ...]
    data: str
    prior: Trial | None = None
    target: str | None = None

    @property
    def calls(self) -> tuple[str, ...]:
        """(caller, calldata...) in the order the story makes them."""
        return (self.caller, *((self.prior.data,) if self.prior else ()), self.data)

    @cached_property
    def key(self) -> tuple[str, tuple[str, ...], str | None]:
        """The sender (lower case), calldata in order and target: equal keys, equal plans
        (the scan looks each trial's outcome up by it several times, issue #27)."""
        return (
            self.caller.lower(),
            (*((self.prior.data,) if self.prior else ()), self.data),
            self.target,
        )

    @property
    def label(self) -> str:
        first = f"{self.prior.function.label} then " if self.prior else ""
        return first + self.function.label

    @property
    def rendered(self) -> tuple[str, ...]:
        """The arguments as text (a two-step trap's setter's first)."""
        own = tuple(render(a) for a in self.args)
        return (*self.prior.rendered, *own) if self.prior else own


# NAMES


@lru_cache(maxsize=1)
def _selector_table() -> dict[str, str]:
    text = SELECTOR_FILE.read_text()
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {sel: sig for sel, sig in rows}


def signature_of(selector: str) -> str | None:
    """The text signature of a selector from the bundled table, for display only."""
    return _selector_table().get(selector)


def functions_of(
    code: str, impl_code: str | None, bounds: ScanBounds
) -> tuple[list[Function], bool]:
    own = _read_functions(code, proxy_own=impl_code is not None)
    impl = _read_functions(impl_code, proxy_own=False) if impl_code else []
    seen: set[str] = set()
    out: list[Function] = []
    for f in impl + own:
        if f.selector not in seen and f.selector not in ERC20_SURFACE:
            seen.add(f.selector)
            out.append(f)
    return out[: bounds.max_functions], len(out) > bounds.max_functions


@lru_cache(maxsize=256)
def _evmole(code: str) -> tuple[tuple[str, str | None, str | None], ...]:
    info = evmole.contract_info(code, selectors=True, arguments=True, state_mutability=True)
    return tuple(
        ("0x" + f.selector, f.arguments, f.state_mutability) for f in (info.functions or [])
    )


def _read_functions(code: str, proxy_own: bool) -> list[Function]:
    """State-changing functions with supported argument types, in bytecode order."""
    out: list[Function] = []
    for selector, arguments, mutability in _evmole(code):
        if mutability not in ("nonpayable", "payable"):
            continue
        types = split_types(arguments or "")
        if types is not None:
            out.append(Function(selector, tuple(types), proxy_own))
    return out


Screened = dict[tuple[str, str], bool]
"""Per (caller in lowercase, calldata): whether that caller's call went through the
screen's ``eth_call``."""


def candidates_of(
    functions: Sequence[Function],
    callers: Sequence[str],
    targets: Targets,
    bounds: ScanBounds,
    hook: str | None = None,
) -> list[Trial]:
    """Every (function, caller, hostile argument set) call the screen tries, in order;
    ``hook``: the functions are the pool's V4 hook's, called on it."""
    out: list[Trial] = []
    for function in functions:
        for c in callers:
            out += _trials_of(function, c, targets, bounds.max_arg_sets, hook)
    return out


@lru_cache(maxsize=1024)
def _trials_of(
    function: Function, caller: str, targets: Targets, limit: int, hook: str | None
) -> tuple[Trial, ...]:
    """One function's candidate calls from one caller (pure, so kept): a first scan asks
    again for the same function and sender (the screen sent ahead, its widening once the
    deployer is known, the trials of senders added later), between two rounds (issue
    #27).  Kept by the sender's spelling (its calls' arguments name it so): the scan's
    own screen asks with the callers' checksummed addresses, the asks ahead with lower
    case ones.  A scan's wallets are new, so only its own asks meet here."""
    own = replace(targets, caller=caller)  # the caller itself as a recipient
    return tuple(
        Trial(function, caller, args, _calldata(function, args), target=hook)
        for args in argument_sets(function.types, own, limit)
    )


async def screen_calls(
    sim: Simulator, candidates: Sequence[Trial], funded: Sequence[str]
) -> Screened:
    """One batch of ``eth_call``s, one per candidate (to its target: the token or the
    pool's hook), at the head; ``funded``: the addresses given gas money (every caller
    screened at once)."""
    if not candidates:
        return {}
    gas_price = price(sim.base.base_fee)
    overrides = {c: {"balance": hex(funds([_SCREEN_GAS], gas_price))} for c in funded}
    tag = sim.base.tag
    replies = await sim.rpc.batch(
        [
            (
                "eth_call",
                [
                    {
                        "from": t.caller,
                        "to": t.target or sim.route.token,
                        "data": t.data,
                        "gas": hex(_SCREEN_GAS),
                        "gasPrice": hex(gas_price),
                    },
                    tag,
                    overrides,
                ],
            )
            for t in candidates
        ]
    )
    return {
        (t.caller.lower(), t.data): not isinstance(reply, RpcError)
        for t, reply in zip(candidates, replies, strict=True)
    }


async def screen(
    sim: Simulator,
    functions: Sequence[Function],
    callers: Sequence[str],
    targets: Targets,
    bounds: ScanBounds,
    hook: str | None = None,
    known: Screened | None = None,
) -> tuple[list[Trial], bool]:
    """Keep the (function, arguments) calls some caller can make, first caller wins;
    ``hook``: the functions are the pool's V4 hook's, called on it.

    ``known``: calls already screened (sent ahead, beside the reads that found the
    callers); only the others are sent now, so the choice is the one a screen of exactly
    ``callers`` makes."""
    candidates = candidates_of(functions, callers, targets, bounds, hook)
    if not candidates:
        return [], False
    screened = dict(known or {})
    missing = [t for t in candidates if (t.caller.lower(), t.data) not in screened]
    if missing:
        screened |= await screen_calls(sim, missing, callers)
    chosen: dict[tuple[str, str], Trial] = {}
    for trial in candidates:
        key = (trial.function.selector, trial.data)
        if screened[(trial.caller.lower(), trial.data)] and key not in chosen:
            chosen[key] = trial
    ordered = _round_robin(list(chosen.values()))
    return ordered[: bounds.max_trials], len(ordered) > bounds.max_trials


def _calldata(function: Function, args: tuple[Any, ...]) -> str:
    return function.selector + encode_args(list(function.types), list(args)).hex()


def _round_robin(trials: list[Trial]) -> list[Trial]:
    """Interleave functions so a bound on trials still reaches every function."""
    by_function: dict[str, list[Trial]] = {}
    for t in trials:
        by_function.setdefault(t.function.selector, []).append(t)
    out: list[Trial] = []
    queues = list(by_function.values())
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


# BESIDE THE SCREEN

BACKDOOR_CALLERS = 2
"""Callers (first found first) that try the ERC-20-named functions on a holder."""
_BACKDOORS = (
    ("transferFrom(address,address,uint256)", ("address", "address", "uint256")),
    ("burnFrom(address,uint256)", ("address", "uint256")),
)


def backdoors(
    code_selectors: set[str], callers: Sequence[str], targets: Targets, amount: int
) -> list[Trial]:
    """A privileged branch inside an ERC-20-named function: the first callers move or
    burn ``amount`` of the buyer's tokens without any allowance (an honest token
    reverts).  Only functions the bytecode has."""
    out: list[Trial] = []
    for signature, types in _BACKDOORS:
        selector = _selector(signature)
        if selector not in code_selectors:
            continue
        function = Function(selector, types, proxy_own=False)
        for caller in callers[:BACKDOOR_CALLERS]:
            args: tuple[Any, ...] = (
                (targets.buyer, caller, amount) if len(types) == 3 else (targets.buyer, amount)
            )
            out.append(Trial(function, caller, args, _calldata(function, args)))
    return out


def selectors_of(code: str, impl_code: str | None) -> set[str]:
    """Every selector the token's code (and its implementation's) dispatches."""
    found = {selector for selector, _, _ in _evmole(code)}
    return found | ({selector for selector, _, _ in _evmole(impl_code)} if impl_code else set())


def _selector(signature: str) -> str:
    """A fixed signature's selector as the code's are written (:func:`~tokenrisk.chain.abi.selector`
    hashes each signature once: a keccak per backdoor and scan was on the path between the
    amounts round's reply and the trials' request, issue #27)."""
    return "0x" + signature_selector(signature).hex()


TWO_STEPS = 12
"""Two-step trials (a setter, then a switch) at most per scan."""
PAIRS_AHEAD = 3 * TWO_STEPS
"""Two-step trials sent ahead (:func:`likely_pairs`): the real pairing takes the first
:data:`TWO_STEPS` of the setters that changed nothing, so a setter that did change
something moves later pairs up; three times as many cover that in most scans."""
SETTER_SETS = 4
"""Argument sets per setter paired with a switch (99, 0, 10000, 9900: percent and bps)."""
SETS_AHEAD = 6
"""Argument sets per setter of numbers that :func:`likely_pairs` pairs once the first
:data:`SETTER_SETS` of every setter are paired and :data:`PAIRS_AHEAD` leaves room: a
hostile number (a fee of 10000 or 9900 bps) most often changes something, so the real
pairing takes the setter's next sets (25, 100) instead.  An address setter's first sets
(an owner handed over) change nothing a buyer sees: not widened."""


def two_steps(
    harmless: Sequence[Trial],
    switches: Sequence[Trial],
    cap: int = TWO_STEPS,
    sets: int = SETTER_SETS,
) -> list[Trial]:
    """A setter that changed nothing, followed by a switch (a function without arguments
    or with one boolean) from the same caller on the same contract: set a value, then
    enable it.  The first ``sets`` (:data:`SETTER_SETS`) argument sets of each setter
    (the most hostile)."""
    setters: dict[tuple[str, str], list[Trial]] = {}
    for t in harmless:
        if t.function.types and t.function.types != ("bool",):
            kept = setters.setdefault((t.function.selector, t.caller), [])
            if len(kept) < sets:
                kept.append(t)
    out: list[Trial] = []
    for setter in (t for kept in setters.values() for t in kept):
        for switch in switches:
            same = (switch.caller, switch.target) == (setter.caller, setter.target)
            if same and switch.function.selector != setter.function.selector:
                out.append(replace(switch, prior=setter))
    return out[:cap]


def likely_pairs(candidates: Sequence[Trial]) -> list[Trial]:
    """The two-step trials :func:`two_steps` pairs when every candidate goes through the
    screen (its first caller's call, in the screen's order) and changes nothing: sent
    with the trials before either is known, each used only where the real pairing
    names it (the same caller, setter and switch calls)."""
    first: dict[tuple[str, str], Trial] = {}
    for t in candidates:
        first.setdefault((t.function.selector, t.data), t)
    ordered = _round_robin(list(first.values()))
    switches = [t for t in ordered if is_switch(t)]
    pairs = two_steps(ordered, switches, PAIRS_AHEAD)
    if not pairs or len(pairs) >= PAIRS_AHEAD:
        return pairs
    # room left under the cap: each setter's next sets too (after the first ones, so
    # the cap never drops a pair sent before this; issue #27: one round fewer where a
    # hostile set changed something and the real pairing moved on to later sets)
    sent = {_pair_key(p) for p in pairs}
    numbers = [t for t in ordered if all(k.startswith("uint") for k in t.function.types)]
    more = two_steps(numbers, switches, PAIRS_AHEAD, SETS_AHEAD)
    pairs += [p for p in more if _pair_key(p) not in sent]
    return pairs[:PAIRS_AHEAD]


def _pair_key(pair: Trial) -> tuple[str, str, str]:
    return (pair.caller, pair.prior.data if pair.prior else "", pair.data)


DUMPS_AHEAD = 4
"""At most this many mint-and-dump simulations sent with the trials (:func:`likely_dumps`)."""
DUMP_CAP = 100
"""A mint's dump sells at most this many times the pool's tokens: a larger sell overflows
the pool's maths (the scan's real dump and the ones planned ahead alike)."""


def likely_dumps(candidates: Sequence[Trial], pool: int | None) -> list[tuple[Trial, int]]:
    """The mint-and-dump sells the scan would send if a candidate minted its amount to its
    caller (planned as if it did): for each function of amounts only, its first caller's
    first and largest amount, sold up to :data:`DUMP_CAP` x ``pool`` (the pool's tokens after the
    story's buys); each used only where the real dump's plan is the same."""
    if not pool:
        return []
    picked: dict[str, list[Trial]] = {}
    for t in candidates:
        ints = [a for a in t.args if isinstance(a, int) and not isinstance(a, bool)]
        if t.prior is None and t.args and len(ints) == len(t.args) and max(ints) > 0:
            mine = picked.setdefault(t.function.selector, [])
            if not mine or mine[0].caller == t.caller:
                mine.append(t)
    out: list[tuple[Trial, int]] = []
    for trials in picked.values():
        largest = max(trials, key=lambda t: max(t.args))
        for t in dict.fromkeys([trials[0], largest]):
            out.append((t, min(max(t.args), pool * DUMP_CAP)))
    return out[:DUMPS_AHEAD]


def is_switch(trial: Trial) -> bool:
    """A function that takes nothing or one boolean: an enabling switch."""
    return trial.function.types in ((), ("bool",))


# WHAT NO TRIAL COULD SHOW


Guards = dict[tuple[str, int], str | None]
"""Per guard (slot, byte offset): the live address it holds (:func:`.layout.guard_values`)."""


async def guard_values(
    sim: Simulator, code: str, impl_code: str | None, stored: Sequence[object] = ()
) -> Guards:
    """What every guard of the layout's guarded writes holds at the head: read beside the
    trials, before :func:`static_findings` knows which functions a trial reached; a
    guard among the ``stored`` words (the facts' first slots, read at the same head) is
    taken from them, so most scans send no read for the guards at all (a lone read
    sent once the layout is known was a round trip of its own, issue #27).

    The storage layout (evmole, ~4 ms of CPU for a new contract) is worked out only
    once the requests queued beside this one (the screen, and the trials sent with it)
    have left: they do not need it, and the node client sends a queue :data:`TURNS`
    loop turns after its first request."""
    for _ in range(TURNS + 3):
        await asyncio.sleep(0)
    writes = layout.guarded_writes(layout.layout(impl_code or code), ERC20_SURFACE)
    guards = [g for w in writes for g in w.guards]
    return await layout.guard_values(sim.rpc, sim.route.token, guards, sim.base.tag, stored)


async def static_findings(
    sim: Simulator,
    code: str,
    impl_code: str | None,
    tried: set[str],
    read: asyncio.Future[Guards] | None = None,
) -> list[PowerFinding]:
    """Capabilities read from the storage layout (:mod:`.layout`) of functions no trial
    could call (``tried``: selectors a caller got through the screen), each guarded by
    a live stored address: ``confidence: static``, the slots as evidence.  ``read``:
    every guard's value, read already (:func:`guard_values`)."""
    writes = [
        w
        for w in layout.guarded_writes(layout.layout(impl_code or code), ERC20_SURFACE)
        if w.selector not in tried
    ]
    return await _guarded(sim, sim.route.token, writes, read)


async def hook_static_findings(
    sim: Simulator, hook: str, code: str | None, impl_code: str | None, tried: set[str]
) -> list[PowerFinding]:
    """The pool's V4 hook read like the token (:func:`~.layout.swap_writes`): a function
    no trial on the hook could call, guarded by a live address in the hook's storage,
    that writes what ``beforeSwap``/``afterSwap`` read; the finding names the hook."""
    runtime = impl_code or code
    if not runtime:
        return []
    writes = [w for w in layout.swap_writes(layout.layout(runtime)) if w.selector not in tried]
    return [
        replace(
            f,
            detail=f"through the pool's hook {hook}: {f.detail}",
            evidence=(*f.evidence, Evidence("hook contract", "-", hook)),
        )
        for f in await _guarded(sim, hook, writes)
    ]


async def _guarded(
    sim: Simulator,
    subject: str,
    writes: list[layout.Write],
    read: asyncio.Future[Guards] | None = None,
) -> list[PowerFinding]:
    """Static findings of ``writes`` whose guard holds a live address in ``subject``'s
    storage at the pinned head (``read``: the guards' values, read already)."""
    if not writes:
        return []
    guards = [g for w in writes for g in w.guards]
    values = await read if read is not None else None
    if values is None or any((g.slot, g.offset) not in values for g in guards):
        values = await layout.guard_values(sim.rpc, subject, guards, sim.base.tag)
    out: list[PowerFinding] = []
    for w in writes:
        holder = layout.live_guard(w, values)
        if holder is None:
            continue  # a zero or dead guard: nobody can pass it
        label = signature_of(w.selector) or w.selector
        evidence = (Evidence("writes", "-", w.what), Evidence("guarded by", "-", holder))
        detail = f"{label} writes {w.what} behind a check of the stored address {holder}"
        out.append(
            PowerFinding(
                w.kind, label, w.selector, holder, (), evidence, detail, confidence="static"
            )
        )
    return out

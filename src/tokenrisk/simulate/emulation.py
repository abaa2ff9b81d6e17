"""``eth_simulateV1`` emulated over one ``eth_call``, for nodes that lack it.

Hardhat's node and many providers answer ``eth_simulateV1`` with -32004 but run
``eth_call`` with state overrides.  :class:`EmulatedSimulate` is an
:class:`~tokenrisk.chain.rpc.RpcClient` that answers the simulations of the engine
(:mod:`tokenrisk.simulate.simulator`) that way, so the whole journey (buy, transfer, sells,
the max-buy and max-sell searches) runs unchanged on such a node:

- the runner contract (``contracts/probe/TokenRiskRunner.sol``, compiled into
  ``data/runner.json``) is placed by a state override at every sender's address, and
  the ``eth_call`` goes from a sender to itself: each call reaches the token from its
  sender's own address, and that sender is ``tx.origin``;
- every block's state overrides are merged and applied up front, and the calls run in
  order in one call (:func:`emulation`: blocks of one sender each, the holders' sells,
  run one call per block, so each holder is its own ``tx.origin``);
- where the node honours them, the last block's overrides (number, time) go with the
  call, so a delayed or future sell meets what the token does then.

What this cannot show, stated by :func:`notes_of` in the response: the senders have code
while the call runs; every step of a call runs in one block (cooldowns and
one-sell-per-block rules are told apart by :func:`one_block`; without block overrides,
time bombs are not reached); gas is measured from inside (plus the intrinsic 21,000); no
logs are returned, so taxes are measured from balances only.  Every other method goes
to the wrapped client.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import decode, encode_call, to_bytes
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import AbiDecodeError, CallReverted, MalformedResponse, RpcError
from tokenrisk.model import SimulationReport
from tokenrisk.simulate.accounting import LegTax
from tokenrisk.simulate.calls import BalanceSlot, fresh_address
from tokenrisk.simulate.simulator import Simulator, sell_leg

RUNNER_FILE = Path(__file__).parents[1] / "data" / "runner.json"
_RUN = "run((address,address,uint256,uint256,bytes)[])"
_RESULTS = ["(bool,uint256,bytes)[]"]
_INTRINSIC = 21_000
_CALL_GAS = 16_777_216
"""Gas of the one ``eth_call``: the per-transaction cap of EIP-7825 (Osaka), which
Hardhat's node applies to ``eth_call`` too; below geth's default RPC gas cap (50M)."""

NOTE = (
    "node lacks eth_simulateV1: simulated with eth_call and a runner contract placed at "
    "each wallet's address (the wallets have code while it runs; every step of a "
    "simulation in one block; no logs, so taxes from balances only)"
)
NO_BLOCKS = (
    "the node refuses eth_call block overrides: every simulation ran in its latest "
    "block, so delayed and future sells (time bombs) were not checked"
)


def notes_of(sim: Simulator) -> tuple[str, ...]:
    """What an emulated simulator's results could not show, for the response."""
    rpc = sim.rpc
    blocks = isinstance(rpc, EmulatedSimulate) and rpc.block_overrides
    return (NOTE,) if blocks else (NOTE, NO_BLOCKS)


def emulated(sim: Simulator, block_overrides: bool = True) -> Simulator:
    """A copy of ``sim`` whose simulations run through the runner (same route, head,
    funding and settings), for a node without ``eth_simulateV1``; ``block_overrides``:
    the node may honour ``eth_call``'s block overrides (tried, dropped when refused)."""
    twin = copy.copy(sim)
    twin.rpc = EmulatedSimulate(sim.rpc, block_overrides)
    return twin


@lru_cache(maxsize=1)
def runner_code() -> str:
    with open(RUNNER_FILE, encoding="utf-8") as handle:
        return str(json.load(handle)["deployedBytecode"])


async def one_block(
    sim: Simulator, slot: BalanceSlot, amount: int, report: SimulationReport
) -> SimulationReport:
    """What an emulated journey (every step in one block) cannot tell, checked apart
    with wallets holding ``amount`` tokens through a balance override:

    - the buyer could not sell in its buy's block, but such a wallet can
      (:func:`held_sell`): a cooldown or same-block rule, which a later block would
      pass and this node cannot simulate; the report takes that sell's figures, and says
      so;
    - the buyer sold: does a second sell in the same block fail
      (:func:`second_sell`)?  The receiver's sell, in the buyer's block here, is no
      evidence on its own.
    """
    if report.sell_ok:
        reason = await second_sell(sim, slot, amount)
        if reason is None:
            return report
        receiver = "the receiver of a wallet transfer could not sell"
        notes = [n for n in report.notes if not n.startswith(receiver)]
        notes.append(f"a second sell in the same block fails: {reason}")
        return replace(report, one_sell_per_block=True, notes=tuple(notes))
    if report.failure_step != "sell":
        return report
    held = await held_sell(sim, slot, amount)
    if not held.ok:
        return report
    note = (
        f"the buyer's sell in the block of its buy failed ({report.failure_reason}); a "
        "wallet holding the token without buying in this block sold: a cooldown or "
        "same-block rule that a simulation in one block cannot pass, taken as sellable"
    )
    return replace(
        report,
        sell_ok=True,
        failure_step=None,
        failure_reason=None,
        sell_tax=_rounded(held.tax.effective),
        sell_tax_token_unit=_rounded(held.tax.token_unit),
        sell_gas=held.gas,
        notes=(*report.notes, note),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


@dataclass(frozen=True)
class HeldSell:
    """The outcome of :func:`held_sell`: did it sell, its gas, its taxes."""

    ok: bool
    gas: int | None
    tax: LegTax


async def held_sell(sim: Simulator, slot: BalanceSlot, amount: int) -> HeldSell:
    """A sell by a fresh wallet that holds ``amount`` tokens (a balance override)
    without having bought them in this block.

    In one block the journey's buyer sells in its own buy's block, which a cooldown or a
    same-block rule refuses; this sell tells such a rule from a token nobody can sell.
    """
    plan = sim.plan()
    seller, token = fresh_address(), sim.route.token
    plan.block(3, {token: {"stateDiff": slot.override(seller, amount)}})  # funded by the plan
    sim.add_sell(plan, seller, amount, "held")
    outcome = await sim.run_one(plan)
    sell = outcome["held.sell"]
    return HeldSell(sell.ok, sell.gas, sell_leg(outcome, sim.route, "held", amount))


async def second_sell(sim: Simulator, slot: BalanceSlot, amount: int) -> str | None:
    """Why a second sell in one block fails when the first passes, else None.

    Two fresh wallets holding ``amount`` tokens each sell one after the other in one
    block: the journey's own plans cannot show a one-sell-per-block rule when every step
    is in one block (the receiver's later sell meets it too).
    """
    plan = sim.plan()
    first, second, token = fresh_address(), fresh_address(), sim.route.token
    diff = {**slot.override(first, amount), **slot.override(second, amount)}
    plan.block(3, {token: {"stateDiff": diff}})  # the sellers are funded by the plan
    sim.add_sell(plan, first, amount, "first")
    sim.add_sell(plan, second, amount, "second")
    outcome = await sim.run_one(plan)
    if outcome["first.sell"].ok and not outcome["second.sell"].ok:
        return outcome["second.sell"].reason or "execution reverted"
    return None


def merged_overrides(blocks: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every block's state overrides in one object (a later block's value wins)."""
    merged: dict[str, dict[str, Any]] = {}
    for block in blocks:
        for address, override in (block.get("stateOverrides") or {}).items():
            entry = merged.setdefault(address.lower(), {})
            for key, value in override.items():
                if key in ("stateDiff", "state") and isinstance(value, dict):
                    entry[key] = {**entry.get(key, {}), **value}
                else:
                    entry[key] = value
    return merged


@dataclass(frozen=True)
class Emulation:
    """A simulation as ``eth_call`` runs: ``runs`` pairs each request with the blocks
    whose calls it answers, in order."""

    runs: list[tuple[tuple[str, list[Any]], list[int]]]
    per_block: list[int]

    @property
    def requests(self) -> list[tuple[str, list[Any]]]:
        return [request for request, _ in self.runs]

    def reply(self, answers: Sequence[Any]) -> list[dict[str, Any]]:
        """The runs' answers in ``eth_simulateV1``'s shape (one entry per block).

        Raises MalformedResponse for an answer that is not the runner's.
        """
        blocks: list[dict[str, Any]] = [{"calls": []} for _ in self.per_block]
        for (_, indices), answer in zip(self.runs, answers, strict=True):
            flat = _decoded(answer)
            if len(flat) != sum(self.per_block[i] for i in indices):
                raise MalformedResponse("runner returned fewer calls than were sent")
            for i in indices:
                blocks[i]["calls"], flat = flat[: self.per_block[i]], flat[self.per_block[i] :]
        return blocks


def emulation(params: Sequence[Any], block_overrides: bool = False) -> Emulation:
    """The ``eth_call`` runs of one simulation.

    With ``block_overrides`` each run carries its last block's overrides (number, time)
    as ``eth_call``'s 4th parameter: every step runs in that block, so a sell planned
    days or thousands of blocks ahead meets what the token does then.

    One run of every call, from the first sender (who is ``tx.origin``) -- unless every
    block holds the calls of one sender only and no sender comes back in a later block
    (the holders' sells): then each block is a run of its own from its sender, against
    the same state, so every holder sells as ``tx.origin``, as a person would.

    Raises MalformedResponse for a simulation that has no call with a sender.
    """
    blocks: list[dict[str, Any]] = list(params[0].get("blockStateCalls") or [])
    per_block = [len(block.get("calls") or []) for block in blocks]
    owners = [_senders(block.get("calls") or []) for block in blocks]
    senders = list(dict.fromkeys(s for owner in owners for s in owner))
    if not senders:
        raise MalformedResponse("nothing to simulate")
    alone = all(len(owner) == 1 for owner in owners) and len(senders) == len(blocks) > 1
    groups = [[i] for i in range(len(blocks))] if alone else [list(range(len(blocks)))]
    tag = str(params[1]) if len(params) > 1 else "latest"
    runs = [_run([blocks[i] for i in g], g, tag, block_overrides) for g in groups]
    return Emulation(runs, per_block)


def _senders(calls: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(c["from"]).lower() for c in calls if c.get("from")))


_BLOCK_FIELDS = ("number", "time", "baseFeePerGas", "feeRecipient")
"""The block overrides an eth_call takes (geth's); the block gas limit stays the node's."""
_STEP_OVERHEAD = 20_000
"""Gas the runner spends around each step (decoding, copying the results)."""


def _run(
    blocks: list[dict[str, Any]], indices: list[int], tag: str, block_overrides: bool
) -> tuple[tuple[str, list[Any]], list[int]]:
    """One eth_call running ``blocks``' calls at the simulation's base block ``tag``.

    Priced as the calls are (``gasPrice``, at or above the base fee): the call's gas is
    what its steps may use, and the origin is given that gas's cost on top of the
    balance the simulation gave it, so inside the run it holds what was planned.
    """
    calls = [call for block in blocks for call in block.get("calls") or []]
    senders = _senders(calls)
    origin = senders[0] if senders else "0x" + "00" * 19 + "01"
    overrides = merged_overrides(blocks)
    code = runner_code()
    for sender in senders or [origin]:
        overrides.setdefault(sender, {})["code"] = code
    steps = [_step(call, origin) for call in calls]
    gas = min(_CALL_GAS, _INTRINSIC + sum(s[3] + _STEP_OVERHEAD for s in steps) + 100_000)
    call = {"from": origin, "to": origin, "data": encode_call(_RUN, [steps]), "gas": hex(gas)}
    gas_price = max((int(str(c["gasPrice"]), 16) for c in calls if c.get("gasPrice")), default=0)
    if gas_price:
        call["gasPrice"] = hex(gas_price)
        held = int(str(overrides[origin].get("balance") or "0x0"), 16)
        overrides[origin]["balance"] = hex(held + gas * gas_price)
    params: list[Any] = [call, tag, overrides]
    last = blocks[-1].get("blockOverrides") if blocks else None
    if block_overrides and last:
        params.append({k: v for k, v in last.items() if k in _BLOCK_FIELDS})
    return ("eth_call", params), indices


def _step(call: dict[str, Any], default_sender: str) -> tuple[str, str, int, int, bytes]:
    return (
        str(call.get("from") or default_sender).lower(),
        str(call["to"]).lower(),
        int(str(call.get("value") or "0x0"), 16),
        int(str(call.get("gas") or hex(_CALL_GAS)), 16),
        to_bytes(str(call.get("data") or call.get("input") or "0x")),
    )


def _decoded(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, RpcError):
        raise data
    try:
        (results,) = decode(_RESULTS, str(data))
    except AbiDecodeError as exc:
        raise MalformedResponse("runner returned undecodable data") from exc
    return [_call_result(ok, gas, out) for ok, gas, out in results]


def _call_result(ok: bool, gas: int, out: bytes) -> dict[str, Any]:
    result: dict[str, Any] = {
        "status": "0x1" if ok else "0x0",
        "gasUsed": hex(gas + _INTRINSIC),
        "returnData": "0x" + out.hex(),
        "logs": [],
    }
    if not ok:
        result["error"] = {"message": "execution reverted", "data": "0x" + out.hex()}
    return result


class EmulatedSimulate(RpcClient):
    """An RpcClient whose ``eth_simulateV1`` runs through the runner (module docstring).

    It shares the wrapped client's transport and settings and sends everything through
    it (what the client learns about the node stays with the node's client); closing it
    closes nothing (the wrapped client belongs to its Node).
    """

    def __init__(self, inner: RpcClient, block_overrides: bool = True) -> None:
        self.__dict__.update(inner.__dict__)
        self._inner = inner
        self.block_overrides = block_overrides
        """Send block overrides; turned off for good when the node refuses them."""

    async def aclose(self) -> None:
        return None

    def learn_batch_limit(self, refused: int, named: int | None = None) -> int:
        return self._inner.learn_batch_limit(refused, named)

    async def verify_chain(self) -> None:
        await self._inner.verify_chain()

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        if method == "eth_simulateV1":
            return await self._simulate(list(params))
        return await self._inner.call(method, params)

    async def call_typed(self, method: str, params: Sequence[Any], result_type: Any) -> Any:
        if method == "eth_simulateV1":
            return await self._simulate(list(params))
        return await self._inner.call_typed(method, params, result_type)

    async def batch(
        self,
        calls: Sequence[tuple[str, Sequence[Any]]],
        *,
        tolerate: type[RpcError] = CallReverted,
    ) -> list[Any]:
        if not any(method == "eth_simulateV1" for method, _ in calls):
            return await self._inner.batch(calls, tolerate=tolerate)
        if self.block_overrides:
            try:
                return await self._batch(calls, tolerate, True)
            except RpcError as exc:
                if not _refused(exc):
                    raise
                self.block_overrides = False
        return await self._batch(calls, tolerate, False)

    async def _batch(
        self, calls: Sequence[tuple[str, Sequence[Any]]], tolerate: type[RpcError], blocks: bool
    ) -> list[Any]:
        sent: list[tuple[str, Sequence[Any]]] = []
        plans: list[tuple[int, Emulation | None]] = []
        for method, params in calls:
            plan = emulation(list(params), blocks) if method == "eth_simulateV1" else None
            plans.append((len(sent), plan))
            sent.extend(plan.requests if plan else [(method, params)])
        replies = await self._inner.batch(sent, tolerate=tolerate)
        out: list[Any] = []
        for first, plan in plans:
            if plan is None:
                out.append(replies[first])
                continue
            answers = replies[first : first + len(plan.runs)]
            failed = next((a for a in answers if isinstance(a, RpcError)), None)
            if failed is not None and blocks and _refused(failed):
                raise failed  # the block overrides, not the token: try again without
            out.append(failed if failed is not None else plan.reply(answers))
        return out

    async def _simulate(self, params: list[Any]) -> Any:
        (reply,) = await self.batch([("eth_simulateV1", params)], tolerate=CallReverted)
        if isinstance(reply, RpcError):
            raise reply
        return reply


_INVALID_PARAMS = -32602


def _refused(exc: RpcError) -> bool:
    """The node refused the call's shape (a 4th parameter), not the simulated calls."""
    return not isinstance(exc, CallReverted) and exc.code == _INVALID_PARAMS

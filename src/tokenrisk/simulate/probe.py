"""The probe contract: a buy, transfer and sell inside one call.

``contracts/probe/TokenRiskProbe.sol`` is compiled into ``data/probe.json`` (checked
against a fresh compile by a test) and never deployed: its runtime code is placed at a
fresh address by a state override.  Two uses:

- :func:`trace_journey`: ``debug_traceCall`` with the callTracer over one probe call gives
  the call tree of a buy *and* a sell at once (a trace covers one call only);
- :func:`probe_simulate`: the last resort for a node without ``eth_simulateV1`` that
  refuses even the runner (:mod:`tokenrisk.simulate.emulation`).  The probe is a contract,
  trades in a single block and measures gas from inside, so its report carries a note
  saying so and has no limits or delayed-sell checks.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from tokenrisk.chain.abi import decode, decode_revert, encode_call
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import (
    AbiDecodeError,
    CallReverted,
    MalformedResponse,
    MethodUnsupported,
    ReplyTooDeep,
    ReplyTooLarge,
)
from tokenrisk.model import ContractCall, SimulationReport
from tokenrisk.simulate.accounting import shortfall
from tokenrisk.simulate.calls import Route, fresh_address
from tokenrisk.simulate.gas import funds, price
from tokenrisk.simulate.simulator import ChainHead, Funding

PROBE_FILE = Path(__file__).parents[1] / "data" / "probe.json"
_RUN = "run((address,address,address,address,address,address,uint24,bool,bool,uint256))"
_RUN_V4 = (
    "runV4((address,address,address,address,address,address,"
    "(address,address,uint24,int24,address),bool,uint256,uint256))"
)
_GAS = 15_000_000


@lru_cache(maxsize=1)
def probe_artifact() -> dict[str, Any]:
    with open(PROBE_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def _priced(call: dict[str, Any], head: ChainHead | None) -> tuple[dict[str, Any], str, int]:
    """``call`` priced like a real transaction at ``head`` (gas price = its base fee + a
    tip), the block tag pinning it, and what its sender must hold to pay for it.  Without a
    head (a caller that read none): "latest" and the base fee unknown, so a tip alone."""
    gas_price = price(head.base_fee if head is not None else 0)
    value = int(str(call.get("value") or "0x0"), 16)
    need = funds([int(str(call["gas"]), 16)], gas_price, value)
    tag = head.tag if head is not None else "latest"
    return {**call, "gasPrice": hex(gas_price)}, tag, need


def _probe_request(
    route: Route, funding: Funding, amount_in: int, head: ChainHead | None
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """(call, state overrides, block tag) for one probe run from a fresh EOA, priced and
    pinned at ``head``."""
    caller, probe, receiver = fresh_address(), fresh_address(), fresh_address()
    native = route.v4 and route.pool.native  # paid in ETH itself: no WETH to fund
    wrap = funding.slot is None and not native
    overrides: dict[str, Any] = {
        probe: {"code": probe_artifact()["deployedBytecode"]},
    }
    if funding.slot is not None and not native:
        overrides[route.base] = {"stateDiff": funding.slot.override(probe, amount_in)}
    call = {
        "from": caller,
        "to": probe,
        "data": _run_data(route, receiver, wrap, amount_in),
        "gas": hex(_GAS),
        "value": hex(amount_in if wrap or native else 0),
    }
    call, tag, need = _priced(call, head)
    overrides[caller] = {"balance": hex(need)}
    return call, overrides, tag


def _run_data(route: Route, receiver: str, wrap: bool, amount_in: int) -> str:
    """The probe's ``run`` (V2/V3 routers) or ``runV4`` (the Universal Router with
    Permit2, held against the pool's own curve) calldata."""
    if route.v4:
        permit2 = route.dex.permit2 or route.spender
        quoted = route.v4_expected(amount_in)
        trade_v4 = (route.dex.router, permit2, route.base, route.token, route.pool.address)
        fields = (*trade_v4, receiver, route.v4_key(), wrap, quoted, amount_in)
        return encode_call(_RUN_V4, [fields])
    trade = (
        route.dex.router,
        route.dex.quoter or "0x" + "00" * 20,
        route.base,
        route.token,
        route.pool.address,
        receiver,
        route.pool.fee or 0,
        route.v3,
        wrap,
        amount_in,
    )
    return encode_call(_RUN, [trade])


class TraceFrame(msgspec.Struct):
    """One frame of a callTracer tree as :func:`trace_journey` reads it: the fields the
    call tree uses, decoded typed (a frame's output, gas and value are skipped, not
    built: a trace's reply is ~14 KB, its frames' dicts most of the CPU reading it)."""

    from_: str = msgspec.field(name="from", default="")
    to: str = ""
    type: str = "CALL"
    input: str = "0x"
    calls: list[TraceFrame] = []


Tree = TraceFrame | dict[str, Any]
"""A traced call tree: typed, or plain JSON when the node's reply does not fit
:class:`TraceFrame` (a null field, another shape): both read alike."""


async def trace_journey(
    rpc: RpcClient, route: Route, funding: Funding, amount_in: int, head: ChainHead | None = None
) -> Tree:
    """callTracer tree of a probe buy+transfer+sell (raises MethodUnsupported without debug_).

    A node may serve ``debug_traceCall`` but ignore its ``stateOverrides`` (Hardhat's
    node does): the probe then has no code, and the tree no calls.  The token's own path
    is traced instead, with nothing to override: the pool transferring a little of its
    token balance to a fresh wallet (a buy's transfer), which still shows the contracts
    the token calls and delegates to.
    """
    call, overrides, tag = _probe_request(route, funding, amount_in, head)
    tree = await _trace(rpc, call, overrides, tag)
    if _children(tree):
        return tree
    transfer, tag, _ = _priced(_pool_transfer(route), head)
    return await _trace(rpc, transfer, None, tag)


async def _trace(
    rpc: RpcClient, call: dict[str, Any], overrides: dict[str, Any] | None, tag: str
) -> Tree:
    config: dict[str, Any] = {"tracer": "callTracer", "timeout": "10s"}
    if overrides:
        config["stateOverrides"] = overrides
    tree = await rpc.call_typed("debug_traceCall", [call, tag, config], TraceFrame)
    if not isinstance(tree, TraceFrame | dict):
        raise MalformedResponse("debug_traceCall returned an unexpected shape")
    return tree


def traced_to(tree: Tree) -> str:
    """The address the traced call went to, lower case ("" when none)."""
    if isinstance(tree, TraceFrame):
        return tree.to.lower()
    return str(tree.get("to", "")).lower()


def _children(node: Tree) -> list[Any]:
    return node.calls if isinstance(node, TraceFrame) else node.get("calls") or []


def _pool_transfer(route: Route) -> dict[str, Any]:
    """The pool sending a ten-thousandth of its token balance to a fresh wallet."""
    pool = route.pool
    reserve = pool.reserves1 if pool.token0.lower() == pool.base_token.lower() else pool.reserves0
    data = encode_call("transfer(address,uint256)", [fresh_address(), max(1, reserve // 10_000)])
    return {"from": pool.address, "to": route.token, "data": data, "gas": hex(_GAS)}


def walk_calls(tree: Tree) -> list[ContractCall]:
    """Every unique (from, to, type, selector) edge below the probe, in visit order."""
    seen: dict[tuple[str, str, str, str | None], ContractCall] = {}
    stack = list(reversed(_children(tree)))
    while stack:
        node = stack.pop()
        if isinstance(node, TraceFrame):
            data, calls = node.input, node.calls
            ends = (node.from_, node.to, node.type)
        else:
            data, calls = str(node.get("input") or "0x"), node.get("calls") or []
            ends = (
                str(node.get("from", "")),
                str(node.get("to", "")),
                str(node.get("type", "CALL")),
            )
        key = (
            ends[0].lower(),
            ends[1].lower(),
            ends[2].upper(),
            data[:10] if len(data) >= 10 else None,
        )
        if key not in seen:  # a swap-back token repeats the same edges many times
            seen[key] = ContractCall(
                from_address=key[0], to_address=key[1], call_type=key[2], selector=key[3]
            )
        stack.extend(reversed(calls))
    return list(seen.values())


def is_precompile(address: str) -> bool:
    return int(address, 16) < 0x400


async def probe_simulate(
    rpc: RpcClient, route: Route, funding: Funding, amount_in: int, head: ChainHead | None = None
) -> SimulationReport:
    """Single-call fallback simulation through the probe (contract caller, one block)."""
    call, overrides, tag = _probe_request(route, funding, amount_in, head)
    data = await rpc.call("eth_call", [call, tag, overrides])
    try:
        values, err, transfer_err = decode(["uint256[9]", "bytes", "bytes"], data)
    except AbiDecodeError as exc:
        raise MalformedResponse("probe returned undecodable data") from exc
    return _probe_report([int(v) for v in values], _text(err), _text(transfer_err))


def _text(revert: bytes) -> str | None:
    return f"execution reverted: {decode_revert(revert) or 'no reason'}" if revert else None


def _probe_report(r: list[int], err: str | None, transfer_err: str | None) -> SimulationReport:
    """Decode the probe's flags: bit 1 bought, bit 2 transferred, bit 4 sold."""
    bought, moved, sold = bool(r[0] & 1), bool(r[0] & 2), bool(r[0] & 4)
    note = (
        "node lacks eth_simulateV1: simulated with a probe contract (contract caller, "
        "one block, no limit search, taxes in token units only)"
    )
    report = SimulationReport(success=True, buy_gas=r[3] or None, notes=(note,))
    if not bought:
        return replace(report, failure_step="buy", failure_reason=err or "execution reverted")
    report = replace(
        report,
        buy_ok=True,
        transfer_ok=moved,
        sell_ok=sold,
        sell_gas=r[8] or None,
        buy_tax=_percent(shortfall(r[1], r[2])),
        transfer_tax=_percent(shortfall(r[4], r[5])) if moved else None,
        sell_tax=_percent(shortfall(r[6], r[7])) if sold else None,
    )
    if not sold:
        return replace(report, failure_step="sell", failure_reason=err or "execution reverted")
    if not moved:
        return replace(report, failure_step="transfer", failure_reason=transfer_err)
    return report


def _percent(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def describe_frame(frame: dict[str, Any]) -> str:
    """A callTracer frame's failure: its error and, when given, the revert reason."""
    text = frame.get("revertReason") or decode_revert(frame.get("output"))
    error = frame.get("error") or "reverted"
    return f"{error}: {text}" if text else str(error)


def innermost_failure(frame: dict[str, Any]) -> dict[str, Any] | None:
    """The deepest failed frame on the failing path (the token, not the router)."""
    for call in frame.get("calls") or []:
        if isinstance(call, dict) and call.get("error"):
            return innermost_failure(call) or call
    return frame if frame.get("error") else None


async def explain_sell_failure(
    rpc: RpcClient,
    route: Route,
    slot: Any,
    amount: int,
    trace: bool = False,
    head: ChainHead | None = None,
) -> str | None:
    """Why the token refuses a sell, in its own words (the innermost failing frame).

    Routers wrap a token's failure (Router02 reports ``TransferHelper:
    TRANSFER_FROM_FAILED`` whether the token reverted or ran out of gas).  A sell is, for
    the token, a transfer to the pool, so a fresh EOA holding ``amount`` (balance-slot
    override) sends it straight to the pool.  With ``trace`` (the node has
    ``debug_traceCall``) the callTracer names the innermost failing frame, e.g. ``out of
    gas`` or ``execution reverted: Blacklisted``; otherwise an ``eth_call`` gives the
    revert reason.  None when the transfer succeeds or says nothing.
    """
    seller = fresh_address()
    data = encode_call("transfer(address,uint256)", [route.pool.address, amount])
    call, tag, need = _priced(
        {"from": seller, "to": route.token, "data": data, "gas": hex(_GAS)}, head
    )
    overrides = {
        seller: {"balance": hex(need)},
        route.token: {"stateDiff": slot.override(seller, amount)},
    }
    if trace:
        config = {"tracer": "callTracer", "stateOverrides": overrides, "timeout": "10s"}
        try:
            tree = await rpc.call("debug_traceCall", [call, tag, config])
        except (CallReverted, MethodUnsupported, ReplyTooLarge, ReplyTooDeep):
            return None  # the token's own doing: the router's reason still stands
        inner = innermost_failure(tree) if isinstance(tree, dict) else None
        return describe_frame(inner) if inner is not None else None
    try:
        await rpc.call("eth_call", [call, tag, overrides])
    except CallReverted as exc:
        reason = decode_revert(exc.data if isinstance(exc.data, str) else None)
        return reason or (exc.message if "gas" in exc.message.lower() else None)
    return None


class SellTrace:
    """Why the token refuses a sell (:func:`explain_sell_failure`, its ``explain``),
    asked of the node at most once: by the journey as soon as its sell failed, beside the
    partial-sell search (:meth:`start`; issue #27: a node 30 ms away then pays no round
    trip for it after the journey), or by the journey's caller when it needs it
    (:meth:`result`).  It depends on nothing the journey finds (a fresh wallet given
    tokens by override sends them to the pool), so an early one is the same question;
    the caller uses it only when the journey's report says the sell failed, and
    :meth:`drop` cancels one started for a sell the partial-sell search then allowed.
    """

    def __init__(self, explain: Callable[[], Awaitable[str | None]]) -> None:
        self._explain = explain
        self._task: asyncio.Future[str | None] | None = None

    @property
    def early(self) -> bool:
        """Started by :meth:`start` (before its caller asked for the result)."""
        return self._task is not None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._explain())

    async def result(self) -> str | None:
        self.start()
        assert self._task is not None
        return await self._task

    def drop(self) -> None:
        if self._task is None:
            return
        if not self._task.done():
            self._task.cancel()
        elif not self._task.cancelled():
            self._task.exception()  # retrieved: an unused answer's failure is not news

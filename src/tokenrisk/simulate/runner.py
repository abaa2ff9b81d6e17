"""``eth_simulateV1`` emulated over one ``eth_call``, for nodes that lack it.

Hardhat's node and many providers answer ``eth_simulateV1`` with -32004 but run
``eth_call`` with state overrides.  :class:`EmulatedSimulate` is an
:class:`~tokenrisk.chain.rpc.RpcClient` that answers the simulations of the engine
(:mod:`tokenrisk.simulate.engine`) that way, so the whole journey (buy, transfer, sells,
the max-buy and max-sell searches) runs unchanged on such a node:

- the runner contract (``contracts/probe/TokenRiskRunner.sol``, compiled into
  ``data/runner.json``) is placed by a state override at every sender's address, and
  the ``eth_call`` goes from the first sender to itself: each call reaches the token
  from its sender's own address, and the first sender is ``tx.origin``;
- every block's state overrides are merged and applied up front, and the calls run in
  order in one call.

What this cannot show, stated by :data:`NOTE` in the response: the senders have code
while the call runs; every step runs in one block, the node's latest (block numbers and
times do not advance, so cooldowns, one-sell-per-block rules and time bombs are not
seen); gas is measured from inside (plus the intrinsic 21,000); no logs are returned, so
taxes are measured from balances only.  Every other method goes to the wrapped client.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import decode, encode_call, to_bytes
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import AbiDecodeError, CallReverted, MalformedResponse, RpcError
from tokenrisk.simulate.engine import Simulator

RUNNER_FILE = Path(__file__).parents[1] / "data" / "runner.json"
_RUN = "run((address,address,uint256,uint256,bytes)[])"
_RESULTS = ["(bool,uint256,bytes)[]"]
_INTRINSIC = 21_000
_CALL_GAS = 16_777_216
"""Gas of the one ``eth_call``: the per-transaction cap of EIP-7825 (Osaka), which
Hardhat's node applies to ``eth_call`` too; below geth's default RPC gas cap (50M)."""

NOTE = (
    "node lacks eth_simulateV1: simulated with eth_call and a runner contract placed at "
    "each wallet's address (the wallets have code while it runs; every step in the "
    "node's latest block, so cooldowns, one-sell-per-block rules, time bombs and "
    "future sells were not checked; no logs, so taxes from balances only)"
)


def emulated(sim: Simulator) -> Simulator:
    """A copy of ``sim`` whose simulations run through the runner (same route, head,
    funding and settings), for a node without ``eth_simulateV1``."""
    twin = copy.copy(sim)
    twin.rpc = EmulatedSimulate(sim.rpc)
    return twin


@lru_cache(maxsize=1)
def runner_code() -> str:
    with open(RUNNER_FILE, encoding="utf-8") as handle:
        return str(json.load(handle)["deployedBytecode"])


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


def runner_request(params: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any], list[int]]:
    """(call, overrides, calls per block) running a simulation's calls in one eth_call.

    Raises MalformedResponse for a simulation that has no call with a sender.
    """
    blocks: list[dict[str, Any]] = list(params[0].get("blockStateCalls") or [])
    calls = [call for block in blocks for call in block.get("calls") or []]
    senders = list(dict.fromkeys(str(c["from"]).lower() for c in calls if c.get("from")))
    if not senders:
        raise MalformedResponse("nothing to simulate")
    overrides = merged_overrides(blocks)
    code = runner_code()
    for sender in senders:
        overrides.setdefault(sender, {})["code"] = code
    steps = [_step(call, senders[0]) for call in calls]
    call = {
        "from": senders[0],
        "to": senders[0],
        "data": encode_call(_RUN, [steps]),
        "gas": hex(_CALL_GAS),
    }
    return call, overrides, [len(block.get("calls") or []) for block in blocks]


def _step(call: dict[str, Any], default_sender: str) -> tuple[str, str, int, int, bytes]:
    return (
        str(call.get("from") or default_sender).lower(),
        str(call["to"]).lower(),
        int(str(call.get("value") or "0x0"), 16),
        int(str(call.get("gas") or hex(_CALL_GAS)), 16),
        to_bytes(str(call.get("data") or call.get("input") or "0x")),
    )


def simulate_reply(data: Any, per_block: list[int]) -> list[dict[str, Any]]:
    """The runner's answer in ``eth_simulateV1``'s shape (one entry per block)."""
    try:
        (results,) = decode(_RESULTS, str(data))
    except AbiDecodeError as exc:
        raise MalformedResponse("runner returned undecodable data") from exc
    flat = [_call_result(ok, gas, out) for ok, gas, out in results]
    if len(flat) != sum(per_block):
        raise MalformedResponse("runner returned fewer calls than were sent")
    blocks: list[dict[str, Any]] = []
    for count in per_block:
        blocks.append({"calls": flat[:count]})
        flat = flat[count:]
    return blocks


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

    It shares the wrapped client's transport and settings; closing it closes nothing
    (the wrapped client belongs to its Node).
    """

    def __init__(self, inner: RpcClient) -> None:
        self.__dict__.update(inner.__dict__)
        self._inner = inner

    async def aclose(self) -> None:
        return None

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
        sent: list[tuple[str, Sequence[Any]]] = []
        shapes: list[list[int] | None] = []
        for method, params in calls:
            if method == "eth_simulateV1":
                call, overrides, per_block = runner_request(list(params))
                sent.append(("eth_call", [call, "latest", overrides]))
                shapes.append(per_block)
            else:
                sent.append((method, params))
                shapes.append(None)
        replies = await self._inner.batch(sent, tolerate=tolerate)
        return [
            r if shape is None or isinstance(r, RpcError) else simulate_reply(r, shape)
            for r, shape in zip(replies, shapes, strict=True)
        ]

    async def _simulate(self, params: list[Any]) -> list[dict[str, Any]]:
        call, overrides, per_block = runner_request(params)
        data = await self._inner.call("eth_call", [call, "latest", overrides])
        return simulate_reply(data, per_block)

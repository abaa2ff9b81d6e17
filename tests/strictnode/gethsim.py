"""eth_simulateV1 as go-ethereum runs it, written from ``internal/ethapi/simulate.go``.

Pure functions, no I/O: the strict node (:mod:`strictnode`) uses them to decide
whether a request breaks a rule, to translate a valid request into one anvil computes the
same way (every number, time, gas limit, base fee and call gas explicit, gap blocks
present), and to shape anvil's reply as geth's.

The rules, in geth's order:

- no ``blockStateCalls``: ``-32602 "empty input"``; more entries than the cap:
  ``-38026 "too many blocks"``;
- a block without ``number`` is the previous + 1; an explicit one not above the previous
  (the first is compared with the base): ``-38020 "block numbers must be in order: N <= P"``;
  one more than ``cap`` above the base: ``-38026 "too many blocks"``;
- a gap is filled with empty blocks, each 12 s after the previous;
- a block without ``time`` is the previous + 12; an explicit one not above the previous:
  ``-38021 "block timestamps must be in order: T <= P"``;
- the block gas limit is the base header's until a block overrides it, and the override
  carries to the blocks after it;
- a call without ``gas`` gets what its block has left; declared gas past that:
  ``-38015 "block gas limit reached"``;
- the whole request draws on the RPC gas cap: a call's gas is cut to what the cap has left
  after the gas used before it, and nothing left: ``-32603 "gas limit reached"``;
- ``validation: false`` (the default) runs every block at base fee 0 unless the block
  overrides ``baseFeePerGas``;
- every header is built afresh (``makeHeaders``), so a block's mix digest, which
  ``block.prevrandao`` reads after the merge, is zero unless the block overrides
  ``prevRandao`` (anvil instead keeps the base block's, or the last override's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi import decode as abi_decode

TIME_STEP = 12
ZERO_WORD = "0x" + "00" * 32
ERROR_STRING = "08c379a0"


class RuleError(Exception):
    """A JSON-RPC error the node answers instead of a result."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def as_error(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Base:
    """The header a simulation starts from."""

    number: int
    time: int
    gas_limit: int


def _int(value: Any) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)


# BLOCK ORDER


def sanitize(blocks: list[dict[str, Any]], base: Base, cap: int) -> list[dict[str, Any]]:
    """The blocks geth will run: explicit number and time on each, gap blocks inserted.

    Raises RuleError for an empty request, too many blocks, or numbers/times out of order.
    """
    if not blocks:
        raise RuleError(-32602, "empty input")
    if len(blocks) > cap:
        raise RuleError(-38026, "too many blocks")
    out: list[dict[str, Any]] = []
    prev_number, prev_time = base.number, base.time
    for block in blocks:
        block = dict(block)  # what is changed below is copied; the caller's blocks stay as sent
        overrides = dict(block.get("blockOverrides") or {})
        block["blockOverrides"] = overrides
        number = _int(overrides["number"]) if "number" in overrides else prev_number + 1
        if number <= prev_number:
            raise RuleError(-38020, f"block numbers must be in order: {number} <= {prev_number}")
        if number - base.number > cap:
            raise RuleError(-38026, "too many blocks")
        for gap in range(prev_number + 1, number):
            prev_time += TIME_STEP
            out.append({"blockOverrides": {"number": gap, "time": prev_time}, "calls": []})
        if "time" in overrides:
            time = _int(overrides["time"])
            if time <= prev_time:
                raise RuleError(-38021, f"block timestamps must be in order: {time} <= {prev_time}")
        else:
            time = prev_time + TIME_STEP
        overrides["number"], overrides["time"] = number, time
        block.setdefault("calls", [])
        prev_number, prev_time = number, time
        out.append(block)
    return out


def gas_limits(blocks: list[dict[str, Any]], base: Base) -> list[int]:
    """Each block's gas limit: the base header's until overridden, then the override's."""
    limits: list[int] = []
    limit = base.gas_limit
    for block in blocks:
        overrides = block.get("blockOverrides") or {}
        if "gasLimit" in overrides:
            limit = _int(overrides["gasLimit"])
        limits.append(limit)
    return limits


# GAS


def plan_gas(
    blocks: list[dict[str, Any]],
    limits: list[int],
    gas_cap: int,
    used: list[list[int]] | None = None,
    sent: list[list[int]] | None = None,
) -> list[list[int]]:
    """The gas geth gives each call, from the gas the calls before it used.

    ``used`` is what a run with ``sent`` gas measured (None before the first run: 0).
    A call's gas depends on what the calls before it used, so a rule is only enforced
    where every earlier call ran with the gas it will finally get (``sent`` agrees);
    past the first disagreement the plan is a best guess for the next run.
    Raises RuleError (-38015, -32603) where a rule is broken.
    """
    plan: list[list[int]] = []
    pool_used = 0
    settled = True
    for b, (block, limit) in enumerate(zip(blocks, limits, strict=True)):
        block_used = 0
        gases: list[int] = []
        for c, call in enumerate(block.get("calls") or []):
            gas = _call_gas(call, limit, block_used, gas_cap - pool_used, settled)
            gases.append(gas)
            if sent is None or used is None or sent[b][c] != gas:
                settled = False  # this call's measured use is not final, nor what follows
            spent = used[b][c] if used is not None else 0
            block_used += spent
            pool_used += spent
        plan.append(gases)
    return plan


def _call_gas(call: dict[str, Any], limit: int, block_used: int, pool: int, strict: bool) -> int:
    declared = _int(call["gas"]) if call.get("gas") is not None else None
    gas = declared if declared is not None else max(limit - block_used, 0)
    if block_used + gas > limit and strict:
        raise RuleError(-38015, f"block gas limit reached: {block_used} >= {limit}")
    if pool <= 0:
        if strict:
            raise RuleError(-32603, "gas limit reached")
        return 0
    return min(gas, pool)


# TRANSLATION


def anvil_validation(blocks: list[dict[str, Any]], validation: bool) -> bool:
    """The ``validation`` flag that makes anvil compute what geth would.

    Without validation anvil runs ``BASEFEE`` at 0 even where a block overrides
    ``baseFeePerGas``, which geth honours.  Run with validation instead when that changes
    nothing else: every call pays at least its block's base fee and names no nonce (geth
    skips nonce checks without validation).  Otherwise ``BASEFEE`` reads 0 here: a stated
    limit of the test bed (docs/strict-node.md).
    """
    if validation:
        return True
    overridden = any("baseFeePerGas" in (b.get("blockOverrides") or {}) for b in blocks)
    return overridden and all(
        _fee(call) >= _int(block["blockOverrides"].get("baseFeePerGas", 0)) and "nonce" not in call
        for block in blocks
        for call in block.get("calls") or []
    )


def _fee(call: dict[str, Any]) -> int:
    return _int(call.get("gasPrice", call.get("maxFeePerGas", 0)))


def forwarded(
    blocks: list[dict[str, Any]],
    limits: list[int],
    gases: list[list[int]],
    validation: bool,
) -> list[dict[str, Any]]:
    """``blockStateCalls`` with everything explicit, so anvil computes what geth would
    (``validation`` is the request's own flag: without it, base fee 0 unless overridden)."""
    out: list[dict[str, Any]] = []
    for block, limit, block_gases in zip(blocks, limits, gases, strict=True):
        block = dict(block)  # a copy of what is changed below, as in sanitize
        overrides = block["blockOverrides"] = dict(block["blockOverrides"])
        overrides["number"] = hex(_int(overrides["number"]))
        overrides["time"] = hex(_int(overrides["time"]))
        overrides["gasLimit"] = hex(limit)
        if not validation and "baseFeePerGas" not in overrides:
            overrides["baseFeePerGas"] = "0x0"
        overrides.setdefault("prevRandao", ZERO_WORD)  # geth's fresh header
        block["calls"] = [
            {**call, "gas": hex(gas)} for call, gas in zip(block["calls"], block_gases, strict=True)
        ]
        out.append(block)
    return out


def used_gas(reply: list[dict[str, Any]]) -> list[list[int]]:
    return [[_int(call["gasUsed"]) for call in block.get("calls", [])] for block in reply]


def shape_reply(
    reply: list[dict[str, Any]], blocks: list[dict[str, Any]], gases: list[list[int]]
) -> list[dict[str, Any]]:
    """anvil's reply, checked against the blocks asked for, with geth's call errors.

    Raises RuleError (-32603) when anvil did not run the blocks it was given.
    """
    if len(reply) != len(blocks):
        raise RuleError(-32603, f"node returned {len(reply)} blocks for {len(blocks)}")
    shaped: list[dict[str, Any]] = []
    for got, block, block_gases in zip(reply, blocks, gases, strict=True):
        want = block["blockOverrides"]
        if _int(got["number"]) != _int(want["number"]) or _int(got["timestamp"]) != _int(
            want["time"]
        ):
            raise RuleError(-32603, "node ran another block than asked")
        calls = [_geth_call(c, g) for c, g in zip(got.get("calls", []), block_gases, strict=True)]
        shaped.append({**got, "calls": calls})
    return shaped


def _geth_call(result: dict[str, Any], gas: int) -> dict[str, Any]:
    """geth's per-call error: ``out of gas`` (-32015) when the call burnt all its gas,
    else ``execution reverted[: reason]`` (3) with the revert data."""
    result = {k: v for k, v in result.items() if k != "error"}
    result.setdefault("logs", [])
    if _int(result.get("status", "0x1")) == 1:
        return result
    data = result.get("returnData") or "0x"
    if _int(result["gasUsed"]) >= gas:
        result["error"] = {"message": "out of gas", "code": -32015}
        return result
    reason = revert_reason(data)
    message = "execution reverted" + (f": {reason}" if reason else "")
    result["error"] = {"message": message, "code": 3, "data": data}
    return result


def revert_reason(data: str) -> str | None:
    raw = data.removeprefix("0x")
    if not raw.startswith(ERROR_STRING):
        return None
    try:
        (reason,) = abi_decode(["string"], bytes.fromhex(raw[8:]))
    except Exception:  # noqa: BLE001 - malformed revert data has no reason
        return None
    return str(reason)

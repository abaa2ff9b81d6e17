"""The rules a real node enforces on a simulation, written from go-ethereum's
``internal/ethapi/simulate.go`` and ``api.go`` (../shared/NODES.md), to check what
tokenrisk sends, independently of the code under test.

:func:`simulate_violations` reads one ``eth_simulateV1`` params list, :func:`call_violations`
one ``eth_call``'s; each returns sentences, empty when the request would be accepted and
priced like a real transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RPC_GAS_CAP = 50_000_000  # geth's default --rpc.gascap
BLOCK_INCREMENT = 12  # geth fills a gap's blocks 12 s apart


@dataclass(frozen=True)
class Base:
    """The header a request is pinned to."""

    number: int
    timestamp: int
    gas_limit: int
    base_fee: int


def _int(value: Any, default: int = 0) -> int:
    return int(value, 16) if isinstance(value, str) else default


def _price(call: dict[str, Any]) -> int:
    return _int(call.get("gasPrice") or call.get("maxFeePerGas"))


def simulate_violations(params: list[Any], base: Base, cap: int = 256) -> list[str]:
    """What geth would refuse, and what would tell a token it is simulated."""
    opts, tag = params
    out: list[str] = []
    if tag != hex(base.number):
        out.append(f"base block {tag!r} is not the head read ({hex(base.number)})")
    prev_n, prev_t, total = base.number, base.timestamp, 0
    balances: dict[str, int] = {}
    blocks = opts["blockStateCalls"]
    if len(blocks) > cap:
        out.append("too many blocks")
    for block in blocks:
        o = block.get("blockOverrides") or {}
        n = _int(o.get("number"), prev_n + 1)
        if n <= prev_n:
            out.append(f"block numbers must be in order: {n} <= {prev_n}")
        if n - base.number > cap:
            out.append(f"too many blocks: {n - base.number} > {cap}")
        prev_t += BLOCK_INCREMENT * max(0, n - prev_n - 1)
        t = _int(o.get("time"), prev_t + BLOCK_INCREMENT)
        if t <= prev_t:
            out.append(f"block timestamps must be in order: {t} <= {prev_t}")
        if "gasLimit" in o:
            out.append("the block gas limit is overridden")
        if _int(o.get("baseFeePerGas")) < base.base_fee:
            out.append("the block's base fee is below the head's (geth would set 0)")
        for address, account in (block.get("stateOverrides") or {}).items():
            if "balance" in account:
                balances[address.lower()] = _int(account["balance"])
        declared = 0
        for call in block["calls"]:
            if "gas" not in call:
                out.append("a call without gas takes the block's remaining gas")
                continue
            gas = _int(call["gas"])
            declared += gas
            total += gas
            if declared > base.gas_limit:
                out.append("block gas limit reached")
            out += _priced(call, base, balances)
        prev_n, prev_t = n, t
    if total > RPC_GAS_CAP:
        out.append(f"the request declares {total} gas, above the RPC gas cap")
    return sorted(set(out))


def _priced(call: dict[str, Any], base: Base, balances: dict[str, int]) -> list[str]:
    out: list[str] = []
    price = _price(call)
    if price < max(1, base.base_fee) or price <= 1:
        out.append(f"gas price {price} below the base fee {base.base_fee} (or a giveaway 0/1)")
    sender = str(call.get("from", "")).lower()
    if sender in balances:
        cost = _int(call.get("gas")) * price + _int(call.get("value"))
        balances[sender] -= cost
        if balances[sender] < 0:
            out.append("insufficient funds for gas * price + value")
        elif balances[sender] > 10**24:
            out.append("an absurd wallet balance")
    return out


def call_violations(params: list[Any], base: Base) -> list[str]:
    """An ``eth_call``: pinned, priced, within the gas cap; block overrides ahead."""
    out: list[str] = []
    call, tag = params[0], params[1] if len(params) > 1 else "latest"
    if tag != hex(base.number):
        out.append(f"eth_call at {tag!r}, not the head read ({hex(base.number)})")
    if _int(call.get("gas"), RPC_GAS_CAP + 1) > RPC_GAS_CAP:
        out.append("eth_call gas above the RPC gas cap (or none)")
    if _price(call) < max(2, base.base_fee):
        out.append("eth_call gas price below the base fee")
    if len(params) > 3 and _int(params[3].get("number"), base.number + 1) <= base.number:
        out.append("block override number not ahead of the base")
    return out

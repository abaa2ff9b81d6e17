"""Prove each latent trap on the built chain: arm it for real, watch a holder, undo it.

A latent-trap token is catalogued in its pre-armed state, so its expected owner power
would otherwise be a claim typed into ``catalogue.json``.  For every token with an
``ownerProof`` entry the build, after the history and before the state dump:

1. takes an ``evm_snapshot``;
2. mines the owner action as a real transaction from the real controller (``from``),
   or lets time pass (``advanceSeconds``: a block is mined that much later);
3. has a history holder sell half of their balance through the token's sell pool and
   measures the sell tax in token units (seller's decrease vs. the pool's increase),
   the holder's balance and the total supply before and after the action;
4. has the same holder send a tenth of what it still holds to a fresh EOA (a mined
   wallet-to-wallet transfer: does it go through after the action?);
5. reverts to the snapshot, so the dumped chain is still pre-armed.

The measurements go into the manifest (``ownerProof.measured``) and the ``expect``
conditions are checked here: a proof that does not show what the catalogue says stops
the build.  Integration tests compare the detector's findings with these mined facts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tokenrisk.chain.abi import decode, encode_call
from tokenrisk.chain.signatures import TOTAL_SUPPLY
from tokenrisk.devnet.catalogue import resolve_args
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.deployment import Deployed, Devnet
from tokenrisk.devnet.history import actor_address, holder_address
from tokenrisk.devnet.swaps import (
    approvals,
    balance_of_calldata,
    sell_calldata,
    transfer_calldata,
    v4_quote,
    v4_swap,
)
from tokenrisk.devnet.trading import sell_pool
from tokenrisk.errors import DevnetBuildError

OWNER = encode_call("owner()")
"""The owner getter's calldata, read around a proof that expects ``ownerChanges``."""


@dataclass(frozen=True)
class Measured:
    """What the mined proof showed (amounts in raw token units, tax in percent)."""

    call_ok: bool | None
    call_reason: str | None
    sell_ok: bool
    sell_reason: str | None
    sell_tax: float | None
    balance_before: int
    balance_after: int
    supply_before: int
    supply_after: int
    caller_before: int = 0  # the owner call's sender's own token balance
    caller_after: int = 0
    sell_gas: int | None = None  # gas the mined sell used
    sell_loss: float | None = None
    """V4 only: percent of the pool curve's quote (no hook) the seller did not receive in
    WETH (a hook's fee on the output leaves the token units whole)."""
    owner_before: int | None = None  # the owner getter, read only for ``ownerChanges``
    owner_after: int | None = None
    transfer_ok: bool | None = None  # the holder's transfer to a fresh EOA after the sell
    transfer_reason: str | None = None  # None: it went through (or the holder had nothing)


async def prove_owner_powers(devnet: Devnet) -> dict[str, Any]:
    """Run every token's ``ownerProof``; returns ``{token id: {..., "measured": {...}}}``.

    Raises DevnetBuildError when a proof contradicts its ``expect`` conditions.
    """
    proofs: dict[str, Any] = {}
    for token in devnet.tokens.values():
        spec = token.spec.raw.get("ownerProof")
        if not spec:
            continue
        seller = holder_address(token.spec.id, 0)  # the catalogue's ``$holder:0``
        snapshot = await devnet.chain.cheat("evm_snapshot")
        try:
            measured = await _prove(devnet, token, spec, seller)
        finally:
            await devnet.chain.cheat("evm_revert", snapshot)
        _check(token.spec.id, spec.get("expect", {}), measured)
        proofs[token.spec.id] = dict(spec) | {"seller": seller, "measured": asdict(measured)}
    return proofs


async def _prove(devnet: Devnet, token: Deployed, spec: dict[str, Any], seller: str) -> Measured:
    chain = devnet.chain
    balance_before = await _uint(chain, token.address, balance_of_calldata(seller))
    supply_before = await _uint(chain, token.address, TOTAL_SUPPLY)
    call_ok: bool | None = None
    call_reason: str | None = None
    sender = await _sender(devnet, token, spec) if "call" in spec else None
    caller_before = await _uint(chain, token.address, balance_of_calldata(sender)) if sender else 0
    watch_owner = bool(spec.get("expect", {}).get("ownerChanges"))
    owner_before = await _uint(chain, token.address, OWNER) if watch_owner else None
    if sender is not None and "first" in spec:  # a two-step trap's setter
        await _owner_action(devnet, token, spec["first"], sender)
    if sender is not None:
        call_ok, call_reason = await _owner_action(devnet, token, spec, sender)
    if spec.get("advanceSeconds"):
        now = int((await chain.block())["timestamp"], 16)
        await chain.cheat("evm_mine", now + int(spec["advanceSeconds"]))
    balance_after = await _uint(chain, token.address, balance_of_calldata(seller))
    supply_after = await _uint(chain, token.address, TOTAL_SUPPLY)
    caller_after = await _uint(chain, token.address, balance_of_calldata(sender)) if sender else 0
    owner_after = await _uint(chain, token.address, OWNER) if watch_owner else None
    sold = await _sell_half(devnet, token, seller, balance_after)
    moved, moved_reason = await _transfer_tenth(devnet, token, seller)
    return Measured(
        call_ok,
        call_reason,
        sold.ok,
        sold.reason,
        sold.tax,
        balance_before,
        balance_after,
        supply_before,
        supply_after,
        caller_before,
        caller_after,
        sold.gas,
        sold.loss,
        owner_before,
        owner_after,
        moved,
        moved_reason,
    )


async def _sender(devnet: Devnet, token: Deployed, spec: dict[str, Any]) -> str:
    """Who sends the owner call: a catalogue address, or ``$owner()``: whatever the
    token's owner getter returns (a contract owner such as a multisig or a timelock,
    which anvil's auto-impersonation lets the build send from)."""
    name = spec.get("from", "$OWNER")
    if name == "$owner()":
        raw = await devnet.chain.call(token.address, encode_call("owner()"))
        owner = str(decode(["address"], raw)[0])
        await devnet.chain.set_balances({owner: 10**18})  # gas (reverted after)
        return owner
    label = f"{token.spec.id}: ownerProof {spec['call']}"
    return str(resolve_args(["address"], (name,), devnet.scope(token), label)[0])


async def _owner_action(
    devnet: Devnet, token: Deployed, spec: dict[str, Any], sender: str
) -> tuple[bool, str | None]:
    signature = str(spec["call"])
    label = f"{token.spec.id}: ownerProof {signature}"
    scope = devnet.scope(token)
    types = _types(signature)
    args = resolve_args(types, tuple(spec.get("args", [])), scope, label)
    tx = Tx(sender, _target(token, spec), encode_call(signature, args), label=label)
    outcome = await devnet.chain.send(tx, allow_revert=True)
    return outcome.ok, outcome.reason


def _target(token: Deployed, spec: dict[str, Any]) -> str:
    """Where the owner call goes: the token, or (``"to": "$hook"``) the hook of the
    token's sell pool (a V4 hook whose owner holds the power)."""
    if spec.get("to") != "$hook":
        return token.address
    key = sell_pool(token).key
    if key is None or not int(key[4], 16):
        raise DevnetBuildError(f"{token.spec.id}: ownerProof to $hook, but its pool has no hook")
    return key[4]


@dataclass(frozen=True)
class _Sold:
    ok: bool
    reason: str | None
    tax: float | None = None  # token units: the seller's decrease that missed the pool
    gas: int | None = None
    loss: float | None = None  # V4: WETH received short of the hook-free quote, percent


async def _sell_half(devnet: Devnet, token: Deployed, seller: str, balance: int) -> _Sold:
    """A real sell of half the holder's balance (a V4 pool's paid out in WETH, as the
    ground truth trades, and held against the pool's curve without its hook)."""
    chain = devnet.chain
    pool = sell_pool(token)
    amount = balance // 2
    if amount == 0:
        return _Sold(False, "the holder has no tokens")
    route = pool.route
    label = f"{token.spec.id}: ownerProof sell"
    for tx in approvals(route, seller, token.address, label):
        await chain.send(tx)
    pool_before = await _uint(chain, token.address, balance_of_calldata(pool.address))
    v4 = route.dex == "v4"
    quote = await v4_quote(chain, route, token.address, amount, True) if v4 else 0
    weth_before = await _uint(chain, route.base, balance_of_calldata(seller)) if v4 else 0
    data = v4_swap(route, token.address, amount, True, True) if v4 else None
    data = data or sell_calldata(route, token.address, seller, amount)
    outcome = await chain.send(Tx(seller, route.router, data, label=label), allow_revert=True)
    if not outcome.ok:
        return _Sold(False, outcome.reason)
    pool_after = await _uint(chain, token.address, balance_of_calldata(pool.address))
    seller_after = await _uint(chain, token.address, balance_of_calldata(seller))
    spent = balance - seller_after
    tax = (spent - (pool_after - pool_before)) * 100 / spent if spent > 0 else None
    gas = int(outcome.receipt["gasUsed"], 16)
    loss = None
    if v4 and quote > 0:
        got = await _uint(chain, route.base, balance_of_calldata(seller)) - weth_before
        loss = max(0.0, (quote - got) * 100 / quote)
    return _Sold(True, None, tax, gas, loss)


async def _transfer_tenth(
    devnet: Devnet, token: Deployed, holder: str
) -> tuple[bool | None, str | None]:
    """A real wallet-to-wallet transfer of a tenth of what the holder still holds to a
    fresh EOA (after the sell, so the sell measured the balance the action left): did it
    go through, and why not.  ``(None, None)`` when the holder has nothing to send (no
    transfer was tried, so it can prove neither way)."""
    amount = await _uint(devnet.chain, token.address, balance_of_calldata(holder)) // 10
    if amount == 0:
        return None, None
    receiver = actor_address(token.spec.id, "proof-receiver", 0)
    data = transfer_calldata(receiver, amount)
    tx = Tx(holder, token.address, data, label=f"{token.spec.id}: ownerProof transfer")
    outcome = await devnet.chain.send(tx, allow_revert=True)
    return outcome.ok, outcome.reason


async def _uint(chain: Chain, to: str, data: str) -> int:
    return int(decode(["uint256"], await chain.call(to, data))[0])


def _types(signature: str) -> list[str]:
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    return [t for t in inner.split(",") if t] if inner else []


def _check(token_id: str, expect: dict[str, Any], m: Measured) -> None:
    """Stop the build when the mined proof does not show what the catalogue claims."""
    failures: list[str] = []
    if expect.get("callReverts") and m.call_ok is not False:
        failures.append("the owner call was expected to revert but went through")
    if not expect.get("callReverts") and m.call_ok is False:
        failures.append(f"the owner call reverted: {m.call_reason}")
    if "sellFails" in expect and bool(expect["sellFails"]) == m.sell_ok:
        failures.append(f"sell ok={m.sell_ok} ({m.sell_reason}), expected the opposite")
    if "transferFails" in expect and m.transfer_ok is not (not expect["transferFails"]):
        failures.append(f"transfer ok={m.transfer_ok} ({m.transfer_reason}), expected the opposite")
    if "sellTaxAtLeast" in expect and (m.sell_tax or 0.0) < float(expect["sellTaxAtLeast"]):
        failures.append(f"sell tax {m.sell_tax} below {expect['sellTaxAtLeast']}")
    if "sellLossAtLeast" in expect and (m.sell_loss or 0.0) < float(expect["sellLossAtLeast"]):
        failures.append(f"sell loss {m.sell_loss} below {expect['sellLossAtLeast']}")
    if "sellGasAtLeast" in expect and (m.sell_gas or 0) < int(expect["sellGasAtLeast"]):
        failures.append(f"sell gas {m.sell_gas} below {expect['sellGasAtLeast']}")
    if expect.get("supplyGrows") and m.supply_after <= m.supply_before:
        failures.append("total supply did not grow")
    if expect.get("balanceDrops") and m.balance_after >= m.balance_before:
        failures.append("the holder's balance did not drop")
    if expect.get("callerBalanceGrows") and m.caller_after <= m.caller_before:
        failures.append("the caller's own balance did not grow")
    if expect.get("ownerChanges") and m.owner_after == m.owner_before:
        failures.append("the owner getter did not change")
    if failures:
        raise DevnetBuildError(f"{token_id}: ownerProof failed: {'; '.join(failures)}")

"""Which contracts a call trace names hold code, read beside the trace where predictable.

The call tree's contracts are verified only if they hold code (EOAs, such as wallets
paid in ETH during a sell, are not contracts).  Reading that after the trace comes back
costs a round trip of its own on a first check (issue #27), so the code of what the
trace will most likely name is read while the trace runs (:func:`read_ahead`): what
the last trace of the token called, or on a first trace what every swap on the route
calls plus the token's EIP-1967 implementation (a proxy token delegates every transfer
to it).  The read is a prediction: it answers only for the addresses it read, and any
address the trace names beyond them is read after the trace as before
(:func:`contracts_of`), so the answer never depends on the guess.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tokenrisk.chain.node import Node
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.signatures import IMPLEMENTATION_SLOT
from tokenrisk.chain.tokens import is_contract, is_contract_code
from tokenrisk.checks.trade import Prepared
from tokenrisk.errors import RpcError
from tokenrisk.simulate.owners import implementation_code, implementation_read, stored_address


@dataclass(frozen=True)
class Ahead:
    """The read sent beside the trace: the addresses it read (``covered``, lower case)
    and those of them that hold code."""

    covered: frozenset[str]
    with_code: frozenset[str]


def route_contracts(ready: Prepared) -> frozenset[str]:
    """What every swap on ``ready``'s route calls: the token, the pool, the router, the base
    token, the quoter the probe asks on V2/V3 routes (:mod:`tokenrisk.simulate.probe`);
    on V4 also what the router pulls through (Permit2) and the pool's hook, which every V4
    swap calls as well, so a first trace's code reads need not wait for it."""
    route = ready.route
    found = [route.token, route.pool.address, route.dex.router, route.base, route.spender]
    hooks = route.pool.hooks
    if route.v4 and hooks is not None and int(hooks, 16) != 0:
        found.append(hooks)
    if not route.v4 and route.dex.quoter:
        found.append(route.dex.quoter)
    return frozenset(a.lower() for a in found)


async def read_ahead(node: Node, before: frozenset[str], token: str | None) -> Ahead:
    """The code of ``before`` and, with ``token`` (a first trace), of the token's EIP-1967
    implementation, in the same round as the trace."""
    if token is None:
        return Ahead(before, frozenset(await with_code(node, set(before))))
    reads = with_code(node, set(before)), _implementation(node.rpc, token)
    heads, impl = await asyncio.gather(*reads)
    if impl is None:
        return Ahead(before, frozenset(heads))
    address, has_code = impl
    return Ahead(before | {address}, frozenset(heads | ({address} if has_code else set())))


async def _implementation(rpc: RpcClient, token: str) -> tuple[str, bool] | None:
    """(the token's EIP-1967 implementation, whether it holds code), or None: no address
    in the slot, or a node that did not run the slot-and-code reader as asked (then the
    implementation, if the trace names it, is read after the trace)."""
    calls = [
        ("eth_getStorageAt", [token, IMPLEMENTATION_SLOT, "latest"]),
        implementation_read(token, "latest"),
    ]
    try:
        word, read = await rpc.batch(calls, tolerate=RpcError)
    except RpcError:
        return None
    address = stored_address(word)
    code = implementation_code(word, read) if address else None
    if address is None or code is None:
        return None
    return address.lower(), is_contract_code(code)


async def contracts_of(
    node: Node, called: frozenset[str], early: asyncio.Future[Ahead]
) -> set[str]:
    """Which of ``called`` hold code: from the read beside the trace for those it covers,
    the rest read now (one more round trip only when the prediction missed some)."""
    ahead = await early
    rest = called - ahead.covered
    return set(called & ahead.with_code) | (await with_code(node, set(rest)))


async def with_code(node: Node, addresses: set[str]) -> set[str]:
    """The addresses that hold code: only contracts can be verified (EOAs, such as wallets
    paid in ETH during a sell, are not contracts and are never listed)."""
    ordered = sorted(addresses)
    flags = await is_contract(node.rpc, ordered) if ordered else []
    return {a for a, has_code in zip(ordered, flags, strict=True) if has_code}

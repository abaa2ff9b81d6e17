"""What one GoPlus ``token_security`` entry is rendered from (:class:`Facts`), and the
reads only that endpoint needs: the creator, the owner's and creator's balances, and
the token's runtime code (for ``selfdestruct``).

Every fact comes from tokenrisk's own checks or the node; a fact that could not be
read is None and its GoPlus fields are omitted, never guessed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import balances_of
from tokenrisk.checks.results import HoneypotResult, PairRow, TopHoldersResult
from tokenrisk.errors import TokenRiskError
from tokenrisk.model import TokenInfo
from tokenrisk.simulate.owners import deployer


@dataclass(frozen=True)
class People:
    """The token's creator and the raw balances of its owner and creator (lower-case
    address -> balance; an address whose balanceOf reverted is absent)."""

    creator: str | None = None
    balances: dict[str, int] = field(default_factory=dict)
    code: str | None = None  # runtime code, 0x-hex; None when unread


@dataclass(frozen=True)
class Facts:
    """Everything one entry is rendered from.  ``result`` is None when the token has no
    pool (IsHoneypot's "No pairs found"): then only the token's own facts are known."""

    token: TokenInfo
    result: HoneypotResult | None
    pairs: tuple[PairRow, ...]
    holders: TopHoldersResult | None
    lp_holders: TopHoldersResult | None
    lp_holder_count: int | None
    people: People


async def creator_and_code(
    node: Node, token: str, deployers: MemoryCache[tuple[int, str], str | None]
) -> tuple[str | None, str | None]:
    """The creator (the owner-power scan's deployer lookup, shared cache) and the code."""
    creator, code = await asyncio.gather(
        deployer(node.rpc, node.id, token, deployers), _code(node, token)
    )
    return creator, code


async def balances(node: Node, token: str, accounts: list[str]) -> dict[str, int]:
    """Raw ``balanceOf`` of each account (lower case), those that answered."""
    if not accounts:
        return {}
    try:
        found = await balances_of(node.rpc, token, accounts)
    except TokenRiskError:
        return {}
    return {a.lower(): b for a, b in zip(accounts, found, strict=True) if b is not None}


async def _code(node: Node, token: str) -> str | None:
    try:
        code = await node.rpc.call("eth_getCode", [token, "latest"])
    except TokenRiskError:
        return None
    return code if isinstance(code, str) else None


SELFDESTRUCT = 0xFF
PUSH1, PUSH32 = 0x60, 0x7F


def has_selfdestruct(code_hex: str) -> bool:
    """Whether the runtime code contains a SELFDESTRUCT instruction (push data skipped,
    so a 0xff inside a constant does not count).  Reachability is not proven: GoPlus's
    ``selfdestruct`` is likewise "the contract can self-destruct"."""
    code = bytes.fromhex(code_hex[2:] if code_hex.startswith("0x") else code_hex)
    i = 0
    while i < len(code):
        op = code[i]
        if op == SELFDESTRUCT:
            return True
        i += 1 + (op - PUSH1 + 1 if PUSH1 <= op <= PUSH32 else 0)
    return False

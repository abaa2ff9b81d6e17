"""Gathering one token's :class:`~tokenrisk.api.compat.goplus.Facts` for the GoPlus
``token_security`` endpoint: the IsHoneypot check (simulation, owner-power scan, call
trace and verification), GetPairs, TopHolders of the token and of its V2 pair (LP
tokens), and the reads only this endpoint needs (the creator, the owner's and creator's
balances, the token's runtime code), concurrently where independent.

Every fact comes from tokenrisk's own checks or the node; a fact that could not be
read is None and its GoPlus fields are omitted, never guessed."""

from __future__ import annotations

import asyncio

from tokenrisk.api.compat.goplus import Facts, People
from tokenrisk.chain.node import Node
from tokenrisk.chain.tokens import balances_of
from tokenrisk.checks.deps import HoldersDeps, HoneypotDeps, Options
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.checks.pairs import get_pairs
from tokenrisk.checks.results import HoneypotResult, TopHoldersResult
from tokenrisk.checks.top_holders import holders_counted, top_holders
from tokenrisk.errors import NoPairsFound, NotAToken, TokenRiskError
from tokenrisk.simulate.owners import PowerCache, deployer

HOLDERS_SHOWN = 10
"""GoPlus lists the top 10 holders (and LP holders)."""
PAIRS_SHOWN = 10


async def gather(
    deps: HoneypotDeps, holders: HoldersDeps, chain_id: int, token: str, options: Options
) -> Facts:
    """The facts of ``token`` (checksummed) on ``chain_id``.

    Raises what the checks raise (UnknownChain, NotFoundError for no contract, NotAToken,
    node errors), except NoPairsFound: a token without a pool still has its own facts.
    A pair or pool address (which IsHoneypot resolves to its token) is NotAToken here:
    the entry would describe another address than its key.
    """
    node = deps.nodes.node(chain_id)
    checked, pairs, top, (creator, code) = await asyncio.gather(
        _checked(deps, chain_id, token, options),
        get_pairs(deps.nodes, token, chain_id, PAIRS_SHOWN),
        top_holders(holders, token, chain_id, HOLDERS_SHOWN),
        _creator_and_code(node, token, deps.powers.cache),
    )
    result = checked if isinstance(checked, HoneypotResult) else None
    info = checked.analysis.token if isinstance(checked, HoneypotResult) else checked.token
    if info.address.lower() != token.lower():  # IsHoneypot resolves a pair to its token
        raise NotAToken("a pair or pool address, not a token")
    owner = _owner(result)
    pool = result.analysis.pool if result else None
    lp_pool = pool.address if pool is not None and pool.version == "V2" else None
    accounts = [a for a in dict.fromkeys([owner, creator]) if a]
    held, (lp, lp_count) = await asyncio.gather(
        _balances(node, token, accounts), _lp(holders, chain_id, lp_pool)
    )
    return Facts(
        token=info,
        result=result,
        pairs=tuple(pairs),
        holders=top,
        lp_holders=lp,
        lp_holder_count=lp_count,
        people=People(creator=creator, balances=held, code=code),
    )


async def _checked(
    deps: HoneypotDeps, chain_id: int, token: str, options: Options
) -> HoneypotResult | NoPairsFound:
    try:
        return await is_honeypot(deps, token, chain_id, None, "never", options)
    except NoPairsFound as exc:
        if exc.token is None:
            raise
        return exc


def _owner(result: HoneypotResult | None) -> str | None:
    powers = result.analysis.owner_powers if result else None
    return powers.owner if powers is not None and powers.scanned else None


async def _lp(
    holders: HoldersDeps, chain_id: int, pair: str | None
) -> tuple[TopHoldersResult | None, int | None]:
    """The V2 pair's LP-token holders and their count (None for V3 pools: positions
    are NFTs, not an ERC-20 supply)."""
    if pair is None:
        return None, None
    top = await top_holders(holders, pair, chain_id, HOLDERS_SHOWN)
    count = await holders_counted(holders.index, holders.nodes.node(chain_id), pair)
    return top, count


# THE READS ONLY GOPLUS NEEDS


async def _creator_and_code(
    node: Node, token: str, cache: PowerCache
) -> tuple[str | None, str | None]:
    """The creator (the owner-power scan's deployer lookup, its shared cache) and the code."""
    creator, code = await asyncio.gather(
        deployer(node.rpc, node.id, token, cache.deployers), _code(node, token)
    )
    return creator, code


async def _balances(node: Node, token: str, accounts: list[str]) -> dict[str, int]:
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

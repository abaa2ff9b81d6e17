"""From an address to what a check trades: the chain, the token and its pools.

Shared by IsHoneypot and GetContractVerification.  An address may name a token or one
of its pools; without ``chainID`` every configured chain is searched and the deepest
pool wins.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from tokenrisk.chain import pools as every_dex
from tokenrisk.chain.node import Node
from tokenrisk.chain.registry import Chain
from tokenrisk.chain.tokens import is_contract_code, is_erc20, read_token
from tokenrisk.checks.search import on_every_chain, search_pools
from tokenrisk.checks.tasks import given
from tokenrisk.errors import NotAToken, NotFoundError
from tokenrisk.model import Pool, TokenInfo


@dataclass(frozen=True)
class Target:
    """The chain's node, the token and the pools a request resolved to."""

    node: Node
    token: str
    pools: list[Pool]
    unsearched: every_dex.Unsearched | None = None
    """History the node kept the V4 pool search from reading (the answer says so)."""

    @property
    def chain(self) -> Chain:
        return self.node.chain


def _not_a_token(address: str, chain: Chain) -> NotAToken:
    return NotAToken(
        f"{address} is a contract on {chain.name} but not an ERC-20 token "
        "(totalSupply() and balanceOf() do not answer); is it a router or a wallet?"
    )


async def _target_on(node: Node, address: str, require_token: bool = True) -> Target | None:
    """The target on one chain, or None without code at ``address``.

    The code, the pair probe, the ERC-20 probe and the pools of ``address`` taken as a
    token are read at once (one round trip deep): most requests name a token, so only a
    pair address costs a second pool search, for the token it resolves to.
    """
    rpc, chain = node.rpc, node.chain
    code, resolved, pools, erc20 = await asyncio.gather(
        rpc.call("eth_getCode", [address, "latest"]),
        every_dex.resolve_pair(rpc, chain, address),
        search_pools(node, address),
        is_erc20(rpc, address) if require_token else given(True),
    )
    if not is_contract_code(code):
        return None
    if resolved is None:
        if require_token and not erc20:
            raise _not_a_token(address, chain)
        return Target(node, address, pools.pools, pools.unsearched)
    token = resolved[0]
    if require_token and chain.base_token(token) is not None:
        raise NotAToken(
            f"{address} is a DEX pool of two base tokens on {chain.name}, not a token; "
            "check one of the tokens traded against them instead"
        )
    if require_token and not await is_erc20(rpc, token):
        raise _not_a_token(address, chain)
    pools = await search_pools(node, token)
    return Target(node, token, pools.pools, pools.unsearched)


async def resolve(nodes: list[Node], address: str, require_token: bool = True) -> Target:
    """Find the token (or pair) on the given chains, deepest pool wins.

    Raises NotFoundError when no chain has a contract at ``address`` (an externally
    owned account or an unused address), NotAToken when the contract is not a token
    (unless ``require_token`` is False).
    """

    async def on(node: Node) -> Target | NotAToken | None:
        try:
            return await _target_on(node, address, require_token)
        except NotAToken as exc:  # a token on another chain still wins
            return exc

    search = await on_every_chain(nodes, on)
    if search.down and not any(t for _, t in search.answers):
        raise search.down[0][1]  # "no contract" only when every chain answered that
    found = [t for _, t in search.skip_down() if t is not None]
    targets = [t for t in found if isinstance(t, Target)]
    if not targets:
        not_tokens = [t for t in found if isinstance(t, NotAToken)]
        if not_tokens:
            raise not_tokens[0]
        raise NotFoundError(
            f"{address} is not a contract on the configured chains "
            "(an externally owned account or an unused address): nothing to check"
        )
    return max(targets, key=lambda t: t.pools[0].depth if t.pools else -2.0)


def pick_pool(
    target: Target, pair: str | None, address: str, router: str | None = None
) -> Pool | None:
    """The pool a check trades on: ``pair`` (or the pair given as ``address``) when set,
    else the deepest pool, among the pools traded through ``router`` when that is set.

    Raises NotFoundError when the requested pair or router has no pool of the token.
    """
    pools = target.pools
    if router is not None:
        pools = [p for p in pools if p.router.lower() == router.lower()]
        if not pools and target.pools:
            raise NotFoundError("the given router trades no pool of this token")
    wanted = pair or (address if any(p.address == address for p in pools) else None)
    if wanted is None:
        return pools[0] if pools else None
    for pool in pools:
        if pool.address == wanted:
            return pool
    raise NotFoundError("the given pair is not a pool of this token on a known DEX")


async def base_token_info(node: Node, address: str) -> TokenInfo:
    """A base token's metadata: symbol and decimals from the chain registry (which the
    operator vouches for), the name and supply from the chain."""
    info = await read_token(node.rpc, address)
    base = node.chain.base_token(address)
    if base is None:
        return info
    return replace(info, symbol=base.symbol, decimals=base.decimals, name=info.name or base.symbol)


def no_pairs_reason(chain: Chain) -> str:
    """What was searched, for the 404 "No pairs found" body."""
    bases = ", ".join(b.symbol for b in chain.base_tokens)
    names = [f"{d.name} {d.version}" for d in chain.dexes]
    dexes = ", ".join(names + (["Uniswap V4"] if chain.uniswap_v4 else [])) or "no DEX"
    return f"no pool of this token against {bases} on {dexes} (chain {chain.id})"

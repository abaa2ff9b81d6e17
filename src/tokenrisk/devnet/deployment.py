"""Deploy the catalogue: helper contracts, tokens, their pools, and the stablecoins.

A token is set up the way its deployer would: deploy (the owner gets the supply),
create each pool, tell the token about it (``setAmm``), then add liquidity.  Launching
and everything after it belongs to the history (:mod:`tokenrisk.devnet.trading`), so
launches are spread over the chain like real ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tokenrisk.chain.abi import ZERO_ADDRESS, encode_args, encode_call
from tokenrisk.devnet.catalogue import HelperSpec, PoolSpec, Scope, TokenSpec, resolve_args
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.history import actor_address, holder_address
from tokenrisk.devnet.liquidity import (
    add_v2_liquidity,
    approve,
    create_v2_pair,
    create_v3_pool,
    create_v4_pool,
    mint_v3_full_range,
    raw_amount,
    wrap_eth,
)
from tokenrisk.devnet.swaps import Route, venue
from tokenrisk.devnet.uniswap import WETH
from tokenrisk.errors import DevnetBuildError

STABLECOINS = (("USDC", "USD Coin", 6), ("USDT", "Tether USD", 6), ("DAI", "Dai Stablecoin", 18))
"""(symbol, name, decimals) of the devnet stand-ins; ETH is priced in them."""

ETH_USD = 2000
STABLE_POOL_ETH = 1000
"""ETH on the WETH side of each stablecoin pool (and USD 2,000,000 on the other)."""


@dataclass(frozen=True)
class Compiled:
    """One contract of ``artifacts.json`` (what deploying and verifying need)."""

    name: str
    source_path: str
    abi: list[Any]
    bytecode: str
    metadata: str

    def constructor_types(self) -> list[str]:
        for item in self.abi:
            if item.get("type") == "constructor":
                return [str(i["type"]) for i in item.get("inputs", [])]
        return []


@dataclass(frozen=True)
class Pool:
    """A created pool; ``base_raw`` is the base liquidity put in (sizes history trades)."""

    spec: PoolSpec
    address: str
    base_address: str
    base_raw: int
    key: tuple[str, str, int, int, str] | None = None
    """V4: the pool key (its ``address`` is the PoolManager)."""

    @property
    def route(self) -> Route:
        return Route(self.spec.dex, self.base_address, self.spec.fee, self.spec.venue, self.key)


@dataclass
class Deployed:
    """A deployed catalogue token and its pools (keyed like ``$pool:`` placeholders)."""

    spec: TokenSpec
    address: str
    pools: dict[str, Pool] = field(default_factory=dict)


@dataclass
class Devnet:
    """Addresses known so far; ``addresses`` holds the ``$NAME`` placeholders."""

    chain: Chain
    compiled: dict[str, Compiled]
    owner: str
    infra: str
    addresses: dict[str, str]
    helpers: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, Deployed] = field(default_factory=dict)
    stable_pools: list[tuple[str, Pool]] = field(default_factory=list)
    """(stablecoin symbol, its pool against WETH)."""

    def artifact(self, name: str, what: str) -> Compiled:
        try:
            return self.compiled[name]
        except KeyError:
            raise DevnetBuildError(f"{what}: contract {name!r} was not compiled") from None

    def scope(self, token: Deployed | None = None) -> Scope:
        """Placeholder scope for a token (or for helper contracts when None)."""
        pools = {k: p.address for k, p in token.pools.items()} if token else {}
        spec = token.spec if token else None
        token_id = spec.id if spec else ""
        return Scope(
            addresses=self.addresses,
            contracts=self.helpers,
            pools=pools,
            holder=lambda n: holder_address(token_id, n),
            token=spec,
            wallet=lambda n: actor_address(token_id, "wallet", n),
        )


# STABLECOINS


async def deploy_stablecoins(devnet: Devnet) -> None:
    """DevStablecoin USDC/USDT/DAI with V2 pairs (and a V3 USDC pool) against WETH."""
    artifact = devnet.artifact("DevStablecoin", "stablecoins")
    types = artifact.constructor_types()
    for symbol, name, decimals in STABLECOINS:
        args = resolve_args(types, (name, symbol, decimals), devnet.scope(), symbol)
        ctor, label = _encode(types, args), f"deploy {symbol}"
        address = await devnet.chain.deploy(devnet.infra, artifact.bytecode, ctor, label)
        devnet.addresses[symbol] = address
    for symbol, _, decimals in STABLECOINS:
        for dex in ("v2", "v3") if symbol == "USDC" else ("v2",):
            await _stable_pool(devnet, symbol, decimals, dex)


async def _stable_pool(devnet: Devnet, symbol: str, decimals: int, dex: str) -> None:
    """A deep stablecoin/WETH pool at ETH_USD (fee tier 500 on V3)."""
    usd, eth = str(STABLE_POOL_ETH * ETH_USD), str(STABLE_POOL_ETH)
    spec = PoolSpec(dex, "WETH", usd, eth, fee=500 if dex == "v3" else None)
    await mint_stable(devnet, symbol, devnet.infra, raw_amount(usd, decimals), symbol)
    stable = devnet.addresses[symbol]
    label = f"{symbol}/WETH {dex}"
    pool = await add_pool(devnet, devnet.infra, stable, decimals, spec, label, register=False)
    devnet.stable_pools.append((symbol, pool))


async def mint_stable(devnet: Devnet, symbol: str, to: str, amount: int, label: str) -> None:
    """Mint a devnet stablecoin (the infra account owns them all)."""
    data = encode_call("mint(address,uint256)", [to, amount])
    tx = Tx(devnet.infra, devnet.addresses[symbol], data, label=f"{label}: mint {symbol}")
    await devnet.chain.send(tx)


# CATALOGUE


async def deploy_helpers(devnet: Devnet, helpers: tuple[HelperSpec, ...]) -> None:
    """Deploy helper contracts (e.g. proxy implementations) from the owner account."""
    for helper in helpers:
        artifact = devnet.artifact(helper.contract, helper.id)
        types = artifact.constructor_types()
        args = resolve_args(types, helper.args, devnet.scope(), helper.id)
        label = f"{helper.id}: deploy {helper.contract}"
        address = await devnet.chain.deploy(
            devnet.owner, artifact.bytecode, _encode(types, args), label
        )
        devnet.helpers[helper.id] = address


async def deploy_token(devnet: Devnet, spec: TokenSpec) -> Deployed:
    """Deploy one token, create and register its pools, add liquidity (no launch)."""
    artifact = devnet.artifact(spec.contract, spec.id)
    types = artifact.constructor_types()
    token = Deployed(spec=spec, address="")
    args = resolve_args(types, spec.args, devnet.scope(token), f"{spec.id}: constructor")
    label = f"{spec.id}: deploy {spec.contract}"
    token.address = await devnet.chain.deploy(
        devnet.owner, artifact.bytecode, _encode(types, args), label
    )
    devnet.tokens[spec.id] = token
    for pool_spec in spec.pools:
        pool = await add_pool(
            devnet, devnet.owner, token.address, spec.decimals, pool_spec, spec.id
        )
        token.pools[pool_spec.key] = pool
    return token


async def add_pool(
    devnet: Devnet,
    owner: str,
    token: str,
    decimals: int,
    spec: PoolSpec,
    label: str,
    *,
    register: bool = True,
) -> Pool:
    """Create a pool, ``setAmm`` it on the token (scenario tokens: ``register``), fill it."""
    chain = devnet.chain
    base = _base_address(devnet, spec, label)
    amounts = (
        raw_amount(spec.token_amount, decimals),
        raw_amount(spec.base_amount, _decimals(spec.base)),
    )
    label = f"{label}: {spec.key} pool"
    if spec.dex == "v4":
        return await _add_v4_pool(devnet, owner, token, spec, amounts, label, register)
    where = venue(spec.dex, spec.venue)
    if spec.dex == "v2":
        address = await create_v2_pair(chain, owner, token, base, label, where.factory)
    elif spec.dex == "v3" and spec.fee is not None and where.position_manager is not None:
        contracts = (where.position_manager, where.factory)
        address = await create_v3_pool(
            chain, owner, token, base, spec.fee, amounts, label, contracts
        )
    else:
        raise DevnetBuildError(f"{label}: unknown dex {spec.dex!r}")
    if register:
        data = encode_call("setAmm(address,bool)", [address, True])
        await chain.send(Tx(owner, token, data, label=f"{label}: setAmm"))
    await _fund_base(devnet, owner, spec, base, amounts[1], label)
    await _fill(devnet, owner, token, base, spec, amounts, label)
    return Pool(spec=spec, address=address, base_address=base, base_raw=amounts[1])


async def _add_v4_pool(
    devnet: Devnet,
    owner: str,
    token: str,
    spec: PoolSpec,
    amounts: tuple[int, int],
    label: str,
    register: bool,
) -> Pool:
    """A V4 pool against native ETH (base ``WETH`` in the catalogue means ETH on V4) or,
    with ``native: false``, against the base ERC-20 itself; its hook, the PoolManager
    registered with the token as its AMM."""
    if spec.native and spec.base != "WETH":
        raise DevnetBuildError(f"{label}: a native V4 pool is against ETH (base WETH)")
    chain, manager = devnet.chain, devnet.addresses["POOL_MANAGER"]
    base = devnet.addresses[spec.base]
    if not spec.native:  # the seeder pulls the base like any ERC-20
        await _fund_base(devnet, owner, spec, base, amounts[1], label)
    bytecode = devnet.artifact(spec.hook, label).bytecode if spec.hook else ""
    accounts = (owner, devnet.infra, devnet.addresses["V4_SEEDER"])
    pool = (spec.fee or 3000, spec.tick_spacing, spec.hook, spec.hook_args, bytecode)
    paired = ZERO_ADDRESS if spec.native else base
    key = await create_v4_pool(chain, accounts, (token, paired), pool, amounts, label)
    if register:
        data = encode_call("setAmm(address,bool)", [manager, True])
        await chain.send(Tx(owner, token, data, label=f"{label}: setAmm"))
    return Pool(spec=spec, address=manager, base_address=base, base_raw=amounts[1], key=key)


async def _fund_base(
    devnet: Devnet, owner: str, spec: PoolSpec, base: str, amount: int, label: str
) -> None:
    """Make sure ``owner`` holds the base side (WETH for V3 and an ERC-20 V4 pool,
    stablecoins minted)."""
    if base == WETH:
        if spec.dex == "v3" or not spec.native:
            await wrap_eth(devnet.chain, owner, amount, label)
        return
    await mint_stable(devnet, spec.base, owner, amount, label)


async def _fill(
    devnet: Devnet,
    owner: str,
    token: str,
    base: str,
    spec: PoolSpec,
    amounts: tuple[int, int],
    label: str,
) -> None:
    chain = devnet.chain
    where = venue(spec.dex, spec.venue)
    spender = where.router if spec.dex == "v2" else where.position_manager or where.router
    await approve(chain, owner, token, spender, label)
    if base != WETH or spec.dex == "v3":
        await approve(chain, owner, base, spender, label)
    if spec.dex == "v2":
        await add_v2_liquidity(chain, owner, token, base, amounts, label, where.router)
    else:
        fee = spec.fee or 3000
        await mint_v3_full_range(chain, owner, token, base, fee, amounts, label, spender)


def _base_address(devnet: Devnet, spec: PoolSpec, label: str) -> str:
    try:
        return devnet.addresses[spec.base]
    except KeyError:
        raise DevnetBuildError(f"{label}: unknown pool base {spec.base!r}") from None


def _decimals(symbol: str) -> int:
    for stable, _, decimals in STABLECOINS:
        if stable == symbol:
            return decimals
    return 18


def _encode(types: list[str], args: list[Any]) -> bytes:
    return encode_args(types, args) if types else b""

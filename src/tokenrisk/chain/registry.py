"""Chain registry: which chains exist, their base tokens and their DEXes.

The registry is data (``data/chains.toml``), loaded into frozen dataclasses; the
embedded devnet's entry is built from its build manifest, because its stablecoins
live at build-time addresses.  Operators add or override chains in their config.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from eth_utils.crypto import keccak

from tokenrisk.chain.abi import checksum, encode_args, to_bytes

DATA_FILE = Path(__file__).parents[1] / "data" / "chains.toml"
V3_FEE_TIERS = (100, 500, 3000, 10000)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Dex:
    """One V2- or V3-style exchange deployment (or, built by :func:`v4_dex`, Uniswap V4:
    ``factory`` the PoolManager, ``router`` the Universal Router, ``permit2`` what a wallet
    approves).

    ``init_code_hash`` is keccak256 of the pair/pool creation code, so a pool's address
    follows from its tokens (CREATE2, :meth:`pool_address`): V2 forks each have their
    own.  ``deployer`` is the contract that runs that CREATE2 when it is not the factory
    (PancakeSwap V3's PancakeV3PoolDeployer).  ``display_name`` is how pools are named
    ("PancakeSwap V2: A-B"); by default the name and the version.
    """

    name: str  # family, e.g. "Uniswap", "SushiSwap", "PancakeSwap"
    version: str  # "V2" or "V3"
    factory: str
    router: str
    init_code_hash: str | None = None
    quoter: str | None = None
    fee_tiers: tuple[int, ...] = ()
    deployer: str | None = None
    display_name: str | None = None
    permit2: str | None = None  # V4: what a wallet approves (the router pulls through it)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Dex:
        """A DEX from a registry ``[[chains.dexes]]`` entry; raises KeyError/ValueError."""
        return _dex(raw)

    @property
    def label(self) -> str:
        """The display name: ``display_name``, else e.g. "Uniswap V2"."""
        return self.display_name or f"{self.name} {self.version}"

    def pool_address(self, token_a: str, token_b: str, fee: int | None = None) -> str | None:
        """Where this DEX puts the pool of two tokens (and a V3 fee tier), by CREATE2
        from the deployer (or the factory) with the DEX's init code hash; None when the
        registry does not know that hash (or a V3 pool's fee)."""
        if self.init_code_hash is None or (self.version == "V3" and fee is None):
            return None
        token0, token1 = sorted((token_a, token_b), key=lambda a: int(a, 16))
        if self.version == "V2":
            salt = keccak(to_bytes(token0) + to_bytes(token1))
        else:
            salt = keccak(encode_args(["address", "address", "uint24"], [token0, token1, fee]))
        origin = to_bytes(self.deployer or self.factory)
        digest = keccak(b"\xff" + origin + salt + to_bytes(self.init_code_hash))
        return checksum("0x" + digest[12:].hex())


@dataclass(frozen=True)
class UniswapV4:
    """A Uniswap V4 deployment: pools live in the PoolManager; a wallet trades through
    the Universal Router after approving Permit2 (docs/uniswap-v4.md)."""

    pool_manager: str
    universal_router: str
    permit2: str
    state_view: str | None = None
    quoter: str | None = None
    deployed_block: int = 0
    """The PoolManager's deployment block: no ``Initialize`` event is older, so a search
    in bounded ``eth_getLogs`` windows stops there (docs/uniswap-v4.md)."""
    log_windows: int = 256
    """Most ``eth_getLogs`` windows (of the node's range cap) one pool search may read on
    a node that caps log ranges; what it cannot reach is stated in the answer."""


def v4_dex(v4: UniswapV4) -> Dex:
    """The :class:`Dex` a V4 trade goes through."""
    return Dex(
        "Uniswap", "V4", v4.pool_manager, v4.universal_router, quoter=v4.quoter, permit2=v4.permit2
    )


@dataclass(frozen=True)
class BaseToken:
    """A token the service buys with: wrapped native or a USD stablecoin."""

    address: str
    symbol: str
    decimals: int
    stable: bool = False


@dataclass(frozen=True)
class Chain:
    id: int
    name: str
    short_name: str
    currency: str
    wrapped_native: BaseToken
    stablecoins: tuple[BaseToken, ...] = ()
    dexes: tuple[Dex, ...] = ()
    whitelist: frozenset[str] = field(default_factory=frozenset)
    rpc_url: str | None = field(default=None, repr=False)
    fork_url: str | None = field(default=None, repr=False)
    fork_block: int | None = None
    uniswap_v4: UniswapV4 | None = None

    @property
    def base_tokens(self) -> tuple[BaseToken, ...]:
        return (self.wrapped_native, *self.stablecoins)

    def base_token(self, address: str) -> BaseToken | None:
        lowered = address.lower()
        return next((b for b in self.base_tokens if b.address.lower() == lowered), None)


def _base(raw: dict[str, Any], stable: bool) -> BaseToken:
    return BaseToken(checksum(raw["address"]), str(raw["symbol"]), int(raw["decimals"]), stable)


def _dex(raw: dict[str, Any]) -> Dex:
    version = str(raw["version"]).upper()
    if version not in ("V2", "V3"):
        raise ValueError(f"dex version must be V2 or V3, not {version!r}")
    tiers = tuple(int(t) for t in raw.get("fee_tiers", V3_FEE_TIERS if version == "V3" else ()))
    return Dex(
        name=str(raw["name"]),
        version=version,
        factory=checksum(raw["factory"]),
        router=checksum(raw["router"]),
        init_code_hash=raw.get("init_code_hash"),
        quoter=checksum(raw["quoter"]) if raw.get("quoter") else None,
        fee_tiers=tiers,
        deployer=checksum(raw["deployer"]) if raw.get("deployer") else None,
        display_name=str(raw["display_name"]) if raw.get("display_name") else None,
    )


def _uniswap_v4(raw: dict[str, Any] | None) -> UniswapV4 | None:
    if not raw:
        return None
    optional = {k: checksum(raw[k]) for k in ("state_view", "quoter") if raw.get(k)}
    deployed, windows = int(raw.get("deployed_block", 0)), int(raw.get("log_windows", 256))
    if windows < 1 or deployed < 0:
        raise ValueError("uniswap_v4: log_windows must be at least 1, deployed_block not negative")
    return UniswapV4(
        pool_manager=checksum(raw["pool_manager"]),
        universal_router=checksum(raw["universal_router"]),
        permit2=checksum(raw["permit2"]),
        **optional,
        deployed_block=deployed,
        log_windows=windows,
    )


def chain_from_dict(raw: dict[str, Any]) -> Chain:
    """Build a Chain from registry/config data; raises KeyError/ValueError when incomplete."""
    return Chain(
        id=int(raw["id"]),
        name=str(raw["name"]),
        short_name=str(raw["short_name"]),
        currency=str(raw["currency"]),
        wrapped_native=_base(raw["wrapped_native"], stable=False),
        stablecoins=tuple(_base(s, stable=True) for s in raw.get("stablecoins", [])),
        dexes=tuple(_dex(d) for d in raw.get("dexes", [])),
        whitelist=frozenset(checksum(a) for a in raw.get("whitelist", [])),
        rpc_url=raw.get("rpc_url"),
        fork_url=raw.get("fork_url"),
        fork_block=int(raw["fork_block"]) if raw.get("fork_block") is not None else None,
        uniswap_v4=_uniswap_v4(raw.get("uniswap_v4")),
    )


def load_registry(path: Path = DATA_FILE) -> dict[int, Chain]:
    """All chains of a registry file, keyed by chain id."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    chains = (chain_from_dict(raw) for raw in data.get("chains", []))
    return {chain.id: chain for chain in chains}


def _merged(old: Iterable[_T], new: Iterable[_T], key: Callable[[_T], object]) -> tuple[_T, ...]:
    """``old`` with items of ``new`` replacing those of the same key, the rest appended."""
    by_key = {key(item): item for item in old}
    by_key.update((key(item), item) for item in new)
    return tuple(by_key.values())


def merge_chain(base: Chain, raw: Mapping[str, Any]) -> Chain:
    """Apply a partial config entry to a registry chain.

    Scalars and ``wrapped_native`` replace; ``stablecoins`` merge by symbol and ``dexes``
    by (name, version), so an operator can add or repoint one DEX without restating
    the chain; ``whitelist`` entries are added.  Raises KeyError/ValueError when an
    entry it names is incomplete.
    """
    changes: dict[str, Any] = {
        k: str(raw[k]) for k in ("name", "short_name", "currency") if k in raw
    }
    if "wrapped_native" in raw:
        changes["wrapped_native"] = _base(raw["wrapped_native"], stable=False)
    if "stablecoins" in raw:
        coins = (_base(s, stable=True) for s in raw["stablecoins"])
        changes["stablecoins"] = _merged(base.stablecoins, coins, key=lambda b: b.symbol)
    if "dexes" in raw:
        dexes = (_dex(d) for d in raw["dexes"])
        changes["dexes"] = _merged(base.dexes, dexes, key=lambda d: (d.name, d.version))
    if "uniswap_v4" in raw:
        changes["uniswap_v4"] = _uniswap_v4(raw["uniswap_v4"])
    if "whitelist" in raw:
        added = frozenset(checksum(a) for a in raw["whitelist"])
        changes["whitelist"] = base.whitelist | added
    return replace(base, **changes)


def apply_overrides(
    registry: Mapping[int, Chain], entries: Iterable[Mapping[str, Any]]
) -> dict[int, Chain]:
    """The registry with operator ``[[chains]]`` entries applied, in order.

    An entry for a new chain id must be complete (see :func:`chain_from_dict`); one for
    a known id is merged into it (:func:`merge_chain`) unless it sets ``replace = true``.
    Raises ValueError naming the chain when an entry is incomplete or invalid.
    """
    merged = dict(registry)
    for raw in entries:
        try:
            chain_id = int(raw["id"])
            known = merged.get(chain_id)
            if known is None or raw.get("replace"):
                merged[chain_id] = chain_from_dict(dict(raw))
            else:
                merged[chain_id] = merge_chain(known, raw)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"chain entry {raw.get('id', '?')} is invalid: {exc!r}") from exc
    return merged

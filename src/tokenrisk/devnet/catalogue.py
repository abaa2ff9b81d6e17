"""The scenario catalogue (``devnet/catalogue.json``): what the build deploys and why.

The catalogue is a fixture for tests and demos, never an input to detection.  This
module reads it into typed specs (keeping each raw entry, which goes into the manifest
unchanged) and resolves the ``$placeholders`` its arguments use::

    $name $symbol $decimals $supplyWei      the token's own metadata
    $OWNER $WETH $V2_ROUTER ... $DAI        well-known devnet addresses
    $contract:<id>                          a helper contract deployed earlier
    $pool:<dex>:<base>[:<fee>][@<venue>]    a pool created for this token
    $holder:<n>                             the n-th (0-based) history buyer of this token
    $wallet:<n>                             the n-th fresh EOA of this token (fee wallets)

A token's ``verified`` is true (the registry lists its source), false (the registry says
"not verified", as an explorer would) or null (no registry entry at all: unknown).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import checksum
from tokenrisk.devnet.liquidity import raw_amount
from tokenrisk.errors import DevnetBuildError

CATALOGUE_PATH = Path(__file__).with_name("catalogue.json")


@dataclass(frozen=True)
class PoolSpec:
    """One pool to create for a token; amounts are decimal strings of whole tokens.

    ``dex`` is the family (``v2``, ``v3``); ``venue`` the DEX when it is not Uniswap
    (``pancakeswap``, ``fork``: :mod:`tokenrisk.devnet.venues`).
    """

    dex: str
    base: str
    token_amount: str
    base_amount: str
    fee: int | None = None
    venue: str | None = None
    hook: str | None = None
    """V4: the hook contract the build deploys for the pool (None: no hook)."""
    hook_args: tuple[int, ...] = ()
    """V4: the hook's constructor arguments after (manager, token, owner)."""
    tick_spacing: int = 60
    native: bool = True
    """V4: the pool trades the token against native ETH (``base`` WETH then means ETH);
    False: against the ``base`` ERC-20 itself (paid through Permit2, as a wallet does)."""

    @property
    def key(self) -> str:
        """``v2:WETH``, ``v3:WETH:3000`` or ``v3:WETH:2500@pancakeswap``, as used by
        ``$pool:`` placeholders."""
        fee = f":{self.fee}" if self.fee is not None else ""
        return f"{self.dex}:{self.base}{fee}" + (f"@{self.venue}" if self.venue else "")


@dataclass(frozen=True)
class OwnerCall:
    """An owner-only call after launch; ``when`` is ``beforeHistory`` or ``afterHistory``."""

    signature: str
    args: tuple[Any, ...]
    when: str = "beforeHistory"


@dataclass(frozen=True)
class HistorySpec:
    """How many fresh EOAs play each role in the token's history."""

    buyers: int = 0
    snipers: int = 0
    siphoned: int = 0
    sellers: int = 0


@dataclass(frozen=True)
class HelperSpec:
    """A helper contract (e.g. a proxy implementation) deployed before the tokens."""

    id: str
    contract: str
    args: tuple[Any, ...]
    verified: bool
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class TokenSpec:
    """One scenario token; ``raw`` is the catalogue entry as written."""

    id: str
    contract: str
    name: str
    symbol: str
    decimals: int
    supply: str
    args: tuple[Any, ...]
    verified: bool | None
    pools: tuple[PoolSpec, ...]
    after_launch: tuple[OwnerCall, ...]
    siphon_call: str | None
    history: HistorySpec
    expected: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @property
    def supply_wei(self) -> int:
        return raw_amount(self.supply, self.decimals)


@dataclass(frozen=True)
class Catalogue:
    version: int
    contracts: tuple[HelperSpec, ...]
    tokens: tuple[TokenSpec, ...]


def load_catalogue(path: Path = CATALOGUE_PATH) -> Catalogue:
    """Parse the catalogue; raises DevnetBuildError naming the entry that is malformed."""
    data = json.loads(path.read_text())
    helpers = tuple(_helper(entry) for entry in data.get("contracts", []))
    tokens = tuple(_token(entry) for entry in data.get("tokens", []))
    ids = [h.id for h in helpers] + [t.id for t in tokens]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise DevnetBuildError(f"catalogue ids are not unique: {sorted(duplicates)}")
    return Catalogue(version=int(data.get("version", 1)), contracts=helpers, tokens=tokens)


def _helper(entry: dict[str, Any]) -> HelperSpec:
    try:
        return HelperSpec(
            id=str(entry["id"]),
            contract=str(entry["contract"]),
            args=tuple(entry.get("args", [])),
            verified=bool(entry.get("verified", True)),
            raw=entry,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DevnetBuildError(f"catalogue contract {entry.get('id')!r}: {exc!r}") from exc


def _token(entry: dict[str, Any]) -> TokenSpec:
    try:
        return TokenSpec(
            id=str(entry["id"]),
            contract=str(entry["contract"]),
            name=str(entry.get("name", "")),
            symbol=str(entry.get("symbol", "")),
            decimals=int(entry.get("decimals", 18)),
            supply=str(entry.get("supply", "0")),
            args=tuple(entry.get("args", [])),
            verified=None if entry.get("verified", True) is None else bool(entry["verified"]),
            pools=tuple(_pool(p) for p in entry.get("pools", [])),
            after_launch=tuple(_owner_call(c) for c in entry.get("afterLaunch", [])),
            siphon_call=entry.get("siphonCall"),
            history=HistorySpec(**{k: int(v) for k, v in entry.get("history", {}).items()}),
            expected=dict(entry.get("expected", {})),
            raw=entry,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DevnetBuildError(f"catalogue token {entry.get('id')!r}: {exc!r}") from exc


def _pool(entry: dict[str, Any]) -> PoolSpec:
    fee = entry.get("fee")
    return PoolSpec(
        dex=str(entry["dex"]),
        base=str(entry["base"]),
        token_amount=str(entry["tokenAmount"]),
        base_amount=str(entry["baseAmount"]),
        fee=int(fee) if fee is not None else (3000 if entry["dex"] in ("v3", "v4") else None),
        venue=str(entry["venue"]) if entry.get("venue") else None,
        hook=str(entry["hook"]) if entry.get("hook") else None,
        hook_args=tuple(int(a) for a in entry.get("hookArgs", [])),
        tick_spacing=int(entry.get("tickSpacing", 60)),
        native=bool(entry.get("native", True)),
    )


def _owner_call(entry: dict[str, Any]) -> OwnerCall:
    return OwnerCall(
        signature=str(entry["call"]),
        args=tuple(entry.get("args", [])),
        when=str(entry.get("when", "beforeHistory")),
    )


# PLACEHOLDERS


@dataclass(frozen=True)
class Scope:
    """What placeholders can resolve to at one point of the build.

    ``holder`` maps n to the n-th history buyer's address; ``pools`` holds only pools
    that already exist, so a ``$pool:`` used too early fails with a clear message.
    """

    addresses: Mapping[str, str]
    contracts: Mapping[str, str]
    pools: Mapping[str, str]
    holder: Callable[[int], str]
    token: TokenSpec | None = None
    wallet: Callable[[int], str] | None = None


def resolve(value: Any, scope: Scope) -> Any:
    """Replace placeholders in one argument (lists are resolved element-wise)."""
    if isinstance(value, list):
        return [resolve(v, scope) for v in value]
    if not isinstance(value, str) or not value.startswith("$"):
        return value
    name = value[1:]
    token = scope.token
    if token is not None:
        own = {
            "name": token.name,
            "symbol": token.symbol,
            "decimals": token.decimals,
            "supplyWei": token.supply_wei,
        }
        if name in own:
            return own[name]
    kind, _, rest = name.partition(":")
    if kind == "contract" and rest in scope.contracts:
        return scope.contracts[rest]
    if kind == "pool" and rest in scope.pools:
        return scope.pools[rest]
    if kind == "holder" and rest.isdigit():
        return scope.holder(int(rest))
    if kind == "wallet" and rest.isdigit() and scope.wallet is not None:
        return scope.wallet(int(rest))
    if name in scope.addresses:
        return scope.addresses[name]
    where = token.id if token else "contracts"
    raise DevnetBuildError(f"{where}: cannot resolve placeholder {value!r} here")


def coerce(abi_type: str, value: Any) -> Any:
    """Turn a resolved JSON value into what eth-abi expects for ``abi_type``."""
    if abi_type.endswith("]"):
        inner = abi_type[: abi_type.rindex("[")]
        return [coerce(inner, v) for v in value]
    if abi_type.startswith(("uint", "int")):
        return int(value)
    if abi_type == "address":
        return checksum(str(value))
    if abi_type == "bool":
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1")
    if abi_type.startswith("bytes") and isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    return value


def resolve_args(types: list[str], args: tuple[Any, ...], scope: Scope, what: str) -> list[Any]:
    """Resolve and coerce call arguments; raises DevnetBuildError on a count mismatch."""
    if len(types) != len(args):
        raise DevnetBuildError(
            f"{what}: expects {len(types)} arguments, catalogue gives {len(args)}"
        )
    return [coerce(t, resolve(a, scope)) for t, a in zip(types, args, strict=True)]

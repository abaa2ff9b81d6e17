"""Plain data of one token check: what was measured, before any judgement.

These frozen dataclasses are the contract between the capabilities (dex, simulation,
holders, trace, verification) that fill them, the pure ``risk`` rubric that judges them,
and the API that renders them on the wire.  Amounts are raw integers (wei-style units);
taxes are percentages (0..100): the user's effective loss against the router's quote,
with the token-unit figures beside them (see ``simulate/accounting.py``); gas is in gas
units.  ``None``
always means "not measured" (never "zero").
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, TypeVar

from tokenrisk.findings import OwnerPowers

D = TypeVar("D")


def evolve(obj: D, **changes: Any) -> D:
    """``dataclasses.replace(obj, **changes)`` at a sixth of its cost, for the frozen
    dataclasses a check rebuilds on its hot path (the journey's report five times a
    check, the token's summary three times: ~12 per recomputed check at ~6 us each,
    issue #27).  ``replace`` reads the class's fields and calls ``__init__`` each time;
    this copies the instance's fields and sets the changed ones.  Only for classes with
    every field settable by ``__init__``, no ``__post_init__`` and no slots (then both
    give equal objects); any other class, or a name that is not a field, raises
    TypeError as ``replace`` would."""
    cls: Any = type(obj)
    if not _plain_fields(cls).issuperset(changes):
        raise TypeError(f"{cls.__name__} has no field {sorted(changes)}")
    copy: Any = object.__new__(cls)
    copy.__dict__.update(vars(obj))
    copy.__dict__.update(changes)
    return copy  # type: ignore[no-any-return]


@lru_cache(maxsize=64)
def _plain_fields(cls: type) -> frozenset[str]:
    """The field names of a dataclass :func:`evolve` can copy (TypeError otherwise)."""
    every = fields(cls)  # TypeError for a class that is not a dataclass
    if hasattr(cls, "__post_init__") or "__slots__" in vars(cls):
        raise TypeError(f"{cls.__name__} has a __post_init__ or slots: use replace")
    if not all(f.init for f in every):
        raise TypeError(f"{cls.__name__} has a field __init__ does not set: use replace")
    return frozenset(f.name for f in every)


@dataclass(frozen=True)
class AirdropSummary:
    """Pre-launch transfers out of the deployer or the token contract to many wallets
    (the rule is in ``holders.launch``); all zero when there was no such airdrop."""

    transactions: int
    transfers: int
    amount: int  # raw units of the token


@dataclass(frozen=True)
class TokenInfo:
    """ERC-20 metadata as read from the chain (getters may revert: then fallbacks).

    ``total_holders`` is None when the token is not in the holder index (unknown, not 0);
    ``airdrop`` is None when the launch could not be analysed.
    """

    address: str
    name: str
    symbol: str
    decimals: int
    total_supply: int | None = None
    total_holders: int | None = None
    airdrop: AirdropSummary | None = None


@dataclass(frozen=True)
class Pool:
    """One V2 pair, V3 pool or V4 pool of the token, normally against a base token.

    A V4 pool lives inside the PoolManager: ``address`` is the PoolManager (it holds the
    pool's tokens, so balances read there as at a pair) and ``pool_id`` names the pool;
    ``fee`` is the key's fee (0x800000: dynamic), ``router`` the Universal Router.

    ``against_base`` is False for a pool against a token that is not a registry base
    token (found from the factory's creation events); then ``base_token`` is that other
    token, and such a pool is listed by GetPairs but never traded by a check.
    """

    address: str
    dex: str  # family name, e.g. "Uniswap"
    version: str  # "V2", "V3" or "V4"
    token0: str
    token1: str
    base_token: str  # the side used to buy (WETH, a stablecoin, ...)
    router: str
    reserves0: int
    reserves1: int
    liquidity_usd: float | None  # None: the base token has no USD price path (not 0)
    fee: int | None = None  # V3 fee tier in hundredths of a bip
    label: str | None = None  # the DEX's display name from the registry ("SushiSwap")
    chain_id: int = 0
    created_at_timestamp: int | None = None
    creation_tx_hash: str | None = None
    against_base: bool = True
    pool_id: str | None = None  # V4: the pool's id inside the PoolManager (``address``)
    hooks: str | None = None  # V4: the pool key's hooks contract (zero address: none)
    tick_spacing: int | None = None  # V4: the pool key's tick spacing
    native: bool = False  # V4: the base side is native ETH (``base_token`` names the wrapped one)

    @property
    def type(self) -> str:
        return f"{self.dex}{self.version}"

    @property
    def depth(self) -> float:
        """Sort key: USD liquidity, and below every priced pool when the price is unknown."""
        return -1.0 if self.liquidity_usd is None else self.liquidity_usd

    @property
    def dex_name(self) -> str:
        """The DEX's display name, e.g. "Uniswap V2" or a fork's registry name."""
        return self.label or f"{self.dex} {self.version}"


@dataclass(frozen=True)
class Unsearched:
    """Blocks whose Uniswap V4 ``Initialize`` events one pool search could not read
    (``last`` None: the node refused the search outright), so V4 pools created there are
    unknown: the answer states it (``unchecked``, a 404's reason, GetPairs'
    ``X-Unsearched-Blocks``), never as if the pools found were all."""

    chain_id: int
    first: int
    last: int | None

    @property
    def sentence(self) -> str:
        """What was not checked, as an ``unchecked`` entry ("<check>: <why>")."""
        if self.last is None:
            return (
                "Uniswap V4 pools: the node refused the search of the PoolManager's "
                "Initialize events (eth_getLogs), so the token's V4 pools are unknown"
            )
        return (
            f"Uniswap V4 pools created in blocks {self.first}-{self.last}: the node caps "
            "eth_getLogs block ranges and the bounded search (uniswap_v4.log_windows) "
            "did not reach them"
        )

    @property
    def label(self) -> str:
        """``<chain id>:<first>-<last>`` (``<first>-`` when unknown), for a header."""
        return f"{self.chain_id}:{self.first}-{'' if self.last is None else self.last}"


@dataclass(frozen=True)
class Limit:
    """A maximum trade size that still succeeds, in both tokens' raw units."""

    token_wei: int
    with_token_wei: int


@dataclass(frozen=True)
class Unmeasured:
    """A tax figure of one leg that the simulation could not measure, and why.

    ``leg``: "buy", "sell" or "transfer"; ``figure``: "effective" or "tokenUnit"; ``why``:
    a sentence (e.g. "no quote for the amount (execution reverted)").
    """

    leg: str
    figure: str
    why: str


@dataclass(frozen=True)
class SimulationReport:
    """Outcome of buy -> wallet transfer -> sell as a fresh EOA.

    ``success`` is False when the simulation could not be run meaningfully (no
    liquidity, node lacks a method, the buy itself cannot execute for reasons
    unrelated to the token); then ``error`` says why.  A token that *blocks* a step is
    a successful simulation with ``*_ok`` False and ``failure_reason`` set.
    """

    success: bool
    error: str | None = None
    buy_ok: bool = False
    transfer_ok: bool = False
    sell_ok: bool = False
    failure_step: str | None = None  # "buy", "transfer" or "sell"
    failure_reason: str | None = None  # node's revert text, e.g. "execution reverted: K"
    # taxes: the user's effective loss against the quote (what the verdict judges)
    buy_tax: float | None = None
    sell_tax: float | None = None
    transfer_tax: float | None = None
    # the same legs in token units, from the Transfer logs (simulate/accounting.py)
    buy_tax_token_unit: float | None = None
    sell_tax_token_unit: float | None = None
    transfer_tax_token_unit: float | None = None
    buy_gas: int | None = None
    sell_gas: int | None = None
    max_buy: Limit | None = None
    max_sell: Limit | None = None
    # max_sell as a fraction (0..1) of what the fresh buyer received; None if unlimited
    max_sell_fraction: float | None = None
    one_sell_per_block: bool = False
    delayed_sell_failed: bool = False  # a sell far in the future fails while now works
    delayed_sell_reason: str | None = None
    via_liquidity_simulation: bool = False
    notes: tuple[str, ...] = ()
    # what the node's limits left unchecked, one sentence each ("<check>: <why>")
    unchecked: tuple[str, ...] = ()
    # tax figures of steps that went through but could not be measured (never read as 0)
    unmeasured: tuple[Unmeasured, ...] = ()


@dataclass(frozen=True)
class TaxBucket:
    tax: int
    count: int


@dataclass(frozen=True)
class HolderStats:
    """Results of simulating sells as real holders (see holders.analysis)."""

    analysed: int
    successful: int
    failed: int
    siphoned: int
    average_tax: float
    average_gas: float
    highest_tax: float
    high_tax_wallets: int
    tax_distribution: tuple[TaxBucket, ...] = ()
    average_tax_token_unit: float | None = None  # None when no sell had Transfer logs
    sold_at_pool_limit: int = 0  # holders whose balance exceeded what the pool can take
    pool_limit_wei: int | None = None  # the largest sell the pool accepts, when it applied
    # current holders that bought in the first blocks of trading (holders.launch)
    snipers_success: int = 0  # ... and can sell
    snipers_failed: int = 0  # ... and cannot sell
    # successful sells whose tax was measured (None: not counted); 0 with successful
    # sells means the averages above are not measurements and are never judged as 0
    taxes_measured: int | None = None


@dataclass(frozen=True)
class ContractCall:
    """One unique edge of the call tree of the buy and sell.  In an IsHoneypot analysis
    the addresses are as traced (lower case: it does not show them, and the probe's
    fresh addresses would cost a keccak each); GetContractVerification's are checksummed."""

    from_address: str
    to_address: str
    call_type: str  # CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2
    selector: str | None  # 0x + 8 hex, None when no calldata


@dataclass(frozen=True)
class CodeReport:
    """Call-tree facts and source verification of every contract on the path."""

    root_open_source: bool
    open_source: bool
    is_proxy: bool
    has_proxy_calls: bool
    contracts_open_source: dict[str, bool] = field(default_factory=dict)
    calls: tuple[ContractCall, ...] = ()
    # contracts no verification provider could answer for (False above means "not known
    # to be open source" for these, never "closed source")
    unknown: tuple[str, ...] = ()
    root_unknown: bool = False  # the token itself is among ``unknown``

    @property
    def unverified(self) -> tuple[str, ...]:
        """Contracts a provider definitely reported as not verified."""
        return tuple(
            a for a, ok in self.contracts_open_source.items() if not ok and a not in self.unknown
        )


@dataclass(frozen=True)
class Analysis:
    """Everything measured for one IsHoneypot check; input of ``risk.assess``."""

    token: TokenInfo
    with_token: TokenInfo | None
    pool: Pool | None
    simulation: SimulationReport | None
    holders: HolderStats | None = None
    code: CodeReport | None = None
    whitelisted: bool = False  # operator-configured well-known token (very_low risk)
    owner_powers: OwnerPowers | None = None  # None: the scan was off or had nothing to try
    trace_unavailable: bool = False  # the node has no debug_traceCall: no call tree checked
    # what the node's limits left unchecked, one "<check>: <why>" sentence each
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Flag:
    flag: str
    description: str
    severity: str  # info, low, medium, high, critical
    severity_index: int  # 4, 8, 12, 16, 20


@dataclass(frozen=True)
class Verdict:
    """Output of ``risk.assess``: the honeypot decision and the risk summary."""

    risk: str  # unknown, very_low, low, medium, high, very_high, honeypot
    risk_level: int | None  # None exactly when risk is "unknown"
    flags: tuple[Flag, ...]
    is_honeypot: bool | None  # None when it could not be decided at all
    honeypot_reason: str | None
    legacy_flags: tuple[str, ...] = ()

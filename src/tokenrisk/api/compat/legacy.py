"""The legacy v1 response shapes of ``/v1/IsHoneypot`` and ``/v1/GetContractVerification``.

Older clients (the npm client ``@normalizex/honeypot-is`` among them) read PascalCase
bodies there, not v2's: ``Token``/``WithToken`` {Name, Symbol, Decimals, Address},
``IsHoneypot``, ``Error``, ``MaxBuy``/``MaxSell``, ``BuyTax``/``SellTax``/``TransferTax``,
``Flags``, ``BuyGas``/``SellGas`` as numbers, ``Chain`` {ID (a number), Name, ShortName,
Currency}, ``Router``, ``Pair`` (a GetPairs item) and ``PairAddress``; verification is
``HasProxyCalls`` and ``Contracts`` (address -> open source).  They are rendered here from
the same typed results as v2, so the checks, the cache policy and the errors are v2's.

Unlike v2, nullable fields are *present* with ``null`` (those clients declare them
``null | ...``), so these models are dumped without dropping ``None``.  docs/api.md
("Legacy v1 shapes") says what each field holds when nothing could be measured.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tokenrisk.api import wire
from tokenrisk.checks import results
from tokenrisk.model import Analysis, Limit, SimulationReport, TokenInfo
from tokenrisk.risk import rendered_simulation


class LegacyModel(BaseModel):
    """Base of the v1 models: immutable, unknown fields are a bug, ``None`` is sent."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class LegacyToken(LegacyModel):
    Name: str = Field(description="Token name.")
    Symbol: str = Field(description="Token symbol.")
    Decimals: int = Field(description="Token decimals.")
    Address: str = Field(description="Token address (checksummed).")


class LegacyChain(LegacyModel):
    ID: int = Field(description="Numeric chain id (a number here, a string in v2).")
    Name: str = Field(description="Chain name.")
    ShortName: str = Field(description="Short name, lower case.")
    Currency: str = Field(description="Native currency symbol.")


class LegacyHoneypotResponse(LegacyModel):
    Token: LegacyToken = Field(description="The token checked.")
    WithToken: LegacyToken = Field(description="The pair's other token (what it is bought with).")
    IsHoneypot: bool = Field(description="True when the verdict is honeypot; see Error.")
    Error: str | None = Field(
        description="Why nothing usable was simulated (then the numbers below are 0 and "
        "not measurements), or why the verdict could not be decided; null otherwise."
    )
    MaxBuy: wire.Number | None = Field(description="Largest buy in tokens; null: no limit.")
    MaxSell: wire.Number | None = Field(description="Largest sell in tokens; null: no limit.")
    BuyTax: wire.Number = Field(description="Buy tax in percent (100 when the buy reverted).")
    SellTax: wire.Number = Field(description="Sell tax in percent (100 when the sell reverted).")
    TransferTax: wire.Number = Field(description="Wallet-to-wallet transfer tax in percent.")
    Flags: list[str] | None = Field(description="The v2 top-level legacy flags.")
    BuyGas: int = Field(description="Gas used by the buy (0 when it reverted or did not run).")
    SellGas: int = Field(description="Gas used by the sell (0 when it reverted or did not run).")
    Chain: LegacyChain = Field(description="The chain the check ran on.")
    Router: str = Field(description="Router of the pair used (lower case).")
    Pair: wire.PairItem = Field(description="The pair used, as a GetPairs item.")
    PairAddress: str = Field(description="Address of the pair used (lower case).")


class LegacyVerificationResponse(LegacyModel):
    HasProxyCalls: bool = Field(description="A proxy call was seen (false when not traced).")
    Contracts: dict[str, bool] = Field(
        description="Address -> open source, for the root and every contract called."
    )
    FullCheckPerformed: bool = Field(
        description="Extension: false when the buy and sell could not be traced (then "
        "Contracts is empty)."
    )


def dump(model: LegacyModel) -> dict[str, Any]:
    """JSON-ready dict; ``None`` is kept as ``null`` (the v1 shapes declare it), except
    in ``Pair``, a GetPairs item, which omits what it does not know as GetPairs does."""
    body = model.model_dump(mode="json")
    if isinstance(model, LegacyHoneypotResponse):
        body["Pair"] = wire.dump(model.Pair)
    return body


# RENDER


def honeypot_body(result: results.HoneypotResult) -> LegacyHoneypotResponse:
    """The v1 IsHoneypot body.  A result always has a pool (no pool is the 404)."""
    analysis, verdict, chain = result.analysis, result.verdict, result.chain
    pool = analysis.pool
    if pool is None:  # the check raises NoPairsFound before; kept as a guard
        raise ValueError("a v1 IsHoneypot answer needs the pool the check used")
    # a leg whose tax was not measured at all is not rendered (Error says which)
    sim = rendered_simulation(analysis.simulation)
    measured = _measured(sim, analysis)
    return LegacyHoneypotResponse(
        Token=token(analysis.token),
        WithToken=token(_with_token(analysis)),
        IsHoneypot=verdict.is_honeypot is True,
        Error=_error(analysis, sim, verdict.is_honeypot),
        MaxBuy=_limit(sim.max_buy if sim else None, analysis.token.decimals),
        MaxSell=_limit(sim.max_sell if sim else None, analysis.token.decimals),
        **measured,
        Flags=list(verdict.legacy_flags),
        Chain=LegacyChain(
            ID=chain.id,
            Name=chain.name,
            ShortName=chain.short_name.lower(),
            Currency=chain.currency,
        ),
        Router=pool.router.lower(),
        Pair=wire.pair_item(pool, chain.id, wire.pair_symbols(pool, analysis)),
        PairAddress=pool.address.lower(),
    )


def verification_body(result: results.VerificationResult) -> LegacyVerificationResponse:
    """The v1 GetContractVerification body."""
    code = result.code
    if code is None:
        return LegacyVerificationResponse(
            HasProxyCalls=False, Contracts={}, FullCheckPerformed=False
        )
    return LegacyVerificationResponse(
        HasProxyCalls=code.has_proxy_calls,
        Contracts=dict(code.contracts_open_source),
        FullCheckPerformed=True,
    )


def token(info: TokenInfo) -> LegacyToken:
    return LegacyToken(
        Name=info.name, Symbol=info.symbol, Decimals=info.decimals, Address=info.address
    )


def _with_token(analysis: Analysis) -> TokenInfo:
    """The pair's other token; its address alone when it could not be read."""
    if analysis.with_token is not None:
        return analysis.with_token
    pool = analysis.pool
    assert pool is not None
    other = pool.token1 if pool.token0.lower() == analysis.token.address.lower() else pool.token0
    return TokenInfo(address=other, name="", symbol="", decimals=wire.DEFAULT_DECIMALS)


def _measured(sim: SimulationReport | None, analysis: Analysis) -> dict[str, Any]:
    """Taxes (percent, 2 decimals; whole values as integers) and gas, v2's conventions:
    a reverted step is tax 100 and gas 0; no usable simulation is all 0 (with Error)."""
    if sim is None:
        return {"BuyTax": 0, "SellTax": 0, "TransferTax": 0, "BuyGas": 0, "SellGas": 0}
    result = wire.simulation_result(sim, analysis)
    return {
        "BuyTax": result.buyTax,
        "SellTax": result.sellTax,
        "TransferTax": result.transferTax,
        "BuyGas": int(result.buyGas),
        "SellGas": int(result.sellGas),
    }


def _limit(limit: Limit | None, decimals: int) -> float | None:
    return None if limit is None else wire.scale(limit.token_wei, decimals)


def _error(analysis: Analysis, sim: SimulationReport | None, decided: bool | None) -> str | None:
    if sim is None:
        return wire.simulation_error(analysis)
    if decided is None:
        return "the verdict could not be decided"
    return None

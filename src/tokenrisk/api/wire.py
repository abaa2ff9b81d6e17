"""Wire models of every response in SPEC.md, and pure renderers from the domain types.

Field names are exactly the spec's (camelCase for /v2, PascalCase for GetPairs), so the
Python attributes carry those names too; the one exception is ``from`` of a contract
call, a Python keyword, stored as ``from_`` and serialised as ``from``.  Types follow the
spec literally: counts, gas, raw amounts and timestamps that the spec calls strings are
strings.  Absent values are ``None`` in the model and *omitted* on the wire: always
serialise with :func:`dump` (or FastAPI's ``response_model_exclude_none=True``), never
with a bare ``model_dump``.

JSON numbers (:data:`Number`) are written the way the live API's Go encoder writes a
float64: a whole value as an integer literal (``0``, ``100``, never ``0.0``), a fraction as
a float (``9.71``), and magnitudes from 1e21 in exponent form.  Typed clients declare
some of these fields as integers and reject ``0.0``.

Extensions beyond the live API (clients ignore unknown fields): ``totalHoldersStatus``
next to every ``totalHolders``, and ``reason`` / ``token`` in the 404 "No pairs found"
body.  docs/api.md ("Compatibility") lists them with every other difference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Annotated, Any, Protocol

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema

from tokenrisk.chain.registry import Chain
from tokenrisk.chain.v4 import hook_permissions
from tokenrisk.checks import results
from tokenrisk.findings import FINDINGS, OwnerPowers, PowerFinding
from tokenrisk.model import (
    AirdropSummary,
    Analysis,
    CodeReport,
    ContractCall,
    HolderStats,
    Limit,
    Pool,
    SimulationReport,
    TokenInfo,
    Verdict,
)
from tokenrisk.risk import (
    TRACE_UNAVAILABLE,
    leg_tax,
    rendered_simulation,
    unmeasured_legs,
    usable_simulation,
)

UNKNOWN_PRICE = "no USD price path for the pair's base token"
"""Why ``liquidity`` is absent: it is unknown, which is not the same as 0."""
DEFAULT_DECIMALS = 18
"""Decimals assumed for the pair's other token when it is unknown (limits only)."""

UNKNOWN_HOLDERS = -1
"""``totalHolders`` when the token is not in the holder index (``totalHoldersStatus``
says "unknown").  Not 0: zero holders is a real, alarming count; -1 is an integer, so
strict clients still parse it, and no client can mistake it for a count."""

GO_EXACT_LIMIT = 1e21
"""From this magnitude Go's encoder (and so the live API) writes floats in exponent form."""


def go_number(value: float) -> int | float:
    """A float as the live API writes it: whole values as JSON integers, see module doc."""
    if math.isfinite(value) and value.is_integer() and abs(value) < GO_EXACT_LIMIT:
        return int(value)
    return value


Number = Annotated[
    float,
    PlainSerializer(go_number, return_type=int | float),
    WithJsonSchema({"type": "number"}),
]
"""A JSON number field: whole values serialise as integers (``0``), fractions as floats."""


def omit_null_in_schema(schema: dict[str, Any]) -> None:
    """Describe optional fields as *omittable*, not nullable, in the JSON schema.

    ``x: T | None = None`` would be advertised as ``anyOf [T, null]`` with a null
    default; on our wire such a field is simply absent, so the schema (and the OpenAPI
    document built from it) shows plain ``T`` and leaves the field out of ``required``.
    """
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for prop in properties.values():
            if isinstance(prop, dict):
                _drop_null_variant(prop)


def _drop_null_variant(prop: dict[str, Any]) -> None:
    variants = prop.get("anyOf")
    if not isinstance(variants, list) or {"type": "null"} not in variants:
        return
    kept = [v for v in variants if v != {"type": "null"}]
    del prop["anyOf"]
    if "default" in prop and prop["default"] is None:
        del prop["default"]
    if len(kept) == 1 and isinstance(kept[0], dict):
        prop.update(kept[0])
    else:
        prop["anyOf"] = kept


class WireModel(BaseModel):
    """Base of every response model: immutable, and unknown fields are a bug."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=omit_null_in_schema)


# ISHONEYPOT PARTS


class AirdropInfo(WireModel):
    totalTxs: int = Field(description="Transactions that carried airdrop transfers.")
    totalAmountWei: str = Field(description="Raw amount airdropped (integer).")
    totalTransfers: int = Field(description="Airdrop transfers (one per receiving wallet).")


class TokenSummary(WireModel):
    name: str = Field(description="Token name.")
    symbol: str = Field(description="Token symbol.")
    decimals: int = Field(description="Token decimals.")
    address: str = Field(description="Token address (0x-prefixed hex).")
    totalHolders: int = Field(
        description="Holders with a positive balance in the holder index; -1 when the "
        "token is not indexed (then totalHoldersStatus is unknown)."
    )
    totalHoldersStatus: str = Field(
        description="Extension: counted (from the holder index) or unknown (not indexed; "
        "totalHolders is -1, never a guess)."
    )
    airdropSummary: AirdropInfo | None = Field(
        default=None,
        description="Transfers out of the deployer or the token to many wallets at or "
        "before the first buy (docs/holders.md); absent when not analysed.",
    )


class FlagItem(WireModel):
    flag: str = Field(description="Flag identifier, lowercase, e.g. high_fail_rate.")
    description: str = Field(description="Human-readable text with the measured numbers.")
    severity: str = Field(description="One of info, low, medium, high, critical.")
    severityIndex: int = Field(
        description="Numeric severity: info 4, low 8, medium 12, high 16, critical 20."
    )


class Summary(WireModel):
    risk: str = Field(
        description="One of unknown, very_low, low, medium, high, very_high, honeypot."
    )
    riskLevel: int | None = Field(
        default=None, description="0 to 100; absent when risk is unknown. Prefer over risk."
    )
    flags: list[FlagItem] | None = Field(
        default=None, description="Findings, worst first; may be empty."
    )


class HoneypotResult(WireModel):
    isHoneypot: bool = Field(description="Whether the token is a honeypot.")
    honeypotReason: str | None = Field(
        default=None,
        description="Present when isHoneypot is true; names the failing operation.",
    )


class LimitAmount(WireModel):
    token: Number = Field(description="Amount of the checked token, scaled by its decimals.")
    tokenWei: str = Field(description="The same amount as the raw integer.")
    withToken: Number = Field(description="Amount of the other pair token, scaled by its decimals.")
    withTokenWei: str = Field(description="The same amount as the raw integer.")


class SimulationResult(WireModel):
    maxBuy: LimitAmount | None = Field(
        default=None, description="Largest buy that succeeds; absent if unlimited."
    )
    maxSell: LimitAmount | None = Field(
        default=None, description="Largest sell that succeeds; absent if unlimited."
    )
    buyTax: Number = Field(description="Buy tax in percent.")
    sellTax: Number = Field(description="Sell tax in percent; 100 when the sell reverts.")
    transferTax: Number = Field(
        description="Wallet-to-wallet transfer tax in percent; 100 when the transfer reverts."
    )
    buyGas: str = Field(description="Gas used by the buy (integer).")
    sellGas: str = Field(description='Gas used by the sell (integer); "0" when it reverts.')


class TaxCount(WireModel):
    tax: int = Field(description="Tax percentage rounded to a whole number.")
    count: int = Field(description="Number of analysed wallets paying that tax.")


class HolderAnalysis(WireModel):
    holders: str = Field(description="Number of holders analysed (not the real holder count).")
    successful: str = Field(description="Holders able to sell.")
    failed: str = Field(description="Holders unable to sell.")
    siphoned: str = Field(description="Holders whose tokens were moved without consent.")
    averageTax: Number = Field(description="Average tax paid when selling, in percent.")
    averageGas: Number = Field(description="Average gas used when selling.")
    highestTax: Number = Field(description="Highest tax a holder would pay, in percent.")
    highTaxWallets: str = Field(description="Number of wallets paying 50% tax or more.")
    taxDistribution: list[TaxCount] = Field(
        description="Wallet counts per whole-number tax percentage."
    )
    snipersFailed: int = Field(
        description="Current holders that bought in the first blocks of trading and cannot sell."
    )
    snipersSuccess: int = Field(
        description="Current holders that bought in the first blocks of trading and can sell."
    )


class ContractCode(WireModel):
    openSource: bool = Field(
        description="Every contract called during the buy/sell is open source."
    )
    rootOpenSource: bool = Field(description="The token contract itself is open source.")
    isProxy: bool = Field(description="The token contract itself executes a delegatecall.")
    hasProxyCalls: bool = Field(description="A delegatecall occurs anywhere in the path.")
    verificationUnknown: list[str] | None = Field(
        default=None,
        description="Extension: contracts no verification provider could answer for "
        "(false above means 'not known to be open source' for them, not closed source).",
    )


class LegTaxes(WireModel):
    effective: Number | None = Field(
        default=None, description="Percent lost against the router's quote (the verdict's tax)."
    )
    tokenUnit: Number | None = Field(
        default=None, description="Percent of the tokens lost on the way (Transfer logs)."
    )
    difference: Number | None = Field(
        default=None, description="effective minus tokenUnit, in percentage points."
    )
    notMeasured: dict[str, str] | None = Field(
        default=None,
        description="The figures ('effective', 'tokenUnit') that could not be measured, and "
        "why. Without 'effective', simulationResult carries 'tokenUnit'; without both, "
        "there is no simulationResult.",
    )


class HolderTaxes(WireModel):
    averageEffective: Number | None = Field(
        default=None,
        description="Holders' average sell tax (effective, else token units); absent when "
        "no holder's sell tax could be measured (notMeasured says so).",
    )
    averageTokenUnit: Number | None = Field(
        default=None, description="Holders' average sell tax in token units."
    )
    soldAtPoolLimit: int = Field(
        description="Holders whose balance exceeds what the pool can take, sold at the limit."
    )
    poolLimitWei: str | None = Field(
        default=None, description="The largest sell the pool accepts (raw integer), if it applied."
    )
    notMeasured: str | None = Field(
        default=None, description="Why the holders' sell taxes are absent, when they are."
    )


class TaxDetails(WireModel):
    """Extension: both tax figures of every leg (docs/simulation.md, "Taxes")."""

    buy: LegTaxes | None = Field(default=None, description="The fresh buyer's buy.")
    sell: LegTaxes | None = Field(default=None, description="The fresh buyer's sell.")
    transfer: LegTaxes | None = Field(default=None, description="The wallet-to-wallet transfer.")
    holders: HolderTaxes | None = Field(default=None, description="Real holders' sells.")
    explanation: list[str] = Field(description="Why figures differ, and other notes.")


class ChainInfo(WireModel):
    id: str = Field(description="Numeric chain id, as a string.")
    name: str = Field(description="Chain name.")
    shortName: str = Field(description="Short chain name, lower case (eth, bsc, base).")
    currency: str = Field(description="Native currency symbol.")
    forkBlock: int | None = Field(
        default=None,
        description="Fork mode only (tokenrisk's addition): the upstream block the local "
        "fork the check ran on was made at; the fork follows the chain (docs/chains.md).",
    )


class PairRef(WireModel):
    name: str = Field(description='DEX name, then token0-token1 symbols: "Uniswap V2: PEPE-WETH".')
    address: str = Field(
        description="Pair or pool address; for a Uniswap V4 pool the PoolManager, which holds "
        "every V4 pool's tokens (the pool itself is poolId)."
    )
    token0: str = Field(description="Address of token0.")
    token1: str = Field(description="Address of token1.")
    type: str = Field(description="<dex>V2, <dex>V3 or UniswapV4, e.g. UniswapV2.")
    poolId: str | None = Field(
        default=None, description="Extension, Uniswap V4 only: the pool id (keccak of its key)."
    )
    hooks: str | None = Field(
        default=None,
        description="Extension, Uniswap V4 only: the pool's hook contract; absent without one.",
    )
    hookPermissions: list[str] | None = Field(
        default=None,
        description="Extension, Uniswap V4 only: what the hook's address bits let it do "
        "(beforeSwap, afterSwapReturnsDelta, ...).",
    )
    nativeEth: bool | None = Field(
        default=None,
        description="Extension, Uniswap V4 only: true when the pool trades native ETH; the "
        "token0/token1 address shown for it is then the wrapped native token.",
    )


class PairInfo(WireModel):
    pair: PairRef = Field(description="The pair's identity.")
    chainId: str = Field(description="Numeric chain id, as a string.")
    reserves0: str = Field(description="Raw reserve of token0 (integer).")
    reserves1: str = Field(description="Raw reserve of token1 (integer).")
    liquidity: Number | None = Field(
        default=None,
        description="Liquidity in USD; absent when unknown (see liquidityUnknown), never 0.",
    )
    liquidityUnknown: str | None = Field(
        default=None, description="Extension: why the USD liquidity is unknown."
    )
    router: str = Field(description="Router used to trade on the pair.")
    createdAtTimestamp: str | None = Field(
        default=None, description="Creation time as a numeric (unix) timestamp."
    )
    creationTxHash: str | None = Field(
        default=None, description="Hash of the pair's creation transaction."
    )


class JourneyStep(WireModel):
    step: str = Field(description="buy, transfer (to a second wallet) or sell, in that order.")
    outcome: str = Field(description="ok, failed, or not reached (an earlier step failed).")
    reason: str | None = Field(
        default=None, description="The token's revert reason when this step failed."
    )
    tax: Number | None = Field(default=None, description="Tax of this step in percent.")
    gas: str | None = Field(default=None, description="Gas used by this step (integer).")


class OwnerCaller(WireModel):
    address: str = Field(description="Candidate privileged caller (checksummed).")
    foundBy: list[str] = Field(description="How it was found, e.g. owner(), storage slot 6.")
    isContract: bool = Field(description="A contract (tried as a sender like an EOA).")
    kind: str = Field(default="eoa", description="eoa, multisig, timelock or contract.")
    threshold: int | None = Field(default=None, description="A multisig's signatures needed.")
    signers: int | None = Field(default=None, description="A multisig's owners.")
    delay: int | None = Field(default=None, description="A timelock's delay in seconds.")


class PowerEvidence(WireModel):
    what: str = Field(description="The quantity observed, e.g. 'sell tax %'.")
    before: str = Field(description="Its value without the owner call.")
    after: str = Field(description="Its value after the owner call.")


class PowerFindingItem(WireModel):
    id: str = Field(description="Finding id; also its summary flag id (docs/owner-powers.md).")
    severity: str = Field(
        description="info, low, medium, high or critical (lower behind a timelock or multisig)."
    )
    confidence: str = Field(
        default="simulated", description="simulated (a trial showed it) or static (bytecode)."
    )
    control: str | None = Field(
        default=None, description="The caller's control that lowered the severity."
    )
    title: str = Field(description="One-line name of the finding.")
    function: str = Field(description="Signature when known, else selector(types).")
    selector: str = Field(description="0x + 8 hex digits; empty for time bombs.")
    caller: str | None = Field(default=None, description="Who made the call.")
    args: list[str] = Field(description="The arguments used, as text.")
    evidence: list[PowerEvidence] = Field(description="Before/after of what changed.")
    detail: str = Field(description="One sentence with the measured numbers.")
    docs: str = Field(description="Where the finding is explained.")


class FutureSellItem(WireModel):
    after: str = Field(description="1h, 1d, 7d or 30d.")
    seconds: int = Field(description="Seconds after the buy.")
    ok: bool = Field(description="Whether the sell went through.")
    reason: str | None = Field(default=None, description="Why it failed.")


class OwnerPowersInfo(WireModel):
    """Our extension: what the owner could still do to a buyer (docs/owner-powers.md)."""

    scanned: bool = Field(description="False when the scan could not run (see error).")
    error: str | None = Field(default=None, description="Why the scan could not run.")
    owner: str | None = Field(default=None, description="What owner() returned.")
    renounced: bool = Field(
        description="owner() is the zero or dead address and no other caller holds a power."
    )
    callers: list[OwnerCaller] = Field(description="Candidate privileged callers.")
    functions: int = Field(description="State-changing functions beyond ERC-20 found.")
    simulations: int = Field(description="eth_simulateV1 runs the scan sent.")
    bounded: bool = Field(description="A bound (functions, callers, arguments) cut the scan.")
    cached: bool = Field(description="Served from the scan cache.")
    findings: list[PowerFindingItem] = Field(description="What the owner can do, worst first.")
    futureSells: list[FutureSellItem] = Field(description="The buyer selling later.")


class IsHoneypotResponse(WireModel):
    token: TokenSummary = Field(description="The token being checked.")
    withToken: TokenSummary | None = Field(
        default=None, description="The other token of the pair, used to buy it."
    )
    summary: Summary = Field(description="Risk summary; always present.")
    simulationSuccess: bool = Field(description="Whether the buy/sell simulation ran.")
    simulationError: str | None = Field(
        default=None, description="Why the simulation did not run; when simulationSuccess false."
    )
    honeypotResult: HoneypotResult | None = Field(
        default=None, description="Honeypot decision; absent when it could not be decided."
    )
    simulationResult: SimulationResult | None = Field(
        default=None, description="Taxes, gas and limits; present when simulationSuccess."
    )
    holderAnalysis: HolderAnalysis | None = Field(
        default=None, description="Results of simulating sells as real holders."
    )
    flags: list[str] | None = Field(
        default=None, description="Deprecated upper-case flags; use summary.flags."
    )
    contractCode: ContractCode | None = Field(
        default=None, description="Call-tree and source verification facts."
    )
    taxDetails: TaxDetails | None = Field(
        default=None, description="Extension: effective and token-unit taxes per leg."
    )
    chain: ChainInfo = Field(description="The chain the check ran on.")
    router: str | None = Field(default=None, description="Router of the chosen pair.")
    pair: PairInfo | None = Field(default=None, description="The chosen pair.")
    pairAddress: str | None = Field(default=None, description="Address of the chosen pair.")
    journey: list[JourneyStep] | None = Field(
        default=None,
        description="Extension: each step of buy -> transfer -> sell as the simulated buyer "
        "saw it; present when the simulation ran.",
    )
    ownerPowers: OwnerPowersInfo | None = Field(
        default=None, description="Our extension: owner powers found by trial."
    )
    unchecked: list[str] | None = Field(
        default=None,
        description="Extension: what the node's limits left unchecked, one "
        '"<check>: <why>" sentence each; absent when everything was checked.',
    )


# OTHER ENDPOINTS


class PairItemPair(WireModel):
    Name: str = Field(description='DEX name, then token0-token1 symbols: "Uniswap V2: A-B".')
    Tokens: list[str] = Field(description="The two token addresses (lower case), token0 first.")
    Address: str = Field(
        description="Pair or pool address (lower case); for a Uniswap V4 pool the PoolManager "
        "(the pool itself is PoolId)."
    )
    PoolId: str | None = Field(
        default=None, description="Extension, Uniswap V4 only: the pool id (keccak of its key)."
    )
    Hooks: str | None = Field(
        default=None,
        description="Extension, Uniswap V4 only: the pool's hook contract (lower case); absent "
        "without one.",
    )
    HookPermissions: list[str] | None = Field(
        default=None, description="Extension, Uniswap V4 only: what the hook's address bits allow."
    )
    NativeEth: bool | None = Field(
        default=None,
        description="Extension, Uniswap V4 only: the pool trades native ETH (shown as the "
        "wrapped native token's address).",
    )


class PairItem(WireModel):
    ChainID: int = Field(description="Numeric chain id.")
    Pair: PairItemPair = Field(description="The pair's identity.")
    Reserves: list[Number] = Field(
        description="Raw reserves of token0 and token1 as JSON numbers (float64 precision)."
    )
    Liquidity: Number | None = Field(
        default=None,
        description="Liquidity in USD; absent when unknown (see LiquidityUnknown), never 0.",
    )
    LiquidityUnknown: str | None = Field(
        default=None, description="Extension: why the USD liquidity is unknown."
    )
    Router: str = Field(description="Router used to trade on the pair (lower case).")
    CreatedAtTimestamp: int | None = Field(
        default=None, description="Unix time of the pair's creation block, where known."
    )
    CreationTxHash: str | None = Field(
        default=None, description="Hash of the pair's creation transaction, where known."
    )
    Fee: int | None = Field(
        default=None,
        description="Extension: a V3 pool's fee tier in hundredths of a basis point "
        "(3000 = 0.3%), or a V4 pool key's fee (8388608 = 0x800000: a dynamic fee its hook "
        "sets); absent for V2 pairs, whose fee is the DEX's own.",
    )


class ContractCallItem(WireModel):
    from_: str = Field(
        validation_alias=AliasChoices("from_", "from"),
        serialization_alias="from",
        description="Calling contract address.",
    )
    to: str = Field(description="Called contract address.")
    type: str = Field(description="CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE or CREATE2.")
    selector: str | None = Field(
        default=None, description="4-byte function selector (0x + 8 hex); absent without data."
    )


class VerificationSummary(WireModel):
    isOpenSource: bool = Field(description="Root and every called contract are open source.")
    hasProxyCalls: bool = Field(description="A delegatecall occurs in the call tree.")


class ContractVerificationResponse(WireModel):
    isContract: bool = Field(description="The address holds contract code.")
    isRootOpenSource: bool = Field(description="The checked contract is open source.")
    fullCheckPerformed: bool = Field(description="False when the buy/sell simulation failed.")
    summary: VerificationSummary | None = Field(
        default=None, description="Absent when fullCheckPerformed is false."
    )
    contractsOpenSource: dict[str, bool] | None = Field(
        default=None, description="Contracts in the call tree and whether each is open source."
    )
    contractCalls: list[ContractCallItem] | None = Field(
        default=None, description="Unique calls of the call tree, in no specific order."
    )
    verificationUnknown: list[str] | None = Field(
        default=None,
        description="Extension: contracts no verification provider could answer for; "
        "false for them means 'not known to be open source', never 'closed source'.",
    )
    fullCheckReason: str | None = Field(
        default=None,
        description="Extension: why fullCheckPerformed is false; present exactly then.",
    )


class HolderItem(WireModel):
    address: str = Field(description="Holder address.")
    balance: str = Field(description="Raw balance (integer).")
    alias: str = Field(default="", description="Currently never set: an empty string.")
    isContract: bool = Field(description="The holder address is a contract.")


class TopHoldersResponse(WireModel):
    totalSupply: str = Field(description="Raw total supply (integer).")
    holders: list[HolderItem] = Field(description="Top holders, at most 50.")


class ErrorBody(WireModel):
    code: int = Field(description="HTTP status code.")
    error: str = Field(description="What went wrong; never a stack trace or an RPC URL.")
    reason: str | None = Field(
        default=None, description='Extension: why, for a 404 "No pairs found" (what was searched).'
    )
    token: TokenSummary | None = Field(
        default=None, description='Extension: the token, for a 404 "No pairs found".'
    )


# SERIALISATION


def dump(model: BaseModel) -> dict[str, Any]:
    """JSON-ready dict with spec field names and every ``None`` omitted (recursively)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def dump_all(models: Iterable[BaseModel]) -> list[dict[str, Any]]:
    """:func:`dump` of each model, e.g. for the GetPairs array."""
    return [dump(m) for m in models]


# RENDER: ONE FUNCTION PER CHECK RESULT


def honeypot_body(result: results.HoneypotResult) -> IsHoneypotResponse:
    """IsHoneypot's body for a check's result."""
    body = honeypot_response(result.analysis, result.verdict, result.chain)
    if result.fork_block is None:
        return body
    chain = body.chain.model_copy(update={"forkBlock": result.fork_block})
    return body.model_copy(update={"chain": chain})


def pairs_body(rows: Iterable[results.PairRow]) -> list[PairItem]:
    """GetPairs' array for a check's result (rows in ranked order)."""
    return [pair_item(r.pool, r.pool.chain_id, r.symbols) for r in rows]


def verification_body(result: results.VerificationResult) -> ContractVerificationResponse:
    """GetContractVerification's body for a check's result."""
    r = result
    return verification_response(r.is_contract, r.root_open_source, r.code, r.unknown, r.reason)


def top_holders_body(result: results.TopHoldersResult) -> TopHoldersResponse:
    """TopHolders' body for a check's result."""
    return top_holders_response(result.total_supply, result.holders)


# RENDER: ISHONEYPOT


def honeypot_response(analysis: Analysis, verdict: Verdict, chain: Chain) -> IsHoneypotResponse:
    """The IsHoneypot body for one analysis and its verdict (``risk.assess(analysis)``).

    ``simulationSuccess`` is true only for a simulation that ran *and* bought and whose
    every leg that went through has a tax figure (``risk.rendered_simulation``); then
    ``honeypotResult`` and ``simulationResult`` are present (spec Rule 3).  A leg without
    any figure is never a 0: there is no ``simulationResult`` and ``simulationError``
    says which tax was not measured and why (``taxDetails`` still shows what was).
    ``honeypotResult`` is present whenever the verdict decided ``is_honeypot``, also from
    holders alone or from a sell that failed (Rule 4).
    """
    sim = usable_simulation(analysis.simulation)
    shown = rendered_simulation(sim)
    pool = analysis.pool
    return IsHoneypotResponse(
        token=token_summary(analysis.token),
        withToken=token_summary(analysis.with_token) if analysis.with_token else None,
        summary=summary(verdict),
        simulationSuccess=shown is not None,
        simulationError=None if shown is not None else simulation_error(analysis),
        honeypotResult=honeypot_result(verdict),
        simulationResult=simulation_result(shown, analysis) if shown is not None else None,
        holderAnalysis=holder_analysis(analysis.holders) if analysis.holders else None,
        flags=list(verdict.legacy_flags),
        contractCode=contract_code(analysis.code) if analysis.code else None,
        taxDetails=tax_details(sim, analysis.holders, engine_notes(analysis)),
        chain=chain_info(chain),
        router=pool.router if pool else None,
        pair=pair_info(pool, chain.id, pair_symbols(pool, analysis)) if pool else None,
        pairAddress=pool.address if pool else None,
        journey=journey(analysis.simulation),
        ownerPowers=owner_powers(analysis.owner_powers) if analysis.owner_powers else None,
        unchecked=list(analysis.unchecked) or None,
    )


def owner_powers(p: OwnerPowers) -> OwnerPowersInfo:
    """``ownerPowers``: the scan's callers, findings with evidence, and future sells."""
    return OwnerPowersInfo(
        scanned=p.scanned,
        error=p.error,
        owner=p.owner,
        renounced=p.renounced,
        callers=[
            OwnerCaller(
                address=c.address,
                foundBy=list(c.found_by),
                isContract=c.is_contract,
                kind=c.kind,
                threshold=c.threshold,
                signers=c.signers,
                delay=c.delay,
            )
            for c in p.callers
        ],
        functions=p.functions,
        simulations=p.simulations,
        bounded=p.bounded,
        cached=p.cached,
        findings=[power_finding(f) for f in p.findings],
        futureSells=[
            FutureSellItem(after=f.label, seconds=f.seconds, ok=f.ok, reason=f.reason)
            for f in p.future
        ],
    )


def power_finding(f: PowerFinding) -> PowerFindingItem:
    kind = FINDINGS[f.kind]
    return PowerFindingItem(
        id=f.kind,
        severity=f.severity or kind.severity,
        confidence=f.confidence,
        control=f.control,
        title=kind.title,
        function=f.function,
        selector=f.selector,
        caller=f.caller,
        args=list(f.args),
        evidence=[PowerEvidence(what=e.what, before=e.before, after=e.after) for e in f.evidence],
        detail=f.detail,
        docs=kind.anchor,
    )


def token_summary(info: TokenInfo) -> TokenSummary:
    """``token`` / ``withToken``: an unknown holder count is -1 with status "unknown"."""
    known = info.total_holders is not None
    return TokenSummary(
        name=info.name,
        symbol=info.symbol,
        decimals=info.decimals,
        address=info.address,
        totalHolders=info.total_holders if info.total_holders is not None else UNKNOWN_HOLDERS,
        totalHoldersStatus="counted" if known else "unknown",
        airdropSummary=airdrop_info(info.airdrop) if info.airdrop is not None else None,
    )


def airdrop_info(airdrop: AirdropSummary) -> AirdropInfo:
    return AirdropInfo(
        totalTxs=airdrop.transactions,
        totalAmountWei=str(airdrop.amount),
        totalTransfers=airdrop.transfers,
    )


def summary(verdict: Verdict) -> Summary:
    """``summary``: risk, riskLevel (absent when unknown) and the flags, worst first."""
    flags = [
        FlagItem(
            flag=f.flag,
            description=f.description,
            severity=f.severity,
            severityIndex=f.severity_index,
        )
        for f in verdict.flags
    ]
    return Summary(risk=verdict.risk, riskLevel=verdict.risk_level, flags=flags)


def honeypot_result(verdict: Verdict) -> HoneypotResult | None:
    """``honeypotResult``, absent when the verdict could not decide."""
    if verdict.is_honeypot is None:
        return None
    reason = verdict.honeypot_reason if verdict.is_honeypot else None
    return HoneypotResult(isHoneypot=verdict.is_honeypot, honeypotReason=reason)


def simulation_error(analysis: Analysis) -> str:
    """The message for ``simulationError`` when there is no usable simulation."""
    sim = analysis.simulation
    if sim is None:
        return "simulation not run" if analysis.pool else "no pair with liquidity found"
    if not sim.success:
        return sim.error or "simulation failed"
    if sim.buy_ok and (legs := unmeasured_legs(sim)):
        return "; ".join(_not_measured(sim, leg) for leg in legs)
    return f"buy failed: {sim.failure_reason}" if sim.failure_reason else "buy failed"


def _not_measured(sim: SimulationReport, leg: str) -> str:
    """E.g. "the buy tax could not be measured: no quote for the amount (...)"."""
    why = next((u.why for u in sim.unmeasured if u.leg == leg), None)
    return f"the {leg} tax could not be measured" + (f": {why}" if why else "")


def simulation_result(sim: SimulationReport, analysis: Analysis) -> SimulationResult:
    """``simulationResult`` with all five keys: taxes to 2 decimals, gas as integer strings.

    A step that reverted delivered nothing: its tax is 100 and its gas "0" (the live
    API's convention).  A step that ran carries its effective tax, or its token-unit tax
    where the effective one was not measured (``taxDetails`` says so); ``sim`` must be
    ``risk.rendered_simulation``'s, so no leg is without a figure (none reads as 0).
    """
    token_decimals = analysis.token.decimals
    with_decimals = analysis.with_token.decimals if analysis.with_token else DEFAULT_DECIMALS
    return SimulationResult(
        maxBuy=limit_amount(sim.max_buy, token_decimals, with_decimals) if sim.max_buy else None,
        maxSell=limit_amount(sim.max_sell, token_decimals, with_decimals) if sim.max_sell else None,
        buyTax=_step_tax(sim.buy_ok, leg_tax(sim, "buy")),
        sellTax=_step_tax(sim.sell_ok, leg_tax(sim, "sell")),
        transferTax=_step_tax(sim.transfer_ok, leg_tax(sim, "transfer")),
        buyGas=_step_gas(sim.buy_ok, sim.buy_gas),
        sellGas=_step_gas(sim.sell_ok, sim.sell_gas),
    )


def journey(sim: SimulationReport | None) -> list[JourneyStep] | None:
    """``journey`` (extension): the three steps with their outcome; None when nothing ran.

    The report keeps one revert reason, that of the step it names as the failure; any
    other failed step shows ``failed`` without a reason.  Nothing is reached after a
    failed buy.
    """
    if sim is None or not sim.success:
        return None
    facts = {
        "buy": (sim.buy_ok, leg_tax(sim, "buy"), sim.buy_gas),
        "transfer": (sim.transfer_ok, leg_tax(sim, "transfer"), None),
        "sell": (sim.sell_ok, leg_tax(sim, "sell"), sim.sell_gas),
    }
    steps = []
    for step, (ok, tax, gas) in facts.items():
        reached = step == "buy" or sim.buy_ok
        outcome = "ok" if ok else ("failed" if reached else "not reached")
        steps.append(
            JourneyStep(
                step=step,
                outcome=outcome,
                reason=sim.failure_reason if step == sim.failure_step else None,
                tax=_round(tax) if ok else None,
                gas=_integer_string(gas) if ok else None,
            )
        )
    return steps


REVERTED_TAX = 100.0
"""The tax reported for a step that reverted: the seller received nothing."""


def _step_tax(ok: bool, tax: float | None) -> float:
    if not ok:
        return REVERTED_TAX
    if tax is None:  # excluded by rendered_simulation: an unknown tax is never a number
        raise ValueError("a leg without a tax figure cannot be rendered in simulationResult")
    return round(tax, 2)


def _step_gas(ok: bool, gas: int | None) -> str:
    return str(gas) if ok and gas is not None else "0"


def limit_amount(limit: Limit, token_decimals: int, with_decimals: int) -> LimitAmount:
    """A limit in both raw units (strings) and scaled by decimals (numbers)."""
    return LimitAmount(
        token=scale(limit.token_wei, token_decimals),
        tokenWei=str(limit.token_wei),
        withToken=scale(limit.with_token_wei, with_decimals),
        withTokenWei=str(limit.with_token_wei),
    )


def scale(raw: int, decimals: int) -> float:
    """``raw / 10**decimals`` computed exactly, then rounded once to a float."""
    return float(Decimal(raw).scaleb(-decimals))


def holder_analysis(stats: HolderStats) -> HolderAnalysis:
    """``holderAnalysis``: counts as strings, tax and gas numbers to 2 decimals."""
    return HolderAnalysis(
        holders=str(stats.analysed),
        successful=str(stats.successful),
        failed=str(stats.failed),
        siphoned=str(stats.siphoned),
        averageTax=round(stats.average_tax, 2),
        averageGas=round(stats.average_gas, 2),
        highestTax=round(stats.highest_tax, 2),
        highTaxWallets=str(stats.high_tax_wallets),
        taxDistribution=[TaxCount(tax=b.tax, count=b.count) for b in stats.tax_distribution],
        snipersFailed=stats.snipers_failed,
        snipersSuccess=stats.snipers_success,
    )


def contract_code(code: CodeReport) -> ContractCode:
    return ContractCode(
        openSource=code.open_source,
        rootOpenSource=code.root_open_source,
        isProxy=code.is_proxy,
        hasProxyCalls=code.has_proxy_calls,
        verificationUnknown=list(code.unknown) or None,
    )


def engine_notes(analysis: Analysis) -> list[str]:
    """Every note the engine wrote for this analysis, once each, in order: the journey's
    (also when it could not buy, e.g. the probe fallback's), the owner-power scan's, then
    that the call tree was not checked (a node without debug_traceCall: a partial check),
    then what else the node's limits left unchecked (``unchecked``, as "not checked: ...")."""
    journey = analysis.simulation.notes if analysis.simulation else ()
    powers = analysis.owner_powers.notes if analysis.owner_powers else ()
    untraced = (TRACE_UNAVAILABLE,) if analysis.trace_unavailable else ()
    limits = tuple(f"not checked: {u}" for u in analysis.unchecked)
    return list(dict.fromkeys([*journey, *powers, *untraced, *limits]))


def tax_details(
    sim: SimulationReport | None, holders: HolderStats | None, notes: Sequence[str] = ()
) -> TaxDetails | None:
    """``taxDetails``: both figures per leg, and the engine's ``notes`` as ``explanation``;
    absent when nothing was measured and nothing noted.  ``sim``: the usable simulation
    (None when it did not run or could not buy: its legs are then absent, its notes not)."""
    if sim is None and holders is None and not notes:
        return None
    legs = [
        leg_taxes(sim.buy_tax, sim.buy_tax_token_unit, _missing(sim, "buy")) if sim else None,
        leg_taxes(sim.sell_tax, sim.sell_tax_token_unit, _missing(sim, "sell")) if sim else None,
        leg_taxes(sim.transfer_tax, sim.transfer_tax_token_unit, _missing(sim, "transfer"))
        if sim
        else None,
    ]
    return TaxDetails(
        buy=legs[0],
        sell=legs[1],
        transfer=legs[2],
        holders=holder_taxes(holders) if holders and holders.successful else None,
        explanation=list(notes),
    )


def _missing(sim: SimulationReport, leg: str) -> dict[str, str]:
    """Figure -> why, for the figures of ``leg`` the simulation could not measure."""
    return {u.figure: u.why for u in sim.unmeasured if u.leg == leg}


def leg_taxes(
    effective: float | None, token_unit: float | None, missing: dict[str, str] | None = None
) -> LegTaxes | None:
    if effective is None and token_unit is None and not missing:
        return None
    diff = (
        round(effective - token_unit, 2)
        if effective is not None and token_unit is not None
        else None
    )
    return LegTaxes(
        effective=_round(effective),
        tokenUnit=_round(token_unit),
        difference=diff,
        notMeasured=missing or None,
    )


HOLDER_TAXES_UNMEASURED = (
    "no holder's sell tax could be measured (no quote and no Transfer log of the sells); "
    "holderAnalysis' tax figures are not measurements"
)


def holder_taxes(stats: HolderStats) -> HolderTaxes:
    if stats.taxes_measured == 0:
        return HolderTaxes(
            soldAtPoolLimit=stats.sold_at_pool_limit,
            poolLimitWei=_integer_string(stats.pool_limit_wei),
            notMeasured=HOLDER_TAXES_UNMEASURED,
        )
    return HolderTaxes(
        averageEffective=round(stats.average_tax, 2),
        averageTokenUnit=_round(stats.average_tax_token_unit),
        soldAtPoolLimit=stats.sold_at_pool_limit,
        poolLimitWei=_integer_string(stats.pool_limit_wei),
    )


def chain_info(chain: Chain) -> ChainInfo:
    """``chain``: the id as a string and the short name in lower case, as the live API."""
    return ChainInfo(
        id=str(chain.id),
        name=chain.name,
        shortName=chain.short_name.lower(),
        currency=chain.currency,
    )


def pair_name(pool: Pool, token_symbols: tuple[str, str]) -> str:
    """``"Uniswap V2: PEPE-WETH"``: the DEX display name, then token0-token1 symbols."""
    return f"{pool.dex_name}: {'-'.join(token_symbols)}"


def pair_symbols(pool: Pool, analysis: Analysis) -> tuple[str, str]:
    """Symbols of token0 and token1, from the analysed tokens (address when unknown)."""
    known = [analysis.token, *([analysis.with_token] if analysis.with_token else [])]
    symbols = {t.address.lower(): t.symbol for t in known}
    return (
        symbols.get(pool.token0.lower(), pool.token0),
        symbols.get(pool.token1.lower(), pool.token1),
    )


def pair_info(pool: Pool, chain_id: int, token_symbols: tuple[str, str]) -> PairInfo:
    """IsHoneypot ``pair``; see :func:`pair_name`."""
    return PairInfo(
        pair=PairRef(
            name=pair_name(pool, token_symbols),
            address=pool.address,
            token0=pool.token0,
            token1=pool.token1,
            type=pool.type,
            **_v4_ref(pool),
        ),
        chainId=str(chain_id),
        reserves0=str(pool.reserves0),
        reserves1=str(pool.reserves1),
        liquidity=_round(pool.liquidity_usd),
        liquidityUnknown=UNKNOWN_PRICE if pool.liquidity_usd is None else None,
        router=pool.router,
        createdAtTimestamp=_integer_string(pool.created_at_timestamp),
        creationTxHash=pool.creation_tx_hash,
    )


# RENDER: OTHER ENDPOINTS


def pair_item(pool: Pool, chain_id: int, token_symbols: tuple[str, str]) -> PairItem:
    """One GetPairs element; ``token_symbols`` are in token0/token1 order.

    Addresses are lower case and reserves JSON numbers (float64, as the live API sends
    them: exact below 2**53, rounded above); IsHoneypot's ``pair`` keeps exact strings.
    """
    return PairItem(
        ChainID=chain_id,
        Pair=PairItemPair(
            Name=pair_name(pool, token_symbols),
            Tokens=[pool.token0.lower(), pool.token1.lower()],
            Address=pool.address.lower(),
            **{k[0].upper() + k[1:]: v for k, v in _v4_ref(pool, lower=True).items()},
        ),
        Reserves=[float(pool.reserves0), float(pool.reserves1)],
        Liquidity=_round(pool.liquidity_usd),
        LiquidityUnknown=UNKNOWN_PRICE if pool.liquidity_usd is None else None,
        Router=pool.router.lower(),
        CreatedAtTimestamp=pool.created_at_timestamp,
        CreationTxHash=pool.creation_tx_hash,
        Fee=pool.fee if pool.version in ("V3", "V4") else None,
    )


def _v4_ref(pool: Pool, lower: bool = False) -> dict[str, Any]:
    """The V4 extensions of a pair reference (nothing for V2/V3)."""
    if pool.pool_id is None:
        return {}
    hooks = pool.hooks if pool.hooks and int(pool.hooks, 16) else None
    return {
        "poolId": pool.pool_id,
        "hooks": (hooks.lower() if lower else hooks) if hooks else None,
        "hookPermissions": list(hook_permissions(hooks)) if hooks else None,
        "nativeEth": True if pool.native else None,
    }


def verification_response(
    is_contract: bool,
    root_open_source: bool,
    code: CodeReport | None,
    unknown: Sequence[str] = (),
    reason: str = "the buy and sell could not be traced",
) -> ContractVerificationResponse:
    """GetContractVerification body; ``code`` is None when the buy/sell could not run.

    Then ``fullCheckPerformed`` is false, ``fullCheckReason`` says why, and summary,
    contractsOpenSource and contractCalls are omitted.  ``unknown``: contracts (besides
    the call tree's) that no verification provider could answer for.
    """
    unknown_all = list(dict.fromkeys([*unknown, *(code.unknown if code else ())])) or None
    if code is None:
        return ContractVerificationResponse(
            isContract=is_contract,
            isRootOpenSource=root_open_source,
            fullCheckPerformed=False,
            verificationUnknown=unknown_all,
            fullCheckReason=reason,
        )
    return ContractVerificationResponse(
        isContract=is_contract,
        isRootOpenSource=root_open_source,
        fullCheckPerformed=True,
        summary=VerificationSummary(
            isOpenSource=code.open_source, hasProxyCalls=code.has_proxy_calls
        ),
        contractsOpenSource=dict(code.contracts_open_source),
        contractCalls=[contract_call_item(c) for c in code.calls],
        verificationUnknown=unknown_all,
    )


def contract_call_item(call: ContractCall) -> ContractCallItem:
    """One ``contractCalls`` element: {from, to, type, selector?}."""
    return ContractCallItem(
        from_=call.from_address, to=call.to_address, type=call.call_type, selector=call.selector
    )


class HolderBalance(Protocol):
    """What a top-holders row must offer (any object with these attributes)."""

    @property
    def address(self) -> str: ...

    @property
    def balance(self) -> int: ...

    @property
    def is_contract(self) -> bool: ...


def top_holders_response(total_supply: int, holders: Sequence[HolderBalance]) -> TopHoldersResponse:
    """TopHolders body, holders in the given order (the caller sorts and caps at 50)."""
    return TopHoldersResponse(
        totalSupply=str(total_supply),
        holders=[
            HolderItem(
                address=h.address, balance=str(h.balance), alias="", isContract=h.is_contract
            )
            for h in holders
        ],
    )


def error_body(
    status: int, message: str, reason: str | None = None, token: TokenInfo | None = None
) -> ErrorBody:
    """``{"code", "error"}``, plus the "No pairs found" extensions when given."""
    summary = token_summary(token) if token is not None else None
    return ErrorBody(code=status, error=message, reason=reason, token=summary)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _integer_string(value: int | None) -> str | None:
    return None if value is None else str(value)

"""A typed client of the live honeypot.is-style API, written the way published clients are.

The models declare what typed clients of the live API declare (WIRE.md, SPEC.md):
required fields are required (``withToken.totalHolders`` included), integer fields are
``int`` and numbers that clients in statically typed languages read as integers must
arrive as JSON integers when they are whole (``0``, not ``0.0``).  Parsing is strict (no
"1" for 1, no 1 for true) and unknown fields are ignored, as clients ignore them.

Nothing here knows tokenrisk: only the base URL differs from a client of the live API.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import httpx
from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter


def _whole_numbers_are_integers(value: int | float) -> int | float:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        raise ValueError(f"{value!r}: a whole number must be a JSON integer")
    return value


Number = Annotated[int | float, AfterValidator(_whole_numbers_are_integers)]
"""A JSON number; a whole value sent as ``0.0`` breaks integer-typed clients (the live
API's encoder writes whole values below 1e21 as integers, larger ones as ``3.85e+26``)."""


class Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class Token(Model):
    name: str
    symbol: str
    decimals: int
    address: str
    totalHolders: int


class Flag(Model):
    flag: str
    description: str
    severity: str
    severityIndex: int


class Summary(Model):
    risk: str
    riskLevel: int | None = None
    flags: list[Flag] = []


class HoneypotResult(Model):
    isHoneypot: bool
    honeypotReason: str | None = None


class Limit(Model):
    token: Number
    tokenWei: str
    withToken: Number
    withTokenWei: str


class SimulationResult(Model):
    maxBuy: Limit | None = None
    maxSell: Limit | None = None
    buyTax: Number
    sellTax: Number
    transferTax: Number
    buyGas: str
    sellGas: str


class TaxBucket(Model):
    tax: int
    count: int


class HolderAnalysis(Model):
    holders: str
    successful: str
    failed: str
    siphoned: str
    averageTax: Number
    averageGas: Number
    highestTax: Number
    highTaxWallets: str
    taxDistribution: list[TaxBucket]
    snipersFailed: int
    snipersSuccess: int


class ContractCode(Model):
    openSource: bool
    rootOpenSource: bool
    isProxy: bool
    hasProxyCalls: bool


class Chain(Model):
    id: str
    name: str
    shortName: str
    currency: str


class PairRef(Model):
    name: str
    address: str
    token0: str
    token1: str
    type: str


class Pair(Model):
    pair: PairRef
    chainId: str
    reserves0: str
    reserves1: str
    liquidity: Number
    router: str
    createdAtTimestamp: str
    creationTxHash: str


class IsHoneypot(Model):
    token: Token
    withToken: Token
    summary: Summary
    simulationSuccess: bool
    simulationError: str | None = None
    honeypotResult: HoneypotResult | None = None
    simulationResult: SimulationResult | None = None
    holderAnalysis: HolderAnalysis | None = None
    flags: list[str]
    contractCode: ContractCode | None = None
    chain: Chain
    router: str
    pair: Pair
    pairAddress: str


class PairName(Model):
    Name: str
    Tokens: list[str]
    Address: str


class PairItem(Model):
    ChainID: int
    Pair: PairName
    Reserves: list[Number]
    Liquidity: Number
    Router: str
    CreatedAtTimestamp: int | None = None
    CreationTxHash: str | None = None


class VerificationSummary(Model):
    isOpenSource: bool
    hasProxyCalls: bool


class ContractVerification(Model):
    isContract: bool
    isRootOpenSource: bool
    fullCheckPerformed: bool
    summary: VerificationSummary | None = None
    contractsOpenSource: dict[str, bool] | None = None
    contractCalls: list[dict[str, Any]] | None = None


class Holder(Model):
    address: str
    balance: str
    alias: str
    isContract: bool


class TopHolders(Model):
    totalSupply: str
    holders: list[Holder]


class ErrorBody(Model):
    code: int
    error: str


M = TypeVar("M")


class ApiError(Exception):
    """A non-2xx answer: its status and the parsed error body."""

    def __init__(self, status: int, body: ErrorBody) -> None:
        super().__init__(f"{status}: {body.error}")
        self.status = status
        self.body = body


class Client:
    """The four endpoints, parsed into the models above (raises ApiError on non-2xx)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def is_honeypot(self, address: str, chain_id: int | None = None) -> IsHoneypot:
        return await self._get("/v2/IsHoneypot", IsHoneypot, address=address, chainID=chain_id)

    async def get_pairs(self, address: str, chain_id: int | None = None) -> list[PairItem]:
        return await self._get("/v1/GetPairs", list[PairItem], address=address, chainID=chain_id)

    async def contract_verification(
        self, address: str, chain_id: int | None = None
    ) -> ContractVerification:
        path = "/v2/GetContractVerification"
        return await self._get(path, ContractVerification, address=address, chainID=chain_id)

    async def top_holders(self, address: str, chain_id: int) -> TopHolders:
        return await self._get("/v1/TopHolders", TopHolders, address=address, chainID=chain_id)

    async def _get(self, path: str, kind: type[M] | Any, **params: Any) -> M:
        query = {k: v for k, v in params.items() if v is not None}
        response = await self.http.get(path, params=query)
        if response.status_code >= 300:
            error = TypeAdapter(ErrorBody).validate_json(response.content)
            raise ApiError(response.status_code, error)
        adapter: TypeAdapter[M] = TypeAdapter(kind)
        return adapter.validate_json(response.content)

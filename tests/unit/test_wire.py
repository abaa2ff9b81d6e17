"""Wire shapes: rendered responses against hand-written golden JSON (tests/unit/golden).

The goldens pin field names, string-vs-number types and absent-not-null; the
comparison is type-strict (``1`` is not ``"1"``, ``true`` is not ``1``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsontypes import json_type

from tokenrisk import risk
from tokenrisk.api import wire
from tokenrisk.chain.registry import BaseToken, Chain
from tokenrisk.model import (
    Analysis,
    CodeReport,
    ContractCall,
    HolderStats,
    Limit,
    Pool,
    SimulationReport,
    TaxBucket,
    TokenInfo,
)

GOLDEN = Path(__file__).with_name("golden")

WETH_ADDRESS = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
USDC_ADDRESS = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
V2_ROUTER = "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"
V3_ROUTER = "0xE592427A0AEce92De3Edee1F18E0157C05861564"

CHAIN = Chain(
    id=1,
    name="Ethereum",
    short_name="ETH",
    currency="ETH",
    wrapped_native=BaseToken(WETH_ADDRESS, "WETH", 18),
    stablecoins=(BaseToken(USDC_ADDRESS, "USDC", 6, stable=True),),
)
WETH = TokenInfo(WETH_ADDRESS, "Wrapped Ether", "WETH", 18)
USDC = TokenInfo(USDC_ADDRESS, "USD Coin", "USDC", 6)


def v2_pool(token0: str, token1: str, **extra: Any) -> Pool:
    values: dict[str, Any] = {
        "address": "0x3333333333333333333333333333333333333333",
        "dex": "Uniswap",
        "version": "V2",
        "token0": token0,
        "token1": token1,
        "base_token": WETH_ADDRESS,
        "router": V2_ROUTER,
        "reserves0": 500_000 * 10**18,
        "reserves1": 50 * 10**18,
        "liquidity_usd": 300_000.123,
        "chain_id": 1,
    }
    return Pool(**(values | extra))


# FIXTURES

HONEST_TOKEN = TokenInfo(
    "0x1111111111111111111111111111111111111111", "Honest Token", "HONEST", 18, 10**27, 250
)
HONEST = Analysis(
    token=HONEST_TOKEN,
    with_token=WETH,
    pool=v2_pool(
        HONEST_TOKEN.address,
        WETH_ADDRESS,
        created_at_timestamp=1767225600,
        creation_tx_hash="0x" + "ab" * 32,
    ),
    simulation=SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=True,
        sell_ok=True,
        buy_tax=0.0,
        sell_tax=0.0,
        transfer_tax=0.0,
        buy_gas=111_234,
        sell_gas=118_765,
    ),
    holders=HolderStats(
        analysed=10,
        successful=10,
        failed=0,
        siphoned=0,
        average_tax=0.0,
        average_gas=118_000.456,
        highest_tax=0.0,
        high_tax_wallets=0,
        tax_distribution=(TaxBucket(0, 10),),
    ),
    code=CodeReport(root_open_source=True, open_source=True, is_proxy=False, has_proxy_calls=False),
)

TRAP_TOKEN = TokenInfo(
    "0xdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdD", "Trap Token", "TRAP", 18, None, 40
)
HONEYPOT = Analysis(
    token=TRAP_TOKEN,
    with_token=WETH,
    pool=v2_pool(
        WETH_ADDRESS,
        TRAP_TOKEN.address,
        reserves0=10**18,
        reserves1=10**24,
        liquidity_usd=1234.5,
    ),
    simulation=SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=True,
        sell_ok=False,
        failure_step="sell",
        failure_reason="execution reverted: Blacklisted",
        buy_tax=0.0,
        transfer_tax=0.0,
        buy_gas=150_000,
    ),
    holders=HolderStats(
        analysed=12,
        successful=2,
        failed=10,
        siphoned=0,
        average_tax=0.0,
        average_gas=120_000.0,
        highest_tax=0.0,
        high_tax_wallets=0,
        tax_distribution=(TaxBucket(0, 2),),
    ),
    code=CodeReport(
        root_open_source=False, open_source=False, is_proxy=False, has_proxy_calls=False
    ),
)

DRY_TOKEN = TokenInfo("0x5555555555555555555555555555555555555555", "Dry Token", "DRY", 9)
FAILED_SIMULATION = Analysis(
    token=DRY_TOKEN,
    with_token=WETH,
    pool=v2_pool(
        DRY_TOKEN.address, WETH_ADDRESS, reserves0=1000, reserves1=2000, liquidity_usd=12.3456
    ),
    simulation=SimulationReport(success=False, error="insufficient liquidity for a trade"),
)

LONELY = TokenInfo("0x9999999999999999999999999999999999999999", "Lonely", "LONE", 18, None, 3)

PROXY_TOKEN = TokenInfo(
    "0x6666666666666666666666666666666666666666", "Proxy Token", "PRXY", 9, 10**18, 1200
)
PROXY_WITH_LIMITS = Analysis(
    token=PROXY_TOKEN,
    with_token=USDC,
    pool=v2_pool(
        PROXY_TOKEN.address,
        USDC_ADDRESS,
        address="0x7777777777777777777777777777777777777777",
        version="V3",
        fee=3000,
        base_token=USDC_ADDRESS,
        router=V3_ROUTER,
        reserves0=2_000_000 * 10**9,
        reserves1=5_000 * 10**6,
        liquidity_usd=10_000.0,
    ),
    simulation=SimulationReport(
        success=True,
        buy_ok=True,
        transfer_ok=True,
        sell_ok=True,
        buy_tax=5.0,
        sell_tax=10.004,
        transfer_tax=0.0,
        buy_gas=180_500,
        sell_gas=190_250,
        max_buy=Limit(token_wei=1_000_000 * 10**9, with_token_wei=2_500_000_000),
        max_sell=Limit(token_wei=400_000 * 10**9, with_token_wei=987_654_321),
        max_sell_fraction=0.8,
    ),
    holders=HolderStats(
        analysed=25,
        successful=24,
        failed=1,
        siphoned=0,
        average_tax=10.0,
        average_gas=150_000.0,
        highest_tax=12.5,
        high_tax_wallets=0,
        tax_distribution=(TaxBucket(10, 23), TaxBucket(12, 1)),
    ),
    code=CodeReport(root_open_source=True, open_source=True, is_proxy=True, has_proxy_calls=True),
)

GATE_TOKEN = TokenInfo("0x8888888888888888888888888888888888888888", "Gate Token", "GATE", 18)
HOLDERS_ONLY_HONEYPOT = Analysis(
    token=GATE_TOKEN,
    with_token=WETH,
    pool=v2_pool(GATE_TOKEN.address, WETH_ADDRESS, liquidity_usd=2000.0),
    simulation=SimulationReport(
        success=True, failure_step="buy", failure_reason="execution reverted: Trading not enabled"
    ),
    holders=HolderStats(
        analysed=20,
        successful=2,
        failed=18,
        siphoned=0,
        average_tax=0.0,
        average_gas=0.0,
        highest_tax=0.0,
        high_tax_wallets=0,
    ),
)

HONEYPOT_CASES = {
    "honest": HONEST,
    "honeypot": HONEYPOT,
    "failed_simulation": FAILED_SIMULATION,
    "proxy_with_limits": PROXY_WITH_LIMITS,
    "holders_only_honeypot": HOLDERS_ONLY_HONEYPOT,
}


def render(subject: Analysis) -> dict[str, Any]:
    return wire.dump(wire.honeypot_response(subject, risk.assess(subject), CHAIN))


@dataclass(frozen=True)
class Holder:
    address: str
    balance: int
    is_contract: bool


def other_dumps() -> dict[str, Any]:
    """Every non-IsHoneypot golden case, rendered and dumped."""
    assert PROXY_WITH_LIMITS.pool is not None and HONEST.pool is not None
    calls = (
        ContractCall(PROXY_TOKEN.address, "0x" + "aa" * 20, "DELEGATECALL", "0xa9059cbb"),
        ContractCall(V3_ROUTER, PROXY_TOKEN.address, "CALL", None),
    )
    code = CodeReport(
        root_open_source=True,
        open_source=False,
        is_proxy=True,
        has_proxy_calls=True,
        contracts_open_source={PROXY_TOKEN.address: True, "0x" + "aa" * 20: False},
        calls=calls,
    )
    holders = [
        Holder("0x" + "12" * 20, 6 * 10**26, False),
        Holder(HONEST.pool.address, 4 * 10**26, True),
    ]
    return {
        "pairs": wire.dump_all(
            [
                wire.pair_item(HONEST.pool, 1, ("HONEST", "WETH")),
                wire.pair_item(PROXY_WITH_LIMITS.pool, 1, ("PRXY", "USDC")),
            ]
        ),
        "verification_full": wire.dump(wire.verification_response(True, True, code)),
        "verification_partial": wire.dump(wire.verification_response(True, False, None)),
        "top_holders": wire.dump(wire.top_holders_response(10**27, holders)),
        "error": wire.dump(wire.error_body(400, "invalid address: 0x12")),
        "no_pair": wire.dump(
            wire.error_body(404, "No pairs found", "no pool of this token on Uniswap V2", LONELY)
        ),
    }


# COMPARISON


def assert_same_json(actual: Any, expected: Any, path: str = "$") -> None:
    """Deep equality where JSON types must match too (bool/number/string/null/array/object)."""
    assert json_type(actual) == json_type(expected), f"{path}: {actual!r} vs {expected!r}"
    if isinstance(expected, dict):
        assert set(actual) == set(expected), f"{path}: keys {sorted(actual)} vs {sorted(expected)}"
        for key in expected:
            assert_same_json(actual[key], expected[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} vs {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same_json(a, e, f"{path}[{index}]")
    else:
        assert actual == expected, f"{path}: {actual!r} vs {expected!r}"


def golden(name: str) -> Any:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def nulls(value: Any, path: str = "$") -> list[str]:
    """Paths of every None anywhere in a JSON-like value."""
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in nulls(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in nulls(v, f"{path}[{i}]")]
    return []


# TESTS


@pytest.mark.parametrize("name", sorted(HONEYPOT_CASES))
def test_is_honeypot_matches_golden(name: str) -> None:
    assert_same_json(render(HONEYPOT_CASES[name]), golden(name))


@pytest.mark.parametrize(
    "name",
    ["pairs", "verification_full", "verification_partial", "top_holders", "error", "no_pair"],
)
def test_other_responses_match_golden(name: str) -> None:
    assert_same_json(other_dumps()[name], golden(name))


def test_no_value_anywhere_is_null() -> None:
    dumps = [render(a) for a in HONEYPOT_CASES.values()] + list(other_dumps().values())
    assert [p for d in dumps for p in nulls(d)] == []


def test_goldens_are_all_used() -> None:
    used = set(HONEYPOT_CASES) | set(other_dumps())
    assert {p.stem for p in GOLDEN.glob("*.json")} == used


@pytest.mark.parametrize("name", sorted(HONEYPOT_CASES))
def test_spec_rules_hold(name: str) -> None:
    body = render(HONEYPOT_CASES[name])
    summary = body["summary"]
    assert "risk" in summary  # Rule 1
    assert ("riskLevel" in summary) == (summary["risk"] != "unknown")
    if not body["simulationSuccess"]:  # Rule 2
        assert isinstance(body["simulationError"], str) and body["simulationError"]
    else:  # Rule 3
        assert "simulationError" not in body
        assert {"honeypotResult", "simulationResult"} <= set(body)
    honeypot = body.get("honeypotResult", {})
    assert ("honeypotReason" in honeypot) == bool(honeypot.get("isHoneypot"))


def test_a_blocked_buy_is_a_simulation_error_not_a_honeypot_by_itself() -> None:
    blocked = Analysis(
        GATE_TOKEN, WETH, HOLDERS_ONLY_HONEYPOT.pool, HOLDERS_ONLY_HONEYPOT.simulation
    )
    body = render(blocked)
    assert body["simulationSuccess"] is False
    assert body["simulationError"] == "buy failed: execution reverted: Trading not enabled"
    assert "honeypotResult" not in body and body["summary"] == {"risk": "unknown", "flags": []}


def test_limits_are_scaled_by_each_tokens_decimals() -> None:
    limit = wire.limit_amount(Limit(token_wei=123_456_789, with_token_wei=10**18 + 1), 9, 18)
    assert wire.dump(limit) == {
        "token": 0.123456789,
        "tokenWei": "123456789",
        "withToken": 1.0,
        "withTokenWei": "1000000000000000001",
    }


def test_openapi_schema_has_descriptions_and_no_nullable_fields() -> None:
    models: list[type[wire.WireModel]] = [
        wire.IsHoneypotResponse,
        wire.PairItem,
        wire.ContractVerificationResponse,
        wire.TopHoldersResponse,
        wire.ErrorBody,
    ]
    for model in models:
        schema = model.model_json_schema(mode="serialization")
        text = json.dumps(schema)
        assert '"null"' not in text
        for definition in [schema, *schema.get("$defs", {}).values()]:
            for name, prop in definition["properties"].items():
                assert prop.get("description"), f"{definition['title']}.{name}"


def test_contract_call_serialises_from_and_reads_it_back() -> None:
    item = wire.contract_call_item(ContractCall("0xa", "0xb", "CALL", None))
    dumped = wire.dump(item)
    assert dumped == {"from": "0xa", "to": "0xb", "type": "CALL"}
    assert wire.ContractCallItem.model_validate(dumped) == item


def test_unknown_usd_liquidity_is_absent_and_explained_never_zero() -> None:
    pool = v2_pool(HONEST_TOKEN.address, WETH_ADDRESS, liquidity_usd=None)
    info = wire.dump(wire.pair_info(pool, 1, ("HONEST", "WETH")))
    assert "liquidity" not in info
    assert info["liquidityUnknown"] == wire.UNKNOWN_PRICE
    item = wire.dump(wire.pair_item(pool, 1, ("HONEST", "WETH")))
    assert "Liquidity" not in item and item["LiquidityUnknown"] == wire.UNKNOWN_PRICE
    priced = wire.dump(wire.pair_info(v2_pool(HONEST_TOKEN.address, WETH_ADDRESS), 1, ("A", "B")))
    assert priced["liquidity"] == 300_000.12 and "liquidityUnknown" not in priced


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (100.0, "100"),
        (9.71, "9.71"),
        (-1.0, "-1"),
        (5e20, "500000000000000000000"),
        (1e21, "1e+21"),
        (3.850715746797582e26, "3.850715746797582e+26"),
    ],
)
def test_numbers_are_written_as_the_live_api_writes_them(value: float, expected: str) -> None:
    assert json.dumps(wire.go_number(value)) == expected


def test_a_blocked_step_reports_tax_100_and_gas_0() -> None:
    body = render(HONEYPOT)
    assert body["simulationResult"] == {
        "buyTax": 0,
        "sellTax": 100,
        "transferTax": 0,
        "buyGas": "150000",
        "sellGas": "0",
    }

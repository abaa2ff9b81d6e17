"""The drop-in renderers, without a node: the legacy v1 shapes (api/compat/legacy.py) and the
GoPlus entry (api/compat/goplus.py) from hand-made typed results, and the selfdestruct scan."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tokenrisk import risk
from tokenrisk.api.compat import goplus, legacy
from tokenrisk.api.compat.goplus import Facts, People, has_selfdestruct
from tokenrisk.chain.registry import BaseToken, Chain
from tokenrisk.checks.results import (
    HolderBalance,
    HoneypotResult,
    PairRow,
    TopHoldersResult,
    VerificationResult,
)
from tokenrisk.findings import Caller, OwnerPowers, PowerFinding
from tokenrisk.model import (
    Analysis,
    CodeReport,
    ContractCall,
    Limit,
    Pool,
    SimulationReport,
    TokenInfo,
)

WETH_ADDRESS = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
TOKEN_ADDRESS = "0x1111111111111111111111111111111111111111"
OWNER = "0x2222222222222222222222222222222222222222"
KEEPER = "0x4444444444444444444444444444444444444444"
CHAIN = Chain(1, "Ethereum", "ETH", "ETH", BaseToken(WETH_ADDRESS, "WETH", 18))
TOKEN = TokenInfo(TOKEN_ADDRESS, "Test", "TST", 18, 1000 * 10**18, 42)
WETH = TokenInfo(WETH_ADDRESS, "Wrapped Ether", "WETH", 18)
POOL = Pool(
    address="0x3333333333333333333333333333333333333333",
    dex="Uniswap",
    version="V2",
    token0=TOKEN_ADDRESS,
    token1=WETH_ADDRESS,
    base_token=WETH_ADDRESS,
    router="0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D",
    reserves0=500 * 10**18,
    reserves1=5 * 10**18,
    liquidity_usd=None,
    chain_id=1,
)
SIM = SimulationReport(
    success=True,
    buy_ok=True,
    transfer_ok=True,
    sell_ok=True,
    buy_tax=0.0,
    sell_tax=5.0,
    transfer_tax=0.0,
    buy_gas=110_000,
    sell_gas=120_000,
    max_buy=Limit(10 * 10**18, 10**17),
)


def result(sim: SimulationReport | None = SIM, **extra: Any) -> HoneypotResult:
    analysis = Analysis(token=TOKEN, with_token=WETH, pool=POOL, simulation=sim, **extra)
    return HoneypotResult(analysis, risk.assess(analysis), CHAIN)


# LEGACY V1


def test_legacy_honeypot_has_every_v1_field_with_its_type() -> None:
    body = legacy.dump(legacy.honeypot_body(result()))
    assert body["Token"] == {
        "Name": "Test",
        "Symbol": "TST",
        "Decimals": 18,
        "Address": TOKEN_ADDRESS,
    }
    assert body["Chain"] == {"ID": 1, "Name": "Ethereum", "ShortName": "eth", "Currency": "ETH"}
    assert (body["BuyTax"], body["SellTax"], body["BuyGas"], body["SellGas"]) == (
        0,
        5,
        110000,
        120000,
    )
    assert isinstance(body["BuyTax"], int)  # a whole number is a JSON integer, never 0.0
    assert body["MaxBuy"] == 10 and body["MaxSell"] is None  # null is sent, not omitted
    assert body["IsHoneypot"] is False and body["Error"] is None
    assert body["PairAddress"] == POOL.address and body["Pair"]["Pair"]["Address"] == POOL.address
    assert "Liquidity" not in body["Pair"]  # unknown: omitted as GetPairs omits it, never 0


def test_legacy_honeypot_without_a_simulation_says_why() -> None:
    body = legacy.dump(legacy.honeypot_body(result(None)))
    assert body["Error"] == "simulation not run"
    assert (body["BuyTax"], body["SellGas"]) == (0, 0)


def test_legacy_verification_claims_nothing_untraced() -> None:
    untraced = legacy.verification_body(VerificationResult(True, True, None))
    assert legacy.dump(untraced) == {
        "HasProxyCalls": False,
        "Contracts": {},
        "FullCheckPerformed": False,
    }
    code = CodeReport(True, False, False, True, {TOKEN_ADDRESS: True, OWNER: False})
    traced = legacy.dump(legacy.verification_body(VerificationResult(True, True, code)))
    assert traced["HasProxyCalls"] is True and traced["Contracts"][OWNER] is False


# GOPLUS


def facts(checked: HoneypotResult | None, **people: Any) -> Facts:
    top = TopHoldersResult(1000 * 10**18, (HolderBalance(OWNER, 250 * 10**18, False),))
    return Facts(
        token=TOKEN,
        result=checked,
        pairs=(PairRow(POOL, ("TST", "WETH")),) if checked else (),
        holders=top,
        lp_holders=None,
        lp_holder_count=None,
        people=People(**people),
    )


def scan(*findings: PowerFinding, bounded: bool = False) -> OwnerPowers:
    return OwnerPowers(
        scanned=True,
        owner=OWNER,
        callers=(Caller(OWNER, ("owner()",)),),
        findings=findings,
        bounded=bounded,
    )


def finding(kind: str, caller: str = OWNER) -> PowerFinding:
    return PowerFinding(kind, "f()", "0x12345678", caller, (), (), "detail")


def entry(f: Facts) -> dict[str, Any]:
    return goplus.token_security(f).model_dump(mode="json", exclude_none=True)


def test_goplus_taxes_are_fractions_and_amounts_token_units() -> None:
    got = entry(facts(result(), creator=OWNER, balances={OWNER.lower(): 250 * 10**18}))
    assert (got["buy_tax"], got["sell_tax"], got["cannot_buy"], got["cannot_sell_all"]) == (
        "0",
        "0.05",
        "0",
        "0",
    )
    assert got["total_supply"] == "1000" and got["holder_count"] == "42"
    assert got["holders"] == [
        {"address": OWNER.lower(), "tag": "", "is_contract": 0, "balance": "250", "percent": "0.25"}
    ]
    assert got["creator_address"] == OWNER.lower() and got["creator_percent"] == "0.25"
    assert got["is_anti_whale"] == "1" and "trading_cooldown" not in got
    assert got["dex"] == [{"name": "UniswapV2", "pair": POOL.address}]  # liquidity unknown
    assert "is_mintable" not in got  # the owner-power scan did not run: unknown, not "0"


def test_goplus_a_reverted_sell_cannot_sell_all() -> None:
    sim = replace(SIM, sell_ok=False, sell_tax=None)
    got = entry(facts(result(sim)))
    assert (got["sell_tax"], got["cannot_sell_all"], got["is_honeypot"]) == ("1", "1", "1")


def test_goplus_owner_powers_become_flags() -> None:
    powers = scan(finding("owner_can_mint"), finding("owner_can_pause_trading", KEEPER))
    got = entry(facts(result(owner_powers=powers)))
    assert (got["is_mintable"], got["transfer_pausable"], got["is_blacklisted"]) == ("1", "1", "0")
    assert got["hidden_owner"] == "1"  # the keeper, not owner(), could pause
    assert got["owner_address"] == OWNER.lower()
    cut = entry(facts(result(owner_powers=scan(finding("owner_can_mint"), bounded=True))))
    assert cut["is_mintable"] == "1" and "is_blacklisted" not in cut  # not "0" after a cut scan


def test_goplus_call_tree_and_verification() -> None:
    calls = (ContractCall(TOKEN_ADDRESS, KEEPER, "CALL", "0xa9059cbb"),)
    code = CodeReport(False, False, False, False, {TOKEN_ADDRESS: False}, calls)
    got = entry(facts(result(code=code)))
    assert (got["is_open_source"], got["is_proxy"], got["external_call"]) == ("0", "0", "1")


def test_goplus_a_token_without_pool_has_its_own_facts_only() -> None:
    got = entry(facts(None, code="0x6080"))
    assert got["is_in_dex"] == "0" and got["dex"] == []
    assert "is_honeypot" not in got and "buy_tax" not in got and got["selfdestruct"] == "0"


def test_selfdestruct_is_an_instruction_not_push_data() -> None:
    assert has_selfdestruct("0x6000ff")  # PUSH1 0x00, SELFDESTRUCT
    assert not has_selfdestruct("0x60ff00")  # PUSH1 0xff, STOP
    assert not has_selfdestruct("0x7f" + "ff" * 32)  # PUSH32 of 0xff bytes
    assert has_selfdestruct("0x7f" + "ff" * 32 + "ff")


# THE GOPLUS ROUTE'S GATE AND ERRORS (no node: the checks are never reached)


async def test_goplus_route_keys_limits_and_codes() -> None:
    import httpx

    from tokenrisk.api.app import create_app
    from tokenrisk.chain.node import Node, Nodes
    from tokenrisk.checks.deps import HolderIndex
    from tokenrisk.config import Settings
    from tokenrisk.store.engine import create_store

    class Service:
        store = create_store("sqlite://")
        processes: list[Any] = []
        nodes = Nodes({1: Node(CHAIN, None)})  # type: ignore[arg-type]
        index = HolderIndex(store)

    settings = Settings(devnet=False, api_keys=frozenset({"k1"}), rate_limit_per_minute=3)
    app = create_app(settings, Service())  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    path = "/api/v1/token_security/{}"
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        refused = await http.get(path.format(1), params={"contract_addresses": TOKEN_ADDRESS})
        assert refused.status_code == 401 and refused.json()["code"] == 4010
        assert refused.json()["result"] is None
        bearer = {"Authorization": "Bearer k1"}  # GoPlus's header, as its SDKs send it
        chain = await http.get(
            path.format(56), params={"contract_addresses": TOKEN_ADDRESS}, headers=bearer
        )
        assert (chain.status_code, chain.json()["code"]) == (200, goplus.CHAIN_NOT_SUPPORTED)
        bad = await http.get(path.format(1), params={"contract_addresses": "0x12"}, headers=bearer)
        assert (bad.status_code, bad.json()["code"]) == (200, goplus.ADDRESS_FORMAT_ERROR)
        empty = await http.get(path.format(1), params={"contract_addresses": ""}, headers=bearer)
        assert (empty.status_code, empty.json()["code"]) == (200, goplus.PARAM_ERROR)
        limited = await http.get(path.format(1), params={"contract_addresses": ""}, headers=bearer)
        assert limited.status_code == 429 and limited.json()["code"] == 4029  # 3 a minute
        assert "Retry-After" in limited.headers
        doc = (await http.get("/openapi.json")).json()  # no key, no rate limit
    gp = doc["paths"]["/api/v1/token_security/{chain_id}"]["get"]
    assert gp["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/TokenSecurityResponse"
    )
    assert {p["name"] for p in gp["parameters"]} >= {"chain_id", "contract_addresses"}
    v1 = doc["paths"]["/v1/IsHoneypot"]["get"]
    assert v1["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/LegacyHoneypotResponse"
    )
    assert {"MaxBuy", "BuyGas", "PairAddress"} <= set(
        doc["components"]["schemas"]["LegacyHoneypotResponse"]["properties"]
    )


async def test_mcp_mount_serves_each_lifespan_and_leaves_logging_alone() -> None:
    """``/mcp`` answers 503 outside a lifespan and the tools in each of two lifespans
    (a session manager runs once); building the server adds no root log handler."""
    import logging

    import httpx
    from fastapi import FastAPI

    from tokenrisk.api.compat.mcp import Api, build_server, mount_http

    root = logging.getLogger()
    kept, root.handlers = root.handlers, []  # as in `tokenrisk serve`: no root handler
    try:
        build_server(Api(FastAPI(), "key"))
        assert root.handlers == []  # MCPServer's basicConfig did nothing
    finally:
        root.handlers = kept
    app = FastAPI()
    mount_http(app)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        assert (await http.post("/mcp", json=listing, headers=headers)).status_code == 503
        for _ in range(2):
            async with app.router.lifespan_context(app):
                reply = await http.post("/mcp", json=listing, headers=headers)
                tools = {t["name"] for t in reply.json()["result"]["tools"]}
                assert tools == {"check_token", "get_pairs", "top_holders", "contract_verification"}


def test_the_mcp_http_mount_follows_its_config_key() -> None:
    """``mcp_http`` (default on) mounts the MCP tools at /mcp; off, the path is not served
    (stdio ``tokenrisk mcp`` is unaffected)."""
    from tokenrisk.api.app import create_app
    from tokenrisk.api.compat.mcp import MOUNT_PATH
    from tokenrisk.config import Settings

    def paths(settings: Settings) -> set[str]:
        app = create_app(settings, None)
        return {str(getattr(route, "path", "")) for route in app.router.routes}

    assert MOUNT_PATH in paths(Settings(devnet=False))
    assert MOUNT_PATH not in paths(Settings(devnet=False, mcp_http=False))

"""The typed client (``typed_client.py``) against tokenrisk: every catalogue token on every
endpoint, the no-pair 404, error cases, HEAD and CORS, over real HTTP to one server.

A response that a strictly typed client of the live API cannot parse fails here: a
missing required field, ``0.0`` for an integer, a string for a number.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from typed_client import ApiError, Client, ContractVerification, IsHoneypot, PairItem, TopHolders

pytestmark = pytest.mark.integration

CHAIN = 31337
CATALOGUE = Path("src/tokenrisk/devnet/catalogue.json")
IDS = [t["id"] for t in json.loads(CATALOGUE.read_text())["tokens"]]
T = TypeVar("T")


@pytest.fixture(scope="module")
async def http(server_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server_url, timeout=120.0) as client:
        yield client


async def _outcome(call: Awaitable[T]) -> T | ApiError:
    try:
        return await call
    except ApiError as exc:
        return exc


@pytest.fixture(scope="module")
async def answers(
    http: httpx.AsyncClient, catalogue: list[dict[str, Any]]
) -> dict[tuple[str, str], Any]:
    """(token id, endpoint) -> parsed model or ApiError; four requests in flight at most."""
    client, gate = Client(http), asyncio.Semaphore(4)

    async def one(call: Awaitable[Any]) -> Any:
        async with gate:
            return await _outcome(call)

    jobs: dict[tuple[str, str], Awaitable[Any]] = {}
    for entry in catalogue:
        address = entry["address"]
        jobs[(entry["id"], "IsHoneypot")] = one(client.is_honeypot(address, CHAIN))
        jobs[(entry["id"], "GetPairs")] = one(client.get_pairs(address, CHAIN))
        jobs[(entry["id"], "Verification")] = one(client.contract_verification(address, CHAIN))
        jobs[(entry["id"], "TopHolders")] = one(client.top_holders(address, CHAIN))
    results = await asyncio.gather(*jobs.values())
    return dict(zip(jobs, results, strict=True))


def _entry(catalogue: list[dict[str, Any]], entry_id: str) -> dict[str, Any]:
    return next(t for t in catalogue if t["id"] == entry_id)


@pytest.mark.parametrize("entry_id", IDS)
def test_is_honeypot_parses(
    answers: dict[tuple[str, str], Any], catalogue: list[dict[str, Any]], entry_id: str
) -> None:
    entry, answer = _entry(catalogue, entry_id), answers[(entry_id, "IsHoneypot")]
    if not entry["pools"]:
        assert isinstance(answer, ApiError), answer
        assert (answer.status, answer.body.code, answer.body.error) == (404, 404, "No pairs found")
        return
    assert isinstance(answer, IsHoneypot), answer
    assert answer.token.address == entry["address"]
    assert answer.token.decimals == entry["decimals"]
    assert answer.token.totalHolders > 0 and answer.withToken.totalHolders > 0  # devnet: indexed
    assert answer.chain.shortName == answer.chain.shortName.lower()
    dex_name = answer.pair.pair.name.split(": ")[0]  # the devnet's DEXes' display names
    assert dex_name in ("Uniswap V2", "Uniswap V3", "PancakeSwap V3", "DevSwap V2"), dex_name
    assert answer.pair.createdAtTimestamp.isdigit() and answer.pair.creationTxHash.startswith("0x")
    if answer.simulationSuccess:
        assert answer.simulationResult is not None and answer.honeypotResult is not None
        if answer.honeypotResult.isHoneypot and answer.simulationResult.sellGas == "0":
            assert answer.simulationResult.sellTax == 100
    assert answer.holderAnalysis is None or answer.holderAnalysis.snipersFailed >= 0


@pytest.mark.parametrize("entry_id", IDS)
def test_get_pairs_parses(
    answers: dict[tuple[str, str], Any], catalogue: list[dict[str, Any]], entry_id: str
) -> None:
    entry, answer = _entry(catalogue, entry_id), answers[(entry_id, "GetPairs")]
    assert isinstance(answer, list) and all(isinstance(p, PairItem) for p in answer), answer
    assert sorted(p.Pair.Address for p in answer) == sorted(
        p["address"].lower() for p in entry["pools"]
    )
    for item in answer:
        addresses = [*item.Pair.Tokens, item.Pair.Address, item.Router]
        assert all(a == a.lower() for a in addresses)
        assert item.CreatedAtTimestamp is not None and item.CreationTxHash is not None


@pytest.mark.parametrize("entry_id", IDS)
def test_contract_verification_parses(answers: dict[tuple[str, str], Any], entry_id: str) -> None:
    answer = answers[(entry_id, "Verification")]
    assert isinstance(answer, ContractVerification), answer
    assert answer.isContract
    if answer.fullCheckPerformed:
        assert answer.summary is not None and answer.contractsOpenSource is not None


@pytest.mark.parametrize("entry_id", IDS)
def test_top_holders_parses(answers: dict[tuple[str, str], Any], entry_id: str) -> None:
    answer = answers[(entry_id, "TopHolders")]
    assert isinstance(answer, TopHolders), answer
    assert 0 < len(answer.holders) <= 50 and all(h.alias == "" for h in answer.holders)


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/v2/IsHoneypot", {"address": "0x1234"}, 400),
        ("/v2/IsHoneypot", {}, 400),
        ("/v2/IsHoneypot", {"address": "0x" + "00" * 19 + "aa", "chainID": CHAIN}, 404),
        ("/v2/IsHoneypot", {"address": "0x" + "11" * 20, "router": "nope"}, 400),
        ("/v1/TopHolders", {"address": "0x" + "11" * 20}, 400),
        ("/v1/GetPairs", {"address": "0x" + "11" * 20, "chainID": "x"}, 400),
        ("/v3/IsHoneypot", {}, 404),
    ],
)
async def test_errors_are_code_and_error(
    http: httpx.AsyncClient, path: str, params: dict[str, Any], status: int
) -> None:
    response = await http.get(path, params=params)
    body = response.json()
    assert response.status_code == status == body["code"] and isinstance(body["error"], str)


async def test_v1_paths_answer_the_same_check_in_the_legacy_shape(
    http: httpx.AsyncClient, catalogue: list[dict[str, Any]]
) -> None:
    """``/v1/IsHoneypot`` and ``/v1/GetContractVerification`` run v2's check and answer
    its result in the legacy v1 shape (docs/api.md "Legacy v1 shapes"), with v2's errors."""
    params = {"address": _entry(catalogue, "sell-whitelist")["address"], "chainID": CHAIN}
    v1 = (await http.get("/v1/IsHoneypot", params=params)).json()
    v2 = (await http.get("/v2/IsHoneypot", params=params)).json()
    assert v1["IsHoneypot"] is v2["honeypotResult"]["isHoneypot"] is True
    sim = v2["simulationResult"]
    assert (v1["BuyTax"], v1["SellTax"], v1["TransferTax"]) == (
        sim["buyTax"],
        sim["sellTax"],
        sim["transferTax"],
    )
    assert (v1["BuyGas"], v1["SellGas"]) == (int(sim["buyGas"]), int(sim["sellGas"]))
    assert v1["PairAddress"] == v2["pairAddress"].lower() and v1["Flags"] == v2["flags"]
    params = {"address": _entry(catalogue, "plain")["address"], "chainID": CHAIN}
    v1 = (await http.get("/v1/GetContractVerification", params=params)).json()
    v2 = (await http.get("/v2/GetContractVerification", params=params)).json()
    assert v1["Contracts"] == v2["contractsOpenSource"] and v1["FullCheckPerformed"] is True
    assert v1["HasProxyCalls"] is v2["summary"]["hasProxyCalls"]
    for name in ("IsHoneypot", "GetContractVerification"):
        bad = {"address": "0x1234", "chainID": CHAIN}
        old = await http.get(f"/v1/{name}", params=bad)
        new = await http.get(f"/v2/{name}", params=bad)
        assert old.status_code == new.status_code == 400 and old.json() == new.json()


async def test_head_is_answered_like_get(
    http: httpx.AsyncClient, catalogue: list[dict[str, Any]]
) -> None:
    params = {"address": _entry(catalogue, "plain")["address"], "chainID": CHAIN}
    for path in ("/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders", "/health"):
        get, head = await http.get(path, params=params), await http.head(path, params=params)
        assert head.status_code == get.status_code == 200, path
        assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]
        assert head.headers["content-length"] == str(len(get.content)), path
    missing = await http.head("/v2/IsHoneypot")
    assert missing.status_code == 400 and missing.content == b""


async def test_cors_is_permissive_and_preflight_answered(
    http: httpx.AsyncClient, catalogue: list[dict[str, Any]]
) -> None:
    origin = {"Origin": "https://dashboard.example"}
    params = {"address": _entry(catalogue, "plain")["address"], "chainID": CHAIN}
    simple = await http.get("/v1/GetPairs", params=params, headers=origin)
    assert simple.headers["access-control-allow-origin"] == "*"
    preflight = await http.options(
        "/v2/IsHoneypot",
        headers=origin
        | {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-api-key"},
    )
    assert preflight.status_code == 200
    assert "GET" in preflight.headers["access-control-allow-methods"]
    assert "x-api-key" in preflight.headers["access-control-allow-headers"].lower()
    error = await http.get("/v2/IsHoneypot", params={"address": "0x12"}, headers=origin)
    assert error.status_code == 400 and error.headers["access-control-allow-origin"] == "*"

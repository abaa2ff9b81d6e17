"""Real-world mechanisms through HTTP: what a seller really loses, and no wolf cried.

Each token's ground truth was measured by mined transactions during the devnet build
(``groundTruth`` in the manifest, see ``tokenrisk.devnet.groundtruth``); the service's
simulated answers must agree with it: the effective taxes within 1 point, the token-unit
taxes within 1 point, and the verdict, flags and risk of the catalogue entry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

NEW_TOKENS = (
    "swapback-tax",
    "swapback-honeypot",
    "fee-raise",
    "rfi",
    "rebasing",
    "silent-transfer",
    "whale-2e112",
    "unverified-honest",
)
HONEST_WITHOUT_PROVIDER = ("plain", "fot-3", "reflection", "rfi", "rebasing", "unverified-honest")
POINT = 1.0


@asynccontextmanager
async def api_client(
    devnet: Any, tmp: pytest.TempPathFactory, sources_dir: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """An in-process API on the devnet whose local verification registry is in ``sources_dir``."""
    settings = Settings(devnet=False, data_dir=tmp.mktemp("fidelity"), deadline=60.0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, sources_dir)
    app = create_app(svc.settings, svc)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http
    await svc.close()


@pytest.fixture(scope="module")
async def client(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    async with api_client(devnet, tmp_path_factory, Path(devnet.manifest_path).parent) as http:
        yield http


@pytest.fixture(scope="module")
async def no_provider_client(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    """A service with no verification source at all (no local registry, no explorer)."""
    async with api_client(devnet, tmp_path_factory, tmp_path_factory.mktemp("empty")) as http:
        yield http


def entry(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


async def honeypot(http: httpx.AsyncClient, address: str) -> dict[str, Any]:
    response = await http.get("/v2/IsHoneypot", params={"address": address, "chainID": 31337})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def near(value: float | None, truth: float | None, what: str) -> None:
    assert value is not None and truth is not None, (what, value, truth)
    assert abs(value - truth) <= POINT, f"{what}: {value} vs mined {truth}"


@pytest.mark.parametrize("token_id", NEW_TOKENS)
async def test_new_mechanism_matches_mined_ground_truth(
    client: httpx.AsyncClient, devnet: Any, token_id: str
) -> None:
    token = entry(devnet, token_id)
    truth, expected = token["groundTruth"], token["expected"]
    body = await honeypot(client, token["address"])
    flags = {f["flag"] for f in body["summary"]["flags"]}
    assert body["summary"]["risk"] in expected["risk"], (body["summary"], body.get("taxDetails"))
    assert set(expected["flags"]) <= flags, (flags, body.get("taxDetails"))
    assert body["honeypotResult"]["isHoneypot"] is expected["isHoneypot"], body["honeypotResult"]
    assert truth["sellOk"] is True
    sim, details = body["simulationResult"], body["taxDetails"]
    for leg in ("buy", "sell", "transfer"):
        near(sim[f"{leg}Tax"], truth[f"{leg}TaxEffective"], f"{leg} effective")
        assert details[leg]["effective"] == sim[f"{leg}Tax"]
        near(details[leg]["tokenUnit"], truth[f"{leg}TaxTokenUnit"], f"{leg} token units")


async def test_swap_back_wallets_are_not_contracts(client: httpx.AsyncClient, devnet: Any) -> None:
    token = entry(devnet, "swapback-tax")
    response = await client.get(
        "/v2/GetContractVerification", params={"address": token["address"], "chainID": 31337}
    )
    body = response.json()
    assert body["fullCheckPerformed"] is True, body
    calls = {c["to"] for c in body["contractCalls"]}
    wallets = calls - set(body["contractsOpenSource"])
    assert wallets, "the sell pays ETH to the marketing wallets"
    assert body["summary"]["isOpenSource"] is True
    assert all(body["contractsOpenSource"].values()), body["contractsOpenSource"]
    honest = await honeypot(client, token["address"])
    assert "closed_source" not in {f["flag"] for f in honest["summary"]["flags"]}


async def test_rfi_reads_lower_effective_than_token_unit_sell_tax(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await honeypot(client, entry(devnet, "rfi")["address"])
    sell = body["taxDetails"]["sell"]
    assert sell["tokenUnit"] == pytest.approx(4.0, abs=0.05)
    assert sell["difference"] < -1.0
    assert any("token units" in text for text in body["taxDetails"]["explanation"])


async def test_silent_transfer_is_a_transfer_problem(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await honeypot(client, entry(devnet, "silent-transfer")["address"])
    flag = next(f for f in body["summary"]["flags"] if f["flag"] == "transfer_blocked")
    assert "receiver gets nothing" in flag["description"]
    assert body["taxDetails"]["transfer"] == {
        "effective": 100.0,
        "tokenUnit": 0.0,
        "difference": 100.0,
    }


async def test_holder_above_the_pool_limit_sells_at_the_limit(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await honeypot(client, entry(devnet, "whale-2e112")["address"])
    holders = body["taxDetails"]["holders"]
    assert holders["soldAtPoolLimit"] >= 1
    assert 0 < int(holders["poolLimitWei"]) < 2**112
    assert body["holderAnalysis"]["failed"] == "0", body["holderAnalysis"]


async def test_fee_raise_hits_the_holders_too(client: httpx.AsyncClient, devnet: Any) -> None:
    body = await honeypot(client, entry(devnet, "fee-raise")["address"])
    holders = body["holderAnalysis"]
    assert holders["highestTax"] == pytest.approx(30.0, abs=POINT)  # the exempt owner pays 0
    assert holders["averageTax"] > 25.0


async def test_unknown_verification_is_informational(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = entry(devnet, "unverified-honest")
    body = await honeypot(client, token["address"])
    flag = next(f for f in body["summary"]["flags"] if f["flag"] == "verification_unknown")
    assert flag["severity"] == "info"
    assert body["contractCode"]["verificationUnknown"] == [token["address"]]
    assert body["flags"] == []  # no legacy string for an informational flag
    response = await client.get(
        "/v2/GetContractVerification", params={"address": token["address"], "chainID": 31337}
    )
    verification = response.json()
    assert verification["isRootOpenSource"] is False
    assert token["address"] in verification["verificationUnknown"]


@pytest.mark.parametrize("token_id", HONEST_WITHOUT_PROVIDER)
async def test_honest_tokens_without_a_verification_provider_are_low(
    no_provider_client: httpx.AsyncClient, devnet: Any, token_id: str
) -> None:
    body = await honeypot(no_provider_client, entry(devnet, token_id)["address"])
    flags = {f["flag"] for f in body["summary"]["flags"]}
    assert body["summary"]["risk"] in ("low", "very_low"), body["summary"]
    assert "closed_source" not in flags
    assert "verification_unknown" in flags


async def test_closed_source_still_flagged_with_a_provider_that_knows(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    body = await honeypot(client, entry(devnet, "closed-source")["address"])
    assert "closed_source" in {f["flag"] for f in body["summary"]["flags"]}


async def test_swap_back_dump_costs_the_seller_more_than_the_fee(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    """The contract's own dump right before the sell: the ETH received shows it, the
    seller's Transfer logs do not, and the pair's balance change would hide the fee."""
    token = entry(devnet, "swapback-tax")
    mined = token["groundTruth"]
    assert mined["sellTaxEffective"] - mined["sellTaxTokenUnit"] > 0.5  # the dump happened
    sell = (await honeypot(client, token["address"]))["taxDetails"]["sell"]
    assert sell["tokenUnit"] == pytest.approx(5.0, abs=0.05)
    assert sell["difference"] > 0.5


V4_TOKENS = (
    "v4-plain",
    "v4-hook-fee-1",
    "v4-dynamic-fee-raise",
    "v4-hook-sell-99",
    "v4-hook-swallow",
    "v4-erc20-weth",
)


@pytest.mark.parametrize("token_id", V4_TOKENS)
async def test_v4_hook_taxes_match_mined_ground_truth(
    client: httpx.AsyncClient, devnet: Any, token_id: str
) -> None:
    """A V4 pool's hook fee, returned delta or raised dynamic fee: the simulated taxes
    (Universal Router, Permit2, the pool's curve without its hook as the quote) agree
    with the mined trades through the same router."""
    token = entry(devnet, token_id)
    truth = token["groundTruth"]
    body = await honeypot(client, token["address"])
    assert body["honeypotResult"]["isHoneypot"] is token["expected"]["isHoneypot"]
    assert body["pair"]["pair"]["type"] == "UniswapV4", body["pair"]
    sim, details = body["simulationResult"], body["taxDetails"]
    for leg in ("buy", "sell", "transfer"):
        near(sim[f"{leg}Tax"], truth[f"{leg}TaxEffective"], f"{leg} effective")
        near(details[leg]["tokenUnit"], truth[f"{leg}TaxTokenUnit"], f"{leg} token units")

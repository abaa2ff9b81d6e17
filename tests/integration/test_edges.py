"""Fidelity at the edges (issue #31), through HTTP against the devnet, held against the
trades the build mined (``groundTruth``, see ``tokenrisk.devnet.groundtruth``):

- a pool whose token side was taken away (``pool-drained-tokens``): not "empty"; buys
  fail, the holders' sells decide, and the cause is named;
- a sell that also burns from what the seller keeps (``sell-burn``): both tax figures
  count every token that left the seller;
- a buy nobody can quote (``no-quote-buy``): its tax is the token-unit figure, the
  effective one is stated as not measured, never a 0.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

POINT = 1.0


@pytest.fixture(scope="module")
async def client(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("edges"), deadline=60.0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    app = create_app(svc.settings, svc)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield http
    await svc.close()


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


async def test_a_pool_short_of_tokens_is_a_honeypot_for_holders(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = entry(devnet, "pool-drained-tokens")
    mined = token["groundTruth"]
    assert mined["buyOk"] is False and mined["holderSellOk"] is False  # what really happens
    body = await honeypot(client, token["address"])
    assert body["simulationSuccess"] is False
    assert "empty" not in body["simulationError"]
    assert "below its reserve" in body["simulationError"], body["simulationError"]
    assert body["honeypotResult"]["isHoneypot"] is True
    assert body["honeypotResult"]["honeypotReason"].startswith("holders cannot sell")
    assert body["summary"]["risk"] == "honeypot"
    holders = body["holderAnalysis"]
    assert int(holders["failed"]) >= 0.8 * int(holders["holders"]), holders
    explanation = " ".join(body["taxDetails"]["explanation"])
    assert "token balance (0) is below its reserve" in explanation, explanation
    assert body["pair"]["liquidity"] > 0  # the base side is all there


async def test_a_sell_that_burns_from_the_seller_counts_every_token_it_took(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = entry(devnet, "sell-burn")
    mined = token["groundTruth"]
    assert int(mined["partialSellExtraTaken"]) > 0  # the mined partial sell lost more tokens
    body = await honeypot(client, token["address"])
    sell = body["taxDetails"]["sell"]
    near(body["simulationResult"]["sellTax"], mined["partialSellTaxEffective"], "sell effective")
    near(sell["tokenUnit"], mined["partialSellTaxTokenUnit"], "sell token units")
    assert sell["effective"] == body["simulationResult"]["sellTax"]
    assert any("more tokens from the seller" in t for t in body["taxDetails"]["explanation"])
    assert "medium_tax" in {f["flag"] for f in body["summary"]["flags"]}


async def test_a_buy_without_a_quote_reports_its_token_unit_tax_never_zero(
    client: httpx.AsyncClient, devnet: Any
) -> None:
    token = entry(devnet, "no-quote-buy")
    mined = token["groundTruth"]
    assert mined["buyTaxEffective"] is None  # no quote on the real chain either
    body = await honeypot(client, token["address"])
    buy = body["taxDetails"]["buy"]
    assert "effective" not in buy
    assert buy["notMeasured"]["effective"].startswith("no quote for the amount"), buy
    near(buy["tokenUnit"], mined["buyTaxTokenUnit"], "buy token units")
    assert body["simulationResult"]["buyTax"] == buy["tokenUnit"] != 0
    assert any(u.startswith("buy tax (effective): no quote") for u in body["unchecked"])
    for leg in ("sell", "transfer"):
        near(body["simulationResult"][f"{leg}Tax"], mined[f"{leg}TaxEffective"], leg)

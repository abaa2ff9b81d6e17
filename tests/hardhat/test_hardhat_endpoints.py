"""GetPairs, TopHolders and GetContractVerification on Hardhat's node: answers, no 5xx.

Hardhat's node serves ``eth_getLogs`` over the whole chain and ``debug_traceCall`` with
the callTracer, but ignores ``debug_traceCall``'s state overrides: the verification's
call tree then comes from the pool's transfer of the token (:mod:`tokenrisk.simulate.
probe`), which still shows a proxy's implementation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from hardhatnode import HardhatDevnet
from verdicts import BothJourneys

from tokenrisk.api.app import create_app
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration

CHAIN = 31337


def _entry(devnet: HardhatDevnet, entry_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)


async def _rpc(devnet: HardhatDevnet, method: str, params: list[Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient() as http:
        return (await http.post(devnet.url, json=body)).json()["result"]


async def test_get_pairs_lists_every_pool(
    hardhat_client: httpx.AsyncClient, hardhat_devnet: HardhatDevnet
) -> None:
    entry = _entry(hardhat_devnet, "multi-pair")
    response = await hardhat_client.get(
        "/v1/GetPairs", params={"address": entry["address"], "chainID": CHAIN}
    )
    assert response.status_code == 200, response.text
    listed = {p["Pair"]["Address"].lower() for p in response.json()}
    assert {p["address"].lower() for p in entry["pools"]} <= listed


async def test_top_holders_match_the_chain(
    hardhat_client: httpx.AsyncClient, hardhat_devnet: HardhatDevnet
) -> None:
    token = _entry(hardhat_devnet, "plain")["address"]
    response = await hardhat_client.get(
        "/v1/TopHolders", params={"address": token, "chainID": CHAIN}
    )
    assert response.status_code == 200, response.text
    holders = response.json()["holders"]
    assert holders
    top = holders[0]
    data = "0x70a08231" + top["address"][2:].lower().rjust(64, "0")
    balance = await _rpc(hardhat_devnet, "eth_call", [{"to": token, "data": data}, "latest"])
    assert top["balance"] == str(int(balance, 16))


@pytest.mark.parametrize(
    ("entry_id", "open_source"), [("plain", True), ("proxy-unverified", False)]
)
async def test_verification_sees_the_call_tree(
    hardhat_client: httpx.AsyncClient,
    hardhat_devnet: HardhatDevnet,
    entry_id: str,
    open_source: bool,
) -> None:
    token = _entry(hardhat_devnet, entry_id)["address"]
    response = await hardhat_client.get(
        "/v2/GetContractVerification", params={"address": token, "chainID": CHAIN}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["summary"]["isOpenSource"] is open_source, body
    assert body["summary"]["hasProxyCalls"] is (entry_id == "proxy-unverified"), body


VERDICT_TOKENS = ("plain", "sell-whitelist", "sell-cooldown", "tiny-sell-limit", "max-tx")
"""A token that sells, one whose sells fail, one whose sell in the buy's block fails (the
emulation's one-block look decides it), one that sells only part of a balance, and one
whose large buys fail."""


async def test_verification_journeys_keep_the_whole_journeys_verdicts(
    hardhat_service: Service,
    hardhat_devnet: HardhatDevnet,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """On a node without ``eth_simulateV1`` the journey is emulated over ``eth_call``: its
    verdicts alone (GetContractVerification's, ``verdicts_only``) are the whole one's.
    A service of its own without the results cache, so that every check runs now."""
    settings = hardhat_service.settings.model_copy(update={"data_dir": tmp_path, "cache_ttl": 0})
    service = connect_devnet(
        settings, hardhat_devnet.url, hardhat_devnet.manifest, hardhat_devnet.build_dir
    )
    both = BothJourneys().install(monkeypatch)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
            for entry_id in VERDICT_TOKENS:
                token = _entry(hardhat_devnet, entry_id)["address"]
                params = {"address": token, "chainID": CHAIN}
                response = await http.get("/v2/GetContractVerification", params=params)
                assert response.status_code == 200, response.text
    finally:
        await service.close()
    assert len(both.seen) == len(VERDICT_TOKENS)
    assert not both.differ()
    assert {c.whole[3] for c in both.seen} == {True, False}
    assert sum(c.trimmed_plans for c in both.seen) < sum(c.whole_plans for c in both.seen)

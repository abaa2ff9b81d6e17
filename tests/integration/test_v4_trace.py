"""A V4 swap's call trace passes through the PoolManager into the pool's hook, so the
hook's source is checked like any contract on the path (#25); a hook whose source no
registry holds makes the path closed-source.  Real anvil, real trace; the source
registry is the devnet's own with one hook's entry turned into "not verified"."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_utils.crypto import keccak

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.processes import SOURCES_FILE
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

CHAIN = "31337"
AFTER_SWAP = (
    "0x"
    + keccak(
        text="afterSwap(address,(address,address,uint24,int24,address),"
        "(bool,int256,uint160),int256,bytes)"
    )[:4].hex()
)
HIDDEN = "v4-hook-fee-1"  # its hook's registry entry says "not verified"


def _entry(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


def _hook(devnet: Any, token_id: str) -> str:
    return str(_entry(devnet, token_id)["pools"][0]["key"][4])


@pytest.fixture(scope="module")
async def http(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    build = tmp_path_factory.mktemp("sources")
    real = Path(devnet.manifest_path).parent / SOURCES_FILE
    sources = json.loads(real.read_text(encoding="utf-8"))
    hidden = _hook(devnet, HIDDEN).lower()
    sources = {a: ({"verified": False} if a.lower() == hidden else v) for a, v in sources.items()}
    (build / SOURCES_FILE).write_text(json.dumps(sources), encoding="utf-8")
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("data"), cache_ttl=0)
    service = connect_devnet(settings, devnet.url, devnet.manifest, build)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as client:
        yield client
    await service.close()


async def _get(http: httpx.AsyncClient, path: str, address: str) -> dict[str, Any]:
    response = await http.get(path, params={"address": address, "chainID": CHAIN})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_the_hook_is_on_the_traced_path(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, "v4-hook-owner-fee")
    hook, manager = _hook(devnet, entry["id"]), entry["pools"][0]["address"]
    body = await _get(http, "/v2/GetContractVerification", entry["address"])
    assert body["fullCheckPerformed"] is True, body
    assert body["contractsOpenSource"][hook] is True
    assert body["contractsOpenSource"][manager] is True
    assert body["contractsOpenSource"][entry["address"]] is True
    edges = {(c["from"], c["to"], c.get("selector")) for c in body["contractCalls"]}
    assert (manager, hook, AFTER_SWAP) in edges, body["contractCalls"]
    assert any(to == entry["address"] for _, to, _ in edges)  # the token paid out


async def test_an_unverified_hook_is_reported(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, HIDDEN)
    hook = _hook(devnet, HIDDEN)
    body = await _get(http, "/v2/GetContractVerification", entry["address"])
    assert body["isRootOpenSource"] is True  # the token itself is verified
    assert body["summary"]["isOpenSource"] is False
    assert body["contractsOpenSource"][hook] is False
    honeypot = await _get(http, "/v2/IsHoneypot", entry["address"])
    assert honeypot["contractCode"]["openSource"] is False
    assert honeypot["contractCode"]["rootOpenSource"] is True

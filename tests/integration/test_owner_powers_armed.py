"""Owner powers in the armed state: each proven trap is armed for real, then checked.

The catalogue keeps latent traps pre-armed; here each one's ``ownerProof`` call (the
one the build mined) is mined again on the shared devnet inside a snapshot, the token is
checked with the scan's cache off, and the snapshot is reverted.  An armed trap must
still list its power: who holds it and what it does (the scan shrinks its buy or runs
from held positions when nobody can buy, and reads a call that lifts the trap as the
power to set it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.chain.abi import decode, encode_call
from tokenrisk.config import Settings
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.history import holder_address
from tokenrisk.findings import FINDINGS
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

SKIPPED = {"proxy-verified", "latent-sell-gas"}
"""An upgrade armed is a different token (its own check); an armed gas trap is today's
sell gas, in the journey's answer (a call lowering a sell's gas is not read as a power:
unlisting the pool lowers any sell's cost)."""
TAX_FLAGS = {"medium_tax", "high_tax", "extremely_high_taxes"}


def _capped_tax(token: dict[str, Any]) -> bool:
    """An armed tax below 50 %: today's tax itself is the finding (the journey flags it);
    the scan reads only a tax of 50 % or more that a call takes back as an armed trap."""
    return 0 < float(token["ownerProof"]["expect"].get("sellTaxAtLeast", 0)) < 50


@pytest.fixture(scope="module")
async def http(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    settings = Settings(
        devnet=False,
        data_dir=tmp_path_factory.mktemp("armed"),
        cache_ttl=0,
        owner_powers={"cache_ttl": 0},
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    app = create_app(svc.settings, svc)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://tokenrisk.test"
    ) as client:
        yield client
    await svc.close()


def _armed(devnet: Any) -> list[dict[str, Any]]:
    return [
        t
        for t in devnet.manifest["tokens"]
        if "call" in t.get("ownerProof", {})
        and not t["ownerProof"]["expect"].get("callReverts")
        and t["id"] not in SKIPPED
    ]


def _value(devnet: Any, token: dict[str, Any], value: Any) -> Any:
    if isinstance(value, list):
        return [_value(devnet, token, v) for v in value]
    if isinstance(value, str) and value.startswith("$holder:"):
        return holder_address(token["id"], int(value.split(":")[1]))
    if isinstance(value, str) and value.startswith("$pool:"):
        for pool in token["pools"]:
            fee = f":{pool['fee']}" if pool["dex"] == "v3" else ""
            if value == f"$pool:{pool['dex']}:{pool['base']}{fee}":
                return pool["address"]
    if isinstance(value, str) and value.startswith("$"):
        return devnet.manifest["addresses"][value[1:]]
    return value


async def _arm(chain: Chain, devnet: Any, token: dict[str, Any]) -> None:
    proof = token["ownerProof"]
    sender = proof.get("from", "$OWNER")
    if sender == "$owner()":
        raw = await chain.call(token["address"], encode_call("owner()"))
        sender = str(decode(["address"], raw)[0])
    else:
        sender = _value(devnet, token, sender)
    await chain.set_balances({sender: 10**18})
    steps = [proof["first"]] if "first" in proof else []
    # the call goes to the token, or ("to": "$hook") to its V4 pool's hook
    to = token["pools"][0]["key"][4] if proof.get("to") == "$hook" else token["address"]
    for step in [*steps, proof]:
        args = [int(a) if isinstance(a, str) and a.isdigit() else a for a in step["args"]]
        data = encode_call(step["call"], _value(devnet, token, args))
        outcome = await chain.send(Tx(sender, to, data, label=token["id"]))
        assert outcome.ok, (token["id"], outcome)


async def _above(chain: Chain, highest: int) -> int:
    """Mine empty blocks until the head is above ``highest`` (after a revert, the next
    arming would otherwise reuse block numbers the service already saw)."""
    head = int((await chain.block())["number"], 16)
    while head <= highest:
        await chain.cheat("evm_mine")
        head = int((await chain.block())["number"], 16)
    return head


async def test_every_proven_trap_still_lists_its_power_once_armed(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    chain = Chain(devnet.url)
    missed: dict[str, list[str]] = {}
    highest = 0
    try:
        for token in _armed(devnet):
            snapshot = await chain.cheat("evm_snapshot")
            try:
                await _arm(chain, devnet, token)
                highest = await _above(chain, highest)  # a head never goes back for the service
                response = await http.get("/v2/IsHoneypot", params={"address": token["address"]})
                assert response.status_code == 200, response.text
                body = response.json()
                powers = body["ownerPowers"]
            finally:
                assert await chain.cheat("evm_revert", snapshot)
            expected = set(token["expected"]["flags"]) & set(FINDINGS)
            if "owner_can_limit_transactions" in expected:
                # armed, a whole-balance sell fails today: the call lifting the cap is the
                # armed trap it undoes (a sell block), as for a trading switch
                expected.add("owner_can_block_sells")
            found = {f["id"]: f for f in powers["findings"]}
            taxed = {f["flag"] for f in body["summary"]["flags"]} & TAX_FLAGS
            if not expected & set(found) and not (_capped_tax(token) and taxed):
                missed[token["id"]] = sorted(found)
            if "owner_can_set_sell_tax" in found and not _capped_tax(token):
                # armed: today's tax is already high, the caller can take it back (or, where
                # the setter allows it, take the rest: a hook fee of 100%)
                tax = next(
                    e for e in found["owner_can_set_sell_tax"]["evidence"] if "tax" in e["what"]
                )
                before, after = float(tax["before"]), float(tax["after"])
                assert before >= 90 and (after < 90 or after > before), (token["id"], tax)
    finally:
        await chain.aclose()
    assert missed == {}

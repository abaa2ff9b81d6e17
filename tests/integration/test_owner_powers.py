"""Owner powers found by trial, against the devnet, checked against the build's mined proofs.

Every latent-trap token is flagged with the right power and evidence while it is still
sellable; the honest owner-function tokens get nothing above informational.  The
expected powers come from the catalogue, but each one was shown by a real mined
transaction during the build (``ownerProof.measured`` in the manifest), and the tests
check the two agree: who called, and what the call did.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_utils.crypto import keccak

from tokenrisk.api.app import create_app
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.config import Settings
from tokenrisk.findings import FINDINGS
from tokenrisk.service import Service, connect_devnet
from tokenrisk.simulate.owners import read_facts

pytestmark = pytest.mark.integration

HONEST = ("honest-capped-fee", "honest-renounced", "honest-timelock-pause")


@pytest.fixture(scope="module")
async def powers_service(
    devnet: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("powers"), cache_ttl=0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    yield svc
    await svc.close()


@pytest.fixture(scope="module")
async def http(powers_service: Service) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(powers_service.settings, powers_service)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as client:
        yield client


def _entry(devnet: Any, token_id: str) -> dict[str, Any]:
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


def _proven(devnet: Any) -> list[str]:
    """Tokens whose build proof showed a power (the owner call went through, or time)."""
    return [
        t["id"]
        for t in devnet.manifest["tokens"]
        if "ownerProof" in t and not t["ownerProof"]["expect"].get("callReverts")
    ]


async def _check(http: httpx.AsyncClient, address: str, **params: str) -> dict[str, Any]:
    response = await http.get("/v2/IsHoneypot", params={"address": address, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _caller(devnet: Any, proof: dict[str, Any], powers: dict[str, Any]) -> str | None:
    """Who the proof's call came from: a named account, or the owner getter's answer (a
    contract owner: a timelock, a multisig)."""
    if "call" not in proof:
        return None
    if proof.get("from") == "$owner()":
        return str(powers["owner"])
    name = str(proof.get("from", "$OWNER")).removeprefix("$")
    return str(devnet.manifest["addresses"][name])


async def test_every_proven_trap_is_flagged_with_evidence_while_sellable(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    proven = _proven(devnet)
    assert len(proven) >= 12, proven
    for token_id in proven:
        entry = _entry(devnet, token_id)
        proof = entry["ownerProof"]
        body = await _check(http, entry["address"])
        assert body["honeypotResult"]["isHoneypot"] is False, token_id  # still sellable today
        powers = body["ownerPowers"]
        assert powers["scanned"] is True, (token_id, powers)
        expected = set(entry["expected"]["flags"]) & set(FINDINGS)
        found = {f["id"]: f for f in powers["findings"]}
        assert expected <= set(found), (token_id, sorted(found))
        assert expected <= {f["flag"] for f in body["summary"]["flags"]}, token_id
        for kind in expected:
            finding = found[kind]
            assert finding["evidence"] and finding["detail"], (token_id, finding)
            assert finding["docs"].endswith("#" + kind.replace("_", "-"))
            caller = _caller(devnet, proof, powers)
            if caller is not None:
                assert finding["caller"] == caller, (token_id, finding, caller)
                assert finding["function"] and finding["selector"].startswith("0x")


async def test_findings_agree_with_what_the_mined_proof_measured(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    compared = {
        "sell tax": 0,
        "sell loss": 0,
        "sell gas": 0,
        "mint": 0,
        "moved balance": 0,
        "transfer blocked": 0,
    }
    for token_id in _proven(devnet):
        entry = _entry(devnet, token_id)
        measured = entry["ownerProof"]["measured"]
        found = {
            f["id"]: f for f in (await _check(http, entry["address"]))["ownerPowers"]["findings"]
        }
        if "owner_can_set_sell_tax" in found and (measured["sell_tax"] or 0) >= 90:
            tax = next(e for e in found["owner_can_set_sell_tax"]["evidence"] if "tax" in e["what"])
            assert float(tax["after"]) >= 90, (token_id, tax)
            compared["sell tax"] += 1
        if (measured.get("sell_loss") or 0) >= 90:  # a V4 sell's WETH loss (a hook, a pool fee)
            tax = next(e for e in found["owner_can_set_sell_tax"]["evidence"] if "tax" in e["what"])
            assert float(tax["after"]) >= 90, (token_id, tax)
            compared["sell loss"] += 1
        gas_floor = entry["ownerProof"]["expect"].get("sellGasAtLeast")
        if gas_floor is not None:
            assert measured["sell_gas"] >= gas_floor
            gas = found["owner_can_raise_sell_gas"]["evidence"][0]
            assert int(gas["after"]) >= gas_floor > int(gas["before"]), (token_id, gas)
            compared["sell gas"] += 1
        if measured["supply_after"] > measured["supply_before"]:
            assert "owner_can_mint" in found, token_id
            compared["mint"] += 1
        if measured["balance_after"] < measured["balance_before"]:
            assert "owner_can_move_balances" in found, token_id
            compared["moved balance"] += 1
        if measured["transfer_ok"] is False and measured["sell_ok"]:  # mined: only the transfer
            assert "owner_can_block_transfers" in found, (token_id, sorted(found))
            compared["transfer blocked"] += 1
    # every kind of measurement was compared at least once: the test cannot pass empty
    assert all(compared.values()), compared


async def test_honest_owner_functions_are_at_most_informational(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    for token_id in HONEST:
        entry = _entry(devnet, token_id)
        assert entry["ownerProof"]["measured"]["call_ok"] is False  # the build showed it
        body = await _check(http, entry["address"])
        assert body["summary"]["risk"] == "low", (token_id, body["summary"])
        severities = {f["severity"] for f in body["summary"]["flags"]}
        assert severities <= {"info"}, (token_id, body["summary"]["flags"])
        powers = body["ownerPowers"]
        assert powers["scanned"] is True
        assert {f["severity"] for f in powers["findings"]} <= {"info"}, powers["findings"]


async def test_renounced_owner_is_reported_and_a_timelock_owner_is_listed_as_one(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    renounced = (await _check(http, _entry(devnet, "honest-renounced")["address"]))["ownerPowers"]
    assert renounced["renounced"] is True
    assert [f["id"] for f in renounced["findings"]] == ["owner_renounced"]
    timelock = _entry(devnet, "honest-timelock-pause")
    powers = (await _check(http, timelock["address"]))["ownerPowers"]
    owner = next(c for c in powers["callers"] if "owner()" in c["foundBy"])
    assert owner["isContract"] is True and owner["kind"] == "timelock"
    assert owner["delay"] == 2 * 86_400
    assert owner["address"] == powers["owner"]


async def test_hidden_keeper_is_found_in_storage_not_through_a_getter(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    entry = _entry(devnet, "latent-hidden-keeper")
    powers = (await _check(http, entry["address"]))["ownerPowers"]
    keeper = devnet.manifest["addresses"]["KEEPER"]
    assert powers["owner"] == "0x" + "0" * 40  # owner() says renounced...
    assert powers["renounced"] is False  # ...but a caller still holds a power
    by_address = {c["address"]: c for c in powers["callers"]}
    assert any(how.startswith("storage slot") for how in by_address[keeper]["foundBy"])
    deployer = devnet.manifest["addresses"]["OWNER"]
    assert "deployer" in by_address[deployer]["foundBy"]
    assert "owner_renounced" not in {f["id"] for f in powers["findings"]}  # ...but is not


async def test_time_bomb_shows_in_the_future_sells(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, "latent-slow-fuse")
    body = await _check(http, entry["address"])
    sells = {s["after"]: s for s in body["ownerPowers"]["futureSells"]}
    assert sells["7d"]["ok"] is True and sells["30d"]["ok"] is False
    assert sells["30d"]["reason"]  # the router masks the token's own reason
    assert "sell_blocked_later" not in {f["flag"] for f in body["summary"]["flags"]}


async def test_query_parameter_turns_the_scan_off(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, "latent-botlist")
    body = await _check(http, entry["address"], ownerPowers="false")
    assert "ownerPowers" not in body
    assert "owner_can_blacklist" not in {f["flag"] for f in body["summary"]["flags"]}
    bad = await http.get("/v2/IsHoneypot", params={"address": entry["address"], "ownerPowers": "x"})
    assert bad.status_code == 400


async def test_second_scan_comes_from_the_cache(http: httpx.AsyncClient, devnet: Any) -> None:
    entry = _entry(devnet, "latent-mint")
    first = (await _check(http, entry["address"]))["ownerPowers"]
    second = (await _check(http, entry["address"]))["ownerPowers"]
    assert second["cached"] is True
    assert second["findings"] == first["findings"]
    assert first["simulations"] > 0


async def test_config_switch_turns_the_scan_off(devnet: Any, tmp_path: Path) -> None:
    from tokenrisk.checks.honeypot import is_honeypot

    settings = Settings(devnet=False, data_dir=tmp_path, owner_powers={"enabled": False})
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.manifest_path).parent)
    try:
        result = await is_honeypot(
            svc.honeypot, _entry(devnet, "latent-fee")["address"], 31337, None
        )
    finally:
        await svc.close()
    assert result.analysis.owner_powers is None


async def test_an_armed_honeypot_still_lists_who_holds_the_switch(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    entry = _entry(devnet, "paused")  # paused after the history: no buy, sell or transfer
    body = await _check(http, entry["address"])
    assert body["honeypotResult"]["isHoneypot"] is True
    powers = body["ownerPowers"]
    assert powers["scanned"] is True, powers
    found = {f["id"]: f for f in powers["findings"]}
    assert "owner_can_pause_trading" in found, powers
    finding = found["owner_can_pause_trading"]
    assert finding["caller"] == devnet.manifest["addresses"]["OWNER"]
    assert finding["function"] == "unpause()"
    assert finding["evidence"][0]["after"] == "ok" and finding["evidence"][0]["before"] != "ok"


async def test_callers_from_role_logs_and_packed_words_keep_renounced_false(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    keeper = devnet.manifest["addresses"]["KEEPER"]
    for token_id, how in (
        ("role-freeze-renounced", "(RoleGranted)"),
        ("packed-manager", "(packed)"),
    ):
        powers = (await _check(http, _entry(devnet, token_id)["address"]))["ownerPowers"]
        assert powers["owner"] == "0x" + "0" * 40 and powers["renounced"] is False, token_id
        by_address = {c["address"]: c for c in powers["callers"]}
        assert any(h.endswith(how) for h in by_address[keeper]["foundBy"]), by_address
        assert "owner_renounced" not in {f["id"] for f in powers["findings"]}


async def test_a_buy_cap_below_a_normal_buy_shrinks_the_trial(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    body = await _check(http, _entry(devnet, "swap-cap-guard")["address"])
    powers = body["ownerPowers"]
    notes = body["taxDetails"]["explanation"]
    assert any("shrunk" in n for n in notes), notes
    assert "owner_can_blacklist" in {f["id"] for f in powers["findings"]}


async def test_a_balance_setting_mint_is_found_and_its_honest_twin_is_quiet(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    powers = (await _check(http, _entry(devnet, "hidden-mint")["address"]))["ownerPowers"]
    mint = next(f for f in powers["findings"] if f["id"] == "owner_can_mint")
    assert "hidden mint" in mint["detail"]
    supply = next(e for e in mint["evidence"] if e["what"] == "totalSupply")
    assert supply["before"] == supply["after"]
    assert any(e["what"] == "caller balance" for e in mint["evidence"])
    body = await _check(http, _entry(devnet, "honest-reward-sync")["address"])
    assert body["summary"]["risk"] == "low"
    assert {f["severity"] for f in body["ownerPowers"]["findings"]} <= {"info"}


async def test_contract_owners_are_tried_and_their_controls_lower_the_severity(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    cases = (
        ("multisig-blocklist", "owner_can_blacklist", "multisig", "medium"),
        ("timelock-short-fee", "owner_can_set_sell_tax", "timelock", "medium"),
        ("honest-timelock-pause", "owner_can_pause_trading", "timelock", "info"),
    )
    for token_id, kind, what, severity in cases:
        powers = (await _check(http, _entry(devnet, token_id)["address"]))["ownerPowers"]
        owner = next(c for c in powers["callers"] if c["address"] == powers["owner"])
        assert owner["isContract"] is True and owner["kind"] == what, (token_id, owner)
        finding = next(f for f in powers["findings"] if f["id"] == kind)
        assert finding["caller"] == owner["address"], (token_id, finding)
        assert finding["severity"] == severity and finding["control"], (token_id, finding)
    safe = next(
        c
        for c in (await _check(http, _entry(devnet, "multisig-blocklist")["address"]))[
            "ownerPowers"
        ]["callers"]
        if c["kind"] == "multisig"
    )
    assert (safe["threshold"], safe["signers"]) == (2, 3)


async def test_two_step_traps_and_erc20_named_backdoors_are_tried(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    powers = (await _check(http, _entry(devnet, "two-step-fee")["address"]))["ownerPowers"]
    tax = next(f for f in powers["findings"] if f["id"] == "owner_can_set_sell_tax")
    assert tax["function"] == "stageSellFee(uint256) then commitFees()", tax
    assert float(tax["evidence"][0]["after"]) >= 90
    powers = (await _check(http, _entry(devnet, "transferfrom-backdoor")["address"]))["ownerPowers"]
    moved = next(f for f in powers["findings"] if f["id"] == "owner_can_move_balances")
    assert moved["function"].startswith("transferFrom("), moved
    plain = (await _check(http, _entry(devnet, "plain")["address"]))["ownerPowers"]
    assert not [f for f in plain["findings"] if f["severity"] != "info"], plain["findings"]


async def test_static_evidence_covers_a_caller_nobody_can_find(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    powers = (await _check(http, _entry(devnet, "deep-keeper")["address"]))["ownerPowers"]
    keeper = devnet.manifest["addresses"]["KEEPER"]
    assert keeper not in {c["address"] for c in powers["callers"]}  # slot 34: not read
    rule = next(f for f in powers["findings"] if f["id"] == "owner_can_change_transfer_rules")
    assert rule["confidence"] == "static" and rule["severity"] == "low", rule
    assert rule["caller"] == keeper and rule["function"] == "setOpsLimit(uint256)"
    assert powers["renounced"] is False
    for token_id in ("honest-renounced", "plain", "latent-fee"):  # nothing static there
        found = (await _check(http, _entry(devnet, token_id)["address"]))["ownerPowers"]
        assert all(f["confidence"] == "simulated" for f in found["findings"]), token_id


async def test_a_v4_pools_hook_is_scanned_and_named(http: httpx.AsyncClient, devnet: Any) -> None:
    """The hook's owner is a privileged caller of the hook: the latent hook's power is
    found and named as the hook's; honest hooks (immutable fees, or none) gain nothing
    above informational, though their owner getter was read."""
    entry = _entry(devnet, "v4-hook-owner-fee")
    hook = entry["pools"][0]["key"][4]
    body = await _check(http, entry["address"])
    assert body["honeypotResult"]["isHoneypot"] is False
    powers = body["ownerPowers"]
    finding = next(f for f in powers["findings"] if f["id"] == "owner_can_set_sell_tax")
    assert hook.lower() in finding["detail"].lower(), finding
    assert {"what": "hook contract called", "before": "-", "after": hook} in finding["evidence"]
    assert finding["selector"] == "0x" + keccak(text="setSellFeeBps(uint256)")[:4].hex()
    assert any("hook owner()" in c["foundBy"] for c in powers["callers"]), powers["callers"]
    for token_id in ("v4-hook-fee-1", "v4-hook-sell-99", "v4-plain"):
        honest = _entry(devnet, token_id)
        powers = (await _check(http, honest["address"]))["ownerPowers"]
        assert powers["scanned"] is True, (token_id, powers)
        assert {f["severity"] for f in powers["findings"]} <= {"info"}, (token_id, powers)
        hooked = int(honest["pools"][0]["key"][4], 16) != 0
        read = any("hook owner()" in c["foundBy"] for c in powers["callers"])
        assert read == hooked, (token_id, powers["callers"])


async def test_every_kinds_listed_devnet_tokens_show_it(
    http: httpx.AsyncClient, devnet: Any
) -> None:
    """The registry's proof: each kind's ``devnet`` tokens are scanned and the kind is
    found on every one; a kind listing no token is reported by the docs table as ``-``."""
    listed = [(kind.id, t) for kind in FINDINGS.values() for t in kind.devnet]
    assert len(listed) >= len(FINDINGS)  # most kinds list a token: the loop cannot be empty
    scans: dict[str, set[str]] = {}
    for kind, token_id in listed:
        if token_id not in scans:
            body = await _check(http, _entry(devnet, token_id)["address"])
            scans[token_id] = {f["id"] for f in body["ownerPowers"]["findings"]}
        assert kind in scans[token_id], (kind, token_id, sorted(scans[token_id]))


@pytest.mark.parametrize("token_id", ["proxy-verified", "proxy-unverified"])
async def test_a_proxys_implementation_code_comes_with_the_facts(
    devnet: Any, token_id: str
) -> None:
    """The reader placed at the proxy's own address returns the code its EIP-1967 slot
    names, the very code ``eth_getCode`` reads, in the facts' one request."""
    counted: list[int] = []

    class Counting(RpcClient):
        async def _post(self, *args: Any, **kwargs: Any) -> Any:
            counted.append(1)
            return await super()._post(*args, **kwargs)

    rpc = Counting(devnet.url)
    try:
        facts = await read_facts(rpc, _entry(devnet, token_id)["address"], 16, "latest")
        assert facts.impl is not None and len(counted) == 1
        assert facts.impl_code == await rpc.call("eth_getCode", [facts.impl, "latest"])
    finally:
        await rpc.aclose()

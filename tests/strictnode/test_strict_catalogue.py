"""The whole IsHoneypot catalogue and the owner-power scan through every strict profile.

Each profile (geth full node, erigon/reth archive, a typical provider, a geth whose head
moves every 250 ms, a load-balanced provider whose backends lag a block) gets a service
pointed at its strict node, and every catalogue token must get the verdict its catalogue
entry expects, as on plain anvil (tests/integration/test_honeypot.py), with no 5xx.
Where a node's limit costs a step, the answer may be partial only if it says so: then
the risk band, flags, taxes and limits are not held to the catalogue, but the honeypot
verdict always is.

The catalogue is only the expectation; the service never sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from expectations import assert_details
from nodeprofiles import PROFILES, STUCK_BACKENDS, Profile
from strictnode import StrictNode

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.errors import NodeBehind
from tokenrisk.findings import FINDINGS
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

CATALOGUE = Path(__file__).parents[2] / "src" / "tokenrisk" / "devnet" / "catalogue.json"
STATED_LIMIT = re.compile(r"\bnode\b|not checked|unchecked|unavailable|not available", re.I)
"""How a response says a node's limit left something unchecked (a note or a flag)."""

Strict = tuple[Profile, StrictNode, httpx.AsyncClient]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "entry_id" in metafunc.fixturenames:
        tokens = json.loads(CATALOGUE.read_text())["tokens"]
        metafunc.parametrize("entry_id", [t["id"] for t in tokens])


@pytest.fixture(scope="session", params=PROFILES, ids=lambda p: p.name)
async def strict(
    request: pytest.FixtureRequest,
    strict_nodes: Callable[[Profile], StrictNode],
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Strict]:
    """A service on the profile's strict node, and an HTTP client of its app."""
    profile: Profile = request.param
    node = strict_nodes(profile)
    assert node.devnet is not None
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp(profile.name), deadline=60.0)
    service = connect_devnet(settings, node.url, node.devnet.manifest, node.devnet.build_dir)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        yield profile, node, http
    await service.close()


def _entry(node: StrictNode, entry_id: str) -> dict[str, Any]:
    assert node.devnet is not None
    return next(t for t in node.devnet.manifest["tokens"] if t["id"] == entry_id)


def _stated_limits(body: dict[str, Any]) -> list[str]:
    """What the response says a node's limits left unchecked (notes and flag texts)."""
    stated = [str(u) for u in body.get("unchecked", [])]  # the answer's own list
    notes = list(body.get("taxDetails", {}).get("explanation", []))
    flags = [
        f"{f.get('flag')}: {f.get('description', '')}" for f in body["summary"].get("flags", [])
    ]
    return stated + [text for text in notes + flags if STATED_LIMIT.search(str(text))]


async def test_catalogue_verdicts_through_each_profile(strict: Strict, entry_id: str) -> None:
    profile, node, http = strict
    entry = _entry(node, entry_id)
    expected = entry["expected"]
    before, zero_randao = node.refusals.copy(), node.zero_randao
    response = await http.get(
        "/v2/IsHoneypot", params={"address": entry["address"], "chainID": 31337}
    )
    refused = dict(node.refusals - before)  # which rules the check broke, for the report
    assert response.status_code < 500, (profile.name, response.text, refused, node.last_refusal)
    # every simulated block with calls carries its own RANDAO mix (geth's default: zero)
    assert node.zero_randao == zero_randao, (profile.name, node.zero_randao - zero_randao)
    if not entry["pools"]:
        assert response.status_code == 404, response.text
        assert response.json()["error"] == "No pairs found"
        return
    assert response.status_code == 200, (profile.name, response.text, refused)
    body = response.json()
    verdict = body["honeypotResult"]["isHoneypot"]
    assert verdict is expected["isHoneypot"], (
        profile.name,
        body["honeypotResult"],
        body["summary"],
    )
    try:
        assert_details(body, expected)
    except AssertionError:
        stated = _stated_limits(body)
        if not stated:
            raise  # a different answer that does not say why is a defect, not a node limit


def _proven(node: StrictNode) -> list[dict[str, Any]]:
    assert node.devnet is not None
    return [
        t
        for t in node.devnet.manifest["tokens"]
        if "ownerProof" in t and not t["ownerProof"]["expect"].get("callReverts")
    ]


async def test_owner_powers_through_each_profile(strict: Strict) -> None:
    """test_owner_powers.py's proven traps: flagged with evidence, still sellable, no 5xx."""
    profile, node, http = strict
    proven = _proven(node)
    assert len(proven) >= 12
    for entry in proven:
        response = await http.get("/v2/IsHoneypot", params={"address": entry["address"]})
        assert response.status_code == 200, (profile.name, entry["id"], response.text)
        body = response.json()
        assert body["honeypotResult"]["isHoneypot"] is False, (profile.name, entry["id"])
        powers = body["ownerPowers"]
        assert powers["scanned"] is True, (profile.name, entry["id"], powers)
        expected = set(entry["expected"]["flags"]) & set(FINDINGS)
        found = {f["id"]: f for f in powers["findings"]}
        if not expected <= set(found):
            assert _stated_limits(body), (profile.name, entry["id"], sorted(found))
            continue
        for kind in expected:
            assert found[kind]["evidence"] and found[kind]["detail"], (entry["id"], found[kind])


async def test_honest_owner_functions_stay_informational_through_each_profile(
    strict: Strict,
) -> None:
    profile, node, http = strict
    for token_id in ("honest-capped-fee", "honest-renounced", "honest-timelock-pause"):
        entry = _entry(node, token_id)
        response = await http.get("/v2/IsHoneypot", params={"address": entry["address"]})
        assert response.status_code == 200, (profile.name, token_id, response.text)
        body = response.json()
        assert body["summary"]["risk"] == "low", (profile.name, token_id, body["summary"])
        assert {f["severity"] for f in body["ownerPowers"]["findings"]} <= {"info"}


async def test_contract_verification_through_each_profile(strict: Strict) -> None:
    """GetContractVerification resolves at the head as IsHoneypot does (a remembered head
    confirmed beside the work, the trace beside the journey): twice through every
    profile, the second at the head the first remembered while the head stands, with a
    call tree where the node traces and the reason where it cannot; never a 5xx."""
    profile, node, http = strict
    entry = _entry(node, "proxy-verified")
    params = {"address": entry["address"], "chainID": 31337}
    for _ in range(2):
        response = await http.get("/v2/GetContractVerification", params=params)
        assert response.status_code == 200, (profile.name, response.text)
        body = response.json()
        assert body["isContract"] is True and body["isRootOpenSource"] is True, body
        if profile.serves("debug_traceCall"):
            assert body["fullCheckPerformed"] is True and body["contractCalls"], body
            assert body["summary"]["hasProxyCalls"] is True
        else:
            assert body["fullCheckReason"] == "the node cannot trace calls (no debug_traceCall)"


async def test_a_lag_that_never_ends_is_a_503_in_our_words(
    strict_nodes: Callable[[Profile], StrictNode], tmp_path: Path
) -> None:
    """A provider whose state backends never reach the head it reports: every read at the
    pinned head meets "header not found" however often it is sent (bounded), and the
    check answers 503 NodeBehind, never a 502 with the node's text or a wrong 200."""
    node = strict_nodes(STUCK_BACKENDS)
    assert node.devnet is not None
    settings = Settings(devnet=False, data_dir=tmp_path, deadline=60.0)
    service = connect_devnet(settings, node.url, node.devnet.manifest, node.devnet.build_dir)
    transport = httpx.ASGITransport(app=create_app(settings, service))
    plain = _entry(node, "plain")["address"]
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
            response = await http.get("/v2/IsHoneypot", params={"address": plain})
    finally:
        await service.close()
    assert response.status_code == 503, response.text
    assert response.json()["error"] == NodeBehind.stable
    assert node.refusals, "the stuck backend refused nothing: the test did not run its case"

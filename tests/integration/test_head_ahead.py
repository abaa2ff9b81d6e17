"""A check planned at the remembered head, confirmed in the same round (#27,
``checks/speculation.py``).  Real anvil behind the :class:`Rounds` transport of
``test_v4_known_pools`` (it numbers the sequential rounds without a clock).  At an
unchanged head a recomputed check is one round: the head read that confirms the head and
everything planned at it go out together.  When a block came meanwhile the work planned
at the old head is dropped and the answer is the one of a check at the new head."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_journey_ahead import _stable
from test_v4_known_pools import Rounds, _address

from tokenrisk import metrics
from tokenrisk.api.app import create_app
from tokenrisk.chain.abi import encode_call
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.head import BlockClock
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import DEVNET_ID, Service, connect_devnet

pytestmark = pytest.mark.integration

STEADY = BlockClock(seconds=1e9)
"""A chain whose blocks are far apart: the head read by the last check is assumed current
(the guard's clock is not what these tests are about)."""


@pytest.fixture(params=[0.0], ids=["cache-off"])
async def served(
    devnet: RunningDevnet, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Service, Rounds]]:
    data, ttl = tmp_path / "data", request.param
    settings = Settings(devnet=False, data_dir=data, deadline=120.0, cache_ttl=ttl)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    rounds = Rounds(devnet.url)
    node = svc.nodes[DEVNET_ID]
    node.rpc = CoalescingRpc(devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds)
    node.clock = STEADY
    try:
        yield svc, rounds
    finally:
        await svc.close()
        await rounds.aclose()


async def _check(
    svc: Service, token: str, path: str = "/v2/IsHoneypot", **extra: str
) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=create_app(svc.settings, svc))
    params = {"address": token, "chainID": str(DEVNET_ID), **extra}
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        reply = await http.get(path, params=params)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _assumed(used: bool) -> float:
    outcome = "used" if used else "wasted"
    return float(metrics.HEADS_ASSUMED.labels(str(DEVNET_ID), outcome)._value.get())


@pytest.mark.parametrize("entry_id", ["plain", "fot-3"])
async def test_a_known_token_at_an_unchanged_head_is_one_round(
    served: tuple[Service, Rounds], devnet: RunningDevnet, entry_id: str
) -> None:
    svc, rounds = served
    token = _address(devnet, entry_id)
    await _check(svc, token)  # first sight
    read = await _check(svc, token)  # the head and the target read together, remembered
    used = _assumed(True)
    rounds.rounds.clear()
    planned = await _check(svc, token)
    assert len(rounds.rounds) == 1, rounds.rounds
    assert "eth_getBlockByNumber" in rounds.rounds[0]  # the confirmation, in that round
    assert _assumed(True) == used + 1
    assert _stable(planned) == _stable(read)


def _probe_free(body: dict[str, Any]) -> str:
    """A GetContractVerification body with its probe (a fresh address per trace, the
    first call's sender) named ``PROBE``."""
    text = json.dumps(body, sort_keys=True)
    calls = body.get("contractCalls") or []
    return text.replace(calls[0]["from"], "PROBE") if calls else text


@pytest.mark.parametrize("entry_id", ["plain", "proxy-verified"])
async def test_a_contract_verification_at_an_unchanged_head_is_one_round(
    served: tuple[Service, Rounds], devnet: RunningDevnet, entry_id: str
) -> None:
    """GetContractVerification runs at the head as IsHoneypot does, its trace beside the
    journey: recomputed at a head this worker knows, the confirmation, the journey and
    the trace are one round (five before), and the answer is the one of a check that
    read the head and the token first."""
    svc, rounds = served
    token, path = _address(devnet, entry_id), "/v2/GetContractVerification"
    first = await _check(svc, token, path)  # first sight: resolved, then traced
    read = await _check(svc, token, path)  # the head and the target read together
    rounds.rounds.clear()
    used = _assumed(True)
    planned = await _check(svc, token, path)
    assert len(rounds.rounds) == 1, rounds.rounds
    assert "eth_getBlockByNumber" in rounds.rounds[0]  # the confirmation
    assert "debug_traceCall" in rounds.rounds[0]  # the trace, beside the journey
    assert _assumed(True) == used + 1
    assert planned["contractCalls"] and planned["isRootOpenSource"] is True
    assert _probe_free(planned) == _probe_free(read) == _probe_free(first)


async def test_a_contract_verification_of_no_contract_or_a_non_token(
    served: tuple[Service, Rounds], devnet: RunningDevnet
) -> None:
    """Resolving any contract (not only tokens) at the head: an address without code is
    still "not a contract" (200), a contract that is no token is checked without a pool,
    and IsHoneypot on it still refuses it as no token, even after GetContractVerification
    remembered its resolution (a contract's resolution never stands in for a token's)."""
    svc, _ = served
    path = "/v2/GetContractVerification"
    nothing = await _check(svc, "0x000000000000000000000000000000000000dEaD", path)
    assert nothing["isContract"] is False and nothing["fullCheckPerformed"] is False
    router = devnet.manifest["addresses"]["V2_ROUTER"]
    for _ in range(2):  # the second at the head the first remembered
        body = await _check(svc, router, path)
        assert body["isContract"] is True and body["fullCheckPerformed"] is False, body
        assert "no pool" in body["fullCheckReason"]
    transport = httpx.ASGITransport(app=create_app(svc.settings, svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        params = {"address": router, "chainID": str(DEVNET_ID)}
        reply = await http.get("/v2/IsHoneypot", params=params)
    assert reply.status_code == 400, reply.text
    assert "not an ERC-20 token" in reply.json()["error"]


async def test_top_holders_of_an_indexed_token_are_two_rounds(
    served: tuple[Service, Rounds], devnet: RunningDevnet
) -> None:
    """TopHolders: the code check beside the index's refresh (its head read), then the
    supply, the candidates' balances and their code together (four rounds before)."""
    svc, rounds = served
    token = _address(devnet, "plain")
    await _check(svc, token, "/v1/TopHolders")  # the first index of the token
    rounds.rounds.clear()
    body = await _check(svc, token, "/v1/TopHolders")
    assert len(rounds.rounds) == 2, rounds.rounds
    assert "eth_getBlockByNumber" in rounds.rounds[0]  # the refresh's head, with the code
    assert body["holders"] and any(h["isContract"] for h in body["holders"])  # the pool
    assert any(not h["isContract"] for h in body["holders"])


@pytest.mark.parametrize("entry_id", ["plain", "multi-pair"])
async def test_get_pairs_reads_symbols_and_known_creation_blocks_beside_the_search(
    served: tuple[Service, Rounds], devnet: RunningDevnet, entry_id: str
) -> None:
    """GetPairs: the symbols of the token and the base tokens go out with the search, and
    the blocks of the creations the last lookup kept with the lookup that confirms them,
    so a token's pairs asked again are two round trips (four before), the same answer."""
    svc, rounds = served
    token = _address(devnet, entry_id)
    transport = httpx.ASGITransport(app=create_app(svc.settings, svc))
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        params = {"address": token, "chainID": str(DEVNET_ID)}
        other = {**params, "address": _address(devnet, "fot-3")}
        await http.get("/v1/GetPairs", params=other)  # the node's capabilities probed
        rounds.rounds.clear()
        first = await http.get("/v1/GetPairs", params=params)
        assert len(rounds.rounds) <= 3, rounds.rounds
        rounds.rounds.clear()
        again = await http.get("/v1/GetPairs", params=params)
    assert len(rounds.rounds) == 2, rounds.rounds
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json() and first.json(), first.text


@pytest.mark.parametrize("served", [15.0], ids=["cache-on"], indirect=True)
async def test_a_cache_miss_at_a_known_head_uses_the_resolution_remembered_there(
    served: tuple[Service, Rounds], devnet: RunningDevnet
) -> None:
    """With the results cache on, the lookup reads the head (exact, nothing assumed); a
    miss at that head (here: other parameters) plans the check from the resolution
    remembered at it: the lookup's round, then one."""
    svc, rounds = served
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    token, pair = entry["address"], entry["pools"][0]["address"]
    await _check(svc, token)  # first sight
    await _check(svc, token, ownerPowers="false")  # a miss; the resolution remembered
    used = _assumed(True)
    rounds.rounds.clear()
    await _check(svc, token, pair=pair)  # a miss at the same head
    assert len(rounds.rounds) == 2, rounds.rounds
    assert rounds.rounds[0] == ["eth_getBlockByNumber"]  # the lookup's
    assert _assumed(True) == used  # that head was read, not assumed


async def _mined(rpc: RpcClient, tx: dict[str, Any]) -> None:
    tx_hash = await rpc.call("eth_sendTransaction", [{**tx, "gas": hex(300_000)}])
    for _ in range(200):  # bounded: anvil mines each transaction at once
        receipt = await rpc.call("eth_getTransactionReceipt", [tx_hash])
        if receipt is not None:
            assert receipt["status"] == "0x1", receipt
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{tx_hash} was not mined")


async def _add_reserve(devnet: RunningDevnet, pair: str) -> None:
    """A block in which the pair's WETH reserve grows (sent to it, then ``sync()``)."""
    rpc = RpcClient(devnet.url)
    weth = devnet.manifest["addresses"]["WETH"]
    sender = "0x00000000000000000000000000000000c0ffee03"
    try:
        await rpc.call("anvil_impersonateAccount", [sender])
        await rpc.call("anvil_setBalance", [sender, hex(10**21)])
        deposit = {"from": sender, "to": weth, "value": hex(10**19), "data": "0xd0e30db0"}
        await _mined(rpc, deposit)  # deposit()
        transfer = encode_call("transfer(address,uint256)", [pair, 10**19])
        await _mined(rpc, {"from": sender, "to": weth, "data": transfer})
        await _mined(rpc, {"from": sender, "to": pair, "data": encode_call("sync()", [])})
    finally:
        await rpc.aclose()


async def test_a_block_mined_between_checks_drops_what_was_planned(
    served: tuple[Service, Rounds], devnet: RunningDevnet
) -> None:
    """The remembered head is no longer the head: the check planned at it is dropped (a
    stale answer would show the pool's old reserves) and the check runs at the new head,
    as a check with nothing assumed does."""
    svc, rounds = served
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == "plain")
    token, pair = entry["address"], entry["pools"][0]["address"]
    control = RpcClient(devnet.url)
    snapshot = await control.call("evm_snapshot", [])
    try:
        await _check(svc, token)
        before = await _check(svc, token)  # remembered at this head
        await _add_reserve(devnet, pair)
        wasted = _assumed(False)
        rounds.rounds.clear()
        after = await _check(svc, token)
        assert _stable(after) != _stable(before)  # the pool changed: not the old answer
        assert _assumed(False) == wasted + 1
        assert len(rounds.rounds) >= 2  # the confirmation, then the check at the new head
        again = await _check(svc, token)  # planned at the new head, confirmed
        assert _stable(after) == _stable(again)
    finally:
        await control.call("evm_revert", [snapshot])
        await control.aclose()

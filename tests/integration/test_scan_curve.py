"""A first check's owner-power scan sends its trials on the story the pool's curve
predicts (story.curve_story, powers._on_curve; issue #27), beside the amounts round
rather than after it, and uses them only when that round told the same story: the
answer is the one the trials run after the round would give.  Its deployer, asked
beside the check's head (owners.reads_ahead), joins the senders it guesses.  Real
anvil."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from test_journey_ahead import _stable
from test_journey_first_sight import _address, _first_scans, service  # noqa: F401 (fixture)
from test_v4_known_pools import Rounds

from tokenrisk.api.app import create_app
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.head import BlockClock
from tokenrisk.chain.rpc import RpcSettings
from tokenrisk.checks.target import search_pools
from tokenrisk.checks.trade import prepare
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import DEVNET_ID, Service, connect_devnet
from tokenrisk.simulate import owners, powers
from tokenrisk.simulate.simulator import Simulator
from tokenrisk.simulate.story import amounts, curve_story, new_targets

pytestmark = pytest.mark.integration

STEADY = BlockClock(seconds=1e9)
"""Blocks far apart: the head the last check read is taken as current (as on a chain
whose next block is seconds away), so a first check asks its reads beside it."""


async def _simulator(svc: Service, devnet: RunningDevnet, entry_id: str) -> Simulator:
    """The simulator of ``entry_id``'s first pool, its balance slot search done."""
    node = svc.nodes[DEVNET_ID]
    token = _address(devnet, entry_id)
    pool = (await search_pools(node, token)).pools[0]
    ready = await prepare(node, svc.honeypot.trading, pool, token)
    assert ready.sim is not None and ready.token_slot is not None
    await ready.token_slot  # not left running
    return ready.sim


@pytest.mark.parametrize(
    ("entry_id", "told"),
    [("plain", True), ("hidden-mint", True), ("fot-3", False), ("high-tax", False)],
)
async def test_the_curves_story_is_the_amounts_rounds_exactly_when_no_buy_is_taxed(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
    entry_id: str,
    told: bool,
) -> None:
    """On a V2 pool the curve's story equals the one the amounts round returns, wallets
    and all, for a token that takes nothing from a buy; a buy tax (``fot-3``,
    ``high-tax``) makes them differ (and the trials sent on it are dropped).  Fails when
    the prediction is off by a wei (B's buy on the reserves A's left, the pool's
    balance after both) or when the round picks wallets of its own."""
    sim = await _simulator(service, devnet, entry_id)
    targets = new_targets(sim)
    predicted = curve_story(sim, targets, True)
    assert predicted is not None and predicted.other == targets.story[0]
    round_told, notes = await amounts(sim, targets, True, predict=True)
    assert round_told is not None and notes == ()
    assert (round_told == predicted) is told, (round_told, predicted)


async def test_no_curve_on_a_v3_pool_or_without_the_storys_wallets(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
) -> None:
    """A V3 pool's output needs its ticks: no prediction.  Nor for targets whose story
    wallets were not chosen with them (each story would pick its own)."""
    for entry_id, chosen in (("v3-only", True), ("plain", False)):
        sim = await _simulator(service, devnet, entry_id)
        targets = new_targets(sim)
        if not chosen:
            targets = type(targets)(targets.buyer, targets.pair)
        assert curve_story(sim, targets, False) is None, entry_id


@pytest.mark.parametrize(
    ("entry_id", "used"),
    [("plain", True), ("latent-pause", True), ("gas-price-cap", True), ("fot-3", False)],
)
async def test_a_first_check_with_the_curves_trials_answers_as_without(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
    monkeypatch: pytest.MonkeyPatch,
    entry_id: str,
    used: bool,
) -> None:
    """Two first checks with the same scan wallets, without then with the trials sent on
    the curve's story: the same answer.  Used (counted ``scan_curve`` True) for a token
    that takes nothing from a buy, its two-step trials (``latent-pause``) and a token
    whose sells fail after a buy (``gas-price-cap``: the amounts round's failed sell
    only adds the batch from held positions, the trials' amounts are the curve's);
    dropped for a buy tax (``fot-3``), the trials then run on the round's story.  Fails
    when trials planned on another story are used, or a used batch is not."""

    def patch(ahead: bool) -> None:
        if not ahead:
            monkeypatch.setattr(powers, "curve_story", lambda *_: None)

    address = _address(devnet, entry_id)
    answers, seen = await _first_scans(service, monkeypatch, address, patch)
    assert answers[0]["ownerPowers"]["scanned"]
    assert [u for planned, u in seen if planned == "scan_curve"] == [used]
    assert ("scan_trials", True) in seen and ("scan_trials", False) not in seen
    assert _stable(answers[1]) == _stable(answers[0])


async def _first_rounds(devnet: RunningDevnet, data: Path, token: str) -> tuple[int, Any]:
    """The round trips of a first check of ``token`` on a fresh service whose node hands
    each round's replies back together (:class:`Rounds`), the head known from a check of
    another token before it (as on a serving process), without the holder analysis; that
    check's answer and its rounds."""
    # no holder analysis: its reads follow the index's writes (a thread), whose timing,
    # not the check's structure, can leave them past a round's release here
    settings = Settings(devnet=False, data_dir=data, deadline=60.0, cache_ttl=0, holder_limit=0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    rounds = Rounds(devnet.url)
    node = svc.nodes[DEVNET_ID]
    node.rpc = CoalescingRpc(devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds)
    node.clock = STEADY  # the head the check before read is taken as current
    transport = httpx.ASGITransport(app=create_app(svc.settings, svc))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as http:
            before = {"address": _address(devnet, "sell-cooldown"), "chainID": DEVNET_ID}
            assert (await http.get("/v2/IsHoneypot", params=before)).status_code == 200
            rounds.rounds.clear()
            params = {"address": token, "chainID": DEVNET_ID}
            reply = await http.get("/v2/IsHoneypot", params=params)
            assert reply.status_code == 200, reply.text
            return len(rounds.rounds), (reply.json(), rounds.rounds)
    finally:
        await svc.close()
        await rounds.aclose()


async def test_a_first_checks_simulations_take_a_round_less(
    devnet: RunningDevnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first check of ``plain``: the scan's trials leave with its amounts round and the
    journey, not a round after them, so the check's simulations take one round trip,
    against two with the curve turned off (each on a fresh service; counted without a
    clock, :class:`Rounds`).  The same owner powers."""
    token = _address(devnet, "plain")
    _, (answer, sent) = await _first_rounds(devnet, tmp_path / "a", token)
    monkeypatch.setattr(powers, "curve_story", lambda *_: None)
    _, (step_by_step, alone) = await _first_rounds(devnet, tmp_path / "b", token)
    simulating = [sum("eth_simulateV1" in r for r in rounds) for rounds in (sent, alone)]
    assert simulating == [1, 2], (sent, alone)
    assert answer["ownerPowers"]["scanned"]
    assert _stable(answer["ownerPowers"]) == _stable(step_by_step["ownerPowers"])


async def test_a_deployer_asked_beside_the_head_joins_the_guessed_senders(
    devnet: RunningDevnet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``honest-renounced``'s deployer is a sender no getter names: asked beside the
    check's head (owners.reads_ahead), it is known when the scan guesses its senders,
    so the guess is the scan's senders and is not widened (its added sender's screen
    and trials a round later); the same owner powers as when the guess lacks it, and
    its simulations take one round, not two.  Fails when the lookup asked ahead is not
    read by the guess, or when the scan waits on it forever (it awaited itself once)."""
    widened: list[bool] = []
    real = powers._widened

    async def spied(*args: Any) -> Any:
        widened.append(True)
        return await real(*args)

    monkeypatch.setattr(powers, "_widened", spied)
    token = _address(devnet, "honest-renounced")
    _, (answer, sent) = await _first_rounds(devnet, tmp_path / "a", token)
    assert widened == []
    monkeypatch.setattr(owners, "deployer_known", lambda *_: (False, None))
    _, (guessed, alone) = await _first_rounds(devnet, tmp_path / "b", token)
    assert widened == [True]
    assert answer["ownerPowers"]["scanned"] and answer["ownerPowers"]["findings"]
    assert _stable(answer["ownerPowers"]) == _stable(guessed["ownerPowers"])
    simulating = [sum("eth_simulateV1" in r for r in rounds) for rounds in (sent, alone)]
    assert simulating == [1, 2], (sent, alone)

"""A first owner-power scan of a Uniswap V4 pool with a hook: the hook's screen and trials
go with the token's (#27).

The hook's facts are asked with the token's; its screen of the senders its facts name
and its trials on the amounts round's story leave with the token's screen and trials,
instead of waiting for the hook's callers and then for its screen (two rounds more).
Each is used only where it is what the scan would send (the screen fills in a sender
it missed, the trials only when they ran every trial on the scan's story).  Real anvil:
the rounds are counted without a clock (:class:`Rounds`) and the result is the one of
a scan without them (the same wallets both times).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_journey_first_sight import _address, _two_first_scans, service  # noqa: F401 (fixture)

from tokenrisk.checks.target import search_pools
from tokenrisk.checks.trade import prepare
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.errors import NodeThrottled
from tokenrisk.service import DEVNET_ID, Service
from tokenrisk.simulate import powers, story
from tokenrisk.simulate.owners import PowerCache
from tokenrisk.simulate.powers import ScanBounds

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("entry_id", "ahead", "alone"),
    [("v4-hook-fee-1", 2, 4), ("v4-hook-sell-block", 3, 4)],
)
async def test_a_first_scan_sends_the_hooks_screen_and_trials_with_the_tokens(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
    entry_id: str,
    ahead: int,
    alone: int,
) -> None:
    """``v4-hook-fee-1``: the hook's screen and trials with the token's, two rounds (the
    facts, then every screen and trial) against four without (the hook's screen after
    its callers, its trials after that); ``v4-hook-sell-block``: a hook with nothing a
    likely sender can call: the token's trials sent ahead are used alone (its sells fail
    after a buy, so the scan re-runs from held positions: a round more either way).
    Same result."""
    pool, counted, results, last = await _two_first_scans(
        service,
        devnet,
        entry_id,
        lambda patch: patch.setattr(powers, "_hook_ahead_of", lambda *_: (None, None)),
    )
    assert pool.hooks and int(pool.hooks, 16)
    assert counted == [ahead, alone], last
    assert results[0].scanned and results[0] == results[1]


async def test_a_failed_hook_send_ahead_leaves_the_usual_scan(
    service: Service,  # noqa: F811
    devnet: RunningDevnet,
) -> None:
    """The hook's screen and trials sent ahead failing (a throttled node): the scan
    screens and tries the hook the usual way, with the same result."""
    node = service.nodes[DEVNET_ID]
    token = _address(devnet, "v4-hook-fee-1")
    pool = (await search_pools(node, token)).pools[0]
    caps = await node.capabilities()
    bounds = replace(ScanBounds(), otterscan=caps.otterscan, state_floor=caps.state_floor())

    async def throttled(*_: object) -> None:
        raise NodeThrottled("the node throttled the send ahead")

    results = []
    for failing in (False, True):
        ready = await prepare(node, service.honeypot.trading, pool, token)
        assert ready.sim is not None
        wallets = iter(range(1, 1_000))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(story, "fresh_address", lambda w=wallets: f"0x7e57{next(w):036x}")
            if failing:
                patch.setattr(powers, "_hook_ahead", throttled)
            results.append(await powers.scan(ready.sim, DEVNET_ID, PowerCache(), bounds))
    assert results[0].scanned and results[0] == results[1]

"""The service's start finds the registry base tokens' balance slots (checks/trade.py:
``warm_nodes``), so a token's first check does not wait two round trips for its base
token's slot; the slots are those a first check would have found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokenrisk.checks.trade import base_slot_of, warm_nodes
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet
from tokenrisk.simulate.slots import find_balance_slot

pytestmark = pytest.mark.integration


async def test_start_up_finds_every_base_tokens_slot(devnet: Any, tmp_path: Path) -> None:
    settings = Settings(devnet=False, data_dir=tmp_path, cache_ttl=0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    try:
        trading = svc.honeypot.trading
        (node,) = [svc.nodes.node(i) for i in svc.nodes]
        bases = node.chain.base_tokens
        assert bases
        await warm_nodes(svc.nodes, trading)
        for base in bases:
            found, slot = trading.base_slots.get((node.id, base.address))
            assert found, base.symbol  # kept by the start, before any check
            assert slot == await find_balance_slot(node.rpc, base.address), base.symbol
        misses = trading.base_slots.stats.misses
        for base in bases:  # a first check's lookup is then answered without the node
            await base_slot_of(node, trading, base.address)
        assert trading.base_slots.stats.misses == misses
        assert any(trading.base_slots.get((node.id, b.address))[1] for b in bases)
    finally:
        await svc.close()

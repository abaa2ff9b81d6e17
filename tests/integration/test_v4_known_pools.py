"""A V4 token's known pools cost no round trip of their own (#27): the state of the pools
whose ``Initialize`` events the Node remembers is read beside the search for newer
events, and used when that search finds the same pools; a pool the new events add is
still found (and read in a round of its own).  Real anvil; a transport in front of it
numbers the sequential rounds without a clock: it holds requests until the event loop
has nothing more to send, then lets them all go as one round."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from receipts import mined

from tokenrisk.chain.abi import ZERO_ADDRESS, encode_call
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.node import Node
from tokenrisk.chain.pools import search_pools
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.chain.v4 import PoolKey
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.service import DEVNET_ID, Service, connect_devnet

pytestmark = pytest.mark.integration

IDLE_TURNS = 20
"""Event-loop turns without a new request after which the held ones go out (the node
client waits 3 for company; a dependent request cannot come before a reply)."""
_JSON = {"content-type": "application/json"}


@dataclass
class _Round:
    """The requests of one round still waiting for the node; ``done`` once none is."""

    waiting: int
    done: asyncio.Future[None]

    def answered(self) -> None:
        self.waiting -= 1
        if self.waiting == 0 and not self.done.done():
            self.done.set_result(None)


class Rounds(httpx.AsyncBaseTransport):
    """Forwards to ``upstream`` round by round; ``rounds``: each round's methods.

    A round's replies are handed back together, once the node answered all of them, as
    from a node far away (its own time small against the round trip): a request made
    on one reply then leaves with those made on the others, as it would there, and is
    not counted a round of its own for a sibling's reply still being read here."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.rounds: list[list[str]] = []
        self._held: list[tuple[list[str], asyncio.Future[_Round]]] = []
        self._releases: set[asyncio.Task[None]] = set()
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        parsed = json.loads(body)
        methods = [c["method"] for c in (parsed if isinstance(parsed, list) else [parsed])]
        gate: asyncio.Future[_Round] = asyncio.get_running_loop().create_future()
        self._held.append((methods, gate))
        if len(self._held) == 1:
            task = asyncio.create_task(self._release())
            self._releases.add(task)
            task.add_done_callback(self._releases.discard)
        together = await gate
        try:
            forwarded = httpx.Request("POST", self.upstream, content=body, headers=_JSON)
            response = await self._inner.handle_async_request(forwarded)
            content = await response.aread()
        finally:
            together.answered()
        await asyncio.shield(together.done)
        return httpx.Response(response.status_code, content=content, headers=_JSON)

    async def _release(self) -> None:
        seen = -1
        while seen != len(self._held):  # bounded: the callers send finitely many
            seen = len(self._held)
            for _ in range(IDLE_TURNS):
                await asyncio.sleep(0)
        held, self._held = self._held, []
        self.rounds.append([m for methods, _ in held for m in methods])
        together = _Round(len(held), asyncio.get_running_loop().create_future())
        for _, gate in held:
            gate.set_result(together)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _address(devnet: RunningDevnet, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


@pytest.fixture
async def node(devnet: RunningDevnet, tmp_path: Path) -> AsyncIterator[tuple[Node, Rounds]]:
    """The devnet's Node of a fresh service, its client behind a :class:`Rounds`."""
    settings = Settings(devnet=False, data_dir=tmp_path / "data", deadline=120.0)
    svc: Service = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    rounds = Rounds(devnet.url)
    node = svc.nodes[DEVNET_ID]
    node.rpc = CoalescingRpc(devnet.url, RpcSettings(retries=0), "devnet node", transport=rounds)
    try:
        yield node, rounds
    finally:
        await svc.close()
        await rounds.aclose()


@pytest.mark.parametrize("entry_id", ["v4-plain", "v4-hook-owner-fee"])
async def test_a_known_pools_state_goes_with_the_event_search(
    node: tuple[Node, Rounds], devnet: RunningDevnet, entry_id: str
) -> None:
    chain_node, rounds = node
    token = _address(devnet, entry_id)
    first = await search_pools(chain_node, token)  # first sight: events, then the state
    assert [p.version for p in first.pools] == ["V4"]
    rounds.rounds.clear()
    again = await search_pools(chain_node, token)
    assert again == first  # the same rows, read one round trip earlier
    assert len(rounds.rounds) == 1, rounds.rounds
    (sent,) = rounds.rounds
    assert "eth_getLogs" in sent and "eth_call" in sent
    assert "eth_getBlockByNumber" not in sent  # anvil's logs carry their block's time


async def test_a_pool_initialized_since_is_found(
    node: tuple[Node, Rounds], devnet: RunningDevnet
) -> None:
    chain_node, rounds = node
    token = _address(devnet, "v4-plain")
    manager = devnet.manifest["addresses"]["POOL_MANAGER"]
    key = PoolKey(ZERO_ADDRESS, token, 500, 10, ZERO_ADDRESS)  # ETH sorts first
    first = await search_pools(chain_node, token)
    assert key.id not in {p.pool_id for p in first.pools}
    rpc = RpcClient(devnet.url)
    snapshot = await rpc.call("evm_snapshot", [])
    sender = "0x00000000000000000000000000000000c0ffee02"
    try:
        await rpc.call("anvil_impersonateAccount", [sender])
        await rpc.call("anvil_setBalance", [sender, hex(10**20)])
        data = encode_call(
            "initialize((address,address,uint24,int24,address),uint160)",
            [key.as_tuple(), 2**96],
        )
        await mined(rpc, {"from": sender, "to": manager, "data": data, "gas": hex(1_000_000)})
        rounds.rounds.clear()
        again = await search_pools(chain_node, token)
        ids = [p.pool_id for p in again.pools]
        assert key.id in ids and all(p.pool_id in ids for p in first.pools), ids
        assert len(rounds.rounds) == 2  # the new pool's state after the events naming it
    finally:
        await rpc.call("evm_revert", [snapshot])
        await rpc.aclose()

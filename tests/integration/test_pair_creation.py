"""Pool creation (``CreatedAtTimestamp`` / ``CreationTxHash``) on nodes that cap
``eth_getLogs`` ranges, against the real devnet anvil.

A :class:`fakenode.FaultyNode` transport in front of the session devnet refuses the
queries a public provider would refuse: ``eth_getLogs`` spanning more than
:data:`MAX_SPAN` blocks (or up to "latest"), and in one case ``eth_getCode`` at old
blocks (a node that is not an archive node).  The answers must equal those of the
unlimited node; where the node cannot tell, creation data is unknown but the request
still answers; a real node failure is still the typed error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakenode import Fault, FaultyNode
from receipts import mined

from tokenrisk.api import wire
from tokenrisk.chain.abi import encode_call
from tokenrisk.chain.created import REREAD
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.checks.pairs import get_pairs
from tokenrisk.checks.venue import created
from tokenrisk.config import Settings
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.errors import NodeThrottled
from tokenrisk.model import Pool
from tokenrisk.service import DEVNET_ID, Service, connect_devnet

pytestmark = pytest.mark.integration

MAX_SPAN = 150
"""Widest eth_getLogs range the limited node answers (the probe then measures 100)."""
TOO_WIDE = Fault(-32005, f"block range is too wide (max {MAX_SPAN} blocks)")
NO_STATE = Fault(-32000, "missing trie node (state is not available)")
THROTTLED = Fault(-32005, "daily request count exceeded, request rate limited")

Chooser = Callable[[dict[str, Any]], Fault | None]


def _address(devnet: RunningDevnet, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


def _span(query: dict[str, Any]) -> float:
    """Blocks an eth_getLogs query covers (a tag such as "latest": unbounded)."""
    try:
        return int(query["toBlock"], 16) - int(query["fromBlock"], 16) + 1
    except (KeyError, ValueError):
        return float("inf")


def capped(call: dict[str, Any]) -> Fault | None:
    """A provider capping eth_getLogs at MAX_SPAN blocks."""
    if call["method"] == "eth_getLogs" and _span(call["params"][0]) > MAX_SPAN:
        return TOO_WIDE
    return None


def _creation_query(call: dict[str, Any]) -> dict[str, Any] | None:
    """The factories' creation-event query (over every factory: an address list)."""
    query = call["params"][0] if call["method"] == "eth_getLogs" else {}
    return query if isinstance(query.get("address"), list) else None


def refusing_latest(call: dict[str, Any]) -> Fault | None:
    """A provider whose probe ranges pass but whose full-history query is refused."""
    query = _creation_query(call)
    return TOO_WIDE if query is not None and query["fromBlock"] == "0x0" else None


def old_code(fault: Fault, head: int) -> Chooser:
    """``capped``, and ``fault`` for eth_getCode below ``head`` (a node without history)."""

    def choose(call: dict[str, Any]) -> Fault | None:
        if call["method"] == "eth_getCode":
            block = call["params"][1]
            if block.startswith("0x") and int(block, 16) < head:
                return fault
        return capped(call)

    return choose


@pytest.fixture
async def make(devnet: RunningDevnet, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``make(choose)``: a service on the devnet through a FaultyNode (None: direct);
    ``make(choose, transport)``: through that FaultyNode subclass."""
    made: list[tuple[Service, FaultyNode | None]] = []

    def build(
        choose: Chooser | None, transport: type[FaultyNode] = FaultyNode
    ) -> tuple[Service, FaultyNode | None]:
        data = tmp_path / f"svc-{len(made)}"
        settings = Settings(devnet=False, data_dir=data, deadline=120.0)
        svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
        faulty = transport(devnet.url, choose) if choose is not None else None
        if faulty is not None:
            rpc = RpcClient(devnet.url, RpcSettings(retries=0), "devnet node", transport=faulty)
            svc.nodes[DEVNET_ID].rpc = rpc
        made.append((svc, faulty))
        return svc, faulty

    yield build
    for svc, faulty in made:
        await svc.close()
        if faulty is not None:
            await faulty.aclose()


async def _head(devnet: RunningDevnet) -> int:
    rpc = RpcClient(devnet.url)
    try:
        return int(await rpc.call("eth_blockNumber"), 16)
    finally:
        await rpc.aclose()


def _created(pools: list[Pool]) -> dict[str, tuple[int | None, str | None]]:
    return {p.address: (p.created_at_timestamp, p.creation_tx_hash) for p in pools}


async def _pools(svc: Service, token: str) -> list[Pool]:
    return [row.pool for row in await get_pairs(svc.nodes, token, DEVNET_ID, limit=50)]


@pytest.fixture
async def fresh(devnet: RunningDevnet) -> AsyncIterator[str]:
    """The "plain" token with two more pools created on the running node (a V2 pair
    against DAI, then a few blocks later a V3 pool against USDC), reverted afterwards.

    The catalogue's own pools were created during the devnet build, before anvil loaded
    its state dump, so this anvil has no state for their blocks (like a node without old
    history); pools created now have a history the node keeps."""
    rpc = RpcClient(devnet.url)
    snapshot = await rpc.call("evm_snapshot", [])
    a = devnet.manifest["addresses"]
    token = _address(devnet, "plain")
    sender = "0x00000000000000000000000000000000c0ffee01"
    try:
        await rpc.call("anvil_impersonateAccount", [sender])
        await rpc.call("anvil_setBalance", [sender, hex(10**20)])
        pair = encode_call("createPair(address,address)", [token, a["DAI"]])
        await mined(rpc, {"from": sender, "to": a["V2_FACTORY"], "data": pair})
        await rpc.call("anvil_mine", [hex(5)])
        pool = encode_call("createPool(address,address,uint24)", [token, a["USDC"], 500])
        await mined(
            rpc, {"from": sender, "to": a["V3_FACTORY"], "data": pool, "gas": hex(8_000_000)}
        )
        yield token
    finally:
        await rpc.call("evm_revert", [snapshot])
        await rpc.aclose()


def _catalogue(devnet: RunningDevnet, entry_id: str) -> set[str]:
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    return {p["address"] for p in entry["pools"]}


@pytest.mark.parametrize("choose", [capped, refusing_latest], ids=["probed-cap", "refused"])
async def test_capped_node_finds_the_same_creation(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet, choose: Chooser
) -> None:
    direct, _ = make(None)
    limited, faulty = make(choose)
    expected = _created(await _pools(direct, fresh))
    found = _created(await _pools(limited, fresh))
    old = _catalogue(devnet, "plain")
    new = set(expected) - old
    assert len(new) == 2 and set(found) == set(expected)
    assert all(ts and tx for ts, tx in expected.values())  # the full-range lookup knows all
    assert {a: found[a] for a in new} == {a: expected[a] for a in new}  # same block and tx
    # no state for the blocks before the dump was loaded: unknown, never guessed
    assert all(found[a] == (None, None) for a in old)
    caps = await limited.nodes[DEVNET_ID].capabilities()
    assert caps.get_logs_max_range == (100 if choose is capped else None)
    assert faulty is not None and faulty.faulted > 0  # the refusals were really served


async def test_creation_is_found_once_per_pool(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """A pool found once is never searched again while its block stands (a pool the
    node cannot tell about is, as its history may still come)."""
    searched: list[str] = []

    def counting(call: dict[str, Any]) -> Fault | None:
        if call["method"] == "eth_getCode" and call["params"][1].startswith("0x"):
            searched.append(call["params"][0].lower())
        return capped(call)

    svc, _ = make(counting)
    first = _created(await _pools(svc, fresh))
    new = {a.lower() for a, (ts, _) in first.items() if ts}
    assert len(new) == 2 and new <= set(searched)
    before = len(searched)
    assert _created(await _pools(svc, fresh)) == first
    assert not new & set(searched[before:])


def _pair_of(body: Any) -> Any:
    return body["pair"]


async def test_honeypot_asks_no_events_for_a_known_pool(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """IsHoneypot's pair: its creation is read from the events once and kept, so a
    repeated check sends no full-history eth_getLogs (same answer)."""
    logs: list[dict[str, Any]] = []

    def counting(call: dict[str, Any]) -> Fault | None:
        if call["method"] == "eth_getLogs" and call["params"][0].get("fromBlock") == "0x0":
            logs.append(call["params"][0])
        return None

    svc, _ = make(counting)
    pair = await _pools(make(None)[0], fresh)
    first = _pair_of(await _honeypot(svc, fresh))
    assert logs and first["creationTxHash"] in {p.creation_tx_hash for p in pair}
    count = len(logs)
    assert _pair_of(await _honeypot(svc, fresh)) == first
    assert len(logs) == count  # nothing asked of the events for the kept pool


async def _honeypot(svc: Service, token: str) -> Any:
    return wire.dump(wire.honeypot_body(await is_honeypot(svc.honeypot, token, DEVNET_ID, None)))


async def test_pairs_read_only_the_events_after_the_head_they_were_read_at(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """GetPairs keeps the events it read with the head they were read at: a later lookup
    reads only the blocks after it (and the last REREAD before it), and still finds a
    pool created since."""
    starts: list[int] = []

    def counting(call: dict[str, Any]) -> Fault | None:
        query = _creation_query(call)
        if query is not None:
            starts.append(int(query["fromBlock"], 16))
        return None

    svc, _ = make(counting)
    first = _created(await _pools(svc, fresh))
    assert starts and set(starts) == {0}
    head = await _head(devnet)
    starts.clear()
    assert _created(await _pools(svc, fresh)) == first
    assert starts and set(starts) == {head + 1 - REREAD}  # only the last few blocks
    starts.clear()
    await _create_pair(devnet, fresh, "USDC", "0x00000000000000000000000000000000c0ffee02")
    third = _created(await _pools(svc, fresh))
    assert set(third) - set(first)  # the new pair, from the newer blocks alone
    assert {k: third[k] for k in first} == first
    assert starts and set(starts) == {head + 1 - REREAD}


class NoLogTimes(FaultyNode):
    """A node whose logs lack execution-apis' ``blockTimestamp`` (older clients)."""

    def _replace(self, call: dict[str, Any], real: Any) -> Any:
        logs = real.get("result") if isinstance(real, dict) else None
        if call["method"] == "eth_getLogs" and isinstance(logs, list):
            bare = [{k: v for k, v in log.items() if k != "blockTimestamp"} for log in logs]
            real = {**real, "result": bare}
        return super()._replace(call, real)


async def test_creation_times_from_the_events_or_from_their_blocks(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """Where the node gives each log's ``blockTimestamp`` (anvil; geth since 1.16, erigon
    and besu, as execution-apis now has it), a pool's creation time comes with its event;
    where it does not, the creation blocks are read after the lookup: the same answer,
    one round trip fewer with the field."""
    read: list[str] = []

    def headers(call: dict[str, Any]) -> Fault | None:
        if call["method"] == "eth_getBlockByNumber":
            read.append(call["params"][0])
        return None

    answers, blocks = [], []
    for transport in (FaultyNode, NoLogTimes):
        svc, _ = make(headers, transport)
        await svc.nodes[DEVNET_ID].head()  # the head's own read, before counting
        read.clear()
        answers.append(_created(await _pools(svc, fresh)))
        blocks.append(sorted(set(read)))
    assert answers[0] == answers[1]
    times = [t for t, _ in answers[0].values() if t is not None]
    assert len(times) >= 2  # the fixture's two pools (and any the build created)
    assert not set(blocks[0]) - {"latest"}  # no creation block read: the events had it
    assert set(blocks[1]) - {"latest"}  # read without the field


async def test_every_catalogue_tokens_creations_with_or_without_log_times(
    make: Callable[..., Any], devnet: RunningDevnet
) -> None:
    """Every devnet token's pairs carry the same creation time and transaction whether the
    node's logs give ``blockTimestamp`` or its blocks are read for it."""
    with_times, _ = make(lambda call: None)
    without, _ = make(lambda call: None, NoLogTimes)
    tokens = [str(t["address"]) for t in devnet.manifest["tokens"]]
    stamped = 0
    for token in tokens:
        answer = _created(await _pools(with_times, token))
        assert answer == _created(await _pools(without, token)), token
        stamped += sum(t is not None for t, _ in answer.values())
    assert stamped >= len(tokens)  # every token has at least one pool with its time


@pytest.mark.parametrize("choose", [None, capped], ids=["events", "history"])
async def test_a_revert_makes_kept_creations_be_read_again(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet, choose: Chooser | None
) -> None:
    """The kept events and creations hold only while their blocks do: after a revert a
    pool created again (same address, another block and transaction) is reported with
    its new creation by GetPairs and IsHoneypot alike, from the events or (on a node
    that caps log ranges) from the node's history."""
    svc, _ = make(choose)
    rpc = RpcClient(devnet.url)
    try:
        snapshot = await rpc.call("evm_snapshot", [])
        await rpc.call("anvil_mine", [hex(10)])
        await _create_pair(devnet, fresh, "USDT", "0x00000000000000000000000000000000c0ffee03")
        pools = await _pools(svc, fresh)
        before = _created(pools)
        node = svc.nodes[DEVNET_ID]
        for pool in pools:  # IsHoneypot's way: each pool's creation kept on the Node
            bare = replace(pool, created_at_timestamp=None, creation_tx_hash=None)
            assert await created(node, bare, fresh, simulated=False) == pool
        assert await rpc.call("evm_revert", [snapshot]) is True
        # created again at once, so at a block the kept events claim to cover; then the
        # chain grows past the head they were read at
        await _create_pair(devnet, fresh, "USDT", "0x00000000000000000000000000000000c0ffee04")
        await rpc.call("anvil_mine", [hex(15)])
    finally:
        await rpc.aclose()
    after = _created(await _pools(svc, fresh))
    assert set(after) == set(before)
    changed = [a for a in after if after[a] != before[a]]
    assert len(changed) == 1  # the re-created pair alone: its block and transaction changed
    address = changed[0]
    stamp, tx = after[address]
    assert stamp and tx and tx != before[address][1]
    pool = next(p for p in pools if p.address == address)
    bare = replace(pool, created_at_timestamp=None, creation_tx_hash=None)
    assert (await created(node, bare, fresh, simulated=False)).creation_tx_hash == tx


async def _create_pair(devnet: RunningDevnet, token: str, other: str, sender: str) -> None:
    """A V2 pair of ``token`` against the devnet's ``other`` token, created by ``sender``
    (the ``fresh`` fixture reverts it)."""
    a = devnet.manifest["addresses"]
    rpc = RpcClient(devnet.url)
    try:
        await rpc.call("anvil_impersonateAccount", [sender])
        await rpc.call("anvil_setBalance", [sender, hex(10**20)])
        pair = encode_call("createPair(address,address)", [token, a[other]])
        await mined(rpc, {"from": sender, "to": a["V2_FACTORY"], "data": pair})
    finally:
        await rpc.aclose()


async def _mine(devnet: RunningDevnet, blocks: int) -> None:
    rpc = RpcClient(devnet.url)
    try:
        await rpc.call("anvil_mine", [hex(blocks)])
    finally:
        await rpc.aclose()


async def test_honeypot_on_a_capped_node(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """IsHoneypot answers on a capped node; its pair's creation is known when the node
    keeps the pool's history, unknown (absent) when it does not."""
    direct, _ = make(None)
    limited, _ = make(capped)
    bodies = [
        wire.dump(wire.honeypot_body(await is_honeypot(svc.honeypot, fresh, DEVNET_ID, None)))
        for svc in (direct, limited)
    ]
    assert all(b["simulationSuccess"] for b in bodies)
    assert bodies[0]["pair"]["createdAtTimestamp"] and bodies[0]["pair"]["creationTxHash"]
    assert bodies[1]["pair"].get("creationTxHash") is None  # a catalogue pool: no history
    pools = await _pools(direct, fresh)
    for pool in (p for p in pools if p.address not in _catalogue(devnet, "plain")):
        node = limited.nodes[DEVNET_ID]
        bare = replace(pool, created_at_timestamp=None, creation_tx_hash=None)
        assert await created(node, bare, fresh, simulated=False) == pool


async def test_node_without_history_leaves_creation_unknown(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    head = await _head(devnet)
    svc, faulty = make(old_code(NO_STATE, head))
    pools = await _pools(svc, fresh)
    assert len(pools) >= 3  # GetPairs still answers, every pool listed
    assert all(ts is None and tx is None for ts, tx in _created(pools).values())
    assert faulty is not None and faulty.faulted > 0


async def test_a_failing_node_is_still_an_error(
    make: Callable[..., Any], fresh: str, devnet: RunningDevnet
) -> None:
    """Only a missing history is "unknown"; a throttled node is the typed 503."""
    svc, _ = make(old_code(THROTTLED, await _head(devnet)))
    with pytest.raises(NodeThrottled):
        await _pools(svc, fresh)

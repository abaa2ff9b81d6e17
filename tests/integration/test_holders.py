"""The Transfer-log indexer and siphon detection against a real anvil.

Every test gets its own throwaway anvil (``--no-mining``: blocks are mined explicitly,
so one block can hold many transfers, and ``--auto-impersonate``: any address can send)
and deploys the repository's ``PlainToken`` / ``SiphonToken``.  Indexed balances are
always compared with ``balanceOf`` read from the chain.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_utils.crypto import keccak
from test_v4_known_pools import Rounds

from tokenrisk import metrics
from tokenrisk.chain.abi import checksum, encode_args, encode_call
from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.head import read_head
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.chain.tokens import balances_of
from tokenrisk.devnet import layout
from tokenrisk.devnet.instance import RunningDevnet
from tokenrisk.devnet.node import AnvilNode, repo_root, start_anvil
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.errors import RpcError
from tokenrisk.holders import (
    IndexProgress,
    IndexSettings,
    find_start_block,
    holder_count,
    index_token,
    siphoned_holders,
    top_holders,
    top_holders_checked,
    total_supply,
)
from tokenrisk.holders.index import first_window_ahead
from tokenrisk.store.engine import Cursor, Store, create_store

pytestmark = pytest.mark.integration

CHAIN = 31337
GAS = hex(200_000)
UINT256_MAX = 2**256 - 1


# FIXTURES


@pytest.fixture(scope="session")
def artifacts() -> dict[str, Any]:
    root = repo_root()  # the devnet build's compile (same input hash): no second solc run
    path = compile_contracts(root, layout.devnet_dir(root) / "solc")
    return dict(load_artifacts(path)["contracts"])


@pytest.fixture
def node() -> Iterator[AnvilNode]:
    with start_anvil(["--no-mining", "--auto-impersonate", "--gas-limit", "1000000000"]) as n:
        yield n


@pytest.fixture
async def rpc(node: AnvilNode) -> AsyncIterator[RpcClient]:
    client = RpcClient(node.url)
    yield client
    await client.aclose()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = create_store(f"sqlite:///{tmp_path / 'store.db'}")
    yield s
    s.close()


# CHAIN HELPERS


def address(label: str) -> str:
    return checksum("0x" + keccak(text=label)[-20:].hex())


async def mine(rpc: RpcClient, blocks: int = 1) -> None:
    await rpc.call("anvil_mine", [hex(blocks)])


async def send(rpc: RpcClient, txs: Sequence[dict[str, Any]], *, ok: bool = True) -> list[str]:
    """Send ``txs``, mine ONE block holding them, and check every receipt."""
    replies = await rpc.batch([("eth_sendTransaction", [{"gas": GAS, **tx}]) for tx in txs])
    assert not [r for r in replies if isinstance(r, Exception)], replies
    await mine(rpc)
    receipts = await rpc.batch([("eth_getTransactionReceipt", [h]) for h in replies])
    if ok:
        assert all(r["status"] == "0x1" for r in receipts), receipts
    return [str(h) for h in replies]


async def fund(rpc: RpcClient, addresses: Sequence[str]) -> None:
    await rpc.batch([("anvil_setBalance", [a, hex(10**20)]) for a in addresses])


def transfer(token: str, sender: str, to: str, amount: int) -> dict[str, Any]:
    data = encode_call("transfer(address,uint256)", [to, amount])
    return {"from": sender, "to": token, "data": data}


async def deploy(
    rpc: RpcClient, artifacts: dict[str, Any], name: str, supply: int, owner: str
) -> str:
    args = encode_args(["string", "string", "uint8", "uint256"], [name, name[:4], 18, supply])
    data = artifacts[name]["bytecode"] + args.hex()
    tx = {"from": owner, "data": data, "gas": hex(8_000_000)}
    (tx_hash,) = await send(rpc, [tx])
    receipt = await rpc.call("eth_getTransactionReceipt", [tx_hash])
    return checksum(receipt["contractAddress"])


async def deployer(rpc: RpcClient) -> str:
    accounts = await rpc.call("eth_accounts")
    return checksum(accounts[0])


async def scatter(
    rpc: RpcClient, token: str, owner: str, holders: Sequence[str], rounds: int, seed: int
) -> None:
    """Give every holder tokens, then let random holders trade with each other.

    Some send their whole balance (a holder that drops to zero), some send to
    themselves, and empty blocks separate the rounds.
    """
    rng = random.Random(seed)
    await fund(rpc, holders)
    await send(rpc, [transfer(token, owner, h, rng.randrange(1, 10**24)) for h in holders])
    for round_ in range(rounds):
        known = dict(zip(holders, await balances_of(rpc, token, list(holders)), strict=True))
        senders = rng.sample(list(holders), k=min(len(holders), 25))
        txs = []
        for sender in senders:
            balance = known[sender] or 0
            amount = balance if rng.random() < 0.2 else rng.randrange(0, balance + 1)
            to = sender if rng.random() < 0.05 else rng.choice(holders)
            txs.append(transfer(token, sender, to, amount))
        await send(rpc, txs)
        await mine(rpc, blocks=rng.randrange(0, 4) + (round_ % 3))


async def assert_index_matches_chain(
    rpc: RpcClient, store: Store, token: str, candidates: Sequence[str], chain_id: int = CHAIN
) -> dict[str, int]:
    """Every non-zero indexed balance equals balanceOf, and no holder is missing."""
    indexed = store.balances(chain_id, token)
    everyone = sorted({a.lower() for a in candidates} | set(indexed))
    on_chain = await balances_of(rpc, token, everyone)
    expected = {a: b for a, b in zip(everyone, on_chain, strict=True) if b}
    assert indexed == expected
    return expected


def holder_set(n: int, tag: str) -> list[str]:
    return [address(f"{tag}-{i}") for i in range(n)]


# INDEX


async def test_index_equals_balance_of_for_every_holder(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    await mine(rpc, 5)
    token = await deploy(rpc, artifacts, "PlainToken", UINT256_MAX, owner)
    holders = holder_set(60, "plain")
    await scatter(rpc, token, owner, holders, rounds=8, seed=1)

    stats = await index_token(rpc, store, CHAIN, token, window=3)

    expected = await assert_index_matches_chain(rpc, store, token, [owner, *holders])
    assert stats.logs == store.transfer_count(CHAIN, token) > 60
    assert stats.from_block == 0 and stats.to_block == await _head(rpc)
    assert await holder_count(store, CHAIN, token) == len(expected)
    assert await total_supply(rpc, token) == sum(expected.values()) == UINT256_MAX
    ranked = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
    top = await top_holders(store, CHAIN, token, limit=50)
    assert [(a.lower(), b) for a, b in top] == ranked[:50]
    assert all(a == checksum(a) for a, _ in top)


async def test_top_holders_ties_are_ordered_by_address(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    tied = holder_set(5, "tie")
    await send(rpc, [transfer(token, owner, h, 777) for h in tied])

    await index_token(rpc, store, CHAIN, token)

    top = await top_holders(store, CHAIN, token, limit=6)
    assert top[0] == (owner, 10**30 - 5 * 777)
    assert [a for a, _ in top[1:]] == sorted(tied, key=str.lower)
    assert await top_holders(store, CHAIN, token, limit=2) == top[:2]


async def test_second_run_reads_only_new_blocks(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(20, "incr")
    await scatter(rpc, token, owner, holders, rounds=3, seed=2)
    first = await index_token(rpc, store, CHAIN, token)

    again = await index_token(rpc, store, CHAIN, token)
    assert again.requests == 0 and again.logs == 0

    late = holder_set(5, "late")
    await send(rpc, [transfer(token, owner, h, 5) for h in late])
    await mine(rpc, 3)
    third = await index_token(rpc, store, CHAIN, token)

    assert third.from_block == first.to_block + 1
    assert third.logs == 5 and third.requests == 1
    await assert_index_matches_chain(rpc, store, token, [owner, *holders, *late])


@pytest.mark.parametrize("same_head", [True, False])
async def test_a_first_window_asked_ahead_is_used_only_at_its_head(
    rpc: RpcClient,
    tmp_path: Path,
    artifacts: dict[str, Any],
    same_head: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#27: a first index's first window of logs asked before the check has read its
    head (``first_window_ahead``, at a head read a moment ago) replaces the indexer's
    own first request only at that very head; at another (here: a hash the chain does
    not have) it is dropped and the logs are read as without it.  Either way the index
    is the one the indexer alone makes.  Fails when a window read at another head is
    stored, or when one at the same head is read again."""
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(12, f"ahead{same_head}")
    await scatter(rpc, token, owner, holders, rounds=2, seed=5)
    head = await read_head(rpc)
    at = head if same_head else replace(head, hash="0x" + "ab" * 32)
    stores = [create_store(f"sqlite:///{tmp_path / f'{n}.db'}") for n in ("alone", "ahead")]
    try:
        await index_token(rpc, stores[0], CHAIN, token)
        first_window_ahead(rpc, stores[1], CHAIN, token, at)
        asked = stores[1].memo.value(("first window", CHAIN, token.lower()))
        await asked.chunk  # the window is back before the indexer starts
        sent: list[str] = []
        batch = rpc.batch

        async def counted(calls: Any, **kwargs: Any) -> Any:
            sent.extend(method for method, _ in calls)
            return await batch(calls, **kwargs)

        rpc.batch = counted  # type: ignore[method-assign]
        seen: list[tuple[str, bool]] = []
        monkeypatch.setattr(metrics, "sent_ahead", lambda p, u: seen.append((p, u)))
        try:
            await index_token(rpc, stores[1], CHAIN, token)
        finally:
            del rpc.batch
        assert sent.count("eth_getLogs") == (0 if same_head else 1)
        assert seen == [("index_window", same_head)]
        assert stores[1].balances(CHAIN, token) == stores[0].balances(CHAIN, token)
        await assert_index_matches_chain(rpc, stores[1], token, [owner, *holders])
    finally:
        for store in stores:
            store.close()


async def test_a_new_head_checks_the_cursor_beside_its_new_logs(
    node: AnvilNode, rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    """#27: an index a few blocks behind reads the cursor block's hash (the reorg check)
    and the logs after it in one round trip after the head, not one after the other.
    Counted without a clock (``Rounds`` releases requests round by round)."""
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    await index_token(rpc, store, CHAIN, token)
    late = address("new-head-1")
    await send(rpc, [transfer(token, owner, late, 7)])
    await mine(rpc, 2)
    rounds = Rounds(node.url)
    counted = CoalescingRpc(node.url, RpcSettings(retries=0), "node", transport=rounds)
    try:
        stats = await index_token(counted, store, CHAIN, token)
    finally:
        await counted.aclose()
        await rounds.aclose()
    assert stats.logs == 1 and stats.rolled_back_blocks == 0
    assert len(rounds.rounds) == 2, rounds.rounds  # the head; the cursor's hash + the logs
    assert {"eth_getBlockByNumber", "eth_getLogs"} <= set(rounds.rounds[1])
    await assert_index_matches_chain(rpc, store, token, [owner, late])


async def test_index_stops_at_to_block_and_resumes(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(10, "upto")
    await scatter(rpc, token, owner, holders, rounds=4, seed=3)
    middle = (await _head(rpc)) - 4

    partial = await index_token(rpc, store, CHAIN, token, to_block=middle)
    assert partial.to_block == middle
    cursor = store.get_cursor(CHAIN, token)
    assert cursor is not None and cursor.last_block == middle

    rest = await index_token(rpc, store, CHAIN, token)
    assert rest.from_block == middle + 1
    await assert_index_matches_chain(rpc, store, token, [owner, *holders])


async def test_start_block_is_the_deployment_block(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    await mine(rpc, 300)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    deployed_at = await _head(rpc)
    await mine(rpc, 37)
    await send(rpc, [transfer(token, owner, address("start"), 1)])

    assert await find_start_block(rpc, token, await _head(rpc)) == deployed_at
    stats = await index_token(rpc, store, 1, token)  # not a devnet id: search the start

    assert stats.from_block == deployed_at
    await assert_index_matches_chain(rpc, store, token, [owner, address("start")], chain_id=1)


# ADAPTIVE WINDOW


class RefusingProxy:
    """A loopback JSON-RPC proxy that refuses eth_getLogs like public providers do.

    ``max_span``: refuse ranges wider than this many blocks.  ``max_results``: refuse
    answers with more logs than this.  Everything else is forwarded unchanged.
    """

    def __init__(
        self, upstream: str, max_span: int | None = None, max_results: int | None = None
    ) -> None:
        self.upstream = upstream
        self.max_span = max_span
        self.max_results = max_results
        self.refused = 0
        self.spans: list[int] = []
        self._server: asyncio.Server | None = None
        self._http = httpx.AsyncClient()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> RefusingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._http.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while request := await _read_http_body(reader):
                body = json.dumps(await self._answer(json.loads(request))).encode()
                head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
        finally:
            writer.close()

    async def _answer(self, payload: Any) -> Any:
        calls = payload if isinstance(payload, list) else [payload]
        reply = (await self._http.post(self.upstream, json=calls)).json()
        by_id = {r["id"]: r for r in reply}
        answers = [self._police(call, by_id[call["id"]]) for call in calls]
        return answers if isinstance(payload, list) else answers[0]

    def _police(self, call: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        if call["method"] != "eth_getLogs":
            return reply
        query = call["params"][0]
        span = int(query["toBlock"], 16) - int(query["fromBlock"], 16) + 1
        self.spans.append(span)
        if self.max_span is not None and span > self.max_span:
            return self._refuse(call, -32005, f"block range is too wide (max {self.max_span})")
        if self.max_results is not None and len(reply.get("result", [])) > self.max_results:
            message = f"query returned more than {self.max_results} results"
            return self._refuse(call, -32005, message)
        return reply

    def _refuse(self, call: dict[str, Any], code: int, message: str) -> dict[str, Any]:
        self.refused += 1
        return {"jsonrpc": "2.0", "id": call["id"], "error": {"code": code, "message": message}}


async def _read_http_body(reader: asyncio.StreamReader) -> bytes | None:
    """The body of the next HTTP/1.1 request on a keep-alive connection (None at EOF)."""
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return None
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return await reader.readexactly(length)


@pytest.mark.parametrize(
    ("limits", "window"),
    [({"max_span": 5}, 4_000), ({"max_results": 3}, 64)],
    ids=["range-too-wide", "too-many-results"],
)
async def test_window_shrinks_when_the_node_refuses_and_grows_back(
    node: AnvilNode,
    rpc: RpcClient,
    store: Store,
    artifacts: dict[str, Any],
    limits: dict[str, int],
    window: int,
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(12, "adapt")
    await fund(rpc, holders)
    for i, h in enumerate(holders):  # one transfer per block, then quiet blocks
        await send(rpc, [transfer(token, owner, h, 10 + i)])
    await mine(rpc, 60)

    async with RefusingProxy(node.url, **limits) as proxy:
        client = RpcClient(proxy.url)
        try:
            stats = await index_token(client, store, CHAIN, token, window=window)
        finally:
            await client.aclose()

    assert proxy.refused > 0 and stats.shrinks > 0
    assert max(proxy.spans[-3:]) > min(proxy.spans)  # grew again after the dense part
    await assert_index_matches_chain(rpc, store, token, [owner, *holders])


async def test_a_node_refusing_even_one_block_raises(
    node: AnvilNode, rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    async with RefusingProxy(node.url, max_span=0) as proxy:
        client = RpcClient(proxy.url)
        try:
            with pytest.raises(RpcError, match="too wide"):
                await index_token(client, store, CHAIN, token, window=8)
        finally:
            await client.aclose()
    assert store.get_cursor(CHAIN, token) is None


# CRASH SAFETY AND REORGS


async def test_cancel_mid_index_then_resume(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(30, "cancel")
    await scatter(rpc, token, owner, holders, rounds=10, seed=4)
    settings = IndexSettings(window=1, max_window=1, windows_per_batch=1)
    seen: list[IndexProgress] = []

    def stop_after_five(step: IndexProgress) -> None:
        seen.append(step)
        if len(seen) == 5:
            task.cancel()

    task = asyncio.ensure_future(
        index_token(rpc, store, CHAIN, token, settings=settings, progress=stop_after_five)
    )
    with pytest.raises(asyncio.CancelledError):
        await task
    cursor = store.get_cursor(CHAIN, token)
    assert cursor is not None and cursor.last_block < await _head(rpc)

    resumed = await index_token(rpc, store, CHAIN, token)
    assert resumed.from_block == cursor.last_block + 1
    await assert_index_matches_chain(rpc, store, token, [owner, *holders])


_KILLED_INDEXER = textwrap.dedent(
    """
    import asyncio, sys, time
    from tokenrisk.holders import IndexSettings, index_token
    from tokenrisk.chain.rpc import RpcClient
    from tokenrisk.store.engine import create_store

    async def main() -> None:
        store = create_store(sys.argv[2])
        settings = IndexSettings(window=1, max_window=1, windows_per_batch=1)
        slow = lambda step: time.sleep(0.005)
        await index_token(RpcClient(sys.argv[1]), store, 31337, sys.argv[3],
                          settings=settings, progress=slow)

    asyncio.run(main())
    """
)


async def test_sigkill_mid_index_never_double_counts(
    node: AnvilNode, rpc: RpcClient, tmp_path: Path, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(30, "kill")
    await scatter(rpc, token, owner, holders, rounds=12, seed=5)
    await mine(rpc, 300)
    url = f"sqlite:///{tmp_path / 'killed.db'}"
    env = {**os.environ, "PYTHONPATH": str(repo_root() / "src")}
    child = subprocess.Popen([sys.executable, "-c", _KILLED_INDEXER, node.url, url, token], env=env)
    store = create_store(url)
    try:
        await _wait_for_progress(store, token, beyond=20)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    cursor = store.get_cursor(CHAIN, token)
    assert cursor is not None and cursor.last_block < await _head(rpc)

    resumed = await index_token(rpc, store, CHAIN, token)
    assert resumed.from_block == cursor.last_block + 1
    await assert_index_matches_chain(rpc, store, token, [owner, *holders])
    store.close()


async def _wait_for_progress(store: Store, token: str, beyond: int) -> None:
    for _ in range(600):
        cursor = store.get_cursor(CHAIN, token)
        if cursor is not None and cursor.last_block > beyond:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the child indexer made no progress")


async def test_reorg_rolls_back_and_reindexes(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(10, "reorg")
    await scatter(rpc, token, owner, holders, rounds=2, seed=6)
    await index_token(rpc, store, CHAIN, token)  # leaves a checkpoint at the fork point
    fork_point = await _head(rpc)
    snapshot = await rpc.call("evm_snapshot")
    doomed = holder_set(4, "doomed")
    for h in doomed:
        await send(rpc, [transfer(token, owner, h, 1_000)])
    await index_token(rpc, store, CHAIN, token)
    before = await assert_index_matches_chain(rpc, store, token, [owner, *holders, *doomed])
    assert {d.lower() for d in doomed} <= set(before)

    assert await rpc.call("evm_revert", [snapshot])
    survivors = holder_set(2, "survivor")
    for h in survivors:
        await send(rpc, [transfer(token, owner, h, 2_000)])
    await mine(rpc, 3)  # the new branch is as long as the old one
    stats = await index_token(rpc, store, CHAIN, token, settings=IndexSettings(reorg_depth=1))

    assert stats.rolled_back_blocks == len(doomed)
    assert stats.from_block == fork_point + 1
    await assert_index_matches_chain(rpc, store, token, [owner, *holders, *doomed, *survivors])


async def test_reorg_deeper_than_every_checkpoint_reindexes_from_scratch(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    snapshot = await rpc.call("evm_snapshot")
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    await send(rpc, [transfer(token, owner, address("gone"), 5)])
    await index_token(rpc, store, CHAIN, token)

    assert await rpc.call("evm_revert", [snapshot])
    token_again = await deploy(rpc, artifacts, "PlainToken", 10**29, owner)
    assert token_again == token  # same deployer nonce: same address, new history
    await send(rpc, [transfer(token, owner, address("kept"), 9)])
    stats = await index_token(rpc, store, CHAIN, token)

    assert stats.from_block == 0 and stats.rolled_back_blocks > 0
    expected = await assert_index_matches_chain(
        rpc, store, token, [owner, address("gone"), address("kept")]
    )
    assert expected == {owner.lower(): 10**29 - 9, address("kept").lower(): 9}


# SIPHONS


async def test_siphon_detection_separates_consent_from_theft(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "SiphonToken", 10**30, owner)
    seller, pulled, robbed, hidden, idle = holder_set(5, "siphon")
    spender, thief = address("spender"), address("thief")
    await fund(rpc, [seller, pulled, robbed, hidden, idle, spender, thief])
    await send(
        rpc, [transfer(token, owner, h, 10**21) for h in (seller, pulled, robbed, hidden, idle)]
    )

    approve = encode_call("approve(address,uint256)", [spender, 10**21])
    await send(rpc, [{"from": pulled, "to": token, "data": approve}])
    pull = encode_call("transferFrom(address,address,uint256)", [pulled, spender, 10**20])
    steal = encode_call("siphon(address,uint256)", [robbed, 10**21])
    await send(
        rpc,
        [
            transfer(token, seller, spender, 10**20),
            {"from": spender, "to": token, "data": pull},
            {"from": owner, "to": token, "data": steal},
        ],
    )
    await _grant_silently(rpc, token, hidden, thief, 10**21)
    take = encode_call("transferFrom(address,address,uint256)", [hidden, thief, 10**21])
    await send(rpc, [{"from": thief, "to": token, "data": take}])

    await index_token(rpc, store, CHAIN, token)
    analysed = [seller, pulled, robbed, hidden, idle]
    assert await siphoned_holders(rpc, store, CHAIN, token, analysed) == {robbed, hidden}
    assert await siphoned_holders(rpc, store, CHAIN, token, [seller, idle]) == set()


async def _grant_silently(
    rpc: RpcClient, token: str, holder: str, spender: str, value: int
) -> None:
    """Write allowance[holder][spender] straight into storage: no Approval event.

    The mapping's slot is found by trying slots with an eth_call state override.
    """
    word = value.to_bytes(32, "big")
    call = {"to": token, "data": encode_call("allowance(address,address)", [holder, spender])}
    for index in range(16):
        inner = keccak(encode_args(["address", "uint256"], [holder, index]))
        slot = "0x" + keccak(encode_args(["address"], [spender]) + inner).hex()
        override = {token: {"stateDiff": {slot: "0x" + word.hex()}}}
        if int(await rpc.call("eth_call", [call, "latest", override]), 16) == value:
            await rpc.call("anvil_setStorageAt", [token, slot, "0x" + word.hex()])
            return
    raise AssertionError("allowance mapping slot not found")


# THE DEVNET CATALOGUE

BALANCES_FROM_LOGS_DIFFER = {
    "reflection": "reflection shares change balanceOf without Transfer logs",
    "rfi": "RFI reflections change balanceOf without Transfer logs",
    "rebasing": "a rebase changes every balanceOf without Transfer logs",
    "pool-drained-tokens": "the manager rewrites the pair's balance without a Transfer log",
}


@pytest.fixture(scope="module")
async def devnet_index(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[RpcClient, Store]]:
    """Every catalogue token indexed once, into one store."""
    store = create_store(f"sqlite:///{tmp_path_factory.mktemp('devnet') / 'index.db'}")
    rpc = RpcClient(devnet.url)
    chain_id = int(devnet.manifest["chainId"])
    for token in devnet.manifest["tokens"]:
        await index_token(rpc, store, chain_id, token["address"])
    yield rpc, store
    await rpc.aclose()
    store.close()


def catalogue_ids() -> list[str]:
    """Ids of the catalogue tokens (the source file: the build may not exist yet)."""
    path = repo_root() / "src" / "tokenrisk" / "devnet" / "catalogue.json"
    return [str(t["id"]) for t in json.loads(path.read_text())["tokens"]] if path.exists() else []


def built(devnet: RunningDevnet, token_id: str) -> dict[str, Any]:
    """The manifest entry of a catalogue token: its address, holders, siphoned, ..."""
    return next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)


@pytest.mark.parametrize("token_id", catalogue_ids())
async def test_devnet_token_balances_equal_balance_of(
    devnet: RunningDevnet, devnet_index: tuple[RpcClient, Store], token_id: str
) -> None:
    if token_id in BALANCES_FROM_LOGS_DIFFER:
        pytest.skip(BALANCES_FROM_LOGS_DIFFER[token_id])
    rpc, store = devnet_index
    token = built(devnet, token_id)
    chain_id = int(devnet.manifest["chainId"])
    candidates = [*token["holders"], *token["siphoned"], *token["snipers"]]
    candidates += [pool["address"] for pool in token["pools"]]
    expected = await assert_index_matches_chain(
        rpc, store, token["address"], candidates, chain_id=chain_id
    )
    assert await holder_count(store, chain_id, token["address"]) == len(expected)
    top = await top_holders(store, chain_id, token["address"])
    ranked = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:50]
    assert [(a.lower(), b) for a, b in top] == ranked


@pytest.mark.parametrize("token_id", ["reflection", "plain", "siphon"])
async def test_devnet_checked_top_holders_carry_chain_balances(
    devnet: RunningDevnet, devnet_index: tuple[RpcClient, Store], token_id: str
) -> None:
    rpc, store = devnet_index
    token = built(devnet, token_id)["address"]
    chain_id = int(devnet.manifest["chainId"])
    top = await top_holders_checked(rpc, store, chain_id, token, limit=10)
    on_chain = await balances_of(rpc, token, [a for a, _ in top])
    assert [b for _, b in top] == on_chain
    assert on_chain == sorted((b or 0 for b in on_chain), reverse=True) and len(top) == 10
    if token_id != "reflection":
        assert top == await top_holders(store, chain_id, token, limit=10)


@pytest.mark.parametrize("token_id", catalogue_ids())
async def test_devnet_siphoned_holders_match_the_history(
    devnet: RunningDevnet, devnet_index: tuple[RpcClient, Store], token_id: str
) -> None:
    rpc, store = devnet_index
    token = built(devnet, token_id)
    chain_id = int(devnet.manifest["chainId"])
    analysed = [*token["holders"], *token["snipers"]]
    found = await siphoned_holders(rpc, store, chain_id, token["address"], analysed)
    assert found == {checksum(h) for h in token["siphoned"]}
    assert bool(found) == bool(token["expected"]["siphoned"])


async def test_the_siphon_reads_the_store_in_one_hop(
    devnet: RunningDevnet, devnet_index: tuple[RpcClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The siphon's store reads (the cursor, the holders' outgoing transfers) are one
    worker-thread hop: a check's transaction reads wait for them, and on a busy event
    loop each hop can outlast a round trip (#27).  Fails with the two reads made one
    after the other."""
    rpc, store = devnet_index
    token = built(devnet, "siphon")
    chain_id = int(devnet.manifest["chainId"])
    analysed = [*token["holders"][:3], *token["siphoned"]]  # not asked before: no memo
    hops: list[Any] = []
    real = asyncio.to_thread

    async def counted(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        hops.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    found = await siphoned_holders(rpc, store, chain_id, token["address"], analysed)
    monkeypatch.undo()
    assert found == {checksum(h) for h in token["siphoned"]}
    assert len(hops) == 1


async def _head(rpc: RpcClient) -> int:
    return int(await rpc.call("eth_blockNumber"), 16)


# IN-PROCESS MEMO AT AN UNCHANGED HEAD


async def test_same_head_reads_nothing_again_and_any_write_forgets(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(12, "memo")
    await scatter(rpc, token, owner, holders, rounds=2, seed=3)
    await index_token(rpc, store, CHAIN, token)
    count = await holder_count(store, CHAIN, token)
    top = await top_holders(store, CHAIN, token, limit=5)

    reads: list[str] = []
    for name in ("get_cursor", "holder_count", "top_holders"):
        real = getattr(store, name)
        setattr(store, name, lambda *a, _r=real, _n=name, **k: reads.append(_n) or _r(*a, **k))
    again = await index_token(rpc, store, CHAIN, token)  # same head: nothing to do
    assert again.blocks == 0 and again.logs == 0
    assert await holder_count(store, CHAIN, token) == count
    assert await top_holders(store, CHAIN, token, limit=5) == top
    assert reads == []  # answered from what this process learnt at this head

    await asyncio.to_thread(store.reset_token, CHAIN, token)  # a write: the memo is void
    assert await holder_count(store, CHAIN, token) is None
    assert "get_cursor" in reads
    await index_token(rpc, store, CHAIN, token)
    assert await holder_count(store, CHAIN, token) == count
    await send(rpc, [transfer(token, owner, address("memo-new"), 1)])
    await mine(rpc)
    reads.clear()
    moved = await index_token(rpc, store, CHAIN, token)  # a new head: indexed as usual
    assert moved.logs == 1 and "get_cursor" in reads
    assert await holder_count(store, CHAIN, token) == count + 1


async def test_later_heads_without_a_transfer_keep_what_was_read(
    rpc: RpcClient, store: Store, artifacts: dict[str, Any]
) -> None:
    """Blocks without a transfer of the token (another token's transfers and writes
    included) keep the memo; a transfer of the token, or a cursor moved by someone else
    (this process cannot tell what they wrote), forget it."""
    owner = await deployer(rpc)
    token = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    other = await deploy(rpc, artifacts, "PlainToken", 10**30, owner)
    holders = holder_set(6, "quiet")
    await scatter(rpc, token, owner, holders, rounds=1, seed=5)
    await index_token(rpc, store, CHAIN, token)
    top = await top_holders(store, CHAIN, token, limit=5)
    reads: list[str] = []
    real = store.top_holders
    store.top_holders = lambda *a, **k: reads.append("top") or real(*a, **k)  # type: ignore[method-assign]

    await send(rpc, [transfer(other, owner, holders[0], 1)])
    await mine(rpc, 2)
    await index_token(rpc, store, CHAIN, other)  # a write, of another token
    quiet = await index_token(rpc, store, CHAIN, token)
    assert quiet.blocks >= 3 and quiet.logs == 0
    assert await top_holders(store, CHAIN, token, limit=5) == top
    assert reads == []

    await send(rpc, [transfer(token, owner, holders[0], 10**27)])
    assert (await index_token(rpc, store, CHAIN, token)).logs == 1
    assert (await top_holders(store, CHAIN, token, limit=5)) != top
    assert reads == ["top"]

    await mine(rpc)  # another process indexes the new block (no log): the cursor moves
    cursor, head = store.get_cursor(CHAIN, token), await read_head(rpc)
    assert cursor is not None
    moved = Cursor(cursor.start_block, head.number, head.hash)
    store.apply_window(CHAIN, token, expected=cursor, new=moved, logs=[])
    await index_token(rpc, store, CHAIN, token)
    await top_holders(store, CHAIN, token, limit=5)
    assert reads == ["top", "top"]

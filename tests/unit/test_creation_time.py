"""A pool's creation time from its event's ``blockTimestamp`` (execution-apis' log object)
when the node gives it, else from its block: the same answer, one read fewer."""

from __future__ import annotations

from typing import Any

from tokenrisk.chain import dex
from tokenrisk.chain.registry import Dex
from tokenrisk.chain.signatures import PAIR_CREATED
from tokenrisk.model import Pool

V2 = Dex("Uniswap", "V2", "0x" + "f1" * 20, "0x" + "a1" * 20)
TOKEN, WETH = "0x" + "11" * 20, "0x" + "22" * 20
PAIR = "0x" + "33" * 20
BLOCK_HASH = "0x" + "44" * 32


def _word(address: str) -> str:
    return "0x" + "00" * 12 + address[2:]


def _log(**extra: Any) -> dict[str, Any]:
    return {
        "topics": [PAIR_CREATED, _word(TOKEN), _word(WETH)],
        "data": "0x" + "00" * 12 + PAIR[2:] + f"{1:064x}",
        "blockNumber": "0x96",
        "blockHash": BLOCK_HASH,
        "transactionHash": "0x" + "55" * 32,
        **extra,
    }


def _pool() -> Pool:
    return Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, V2.router, 1, 1, None, chain_id=1)


class Headers:
    """An RpcClient stand-in answering ``eth_getBlockByNumber`` batches; counts them."""

    def __init__(self, time: int) -> None:
        self.time, self.asked = time, []

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        self.asked += [params[0] for method, params in calls if method == "eth_getBlockByNumber"]
        return [{"timestamp": hex(self.time), "hash": BLOCK_HASH} for _ in calls]


def test_the_event_carries_its_blocks_time() -> None:
    found = dex.read_creation(V2, _log(blockTimestamp="0x6556"))
    assert found is not None and found.timestamp == 0x6556 and found.block == 150
    assert dex.log_stamps([found]) == {150: (0x6556, BLOCK_HASH)}


def test_an_absent_malformed_or_zero_time_is_read_with_the_block() -> None:
    for extra in ({}, {"blockTimestamp": "soon"}, {"blockTimestamp": 7}, {"blockTimestamp": "0x0"}):
        found = dex.read_creation(V2, _log(**extra))
        assert found is not None and found.timestamp is None  # the pool is kept either way
        assert dex.log_stamps([found]) == {}


async def test_the_same_creation_with_or_without_a_header_read() -> None:
    carried, bare = (dex.read_creation(V2, log) for log in (_log(blockTimestamp="0x6556"), _log()))
    assert carried is not None and bare is not None
    answers = []
    for creation, asked in ((carried, []), (bare, ["0x96"])):
        node = Headers(0x6556)
        answers.append(await dex.with_creation(node, [_pool()], [creation]))  # type: ignore[arg-type]
        assert node.asked == asked
    assert answers[0] == answers[1]
    assert answers[0][0].created_at_timestamp == 0x6556
    assert answers[0][0].creation_tx_hash == "0x" + "55" * 32


async def test_a_kept_events_block_is_still_read_to_confirm_it() -> None:
    """Stamps read for the kept events' blocks win over what an event carried: a block
    the chain replaced (another hash) is no match, as before."""
    found = dex.read_creation(V2, _log(blockTimestamp="0x6556"))
    assert found is not None
    replaced = {150: (0x7000, "0x" + "66" * 32)}
    (pool,) = await dex.with_creation(Headers(0), [_pool()], [found], replaced)  # type: ignore[arg-type]
    assert pool.created_at_timestamp is None and pool.creation_tx_hash is None

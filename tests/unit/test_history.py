"""The creation-block search over history (chain/history.py) and the range-refusal test
of chain/created.py, against a fake node whose history starts at a chosen block."""

from __future__ import annotations

from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk.chain.created import range_refused
from tokenrisk.chain.history import creation_block
from tokenrisk.errors import MethodUnsupported, NodeThrottled, RpcError

CONTRACT = "0x00000000000000000000000000000000000000c0"
NO_STATE = Fault(-32000, "missing trie node")


def node(created: int, oldest_state: int = 0, throttle: bool = False) -> FakeNode:
    """Code from block ``created`` on; no state below ``oldest_state``."""

    def code(params: list[Any]) -> Any:
        block = int(params[1], 16)
        if throttle:
            return Fault(-32005, "request rate limited")
        if block < oldest_state:
            return NO_STATE
        return "0x6000" if block >= created else "0x"

    return FakeNode({"eth_getCode": code})


@pytest.mark.parametrize("created", [0, 1, 17, 4_095, 123_456, 999_999, 1_000_000])
async def test_archive_node_finds_the_creation_block(created: int) -> None:
    fake = node(created)
    rpc = fake.client()
    try:
        assert await creation_block(rpc, CONTRACT, 1_000_000) == created
    finally:
        await rpc.aclose()


@pytest.mark.parametrize(
    ("created", "oldest", "expected"),
    [(900_500, 900_000, 900_500), (900_000, 900_000, None), (10, 900_000, None)],
    ids=["within-history", "at-the-oldest-state", "older-than-history"],
)
async def test_pruned_node_finds_recent_contracts_only(
    created: int, oldest: int, expected: int | None
) -> None:
    """No state below ``oldest``: a recent contract is found; one whose creation cannot
    be proved (no state for the block before) is None, never a guess."""
    fake = node(created, oldest)
    rpc = fake.client()
    try:
        assert await creation_block(rpc, CONTRACT, 1_000_000) == expected
    finally:
        await rpc.aclose()


async def test_no_code_at_head_is_none_and_throttling_raises() -> None:
    fake = node(2_000_000)
    rpc = fake.client()
    throttled = node(5, throttle=True)
    busy = throttled.client()
    try:
        assert await creation_block(rpc, CONTRACT, 1_000_000) is None
        with pytest.raises(NodeThrottled):
            await creation_block(busy, CONTRACT, 1_000_000)
    finally:
        await rpc.aclose()
        await busy.aclose()


@pytest.mark.parametrize(
    ("error", "refused"),
    [
        (RpcError("block range is too wide", -32000), True),
        (RpcError("query returned more than 10000 results", -32005), True),
        (RpcError("exceed maximum block range: 5000", -32000), True),
        (RpcError("Log response size exceeded.", -32602), True),
        (RpcError("internal error", -32603), False),
        (MethodUnsupported("the method eth_getLogs does not exist", -32601), False),
    ],
)
def test_range_refusals_are_told_from_failures(error: RpcError, refused: bool) -> None:
    assert range_refused(error) is refused


@pytest.mark.parametrize(
    ("created", "expected"), [(999_950, 999_950), (999_873, 999_873), (10, None), (999_000, None)]
)
async def test_a_known_floor_keeps_the_search_within_kept_state(
    created: int, expected: int | None
) -> None:
    """A full node (state of the last 128 blocks): given its floor, no read below it,
    and far fewer round trips than a search over all of history."""
    fake, floor = node(created, oldest_state=999_872), 999_872
    rpc = fake.client()
    try:
        assert await creation_block(rpc, CONTRACT, 1_000_000, floor=floor) == expected
        blind = node(created, oldest_state=999_872)
        blind_rpc = blind.client()
        assert await creation_block(blind_rpc, CONTRACT, 1_000_000) == expected
        await blind_rpc.aclose()
        assert fake.requests < blind.requests
    finally:
        await rpc.aclose()

"""A head assumed for one check of a request is that check's alone until it is confirmed
(``chain/head.py: assumed_head``, ``checks/speculation.py``): another check of the same
request (the IsHoneypot batch) reads the node's head, never the guess."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tokenrisk.chain.head import (
    ChainHead,
    assumed_head,
    one_head_per_request,
    read_head,
    request_head,
    share_head,
)

LATEST = {"number": "0x65", "hash": "0x" + "bb" * 32, "timestamp": "0x10"}
GUESS = ChainHead(100, 15, hash="0x" + "aa" * 32)


class Node:
    """Answers ``eth_getBlockByNumber`` with block 101 and counts the reads."""

    def __init__(self) -> None:
        self.reads = 0

    async def call(self, method: str, params: Sequence[Any] = ()) -> Any:
        assert method == "eth_getBlockByNumber"
        self.reads += 1
        return LATEST


async def test_only_the_tasks_started_under_the_guess_see_it() -> None:
    node = Node()
    with one_head_per_request():
        with assumed_head(node, GUESS) as assumed:
            planned = asyncio.ensure_future(read_head(node))
        other = await read_head(node)  # another check of the request
        assert assumed and await planned == GUESS
        assert other.number == 101 and node.reads == 1
        assert request_head(node) == other  # what was read, never the guess


async def test_outside_a_request_nothing_is_assumed() -> None:
    node = Node()
    with assumed_head(node, GUESS) as assumed:
        assert not assumed
        assert (await read_head(node)).number == 101


async def test_a_shared_head_is_every_readers() -> None:
    node = Node()
    with one_head_per_request():
        share_head(node, GUESS)
        assert await read_head(node) == GUESS and node.reads == 0
        assert request_head(node) == GUESS

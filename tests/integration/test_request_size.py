"""A coalesced batch over the node's request-size limit is sent again in halves.

Under load the coalescing client folds many checks' calls into one batch; a few reader
calls and simulations of ~100 KB each take it past anvil's 2 MiB body limit, which
anvil answers with one lone ``-32600 "Invalid request"`` (the batch did not run).  That
answer was a 502 for every check sharing the batch (tests/reliability/test_load.py);
now every call gets its own reply.
"""

from __future__ import annotations

from typing import Any

import pytest

from tokenrisk.chain.coalesce import CoalescingRpc
from tokenrisk.chain.rpc import RpcClient, RpcSettings
from tokenrisk.errors import RequestTooLarge

pytestmark = pytest.mark.integration

CALLS = 24
PADDING = 50_000  # bytes of calldata per call (100 KB of hex): a 2.4 MB batch body


def _calls() -> list[tuple[str, list[Any]]]:
    """Calls to an account without code (answer "0x"), each with ~100 KB of calldata."""
    data = "0x" + "ab" * PADDING
    account = "0x000000000000000000000000000000000000dead"
    return [("eth_call", [{"to": account, "data": data}, "latest"]) for _ in range(CALLS)]


@pytest.mark.parametrize("client_type", [RpcClient, CoalescingRpc])
@pytest.mark.parametrize("cap", [None, 1024 * 1024], ids=["refused", "capped"])
async def test_a_batch_over_the_node_body_limit_is_answered_call_by_call(
    devnet: Any, client_type: type[RpcClient], cap: int | None
) -> None:
    """``refused``: no cap of our own, anvil refuses the body and the batch is sent again
    in halves; ``capped``: the client splits it before sending."""
    rpc = client_type(devnet.url, RpcSettings(max_request_bytes=cap))
    try:
        replies = await rpc.batch(_calls())
        assert replies == ["0x"] * CALLS
        assert rpc.batch_limit is None  # a refusal by bytes teaches no count limit
    finally:
        await rpc.aclose()


async def test_one_call_over_the_limit_is_a_typed_refusal(devnet: Any) -> None:
    """Nothing left to split: the node's limit, typed (502 with our own words)."""
    rpc = RpcClient(devnet.url, RpcSettings(max_request_bytes=None))
    big = ("eth_call", [{"to": "0x" + "00" * 20, "data": "0x" + "ab" * 1_100_000}, "latest"])
    try:
        with pytest.raises(RequestTooLarge):
            await rpc.batch([big, big])
        with pytest.raises(RequestTooLarge):
            await rpc.call(*big)
    finally:
        await rpc.aclose()

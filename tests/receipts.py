"""A transaction sent to the devnet and waited for: anvil answers ``eth_sendTransaction``
before it has mined the block, so a test that reads what the transaction changed (or its
receipt) polls for the receipt first.  Shared by the integration tests that mine."""

from __future__ import annotations

import asyncio
from typing import Any

from tokenrisk.chain.rpc import RpcClient

POLLS = 200
"""Receipt polls before giving up, 50 ms apart (a bounded wait: ten seconds at most)."""


async def mined(rpc: RpcClient, tx: dict[str, Any]) -> dict[str, Any]:
    """Send ``tx``, wait for its receipt and assert it succeeded; the receipt."""
    tx_hash = await rpc.call("eth_sendTransaction", [tx])
    for _ in range(POLLS):
        receipt = await rpc.call("eth_getTransactionReceipt", [tx_hash])
        if receipt is not None:
            assert receipt["status"] == "0x1", receipt
            return dict(receipt)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{tx_hash} was not mined")

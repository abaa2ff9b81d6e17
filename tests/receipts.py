"""Straight calls to the devnet's node from tests, outside the service's client: one
JSON-RPC call (:func:`node_call`), and a transaction sent and waited for (:func:`mined`:
anvil answers ``eth_sendTransaction`` before it has mined the block, so a test that reads
what the transaction changed, or its receipt, polls for the receipt first)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

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


async def node_call(url: str, method: str, params: list[Any]) -> Any:
    """One JSON-RPC call to the node at ``url``, asserted to succeed; its result."""
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient(timeout=30) as http:
        reply = (await http.post(url, json=payload)).json()
    assert "error" not in reply, reply
    return reply["result"]

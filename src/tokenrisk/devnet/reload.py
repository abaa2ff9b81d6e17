"""Checking a devnet dump: reload it in a fresh anvil and find the chain that was built."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tokenrisk.chain.signatures import TRANSFER_TOPIC
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.node import start_anvil
from tokenrisk.errors import DevnetBuildError


def verify_dump(state_file: Path, manifest: dict[str, Any]) -> None:
    """Reload the dump in a fresh anvil: head block and token Transfer logs must be there.

    Raises DevnetBuildError when the reloaded chain is not the one that was built.
    """
    node = start_anvil(load_state=state_file)
    try:
        asyncio.run(_verify_on(node.url, manifest))
    finally:
        node.stop()


async def _verify_on(url: str, manifest: dict[str, Any]) -> None:
    chain = Chain(url)
    try:
        head = int((await chain.block())["number"], 16)
        if head != manifest["headBlock"]:
            raise DevnetBuildError(f"reloaded head is {head}, built {manifest['headBlock']}")
        for token in manifest["tokens"]:
            query = {"address": token["address"], "topics": [TRANSFER_TOPIC], "fromBlock": "0x0"}
            logs = await chain.rpc.call("eth_getLogs", [query])
            if not logs:
                raise DevnetBuildError(f"{token['id']}: no Transfer logs after reloading the dump")
    finally:
        await chain.aclose()

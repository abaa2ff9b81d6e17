"""The embedded devnet node is supervised: killed under load, it comes back by itself.

Requests in flight when the node dies get a typed 502/503/504 (never a wrong 200);
the supervisor reaps the dead process (no zombie), starts it again from its state on
the same port, and the service answers exactly as before, without being restarted.
``/health`` shows the restart.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from harness import CHAIN, assert_error_shape

from tokenrisk.api.app import create_app
from tokenrisk.devnet.instance import start_devnet

pytestmark = pytest.mark.integration


def zombie_children() -> list[int]:
    """Our child processes that died and were never waited for."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            found.append(int(entry.name))
    return found


def verdict(body: dict[str, Any]) -> tuple[Any, ...]:
    return (body["summary"]["risk"], body.get("honeypotResult", {}).get("isHoneypot"))


async def local_node(http: httpx.AsyncClient) -> dict[str, Any]:
    line: dict[str, Any] = (await http.get("/health")).json()["chains"][0]
    return line


async def test_devnet_node_killed_under_load_is_restarted(make_service: Any) -> None:
    own = start_devnet()
    try:
        own.node.chain_id = CHAIN
        service = make_service(own.url, deadline=5.0, rpc_timeout=2.0, cache_ttl=0)
        service.processes.append(own.node)
        app = create_app(service.settings, service)
        tokens = [t["address"] for t in own.manifest["tokens"] if t["pools"]][:6]
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:

                async def check(token: str) -> httpx.Response:
                    params = {"address": token, "chainID": CHAIN}
                    return await http.get("/v2/IsHoneypot", params=params)

                before = {t: verdict((await check(t)).json()) for t in tokens}
                assert (await local_node(http))["localNode"] == "running"
                first_pid = own.node.process.pid

                # KILL UNDER LOAD
                load = [asyncio.create_task(check(t)) for t in tokens * 2]
                await asyncio.sleep(0.05)
                os.kill(first_pid, 9)
                for response in await asyncio.gather(*load):
                    if response.status_code != 200:
                        assert response.status_code in (502, 503, 504), response.text
                        assert_error_shape(response)

                # RECOVERY, NO RESTART OF THE SERVICE
                for _ in range(150):
                    line = await local_node(http)
                    if line.get("localNodeRestarts") == 1 and line["reachable"]:
                        break
                    await asyncio.sleep(0.2)
                assert line["localNode"] == "running" and line["localNodeRestarts"] == 1, line
                assert own.node.process.pid != first_pid
                assert zombie_children() == []
                after = {t: verdict((await check(t)).json()) for t in tokens}
                assert after == before
    finally:
        own.stop()
    assert zombie_children() == []

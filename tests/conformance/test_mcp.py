"""An MCP client from the official ``mcp`` SDK talking to ``tokenrisk mcp`` over stdio:
it lists the four tools with their JSON schemas and calls each on devnet tokens; the
tools answer what the HTTP API answers, and the API's errors come back as tool errors."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.integration

CHAIN = 31337
TOOLS = {"check_token", "get_pairs", "top_holders", "contract_verification"}


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_an_mcp_client_lists_and_calls_the_tools(
    server_url: str, catalogue: list[dict[str, Any]], tmp_path: Path
) -> None:
    entry = next(t for t in catalogue if t["pools"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env |= {"TOKENRISK_DATA_DIR": str(tmp_path), "TOKENRISK_DEADLINE": "120"}
    command = str(Path(sys.executable).with_name("tokenrisk"))
    params = StdioServerParameters(command=command, args=["mcp"], env=env)
    with (tmp_path / "mcp.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = (await session.list_tools()).tools
                assert {t.name for t in listed} == TOOLS
                schemas = {t.name: t.input_schema for t in listed}
                assert all(s["properties"]["address"]["type"] == "string" for s in schemas.values())
                assert "chain_id" in schemas["top_holders"]["required"]
                calls = {
                    "check_token": {"address": entry["address"], "chain_id": CHAIN},
                    "get_pairs": {"address": entry["address"], "chain_id": CHAIN},
                    "top_holders": {"address": entry["address"], "chain_id": CHAIN, "limit": 5},
                    "contract_verification": {"address": entry["address"], "chain_id": CHAIN},
                }
                results = {
                    name: await session.call_tool(name, args) for name, args in calls.items()
                }
                bad = await session.call_tool("check_token", {"address": "0x1234"})
    for name, result in results.items():
        assert not result.is_error, (name, _text(result))
    answer = json.loads(_text(results["check_token"]))
    assert answer["token"]["address"] == entry["address"]
    assert answer["pairAddress"] == entry["pools"][0]["address"] or answer["pair"]
    with httpx.Client(base_url=server_url, timeout=300) as http:
        api = http.get("/v2/IsHoneypot", params={"address": entry["address"], "chainID": CHAIN})
    assert answer["summary"] == api.json()["summary"]  # the same check, the same verdict
    holders = json.loads(_text(results["top_holders"]))
    assert 0 < len(holders["holders"]) <= 5
    assert bad.is_error and "400: address must be" in _text(bad)


async def test_the_http_mount_serves_the_same_tools(
    server_url: str, catalogue: list[dict[str, Any]]
) -> None:
    """``tokenrisk serve`` also serves the tools over streamable HTTP at ``/mcp``; a tool
    call is an API request from the MCP caller (its errors come back as tool errors)."""
    from mcp.client.streamable_http import streamable_http_client

    entry = next(t for t in catalogue if t["pools"])
    async with streamable_http_client(f"{server_url}/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name for t in (await session.list_tools()).tools}
            pairs = await session.call_tool(
                "get_pairs", {"address": entry["address"], "chain_id": CHAIN}
            )
            missing = await session.call_tool(
                "top_holders",
                {"address": "0x00000000000000000000000000000000000000aa", "chain_id": CHAIN},
            )
    assert listed == TOOLS
    assert not pairs.is_error, _text(pairs)
    assert pairs.structured_content is not None  # the SDK's structured output of a list
    got = pairs.structured_content["result"]
    assert {p["Pair"]["Address"] for p in got} == {p["address"].lower() for p in entry["pools"]}
    assert missing.is_error and "404:" in _text(missing)


async def test_the_tools_are_behind_the_api_keys(
    catalogue: list[dict[str, Any]], tmp_path: Path
) -> None:
    """With keys required, a tool call without the key is the API's 401; with it, it runs."""
    entry = next(t for t in catalogue if t["pools"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKENRISK_")}
    env |= {"TOKENRISK_DATA_DIR": str(tmp_path), "TOKENRISK_API_KEYS": "agent-key"}
    command = str(Path(sys.executable).with_name("tokenrisk"))
    answers = []
    for args in (["mcp"], ["mcp", "--key", "agent-key"]):
        params = StdioServerParameters(command=command, args=args, env=env)
        with (tmp_path / "mcp.log").open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    call = {"address": entry["address"], "chain_id": CHAIN}
                    answers.append(await session.call_tool("get_pairs", call))
    keyless, keyed = answers
    assert keyless.is_error and "401:" in _text(keyless)
    assert not keyed.is_error, _text(keyed)

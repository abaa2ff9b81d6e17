"""Load: 32 concurrent clients, 2,000 requests mixing every endpoint, over real HTTP.

The server starts with an empty store and results cache, so the first requests for each
token compute (and index) concurrently with each other.  Every answer must be the one
expected for its request: 200 for catalogue tokens, the documented 4xx for the bad
requests mixed in.  Afterwards the holder index, written by concurrent requests, must
still equal ``balanceOf`` for every holder of every indexed token.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from harness import CHAIN, asgi_client, assert_error_shape, token_address
from liveserver import LiveServer

from tokenrisk.chain.rpc import RpcClient
from tokenrisk.chain.tokens import balances_of
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

CLIENTS = 32
REQUESTS = 2_000
# tokens whose balances change without Transfer logs (tests/integration/test_holders.py says why)
BALANCES_FROM_LOGS_DIFFER = {"reflection", "rfi", "rebasing", "pool-drained-tokens"}


@dataclass(frozen=True)
class Call:
    path: str
    params: tuple[tuple[str, str], ...]
    status: int


def plan(devnet: RunningDevnet, seed: int = 7) -> list[Call]:
    """A reproducible shuffled mix: ~70% token checks, ~30% requests that must fail."""
    rng = random.Random(seed)
    tokens = [t["address"] for t in devnet.manifest["tokens"]]
    unlisted = {t["address"] for t in devnet.manifest["tokens"] if not t["pools"]}
    owner = devnet.manifest["addresses"]["OWNER"]
    chain = ("chainID", str(CHAIN))
    token_paths = {
        "/v2/IsHoneypot": 30,
        "/v1/GetPairs": 15,
        "/v1/TopHolders": 15,
        "/v2/GetContractVerification": 2,
    }
    bad = {
        Call("/v2/IsHoneypot", (("address", "0x1234"), chain), 400): 8,
        Call("/v2/IsHoneypot", (("address", owner), chain), 404): 6,
        Call("/v1/TopHolders", (("address", tokens[0]),), 400): 6,
        Call("/v1/GetPairs", (("address", tokens[0]), ("chainID", "1")), 400): 5,
        Call("/v2/Nothing", (), 404): 5,
    }
    choices: list[str | Call] = [*token_paths, *bad]
    weights = [*token_paths.values(), *bad.values()]
    calls: list[Call] = []
    for pick in rng.choices(choices, weights=weights, k=REQUESTS):
        if isinstance(pick, Call):
            calls.append(pick)
        else:
            token = rng.choice(tokens)
            # a token without pairs: the live API's 404 "No pairs found" on IsHoneypot
            status = 404 if pick == "/v2/IsHoneypot" and token in unlisted else 200
            calls.append(Call(pick, (("address", token), chain), status))
    return calls


async def client(
    base_url: str, queue: asyncio.Queue[Call], wrong: list[tuple[Call, int, str]]
) -> Counter[int]:
    seen: Counter[int] = Counter()
    async with httpx.AsyncClient(base_url=base_url, timeout=120.0) as http:
        while not queue.empty():
            call = queue.get_nowait()
            response = await http.get(call.path, params=call.params)
            seen[response.status_code] += 1
            if response.status_code != call.status:
                wrong.append((call, response.status_code, response.text[:200]))
            elif call.status >= 400:
                assert_error_shape(response)
    return seen


async def test_concurrent_mixed_load_has_no_unexpected_answers(
    live: LiveServer, devnet: RunningDevnet
) -> None:
    queue: asyncio.Queue[Call] = asyncio.Queue()
    for call in plan(devnet):
        queue.put_nowait(call)
    wrong: list[tuple[Call, int, str]] = []
    counts = await asyncio.gather(*(client(live.url, queue, wrong) for _ in range(CLIENTS)))
    seen = sum(counts, Counter[int]())
    assert sum(seen.values()) == REQUESTS
    assert not wrong, (len(wrong), wrong[:5])
    await assert_index_equals_balance_of(live, devnet)


async def assert_index_equals_balance_of(live: LiveServer, devnet: RunningDevnet) -> None:
    """Every indexed token: non-zero indexed balances == balanceOf, nobody missing."""
    assert live.service is not None
    store = live.service.store
    rpc = RpcClient(devnet.url)
    checked = 0
    try:
        for token in devnet.manifest["tokens"]:
            address = token["address"]
            if token["id"] in BALANCES_FROM_LOGS_DIFFER or store.get_cursor(CHAIN, address) is None:
                continue
            indexed = store.balances(CHAIN, address)
            known: list[Any] = [*token["holders"], *token["siphoned"], *token["snipers"]]
            everyone = sorted({a.lower() for a in known} | set(indexed))
            on_chain = await balances_of(rpc, address, everyone)
            expected = {a: b for a, b in zip(everyone, on_chain, strict=True) if b}
            assert indexed == expected, token["id"]
            checked += 1
    finally:
        await rpc.aclose()
    assert checked >= 20, f"only {checked} tokens were indexed by the load"


async def test_concurrent_first_requests_for_one_token_all_succeed(
    devnet: RunningDevnet, make_service: Any
) -> None:
    """16 requests that all find the token unindexed: they index it at the same time."""
    service = make_service(devnet.url, cache_ttl=0)
    params = httpx.QueryParams(address=token_address(devnet, "siphon"), chainID=CHAIN)
    async with asgi_client(service) as http:
        paths = ["/v1/TopHolders", "/v2/IsHoneypot"] * 8
        responses = await asyncio.gather(*(http.get(path, params=params) for path in paths))
    failed = [(r.status_code, r.text[:120]) for r in responses if r.status_code != 200]
    assert not failed, failed

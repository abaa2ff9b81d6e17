"""Node faults: typed 502/503/504 answers within the deadline, and recovery without restart.

- The node is killed while requests are in flight: each of them either finished before
  (same verdict as before the outage) or gets 502/503, within the deadline; new
  requests get 503 at once; a node restarted on the same port from the same state
  serves the very next request.
- A node that answers late: 504 at the request deadline (or at the RPC timeout, when
  that is shorter).
- A node that answers with something that is not (valid) JSON-RPC: a typed 502, or 503
  when the transport itself fails.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx
import nodeproxy
import pytest
from harness import CHAIN, asgi_client, assert_error_shape, token_address

from tokenrisk.devnet.instance import RunningDevnet, start_devnet

pytestmark = pytest.mark.integration

DEADLINE = 3.0
SLACK = 1.0  # event-loop scheduling and unwinding of the cancelled work
PATHS = ("/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders", "/v2/GetContractVerification")


async def timed_get(
    http: httpx.AsyncClient, path: str, address: str
) -> tuple[httpx.Response, float]:
    """The response and the monotonic time it arrived."""
    response = await http.get(path, params={"address": address, "chainID": CHAIN})
    return response, time.monotonic()


def verdict(body: dict[str, Any]) -> tuple[Any, ...]:
    return (
        body["summary"]["risk"],
        body.get("honeypotResult", {}).get("isHoneypot"),
        body["simulationSuccess"],
    )


def assert_upstream_error(response: httpx.Response, statuses: set[int], *urls: str) -> None:
    assert response.status_code in statuses, (response.status_code, response.text)
    assert_error_shape(response)
    assert not any(url in response.text for url in urls), response.text


# NODE STOPPED AND RESTARTED


async def test_node_killed_mid_run_then_restarted_on_the_same_port(make_service: Any) -> None:
    own = start_devnet()
    restarted: RunningDevnet | None = None
    try:
        tokens = [t["address"] for t in own.manifest["tokens"] if t["pools"]][:16]
        service = make_service(own.url, deadline=DEADLINE, rpc_timeout=2.0, cache_ttl=0)
        async with asgi_client(service) as http:
            before = {}
            for token in tokens:
                response, _ = await timed_get(http, "/v2/IsHoneypot", token)
                assert response.status_code == 200, response.text
                before[token] = verdict(response.json())

            # STOP WHILE REQUESTS ARE IN FLIGHT
            flight = [asyncio.create_task(timed_get(http, "/v2/IsHoneypot", t)) for t in tokens]
            await asyncio.sleep(0.05)
            own.node.process.kill()
            own.node.process.wait(timeout=10)
            killed = time.monotonic()
            statuses: Counter[int] = Counter()
            answers = await asyncio.gather(*flight)
            for token, (response, arrived) in zip(tokens, answers, strict=True):
                statuses[response.status_code] += 1
                assert arrived - killed <= DEADLINE + SLACK, response.text
                if response.status_code == 200:
                    assert verdict(response.json()) == before[token], "verdict from a dead node"
                else:
                    assert_upstream_error(response, {502, 503}, own.url)
            assert statuses[502] + statuses[503] > 0, f"nothing was in flight: {statuses}"

            # NEW REQUESTS WHILE IT IS DOWN
            for path in PATHS:
                started = time.monotonic()
                response, arrived = await timed_get(http, path, tokens[0])
                assert_upstream_error(response, {503}, own.url)
                assert arrived - started <= DEADLINE + SLACK
            health = await http.get("/health")
            assert health.status_code == 503 and own.url not in health.text

            # BACK ON THE SAME PORT, SAME STATE: THE SAME SERVICE RECOVERS
            restarted = start_devnet(port=own.node.port)
            for path in PATHS:
                response, _ = await timed_get(http, path, tokens[0])
                assert response.status_code == 200, (path, response.text)
            response, _ = await timed_get(http, "/v2/IsHoneypot", tokens[1])
            assert verdict(response.json()) == before[tokens[1]]
    finally:
        own.stop()
        if restarted is not None:
            restarted.stop()


# SLOW NODE


@pytest.mark.parametrize(
    ("rpc_timeout", "cache_ttl", "expected_at"),
    [(10.0, 15.0, 1.0), (0.4, 0.0, 0.4)],
    ids=["deadline-first", "rpc-timeout-first"],
)
async def test_slow_node_gets_504_at_the_deadline(
    devnet: RunningDevnet,
    make_service: Any,
    rpc_timeout: float,
    cache_ttl: float,
    expected_at: float,
) -> None:
    token = token_address(devnet, "plain")
    async with nodeproxy.NodeProxy(devnet.url, delay=5.0) as proxy:
        service = make_service(
            proxy.url, deadline=1.0, rpc_timeout=rpc_timeout, cache_ttl=cache_ttl
        )
        async with asgi_client(service) as http:
            for path in PATHS:
                started = time.monotonic()
                response, arrived = await timed_get(http, path, token)
                assert_upstream_error(response, {504}, proxy.url, devnet.url)
                assert expected_at - 0.05 <= arrived - started <= expected_at + 0.5, path


# MALFORMED JSON-RPC


@pytest.mark.parametrize(
    ("answer", "statuses"),
    [
        (nodeproxy.not_json, {502}),
        (nodeproxy.not_jsonrpc, {502}),
        (nodeproxy.wrong_ids, {502}),
        (nodeproxy.garbage_results, {502}),
        (nodeproxy.http_500, {503}),
        (nodeproxy.truncated, {502, 503}),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
async def test_malformed_node_replies_are_typed_errors(
    devnet: RunningDevnet, make_service: Any, answer: nodeproxy.Answer, statuses: set[int]
) -> None:
    token = token_address(devnet, "plain")
    async with nodeproxy.NodeProxy(devnet.url, answer) as proxy:
        service = make_service(proxy.url, deadline=DEADLINE, rpc_timeout=2.0, cache_ttl=0)
        async with asgi_client(service) as http:
            for path in PATHS:
                started = time.monotonic()
                response, arrived = await timed_get(http, path, token)
                assert arrived - started <= DEADLINE + SLACK, path
                assert_upstream_error(response, statuses, proxy.url, devnet.url)

"""Generated requests, driven by the service's own OpenAPI document: never a 5xx.

Hypothesis reads ``/openapi.json`` from the live server and, for each GET operation,
sends its query parameters (and API-key header) absent, present or repeated, with
values that are arbitrary text, numbers, flags, near-miss addresses and real devnet
addresses (tokens, pools, EOAs, non-token contracts), plus unknown parameters.  Every
answer must be a success or a typed 4xx ``{"code", "error"}`` body that does not leak
the node URL.  The healthy node means no 5xx is ever acceptable here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from harness import CHAIN, assert_error_shape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from liveserver import LiveServer

from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration

EXAMPLES = 3_000
HEADER_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E)  # h11 refuses edge spaces


@dataclass(frozen=True)
class Operation:
    path: str
    query: tuple[str, ...]
    headers: tuple[str, ...]


@dataclass(frozen=True)
class Generated:
    path: str
    params: list[tuple[str, str]]
    headers: dict[str, str]


def operations(doc: dict[str, Any]) -> list[Operation]:
    """Every GET operation with its query parameters and header/query API-key schemes."""
    schemes = doc.get("components", {}).get("securitySchemes", {})
    out = []
    for path, item in doc["paths"].items():
        op = item.get("get")
        if op is None:
            continue
        params = [(p["name"], p["in"]) for p in op.get("parameters", [])]
        for requirement in op.get("security", []):
            params += [(schemes[s]["name"], schemes[s]["in"]) for s in requirement]
        query = tuple(name for name, where in params if where == "query")
        headers = tuple(name for name, where in params if where == "header")
        out.append(Operation(path, query, headers))
    return out


def addresses(devnet: RunningDevnet) -> st.SearchStrategy[str]:
    """Real devnet addresses in valid and near-miss spellings."""
    infra = devnet.manifest["addresses"]
    picks = [infra[k] for k in ("OWNER", "V2_FACTORY", "V2_ROUTER", "NPM", "WETH", "USDC")]
    for token in devnet.manifest["tokens"][::3]:
        picks.append(token["address"])
        picks += [pool["address"] for pool in token["pools"][:1]]
    picks.append("0x" + "0" * 40)

    def spellings(a: str) -> st.SearchStrategy[str]:
        forms = [a, a.lower(), "0x" + a[2:].upper(), a + "\n", " " + a, a[:-1], a + "0", a[2:]]
        return st.sampled_from(forms)

    return st.sampled_from(picks).flatmap(spellings)


def values(devnet: RunningDevnet) -> st.SearchStrategy[str]:
    words = ["", "31337", "1", "0", "-1", "true", "false", "TRUE", "yes", "no", "null", "0x"]
    return st.one_of(
        addresses(devnet),
        st.from_regex(r"0x[0-9a-fA-F]{40}", fullmatch=True),
        st.sampled_from(words + ["[]", "{}", "%00", "NaN", "1e309", "\u0663\u0661"]),
        st.integers(min_value=-(2**80), max_value=2**80).map(str),
        st.text(max_size=40),
        st.text(min_size=200, max_size=3_000),
        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    )


def hinted(name: str, devnet: RunningDevnet) -> st.SearchStrategy[str]:
    """Mostly-plausible values for the parameters the document describes."""
    if name in ("address", "pair", "router"):
        return addresses(devnet)
    if name == "chainID":
        return st.just(str(CHAIN))
    if name == "limit":
        return st.integers(min_value=1, max_value=10).map(str)
    return st.sampled_from(["true", "false"])


@st.composite
def generated(draw: st.DrawFn, ops: list[Operation], devnet: RunningDevnet) -> Generated:
    op = draw(st.sampled_from(ops))
    # A third of the requests are plausible (each parameter absent or hinted once), so the
    # real checks are reached however many optional parameters an operation grows.
    plausible = draw(st.integers(min_value=0, max_value=2)) == 0
    anything = values(devnet)
    params: list[tuple[str, str]] = []
    for name in op.query:
        if plausible:
            copies = 1 if name in ("address", "chainID") else draw(st.sampled_from([0, 0, 1]))
            params += [(name, draw(hinted(name, devnet))) for _ in range(copies)]
            continue
        copies = draw(st.sampled_from([0, 1, 1, 1, 2]))
        params += [(name, draw(st.one_of(hinted(name, devnet), anything))) for _ in range(copies)]
    params += draw(st.lists(st.tuples(st.text(min_size=1, max_size=12), anything), max_size=2))
    params = draw(st.permutations(params))
    headers = {}
    for name in op.headers:
        if draw(st.booleans()):
            headers[name] = draw(st.text(HEADER_CHARS, max_size=40))
    return Generated(op.path, list(params), headers)


def reached_a_check(response: httpx.Response) -> bool:
    """A 200, or the wire-compatible 404 that a completed pair search answers (WIRE.md)."""
    if response.status_code == 200:
        return True
    return response.status_code == 404 and response.json().get("error") == "No pairs found"


def fetch(
    http: httpx.Client, path: str, params: tuple[tuple[str, str], ...], headers: dict[str, str]
) -> httpx.Response:
    """One generated request's answer.  A server-sent-events stream (``/v2/watch/events``)
    never ends by itself: its status and headers are the answer (a refusal before the
    stream is an ordinary JSON error and is read whole)."""
    with http.stream("GET", path, params=params, headers=headers) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            assert response.status_code == 200, response.status_code
            return httpx.Response(200, headers={"content-type": "text/event-stream"})
        response.read()
        return response


def test_generated_requests_never_get_5xx(live: LiveServer, devnet: RunningDevnet) -> None:
    seen: Counter[int] = Counter()
    reached = 0
    fresh_connections = httpx.Limits(max_keepalive_connections=0)  # a crash cannot leak over
    with httpx.Client(base_url=live.url, timeout=90.0, limits=fresh_connections) as http:
        ops = operations(http.get("/openapi.json").json())
        assert {op.path for op in ops} >= {"/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders"}

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(request=generated(ops, devnet))
        def check(request: Generated) -> None:
            params = tuple(request.params)
            response = fetch(http, request.path, params, request.headers)
            nonlocal reached
            seen[response.status_code] += 1
            assert response.status_code < 500, (response.status_code, response.text)
            if response.status_code >= 400:
                assert_error_shape(response)
            assert devnet.url not in response.text
            reached += reached_a_check(response)

        check()
    assert sum(seen.values()) >= EXAMPLES, seen
    assert reached > EXAMPLES // 10, (reached, seen)  # the generator reaches the real checks too

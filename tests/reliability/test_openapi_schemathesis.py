"""Schemathesis over the whole OpenAPI document, against the real server on the devnet.

Every operation gets generated requests (valid and invalid per the document) and every
response must conform: no 5xx, a documented status, the documented content type and
body schema.  A document that marked ``address`` optional or ``chainID`` a string, or
offered key schemes the server does not use, fails here.  Bounded: a few dozen
examples per operation, no shrinking beyond hypothesis' default budget.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from harness import CHAIN
from hypothesis import HealthCheck, Phase, given, settings
from liveserver import LiveServer
from schemathesis.generation.modes import GenerationMode

pytestmark = pytest.mark.integration


MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


def lowered(query: dict[str, Any] | None) -> None:
    for name in ("address", "pair", "router"):
        if query and isinstance(query.get(name), str):
            query[name] = query[name].lower()


def with_liquidity_chain(query: dict[str, Any] | None, chain_id: int) -> None:
    """Add the chainID that simulateLiquidity/forceSimulateLiquidity require (SPEC.md).

    OpenAPI cannot state a dependency between two query parameters; the document says
    it in the parameters' descriptions and the server answers 400 without it.
    """
    if not query or "chainID" in query:
        return
    if any(query.get(n) in (True, "true") for n in ("simulateLiquidity", "forceSimulateLiquidity")):
        query["chainID"] = chain_id


STREAMS = frozenset({"/v2/watch/events"})
"""Server-sent-event streams: their body never ends, so a generated call cannot be
validated whole.  Their parameters are fuzzed by test_fuzz.py (status and headers) and
the streams read by real SSE clients in tests/integration/test_watch*.py."""


def operations(url: str) -> list[Any]:
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_every_operation_conforms_to_the_document(live: LiveServer, mode: GenerationMode) -> None:
    found = operations(live.url)
    paths = {op.path for op in found}
    assert {"/v2/IsHoneypot", "/v1/GetPairs", "/v1/TopHolders", "/health"} <= paths
    for operation in found:
        if mode is GenerationMode.NEGATIVE and not list(operation.query):
            continue  # nothing to get wrong in a request without parameters
        if operation.path in STREAMS:
            continue  # a body that never ends: see STREAMS

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
        )
        def conforms(case: Any) -> None:
            if mode is GenerationMode.POSITIVE:
                lowered(case.query)  # the pattern cannot say "mixed case = EIP-55 checksum"
                lowered(case.body if isinstance(case.body, dict) else None)  # POST /v2/watch
                lowered(case.path_parameters)  # DELETE /v2/watch/{chain}/{address}
                with_liquidity_chain(case.query, CHAIN)
            case.call_and_validate(base_url=live.url, timeout=60)

        conforms()

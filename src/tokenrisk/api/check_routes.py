"""The check routes, each with the check behind it: IsHoneypot and GetContractVerification
at ``/v2/``, GetPairs (v1: the default count; v2: ``limit``) and TopHolders, each bounded
by what the caller's tier allows, and the IsHoneypot batch.  A handler runs its check
through the runner (deadline, admission, the results cache when the endpoint is cached),
taking from the running service the one bundle its check is handed, and renders the
typed result with :mod:`tokenrisk.api.wire`.

Request order: key and rate limit (the gate), then parameters (400), then what the
tier allows (the ``limit`` parameters), then the cached or fresh check under the
deadline (:mod:`.runner`).  The ``/v1/`` IsHoneypot and GetContractVerification paths
older clients call answer the legacy v1 shapes from the same checks
(:mod:`.compat.legacy_routes`; docs/api.md "Legacy v1 shapes").

``POST /v2/IsHoneypot/batch`` (an extension) checks up to 50 tokens in one request, each
exactly as ``GET /v2/IsHoneypot?address=..&chainID=..`` would check it, through the same
results cache (so a batch and single requests share answers) and the same service (pair
discovery, capability probes, balance slots and the simulation limit are shared).  The
same address and chain listed twice is checked once.  Results come back in the order
given, each with its own HTTP-like ``status``: a bad address or a token that is not found
fails alone, never the batch.  Every token counts as one request against the rate limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from tokenrisk.api import wire
from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.params import (
    PAIR_DOC,
    ROUTER_DOC,
    check_options,
    holders_limit,
    honeypot_liquidity,
    honeypot_options,
    optional_address,
    pairs_limit,
    parse_chain_id,
    require_address,
    require_chain_id,
    v1_pairs_limit,
)
from tokenrisk.api.runner import JSONBytes, Runner
from tokenrisk.checks.deps import Options
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.checks.pairs import get_pairs
from tokenrisk.checks.target import skipped_chains, unsearched_history, unsearched_known
from tokenrisk.checks.top_holders import top_holders
from tokenrisk.checks.verification import contract_verification
from tokenrisk.errors import InputError, TokenRiskError

# THE CHECK BEHIND EACH ROUTE

SKIPPED_HEADER = "X-Skipped-Chains"
UNSEARCHED_HEADER = "X-Unsearched-Blocks"

Render = Callable[[Any], Any]
"""A check's typed result (``checks.results``) -> its JSON-ready body in one shape."""


def v2_honeypot(result: Any) -> Any:
    return wire.dump(wire.honeypot_body(result))


def v2_verification(result: Any) -> Any:
    return wire.dump(wire.verification_body(result))


async def honeypot_answer(
    runner: Runner,
    token: str,
    chain_id: int | None,
    pair: str | None,
    router: str | None,
    mode: str,
    options: Options,
    shape: tuple[str, Render] = ("IsHoneypot", v2_honeypot),
) -> tuple[JSONBytes, set[int]]:
    """IsHoneypot's JSON and the chains skipped because their node was down (the GET
    route and the batch share the cache key, so they share answers).  ``shape``: the
    cache's name for the body and its renderer (v2 unless the legacy v1 route asks)."""
    endpoint, render = shape

    async def work() -> Any:
        deps = runner.service.honeypot
        return render(await is_honeypot(deps, token, chain_id, pair, mode, options, router))

    with skipped_chains() as skipped:
        body = await runner.cached(endpoint, chain_id, (token, pair, router, mode, options), work)
    return body, skipped


async def verification(
    runner: Runner,
    root: str,
    chain_id: int | None,
    pair: str | None,
    router: str | None,
    render: Render = v2_verification,
) -> Response:
    """GetContractVerification, cached like IsHoneypot: keyed on the chain head, so a
    new block (a new pool, an upgraded proxy) recomputes it; a contract verified at its
    source meanwhile shows once the head moves or the entry's ``cache_ttl`` ends."""
    params = (root, pair, router, render.__name__)
    with skipped_chains() as skipped:
        body = await runner.cached(
            "GetContractVerification",
            chain_id,
            params,
            lambda: verification_json(runner, root, chain_id, pair, router, render),
        )
    return searched(body, skipped)


async def verification_json(
    runner: Runner,
    root: str,
    chain_id: int | None,
    pair: str | None,
    router: str | None,
    render: Render = v2_verification,
) -> Any:
    """GetContractVerification's JSON body."""
    deps = runner.service.verification
    return render(await contract_verification(deps, root, chain_id, pair, router))


async def pairs_json(runner: Runner, token: str, chain_id: int | None, limit: int) -> Any:
    """GetPairs' JSON array."""
    return wire.dump_all(
        wire.pairs_body(await get_pairs(runner.service.nodes, token, chain_id, limit))
    )


async def pairs(runner: Runner, token: str, chain_id: int | None, limit: int) -> Response:
    with skipped_chains() as skipped, unsearched_history() as unsearched:
        body = await runner.cached(
            "GetPairs", chain_id, (token, limit), lambda: pairs_json(runner, token, chain_id, limit)
        )
    known = unsearched or set(unsearched_known(runner.service.nodes, token, chain_id))
    if known:  # a node's log cap hid part of the V4 history: the list may be short
        body.headers[UNSEARCHED_HEADER] = ",".join(sorted(known))
    return searched(body, skipped)


async def holders_json(runner: Runner, token: str, chain_id: int, limit: int) -> Any:
    """TopHolders' JSON body."""
    result = await top_holders(runner.service.holders, token, chain_id, limit)
    return wire.dump(wire.top_holders_body(result))


async def holders(runner: Runner, token: str, chain_id: int, limit: int) -> Response:
    return await runner.cached(
        "TopHolders", chain_id, (token, limit), lambda: holders_json(runner, token, chain_id, limit)
    )


def searched(response: Response, skipped: set[int]) -> Response:
    """A search's answer; ``X-Skipped-Chains`` names the chains whose node was down.

    A request that waited for another's identical computation (single flight) shares
    its body but not this header."""
    if skipped:
        response.headers[SKIPPED_HEADER] = ",".join(str(c) for c in sorted(skipped))
    return response


# ONE TOKEN: ISHONEYPOT, GETCONTRACTVERIFICATION


HONEYPOT_QUERY = (
    ("address", "Token or pair/pool address (0x + 40 hex)."),
    ("chainID", "Chain id; every chain when omitted."),
    ("pair", PAIR_DOC),
    ("router", ROUTER_DOC),
    ("simulateLiquidity", "true/false: simulate a pool when none exists; needs chainID."),
    ("forceSimulateLiquidity", "true/false: always simulate a pool; needs chainID."),
    ("ownerPowers", "true/false: run the owner-power scan (default true)."),
)
"""IsHoneypot's query parameters and their descriptions, in the document's order."""


def query_parameters(described: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """OpenAPI parameter objects for optional string query parameters, as FastAPI writes
    them for ``Query(None, description=...)`` (:mod:`.openapi` then states each one's
    real rules by its name)."""
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "schema": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": text},
            "description": text,
        }
        for name, text in described
    ]


def add_honeypot_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    async def is_honeypot(request: Request) -> Response:
        # the caller (for its tier) and the query read here, not by FastAPI: the gate
        # first, as a dependency would run, then every parameter, an optional string
        # the handler parses itself (our own 400s); FastAPI's per-parameter validation
        # was ~50 us of every check's CPU and its solving of the gate's dependency
        # ~0.3 ms (issue #27); the document lists them the same
        caller = await gate.of(request)
        query = request.query_params
        token = require_address("address", query.get("address"))
        chain_id = parse_chain_id(query.get("chainID"))
        pair_address = optional_address(query.get("pair"))
        router_address = optional_address(query.get("router"))
        simulate, force = query.get("simulateLiquidity"), query.get("forceSimulateLiquidity")
        mode = honeypot_liquidity(simulate, force, chain_id)
        options = honeypot_options(caller.tier, query.get("ownerPowers"))
        body, skipped = await honeypot_answer(
            runner, token, chain_id, pair_address, router_address, mode, options
        )
        return searched(body, skipped)

    summary = "Can this token be sold after buying it, and at what cost?"
    query = query_parameters(HONEYPOT_QUERY)
    model = wire.IsHoneypotResponse
    add_v2(app, "IsHoneypot", summary, model, is_honeypot, query, gate.security)


VERIFICATION_QUERY = (
    ("address", "Root contract (0x + 40 hex)."),
    ("chainID", "Chain id; every chain when omitted."),
    ("pair", PAIR_DOC),
    ("router", ROUTER_DOC),
)
"""GetContractVerification's query parameters, in the document's order."""


def add_verification_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    async def contract_verification(request: Request) -> Response:
        await gate.of(request)  # as IsHoneypot: the gate, then the query read here
        query = request.query_params
        root = require_address("address", query.get("address"))
        chain_id = parse_chain_id(query.get("chainID"))
        pair_address = optional_address(query.get("pair"))
        router_address = optional_address(query.get("router"))
        return await verification(runner, root, chain_id, pair_address, router_address)

    summary = "Is the contract and everything it calls open source? (cached per head block)"
    model = wire.ContractVerificationResponse
    query = query_parameters(VERIFICATION_QUERY)
    endpoint = contract_verification
    add_v2(app, "GetContractVerification", summary, model, endpoint, query, gate.security)


def add_v2(
    app: FastAPI,
    name: str,
    summary: str,
    model: type[wire.WireModel],
    endpoint: Callable[..., Awaitable[Response]],
    query: list[dict[str, Any]],
    security: list[dict[str, list[str]]],
) -> None:
    """Serve ``endpoint`` at ``/v2/<name>``: an endpoint that calls the gate and reads
    its query itself; ``query`` and ``security`` are what the document lists for it
    (the parameters, and the gate's :attr:`~tokenrisk.api.access.KeyGate.security`)."""
    extra: dict[str, Any] = {"parameters": query}
    if security:
        extra["security"] = security
    app.get(
        f"/v2/{name}",
        summary=summary,
        response_model=model,
        response_model_exclude_none=True,
        responses=ERRORS,
        openapi_extra=extra,
    )(endpoint)


# LISTS: GETPAIRS, TOPHOLDERS


def add_pairs_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    async def pairs_answer(address: str | None, chain: str | None, limit: int) -> Response:
        token = require_address("address", address)
        return await pairs(runner, token, parse_chain_id(chain), limit)

    @app.get(
        "/v1/GetPairs",
        summary="Pairs of a token, by USD liquidity descending (at most 10)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
        responses=ERRORS,
    )
    async def get_pairs(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
    ) -> Response:
        return await pairs_answer(address, chainID, v1_pairs_limit(caller.tier))

    @app.get(
        "/v2/GetPairs",
        summary="Pairs of a token, by USD liquidity descending, then creation time (limit)",
        response_model=list[wire.PairItem],
        response_model_exclude_none=True,
        responses=ERRORS,
    )
    async def get_pairs_v2(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        limit: str | None = Query(
            None, description="Most pairs to return: 1 to the tier's maximum; default 10."
        ),
    ) -> Response:
        return await pairs_answer(address, chainID, pairs_limit(limit, caller.tier))


def add_holders_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    @app.get(
        "/v1/TopHolders",
        summary="Top holders by balance (descending, ties by address); 50 unless limit",
        response_model=wire.TopHoldersResponse,
        response_model_exclude_none=True,
        responses=ERRORS,
    )
    async def top_holders(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id (required here)."),  # noqa: N803
        limit: str | None = Query(
            None, description="Most holders to return: 1 to the tier's allowance; default 50."
        ),
    ) -> Response:
        token = require_address("address", address)
        chain_id = require_chain_id(chainID)
        count = holders_limit(limit, caller.tier)
        return await holders(runner, token, chain_id, count)


# THE ISHONEYPOT BATCH

log = logging.getLogger("tokenrisk.api")
MAX_BATCH = 50


class BatchToken(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str = Field(description="Token or pair/pool address (0x + 40 hex).")
    chainID: int | str | None = Field(
        default=None, description="Chain id; every configured chain when omitted."
    )


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the bounds are checked by the handler (for a clear 400 message), stated here for clients
    tokens: list[BatchToken] = Field(
        description=f"1 to {MAX_BATCH} tokens, checked in order.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_BATCH},
    )


class BatchResult(wire.WireModel):
    address: str = Field(description="The address as given.")
    chainID: str | None = Field(default=None, description="The chainID as given, if any.")
    status: int = Field(description="200, or the status GET /v2/IsHoneypot would answer.")
    result: wire.IsHoneypotResponse | None = Field(
        default=None, description="The IsHoneypot body when status is 200."
    )
    error: wire.ErrorBody | None = Field(default=None, description="The error body otherwise.")
    skippedChains: list[int] | None = Field(
        default=None, description="Chains not searched because their node was down."
    )


class BatchResponse(wire.WireModel):
    results: list[BatchResult] = Field(description="One result per token, in the order given.")


Key = tuple[str, str | None]


def add_batch_route(app: FastAPI, runner: Runner, gate: Gate, errors: dict[int | str, Any]) -> None:
    """The route; a caller's tier switches analyses on and off as for the GET endpoint,
    so the two share cache entries.  ``errors``: the error answers, for the document."""
    caller_of = Depends(gate)

    @app.post(
        "/v2/IsHoneypot/batch",
        summary=f"Extension: IsHoneypot for up to {MAX_BATCH} tokens, results in order",
        response_model=BatchResponse,
        response_model_exclude_none=True,
        responses=errors,
    )
    async def is_honeypot_batch(
        request: Request, payload: BatchRequest, caller: Caller = caller_of
    ) -> JSONResponse:
        count = len(payload.tokens)
        if not 1 <= count <= MAX_BATCH:
            raise InputError(f"a batch holds 1 to {MAX_BATCH} tokens, not {count}")
        await gate.charge(request, caller, count - 1)  # the dependency counted the first one
        keys = [(t.address, None if t.chainID is None else str(t.chainID)) for t in payload.tokens]
        unique = list(dict.fromkeys(keys))
        answers = await asyncio.gather(*(_check(runner, key, caller) for key in unique))
        by_key = dict(zip(unique, answers, strict=True))
        return JSONResponse({"results": [by_key[key] for key in keys]})


async def _check(runner: Runner, key: Key, caller: Caller) -> dict[str, Any]:
    """One token's result object; errors are its own status, never the batch's."""
    address, chain_text = key
    given: dict[str, Any] = {"address": address}
    if chain_text is not None:
        given["chainID"] = chain_text
    try:
        token = require_address("address", address)
        chain_id = parse_chain_id(chain_text)
        options = check_options(caller.tier)
        answer, skipped = await honeypot_answer(
            runner, token, chain_id, None, None, "never", options
        )
    except TokenRiskError as exc:
        return {**given, "status": exc.status, "error": {"code": exc.status, "error": exc.public}}
    except Exception:
        log.exception("unexpected error in a batch item")
        return {**given, "status": 500, "error": {"code": 500, "error": "internal error"}}
    extra = {"skippedChains": sorted(skipped)} if skipped else {}
    return {**given, "status": 200, "result": json.loads(bytes(answer.body)), **extra}

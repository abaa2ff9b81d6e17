"""``POST /v2/IsHoneypot/batch``: up to 50 IsHoneypot checks in one request (an extension).

Each token is checked exactly as ``GET /v2/IsHoneypot?address=..&chainID=..`` would
check it, through the same results cache (so a batch and single requests share answers)
and the same service (pair discovery, capability probes, balance slots and the
simulation limit are shared).  The same address and chain listed twice is checked once.
Results come back in the order given, each with its own HTTP-like ``status``: a bad
address or a token that is not found fails alone, never the batch.  Every token counts
as one request against the rate limit.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from tokenrisk.api import handlers, wire
from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.allowance import check_options
from tokenrisk.api.params import parse_chain_id, require_address
from tokenrisk.api.runner import Runner
from tokenrisk.errors import InputError, TokenRiskError

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
        answer, skipped = await handlers.honeypot_answer(
            runner, token, chain_id, None, None, "never", options
        )
    except TokenRiskError as exc:
        return {**given, "status": exc.status, "error": {"code": exc.status, "error": exc.public}}
    except Exception:
        log.exception("unexpected error in a batch item")
        return {**given, "status": 500, "error": {"code": 500, "error": "internal error"}}
    extra = {"skippedChains": sorted(skipped)} if skipped else {}
    return {**given, "status": 200, "result": json.loads(bytes(answer.body)), **extra}

"""The list routes: GetPairs (v1: the default count; v2: ``limit``) and TopHolders, each
bounded by what the caller's tier allows."""

from __future__ import annotations

from fastapi import Depends, FastAPI, Query
from fastapi.responses import Response

from tokenrisk.api import handlers, wire
from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.allowance import holders_limit, pairs_limit, v1_pairs_limit
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.params import parse_chain_id, require_address, require_chain_id
from tokenrisk.api.runner import Runner


def add_pairs_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    async def pairs(address: str | None, chain: str | None, limit: int) -> Response:
        token = require_address("address", address)
        return await handlers.pairs(runner, token, parse_chain_id(chain), limit)

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
        return await pairs(address, chainID, v1_pairs_limit(caller.tier))

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
        return await pairs(address, chainID, pairs_limit(limit, caller.tier))


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
        return await handlers.holders(runner, token, chain_id, count)

"""The routes about one token: IsHoneypot and GetContractVerification at ``/v2/``.

The ``/v1/`` paths older clients call answer the legacy v1 shapes from the same check
(:mod:`.legacy_routes`; docs/api.md "Legacy v1 shapes")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI, Query
from fastapi.responses import Response

from tokenrisk.api import handlers, wire
from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.allowance import honeypot_options
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.params import (
    PAIR_DOC,
    ROUTER_DOC,
    honeypot_liquidity,
    optional_address,
    parse_chain_id,
    require_address,
)
from tokenrisk.api.runner import Runner


def add_honeypot_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    async def is_honeypot(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token or pair/pool address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=PAIR_DOC),
        router: str | None = Query(None, description=ROUTER_DOC),
        simulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: simulate a pool when none exists; needs chainID."
        ),
        forceSimulateLiquidity: str | None = Query(  # noqa: N803
            None, description="true/false: always simulate a pool; needs chainID."
        ),
        ownerPowers: str | None = Query(  # noqa: N803
            None, description="true/false: run the owner-power scan (default true)."
        ),
    ) -> Response:
        token = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        mode = honeypot_liquidity(simulateLiquidity, forceSimulateLiquidity, chain_id)
        options = honeypot_options(caller.tier, ownerPowers)
        body, skipped = await handlers.honeypot_answer(
            runner, token, chain_id, pair_address, router_address, mode, options
        )
        return handlers.searched(body, skipped)

    summary = "Can this token be sold after buying it, and at what cost?"
    add_v2(app, "IsHoneypot", summary, wire.IsHoneypotResponse, [], is_honeypot)


def add_verification_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    async def contract_verification(
        address: str | None = Query(None, description="Root contract (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=PAIR_DOC),
        router: str | None = Query(None, description=ROUTER_DOC),
    ) -> Response:
        root = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        return await handlers.verification(runner, root, chain_id, pair_address, router_address)

    summary = "Is the contract and everything it calls open source? (cached per head block)"
    model = wire.ContractVerificationResponse
    guard = [Depends(gate)]
    add_v2(app, "GetContractVerification", summary, model, guard, contract_verification)


def add_v2(
    app: FastAPI,
    name: str,
    summary: str,
    model: type[wire.WireModel],
    guard: list[Any],
    endpoint: Callable[..., Awaitable[Response]],
) -> None:
    """Serve ``endpoint`` at ``/v2/<name>``.  ``guard``: route dependencies (the gate,
    unless the endpoint takes the caller as a parameter)."""
    app.get(
        f"/v2/{name}",
        summary=summary,
        response_model=model,
        response_model_exclude_none=True,
        responses=ERRORS,
        dependencies=guard,
    )(endpoint)

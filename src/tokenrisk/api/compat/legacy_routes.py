"""``/v1/IsHoneypot`` and ``/v1/GetContractVerification``: the legacy v1 shapes older
clients read (:mod:`.legacy`), from the same checks, parameters, gate and errors as the
``/v2/`` routes.  The v1 IsHoneypot answer is cached apart from v2's (another body)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, Query
from fastapi.responses import Response

from tokenrisk.api import check_routes
from tokenrisk.api.access import Caller, Gate
from tokenrisk.api.compat import legacy
from tokenrisk.api.failures import ERRORS
from tokenrisk.api.params import (
    PAIR_DOC,
    ROUTER_DOC,
    honeypot_liquidity,
    honeypot_options,
    optional_address,
    parse_chain_id,
    require_address,
)
from tokenrisk.api.runner import Runner


def v1_honeypot(result: Any) -> Any:
    return legacy.dump(legacy.honeypot_body(result))


def v1_verification(result: Any) -> Any:
    return legacy.dump(legacy.verification_body(result))


def add_legacy_routes(app: FastAPI, runner: Runner, gate: Gate) -> None:
    add_legacy_honeypot(app, runner, gate)
    add_legacy_verification(app, runner, gate)


def add_legacy_honeypot(app: FastAPI, runner: Runner, gate: Gate) -> None:
    caller_of = Depends(gate)  # the request's Caller, for its tier

    @app.get(
        "/v1/IsHoneypot",
        summary="Legacy v1 shape of /v2/IsHoneypot (PascalCase, as older clients read it)",
        response_model=legacy.LegacyHoneypotResponse,
        responses=ERRORS,
        deprecated=True,
    )
    async def is_honeypot_v1(
        caller: Caller = caller_of,
        address: str | None = Query(None, description="Token or pair/pool address (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=PAIR_DOC),
        router: str | None = Query(None, description=ROUTER_DOC),
        simulateLiquidity: str | None = Query(None, description="As in v2."),  # noqa: N803
        forceSimulateLiquidity: str | None = Query(None, description="As in v2."),  # noqa: N803
    ) -> Response:
        token = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        mode = honeypot_liquidity(simulateLiquidity, forceSimulateLiquidity, chain_id)
        options = honeypot_options(caller.tier, None)
        body, skipped = await check_routes.honeypot_answer(
            runner,
            token,
            chain_id,
            pair_address,
            router_address,
            mode,
            options,
            ("IsHoneypotV1", v1_honeypot),
        )
        return check_routes.searched(body, skipped)


def add_legacy_verification(app: FastAPI, runner: Runner, gate: Gate) -> None:
    @app.get(
        "/v1/GetContractVerification",
        summary="Legacy v1 shape of /v2/GetContractVerification (cached per head block)",
        response_model=legacy.LegacyVerificationResponse,
        responses=ERRORS,
        dependencies=[Depends(gate)],
        deprecated=True,
    )
    async def contract_verification_v1(
        address: str | None = Query(None, description="Root contract (0x + 40 hex)."),
        chainID: str | None = Query(None, description="Chain id; every chain when omitted."),  # noqa: N803
        pair: str | None = Query(None, description=PAIR_DOC),
        router: str | None = Query(None, description=ROUTER_DOC),
    ) -> Response:
        root = require_address("address", address)
        chain_id = parse_chain_id(chainID)
        pair_address, router_address = optional_address(pair), optional_address(router)
        return await check_routes.verification(
            runner, root, chain_id, pair_address, router_address, v1_verification
        )

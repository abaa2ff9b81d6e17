"""``GET /api/v1/token_security/{chain_id}?contract_addresses=a,b``: GoPlus's
``token_security`` request and envelope, so clients written against GoPlus (its SDKs
among them) work with only their host changed (docs/goplus.md).

The key is GoPlus's ``Authorization`` header (``Bearer`` optional) or tokenrisk's own
``X-API-KEY`` / ``apiKey``; every address counts as one request against the tier's rate
limit, as in the batch.  Input errors answer HTTP 200 with GoPlus's codes, as GoPlus
does (2004 a bad address, 2018 a chain not configured, 5006 a bad or missing parameter);
refusals and failures keep their HTTP status (401, 429, 503, 504, ...) with the envelope
(``code`` 4010/4029/5000).  An address with no contract, or a contract that is not a
token (a pair, a router), is left out of ``result``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import FastAPI, Header, Query, Request
from fastapi.responses import JSONResponse

from tokenrisk.api.access import Gate
from tokenrisk.api.compat import goplus
from tokenrisk.api.compat.goplus_facts import gather
from tokenrisk.api.params import check_options, require_address
from tokenrisk.api.runner import Runner
from tokenrisk.checks.deps import Options
from tokenrisk.errors import (
    AuthError,
    InputError,
    NotAToken,
    NotFoundError,
    RateLimited,
    TokenRiskError,
)

MAX_ADDRESSES = 50
PATH = "/api/v1/token_security/{chain_id}"


def add_goplus_route(app: FastAPI, runner: Runner, gate: Gate) -> None:
    @app.get(
        PATH,
        summary="GoPlus-compatible token security (GoPlus envelope and field names)",
        response_model=goplus.TokenSecurityResponse,
        response_model_exclude_none=True,
        tags=["GoPlus compatible"],
    )
    async def token_security(
        request: Request,
        chain_id: str,
        contract_addresses: str | None = Query(
            None, description=f"Token addresses, comma separated (1 to {MAX_ADDRESSES})."
        ),
        authorization: str | None = Header(
            None,
            description="API key as GoPlus's SDKs send it (`Bearer` optional); "
            "X-API-KEY and apiKey are accepted too.",
        ),
    ) -> JSONResponse:
        try:
            return await _answer(runner, gate, request, chain_id, contract_addresses)
        except TokenRiskError as exc:
            return _refused(exc)


async def _answer(
    runner: Runner, gate: Gate, request: Request, chain_text: str, given: str | None
) -> JSONResponse:
    caller = await gate.admit(request, _key(request))
    chain_id = _chain(runner, chain_text)
    if chain_id is None:
        return _ok(goplus.failure(goplus.CHAIN_NOT_SUPPORTED, "chain not supported"))
    addresses = [a.strip() for a in (given or "").split(",") if a.strip()]
    if not 1 <= len(addresses) <= MAX_ADDRESSES:
        message = f"contract_addresses must list 1 to {MAX_ADDRESSES} addresses"
        return _ok(goplus.failure(goplus.PARAM_ERROR, message))
    try:
        tokens = list(dict.fromkeys(require_address("contract_addresses", a) for a in addresses))
    except InputError:
        return _ok(goplus.failure(goplus.ADDRESS_FORMAT_ERROR, "contract address format error"))
    await gate.charge(request, caller, len(tokens) - 1)
    options = check_options(caller.tier)
    entries = await asyncio.gather(*(_entry(runner, chain_id, t, options) for t in tokens))
    result = {t.lower(): e for t, e in zip(tokens, entries, strict=True) if e is not None}
    return JSONResponse({"code": goplus.SUCCESS, "message": "OK", "result": result})


async def _entry(runner: Runner, chain_id: int, token: str, options: Options) -> Any:
    """One token's entry (cached per chain head like IsHoneypot); None: no contract, or
    not a token (a router, a pair: GoPlus answers such addresses with nothing)."""

    async def work() -> Any:
        service = runner.service
        facts = await gather(service.honeypot, service.holders, chain_id, token, options)
        return goplus.token_security(facts).model_dump(mode="json", exclude_none=True)

    try:
        body = await runner.cached("GoPlusTokenSecurity", chain_id, (token, options), work)
    except (NotFoundError, NotAToken):
        return None
    return json.loads(bytes(body.body))


def _key(request: Request) -> str | None:
    """GoPlus's ``Authorization`` (with or without ``Bearer``), else tokenrisk's key."""
    auth = request.headers.get("authorization", "").strip()
    if auth.lower().startswith("bearer "):
        auth = auth[7:].strip()
    return auth or request.headers.get("x-api-key") or request.query_params.get("apiKey")


def _chain(runner: Runner, text: str) -> int | None:
    """The configured chain named by ``text``; None when it is not one."""
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        return None
    chain_id = int(text)
    return chain_id if chain_id in runner.service.nodes else None


def _ok(response: goplus.TokenSecurityResponse) -> JSONResponse:
    return JSONResponse(goplus.dump(response))


def _refused(exc: TokenRiskError) -> JSONResponse:
    """A refusal or failure in GoPlus's envelope, with tokenrisk's HTTP status."""
    code = 4029 if isinstance(exc, RateLimited) else 4010 if isinstance(exc, AuthError) else 5000
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
    body = goplus.dump(goplus.failure(code, exc.public))
    return JSONResponse(body, status_code=exc.status, headers=headers)

"""The check behind each route: run it through the runner (deadline, admission, the
results cache when the endpoint is cached) and render its typed result with
:mod:`tokenrisk.api.wire`.

Each handler picks, from the running service, the one bundle its check is handed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.responses import Response

from tokenrisk.api import wire
from tokenrisk.api.runner import JSONBytes, Runner
from tokenrisk.checks.deps import Options
from tokenrisk.checks.holders import top_holders
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.checks.pairs import get_pairs
from tokenrisk.checks.search import skipped_chains, unsearched_history, unsearched_known
from tokenrisk.checks.verification import contract_verification

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

"""GetContractVerification: is the contract, and everything its buy and sell call, open
source?  Always computed fresh (a contract may be verified at any time).

Its call tree of a probe buy and sell, with the verification of every contract in it
(:func:`code_report`), is also IsHoneypot's ``contractCode``.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tokenrisk.chain.abi import checksum, parse_address
from tokenrisk.chain.head import ChainHead
from tokenrisk.checks.deps import VerificationDeps
from tokenrisk.checks.results import VerificationResult
from tokenrisk.checks.speculation import at_head
from tokenrisk.checks.target import Target, pick_pool
from tokenrisk.checks.tasks import finish
from tokenrisk.checks.traced_code import contracts_of, read_ahead, route_contracts
from tokenrisk.checks.trade import Prepared, prepare, run_journey
from tokenrisk.errors import (
    CallReverted,
    MethodUnsupported,
    NoContract,
    ReplyTooDeep,
    ReplyTooLarge,
)
from tokenrisk.model import CodeReport, ContractCall, SimulationReport
from tokenrisk.simulate.probe import is_precompile, trace_journey, traced_to, walk_calls
from tokenrisk.verification.verifier import Verifier

# GETCONTRACTVERIFICATION


async def contract_verification(
    deps: VerificationDeps,
    address: str,
    chain_id: int | None,
    pair: str | None = None,
    router: str | None = None,
) -> VerificationResult:
    """The verification of ``address`` and of the contracts its traced buy and sell call;
    ``pair`` / ``router`` choose the pool traced (the deepest when omitted).

    Resolved at the head as IsHoneypot is (:func:`~.speculation.at_head`: a remembered
    head and resolution confirmed beside the work), and the trace taken beside the
    journey rather than after it: a recomputed check of a known token is one round trip
    to the node, as IsHoneypot's is (issue #27).  The trace is used only when the
    journey's buy and sell went through, as before.  The journey runs for its verdicts
    alone (``verdicts_only``: no limit searches, no delayed or same-block sells): this
    answer reads nothing else of it, and the same verdicts cost ~4 simulations instead
    of ~10."""
    root = parse_address(address)

    async def at(target: Target, head: ChainHead | None) -> VerificationResult:
        return await _verification_at(deps, target, head, root, pair, router)

    try:
        return await at_head(deps.nodes, deps.trading, root, chain_id, at, require_token=False)
    except NoContract:
        reason = "there is no contract at this address on the configured chains"
        return VerificationResult(False, False, None, reason=reason)


async def _verification_at(
    deps: VerificationDeps,
    target: Target,
    head: ChainHead | None,
    root: str,
    pair: str | None,
    router: str | None,
) -> VerificationResult:
    """:func:`contract_verification` of ``root`` resolved to ``target`` at ``head``: the
    root's own verification, the journey and its trace, all at once."""
    node = target.node
    status = asyncio.create_task(deps.verifier.status(node.id, root, fresh=True))
    traced: asyncio.Task[CodeReport | None] | None = None
    try:
        pool = pick_pool(target, parse_address(pair) if pair else None, root, router)
        if pool is None:
            open_, unknown = _root(await status, root)
            reason = "no pool of the token was found, so no buy and sell could be traced"
            return VerificationResult(True, open_, None, unknown, reason)
        ready = await prepare(node, deps.trading, pool, target.token, None, head)
        if ready.failed is None:  # the trace's requests go out with the journey's
            traced = asyncio.create_task(code_report(ready, deps.verifier, fresh=True))
        report = await run_journey(ready, deps.trading.simulations, verdicts_only=True)
        open_, unknown = _root(await status, root)
        failed = untraceable(report)
        if failed is not None:
            return VerificationResult(True, open_, None, unknown, failed)
        code = await traced if traced is not None else None
        if code is None and not (await node.capabilities()).trace_call:
            reason = "the node cannot trace calls (no debug_traceCall)"
            return VerificationResult(True, open_, None, unknown, reason)
        return VerificationResult(True, open_, _shown(code), unknown)
    finally:
        await finish(status)
        if traced is not None:
            await finish(traced)


def _root(status: str, root: str) -> tuple[bool, tuple[str, ...]]:
    """Whether the root contract is open source, and its address when its verification
    is unknown (no source provider could say)."""
    return status == "verified", (checksum(root),) if status == "unknown" else ()


# THE CALL TREE AND ITS CONTRACTS' VERIFICATION


async def code_report(
    ready: Prepared, verifier: Verifier, fresh: bool = False
) -> CodeReport | None:
    """Call tree of a probe buy+sell and the verification of every contract in it.

    None when the node cannot trace (no debug_traceCall), the traced call fails in the
    EVM, or the token makes the trace too big or deep to read.  Other node errors raise,
    so a flaky node never yields a cached answer without a code report.
    """
    node, route = ready.node, ready.route
    if not (await node.capabilities()).trace_call:
        return None
    token = route.token.lower()
    seen = ready.trading.traced if ready.trading is not None else None
    before = seen.value((node.id, token)) if seen is not None else None
    # the code of what the last trace called is read with the trace (one round trip); a
    # first trace, what every swap on the route calls and the token's implementation
    first = before is None
    before = before or route_contracts(ready)
    early = asyncio.ensure_future(read_ahead(node, before, token if first else None))
    try:
        try:
            head = ready.sim.base if ready.sim is not None else None
            tree = await trace_journey(node.rpc, route, ready.funding, ready.probe_amount, head)
        except (CallReverted, MethodUnsupported, ReplyTooLarge, ReplyTooDeep):
            return None  # the token's own doing (or no tracer): no tree, nothing claimed
        probe = traced_to(tree)
        calls = [c for c in walk_calls(tree) if not is_precompile(c.to_address)]
        called = frozenset(c.to_address for c in calls if c.to_address != probe)
        contracts = await contracts_of(node, called, early)
    finally:
        if not early.done():
            early.cancel()
    if seen is not None:
        seen.put((node.id, token), called)
    statuses = await verifier.statuses(node.id, sorted(contracts | {token}), fresh=fresh)
    opened = {addr: status == "verified" for addr, status in statuses.items()}
    unknown = tuple(checksum(a) for a, status in statuses.items() if status == "unknown")
    return CodeReport(
        root_open_source=opened[token],
        root_unknown=statuses[token] == "unknown",
        unknown=unknown,
        open_source=all(opened.values()),
        is_proxy=any(c.call_type == "DELEGATECALL" and c.from_address == token for c in calls),
        has_proxy_calls=any(c.call_type == "DELEGATECALL" for c in calls),
        contracts_open_source={checksum(a): v for a, v in opened.items()},
        calls=tuple(calls),  # as traced (lower case): checksummed where shown (api/wire.py)
    )


def _shown(code: CodeReport | None) -> CodeReport | None:
    """``code`` with its calls' addresses checksummed, as GetContractVerification shows
    them (``code_report`` keeps them as traced: IsHoneypot does not show them, and each
    fresh probe address would cost a keccak)."""
    if code is None:
        return None
    calls = tuple(
        ContractCall(checksum(c.from_address), checksum(c.to_address), c.call_type, c.selector)
        for c in code.calls
    )
    return replace(code, calls=calls)


def untraceable(report: SimulationReport) -> str | None:
    """Why a buy and sell cannot be traced for the call tree (None: they can)."""
    if not report.success:
        return f"the buy and sell could not be simulated: {report.error or 'unknown reason'}"
    for step, ok in (("buy", report.buy_ok), ("sell", report.sell_ok)):
        if not ok:
            why = report.failure_reason if report.failure_step == step else None
            return f"the simulated {step} failed" + (f": {why}" if why else "")
    return None

"""GetContractVerification: is the contract, and everything its buy and sell call, open
source?  Always computed fresh (a contract may be verified at any time)."""

from __future__ import annotations

from tokenrisk.chain.abi import checksum, parse_address
from tokenrisk.checks.deps import VerificationDeps
from tokenrisk.checks.prepare import prepare
from tokenrisk.checks.results import VerificationResult
from tokenrisk.checks.search import contract_chains
from tokenrisk.checks.target import pick_pool, resolve
from tokenrisk.checks.trace import code_report, untraceable
from tokenrisk.checks.trade import run_journey


async def contract_verification(
    deps: VerificationDeps,
    address: str,
    chain_id: int | None,
    pair: str | None = None,
    router: str | None = None,
) -> VerificationResult:
    """The verification of ``address`` and of the contracts its traced buy and sell call;
    ``pair`` / ``router`` choose the pool traced (the deepest when omitted)."""
    root = parse_address(address)
    nodes = deps.nodes.select(chain_id)
    on = await contract_chains(nodes, root)
    if not on:
        reason = "there is no contract at this address on the configured chains"
        return VerificationResult(False, False, None, reason=reason)
    target = await resolve(on if len(on) == 1 else nodes, root, require_token=False)
    node = target.node
    root_status = await deps.verifier.status(node.id, root, fresh=True)
    root_open = root_status == "verified"
    unknown = (checksum(root),) if root_status == "unknown" else ()
    pool = pick_pool(target, parse_address(pair) if pair else None, root, router)
    if pool is None:
        reason = "no pool of the token was found, so no buy and sell could be traced"
        return VerificationResult(True, root_open, None, unknown, reason)
    ready = await prepare(node, deps.trading, pool, target.token)
    failed = untraceable(await run_journey(ready, deps.trading.simulations))
    if failed is not None:
        return VerificationResult(True, root_open, None, unknown, failed)
    code = await code_report(ready, deps.verifier, fresh=True)
    if code is None and not (await node.capabilities()).trace_call:
        reason = "the node cannot trace calls (no debug_traceCall)"
        return VerificationResult(True, root_open, None, unknown, reason)
    return VerificationResult(True, root_open, code, unknown)

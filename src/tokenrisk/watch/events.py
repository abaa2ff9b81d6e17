"""What an answer is reduced to for comparison, and the events two answers make.

Pure: no I/O, so the rules are unit-tested without a node.

A :data:`Snapshot` keeps what a buyer acts on: the honeypot verdict, the risk, the three
taxes (percent, as the API reports them) and the flags (risk flags and owner powers:
``owner_can_*`` findings are flags); ``pair`` and ``liquidity`` (both reserves non-zero)
say where it was measured and whether it could trade at all.  Two snapshots differ when
the verdict or the risk changes, a flag appears or goes, or a tax moves by more than the
threshold (percentage points): each difference is one entry of an event's
``changes``, with ``before`` and ``after``.

Event ids are digests of what the event says (chain, token, kind, block, changes), never
of when it was made: a range redone after a restart makes the same ids, and the store
keeps each once.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tokenrisk.chain.abi import checksum
from tokenrisk.checks.results import HoneypotResult

Snapshot = dict[str, Any]
TAXES = ("buyTax", "sellTax", "transferTax")


def snapshot(result: HoneypotResult) -> Snapshot:
    """The comparable part of an IsHoneypot answer (taxes None when not measured)."""
    sim = result.analysis.simulation
    verdict = result.verdict
    pool = result.analysis.pool
    return {
        "isHoneypot": verdict.is_honeypot,
        "risk": verdict.risk,
        "riskLevel": verdict.risk_level,
        "honeypotReason": verdict.honeypot_reason,
        "buyTax": _tax(sim.buy_tax if sim else None),
        "sellTax": _tax(sim.sell_tax if sim else None),
        "transferTax": _tax(sim.transfer_tax if sim else None),
        "flags": sorted({f.flag for f in verdict.flags}),
        "pair": pool.address if pool else None,
        "liquidity": bool(pool and pool.reserves0 > 0 and pool.reserves1 > 0),
        "sellsFailFrom": None,  # the watcher sets it: a time bomb's horizon (fail_after)
    }


SECONDS_PER_BLOCK = 12  # the scan's future sells by block count: ``seconds // 12`` blocks


def fail_after(result: HoneypotResult) -> int | None:
    """Seconds after the check at which the owner-power scan saw a buyer's later sell
    fail with no owner action (the first failing of its 1 h, 1 d, 7 d, 30 d sells, each
    tried that much later in time and ``seconds // 12`` blocks later), or None: the
    horizon of a time bomb, when a re-check should see it go off."""
    powers = result.analysis.owner_powers
    failing = [f.seconds for f in (powers.future if powers else ()) if not f.ok]
    return min(failing) if failing else None


def _tax(value: float | None) -> float | None:
    return None if value is None else round(float(value), 2)


def changes(before: Snapshot, after: Snapshot, tax_threshold: float) -> list[dict[str, Any]]:
    """Every difference a buyer should hear about, in a fixed order (verdict, risk,
    taxes, flags); empty when the answers agree within the threshold."""
    found: list[dict[str, Any]] = []
    for field in ("isHoneypot", "risk"):
        if before.get(field) != after.get(field):
            found.append({"field": field, "before": before.get(field), "after": after.get(field)})
    for field in TAXES:
        if _tax_moved(before.get(field), after.get(field), tax_threshold):
            found.append({"field": field, "before": before.get(field), "after": after.get(field)})
    old, new = set(before.get("flags") or ()), set(after.get("flags") or ())
    found += [{"field": "flag", "before": None, "after": f} for f in sorted(new - old)]
    found += [{"field": "flag", "before": f, "after": None} for f in sorted(old - new)]
    return found


def _tax_moved(before: float | None, after: float | None, threshold: float) -> bool:
    if before is None or after is None:
        return before != after
    return abs(after - before) > threshold


def event_id(chain_id: int, token: str, kind: str, block: int, what: Any) -> str:
    """A content digest (see the module docstring): 32 hex digits."""
    text = json.dumps([chain_id, token.lower(), kind, block, what], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def new_pool_body(
    chain_id: int, token: str, pool: str, block: int, tx: str | None, snap: Snapshot
) -> dict[str, Any]:
    """A ``new_pool`` event: a pool appeared and its token was checked."""
    return {
        "kind": "new_pool",
        "chainID": chain_id,
        "token": checksum(token),
        "pool": pool,
        "block": block,
        "transaction": tx,
        "answer": snap,
    }


def alert_body(
    chain_id: int,
    token: str,
    block: int,
    tx: str | None,
    found: list[dict[str, Any]],
    snap: Snapshot,
) -> dict[str, Any]:
    """An ``alert`` event: a watched token's answer changed at ``block`` (``tx``: the
    transaction that set off the re-check, when one did)."""
    return {
        "kind": "alert",
        "chainID": chain_id,
        "token": token,
        "block": block,
        "transaction": tx,
        "changes": found,
        "answer": snap,
    }


def retracted_body(chain_id: int, seq: int, event: str, block: int) -> dict[str, Any]:
    """A ``retracted`` event: the block of event ``seq`` left the chain (a reorg)."""
    return {
        "kind": "retracted",
        "chainID": chain_id,
        "retracts": seq,
        "eventId": event,
        "block": block,
    }

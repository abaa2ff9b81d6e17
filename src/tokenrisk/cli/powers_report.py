"""The "Owner powers" section of ``tokenrisk check``: what the owner could still do.

Reads the IsHoneypot answer's ``ownerPowers`` extension (the typed wire model) only, so
it shows exactly what the API answered.  Revert reasons and arguments come from the chain, so, as in
:mod:`tokenrisk.cli.report`, they reach rich only as :class:`rich.text.Text`, never as
markup.
"""

from __future__ import annotations

from rich.box import SIMPLE
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tokenrisk.api.wire import OwnerPowersInfo, PowerFindingItem
from tokenrisk.findings import FINDINGS


def owner_powers_section(powers: OwnerPowersInfo | None) -> RenderableType | None:
    """The section, or None when the scan was off for this check."""
    if powers is None:
        return None
    title = Text.assemble(("owner powers", "bold"), " (tried in the node, docs/owner-powers.md)")
    if not powers.scanned:
        return Group(title, Text(f"  not scanned: {powers.error or ''}"))
    lines: list[RenderableType] = [title, Text(f"  {_callers_line(powers)}")]
    extra = (", bounded" if powers.bounded else "") + (", from cache" if powers.cached else "")
    counts = f"{powers.functions} owner function(s), {powers.simulations} simulations"
    lines.append(Text(f"  {counts}{extra}"))
    if powers.findings:
        lines.append(_findings_table(powers.findings))
    else:
        lines.append(Text("  nothing found: no caller could hurt a buyer with the functions tried"))
    for sell in powers.futureSells:
        if not sell.ok:
            lines.append(Text(f"  sell after {sell.after}: fails ({sell.reason})"))
    return Group(*lines)


def _callers_line(powers: OwnerPowersInfo) -> str:
    if not powers.callers:
        return "callers: none found" + (" (owner renounced)" if powers.renounced else "")
    parts = []
    for caller in powers.callers:
        kind = _kind(caller.kind, caller.threshold, caller.signers, caller.delay)
        parts.append(f"{caller.address} ({', '.join(caller.foundBy)}; {kind})")
    return "callers: " + "; ".join(parts)


def _kind(kind: str, threshold: int | None, signers: int | None, delay: int | None) -> str:
    if kind == "multisig":
        return f"multisig {threshold} of {signers}"
    if kind == "timelock":
        return f"timelock, delay {delay} s"
    return "EOA" if kind == "eoa" else kind


_HOOK_ROWS = ("hook contract called", "hook contract")
"""Evidence rows naming the pool's V4 hook a finding is about: shown with the call."""


def _findings_table(findings: list[PowerFindingItem]) -> Table:
    table = Table("severity", "power", "call", "evidence", "what to do", box=SIMPLE)
    for f in findings:
        call = f.function + (f"({', '.join(f.args)})" if f.args else "")
        hook = next((e.after for e in f.evidence if e.what in _HOOK_ROWS), None)
        if hook:
            call += f" on the pool's hook {hook}"
        if f.caller:
            call += f" by {f.caller}"
        shown = [e for e in f.evidence if e.what not in _HOOK_ROWS]
        evidence = "; ".join(f"{e.what}: {e.before} -> {e.after}" for e in shown)
        advice = FINDINGS[f.id].advice if f.id in FINDINGS else ""
        severity = f.severity + (f" ({f.control})" if f.control else "")
        if f.confidence != "simulated":
            severity += f", {f.confidence}"
        table.add_row(*(Text(str(v)) for v in (severity, f.title, call, evidence, advice)))
    return table

"""Which requests of one check ran in which sequential round (``--remote-rounds FILE``).

The remote bench counts a check's sequential round trips; to see *what* keeps a check
at four rounds rather than three, each request is given a depth: one more than the
deepest request that ended before it started (the proxy's client-side intervals).
Depth is an upper bound on causality (a request may start late for CPU reasons, not
because it waited for an earlier reply), so the listing shows candidates for the
critical path, not proof of a dependency.  Each request is named by its JSON-RPC
methods; an ``eth_call`` by its 4-byte selector, an ``eth_simulateV1`` by its number
of calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Span = tuple[float, float]


def depths(spans: Sequence[Span]) -> list[int]:
    """Each span's sequential round: 1 + the deepest span that ended before it began."""
    order = sorted(range(len(spans)), key=lambda i: spans[i][0])
    depth = [0] * len(spans)
    for n, i in enumerate(order):
        before = [depth[j] for j in order[:n] if spans[j][1] <= spans[i][0]]
        depth[i] = 1 + max(before, default=0)
    return depth


def _name(message: dict[str, Any]) -> str:
    method = str(message.get("method", "?"))
    params = message.get("params") or []
    first = params[0] if params else None
    if not isinstance(first, dict):
        return method
    if "blockStateCalls" in first:
        calls = sum(len(block.get("calls", [])) for block in first["blockStateCalls"])
        return f"{method}(n{calls})"
    return f"{method}({str(first.get('data', first.get('input', '')))[:10]})"


def named(body: bytes) -> str:
    """A request body's methods (a batch's, joined)."""
    try:
        message = json.loads(body)
    except ValueError:
        return "?"
    messages = message if isinstance(message, list) else [message]
    return " ".join(_name(m) for m in messages if isinstance(m, dict))


def rounds_text(label: str, spans: Sequence[Span], bodies: Sequence[bytes], note: str = "") -> str:
    """``label`` and one line per round, its requests separated by ``|``; ``note``
    (e.g. the check's wall and node milliseconds) follows the round count."""
    depth = depths(spans)
    lines = [f"{label} rounds={max(depth, default=0)}{note}"]
    for level in range(1, max(depth, default=0) + 1):
        names = [named(b) for b, d in zip(bodies, depth, strict=True) if d == level]
        lines.append(f"  R{level}: " + " | ".join(names))
    return "\n".join(lines) + "\n"

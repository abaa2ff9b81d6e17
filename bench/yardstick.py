"""How fast this machine runs the service's kind of Python, as one number.

Service CPU per check is an absolute figure (issue #27's target is 5 ms), but the same
code reads 2-3x more on a slower core: session 12's machine gave 3.5 ms per recomputed
check in ``bench.servicecpu`` where session 13's gave 11.8 ms for the same commit.  The
remote bench prints this yardstick beside its figures so runs on different machines can
be compared: a fixed workload of what a check does most (JSON of hex strings, keccak,
dict and int churn), best of several repeats so a busy neighbour inflates it less.
"""

from __future__ import annotations

import json
import time

from Crypto.Hash import keccak

ROUNDS = 500
REPEATS = 5


def _workload() -> int:
    """One pass of the fixed work; returns a checksum so nothing is optimised away."""
    total = 0
    for i in range(ROUNDS):
        word = i.to_bytes(32, "big")
        digest = keccak.new(digest_bits=256, data=word).hexdigest()
        call = {"to": "0x" + digest[:40], "data": "0x70a08231" + word.hex(), "gas": hex(i)}
        decoded = json.loads(json.dumps({"jsonrpc": "2.0", "id": i, "params": [call]}))
        total += int(decoded["params"][0]["gas"], 16) + len(decoded["params"][0]["data"])
    return total


def yardstick_ms() -> float:
    """Milliseconds of the fixed workload on this machine (best of :data:`REPEATS`)."""
    best = float("inf")
    for _ in range(REPEATS):
        started = time.process_time()
        _workload()
        best = min(best, time.process_time() - started)
    return best * 1000


def yardstick_text() -> str:
    """One line for a bench report."""
    return (
        f"machine yardstick: {yardstick_ms():.1f} ms CPU for a fixed pure-Python workload "
        "(bench/yardstick.py; compare it before comparing CPU figures across machines)"
    )

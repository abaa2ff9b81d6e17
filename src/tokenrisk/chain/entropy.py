"""Unpredictable bytes for fresh wallets and their nonces, read from the OS in blocks.

A first-sight check draws a few hundred fresh addresses and nonces (every buyer,
receiver, trial caller and reader is a never-seen EOA, so that no token can pre-list
it).  One ``os.urandom`` per draw, and ``secrets.randbelow`` (another read per call)
per nonce, was ~20,000 system calls per first-sight pass of the remote bench (issue #27).

Bytes read in one block are exactly as unpredictable as bytes read one call at a time:
both come from the kernel's CSPRNG, and each byte here is handed out once.  A process
forked from this one starts with an empty block (:func:`os.register_at_fork`), so two
processes never hand out the same bytes.
"""

from __future__ import annotations

import os
import threading

BLOCK = 4096
"""Bytes read from the OS at a time (~100 fresh addresses)."""

_lock = threading.Lock()
_block = b""
_at = 0


def random_bytes(count: int) -> bytes:
    """``count`` bytes from the kernel's CSPRNG, never handed out before."""
    global _block, _at
    if count > BLOCK:
        return os.urandom(count)
    with _lock:
        end = _at + count
        if end > len(_block):
            _block, _at, end = os.urandom(BLOCK), 0, count
        taken = _block[_at:end]
        _at = end
    return taken


def below(limit: int) -> int:
    """A uniform integer in ``[0, limit)`` for ``0 < limit <= 256`` (one byte, drawn
    again while it falls in the uneven remainder)."""
    if not 0 < limit <= 256:
        raise ValueError("limit must be 1..256")
    top = 256 - 256 % limit
    while True:
        drawn = random_bytes(1)[0]
        if drawn < top:
            return drawn % limit


def _forgotten() -> None:
    """In a forked child: drop the parent's block (its unread bytes are the parent's)
    and its lock (another thread may have held it at the fork)."""
    global _block, _at, _lock
    _block, _at, _lock = b"", 0, threading.Lock()


os.register_at_fork(after_in_child=_forgotten)


def fresh_randao() -> str:
    """A simulated block's ``prevRandao`` (what ``block.prevrandao`` reads): 32 bytes of
    the OS's CSPRNG, as unpredictable as a real block's RANDAO mix.

    Without it a node simulates every block at zero (go-ethereum's ``eth_simulateV1``
    builds each header afresh and only an override sets its mix digest; Nethermind's
    default is zero too), a value no block after the merge ever has: a token could
    let a simulated sell through and refuse every real one.  On chains without the
    merge's rules ``block.prevrandao`` reads the difficulty and ignores this value."""
    return "0x" + random_bytes(32).hex()

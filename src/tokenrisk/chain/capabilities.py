"""What a node can do beyond plain reads, probed once per chain.

tokenrisk runs against whatever node the operator points it at.  Public endpoints and
some clients lack ``eth_simulateV1`` or ``debug_traceCall``, ignore ``eth_call`` state
overrides, or cap the block range of ``eth_getLogs``.  Rather than discovering that in
the middle of every request, the service probes each node once (see
``Node.capabilities``) and the checks skip what cannot work, saying so in the
response (docs/chains.md lists what degrades how).

Every probe is a harmless read against an address without code.  A method counts as
supported only when it answers with the expected shape; any JSON-RPC error for it
(``MethodUnsupported`` or not) counts as unsupported, because a node that cannot run
the trivial probe cannot run the real call either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import CallReverted, MalformedResponse, MethodUnsupported, RpcError

LOG_SPANS = (100_000, 10_000, 2_000, 500, 100)
"""Block ranges tried for ``eth_getLogs``, widest first."""

_EMPTY = "0x7e57000000000000000000000000000000c0de00"  # no code, no logs on any chain
_CALLER = "0x7e57000000000000000000000000000000ca1100"
_RETURN_42 = "0x602a60005260206000f3"  # PUSH1 42 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN


@dataclass(frozen=True)
class Capabilities:
    """Which optional node features work.

    ``get_logs_max_range`` is the widest block range of :data:`LOG_SPANS` that
    ``eth_getLogs`` answered, ``None`` when even the widest worked (no limit seen) and
    ``0`` when none did.
    """

    simulate_v1: bool
    trace_call: bool
    state_override: bool
    get_logs_max_range: int | None
    simulate_max_blocks: int = 256
    """Most blocks an ``eth_simulateV1`` may end past its base block (the spec's 256;
    providers cap it lower, e.g. 16).  Plans never span more (NODES.md)."""
    call_block_overrides: bool = True
    """``eth_call`` honours a 4th parameter of block overrides (number, time, ...)."""
    max_batch: int | None = None
    """Most requests one JSON-RPC batch may hold; None when no limit was seen."""
    archive_depth: int | None = None
    """How many blocks below the head state can still be read (128 on a full geth);
    None for an archive node (all of history)."""
    otterscan: bool = False
    """``ots_*`` methods answer (erigon, reth, anvil)."""
    access_list: bool = False
    """``eth_createAccessList`` answers."""

    def missing(self) -> tuple[str, ...]:
        """Names of the unsupported features, for logs and docs."""
        flags = {
            "eth_simulateV1": self.simulate_v1,
            "debug_traceCall": self.trace_call,
            "eth_call state overrides": self.state_override,
        }
        return tuple(name for name, ok in flags.items() if not ok)


def _probe_calls() -> list[tuple[str, list[Any]]]:
    call = {"from": _CALLER, "to": _EMPTY, "data": "0x"}
    simulate = {"blockStateCalls": [{"calls": [call]}]}
    return [
        ("eth_simulateV1", [simulate, "latest"]),
        ("debug_traceCall", [call, "latest", {"tracer": "callTracer"}]),
        ("eth_call", [{"to": _EMPTY, "data": "0x"}, "latest", {_EMPTY: {"code": _RETURN_42}}]),
        ("eth_blockNumber", []),
    ]


def _returns_42(result: Any) -> bool:
    try:
        return isinstance(result, str) and int(result, 16) == 42
    except ValueError:
        return False


_REFUSAL_CODES = frozenset({-32004, -32600, -32601, -32602})
_REFUSAL_TEXT = (
    "not supported",
    "unsupported",
    "not available",
    "does not exist",
    "not found",
    "not enabled",
    "disabled",
    "not allowed",
    "invalid",
    "unknown",
    "too many arguments",
)


def _present(reply: Any) -> bool:
    """False when the node refused the feature (an answer: it lacks it); raises the
    error when the node merely failed (busy, internal error), so a flaky moment is
    never cached as a missing capability."""
    if not isinstance(reply, RpcError):
        return True
    lowered = reply.message.lower()
    if (
        isinstance(reply, MethodUnsupported | CallReverted)
        or reply.code in _REFUSAL_CODES
        or any(text in lowered for text in _REFUSAL_TEXT)
    ):
        return False
    raise reply


async def probe_capabilities(rpc: RpcClient) -> Capabilities:
    """Probe one node in two JSON-RPC batches.

    Raises the transport errors of :class:`RpcClient` (NodeUnavailable,
    DeadlineExceeded, MalformedResponse) and RpcError when the node cannot even report
    its block number or fails (rather than refuses) a feature probe; a failed probe is
    not a result and must not be cached.
    """
    simulate, trace, override, head = await rpc.batch(_probe_calls(), tolerate=RpcError)
    if isinstance(head, RpcError):
        raise head
    if not isinstance(head, str):
        raise MalformedResponse("node did not report its block number")
    return Capabilities(
        simulate_v1=_present(simulate) and isinstance(simulate, list),
        trace_call=_present(trace) and isinstance(trace, dict),
        state_override=_present(override) and _returns_42(override),
        get_logs_max_range=await _logs_range(rpc, int(head, 16)),
    )


async def _logs_range(rpc: RpcClient, head: int) -> int | None:
    """Widest working ``eth_getLogs`` span (see :class:`Capabilities`)."""
    calls = [
        (
            "eth_getLogs",
            [{"fromBlock": hex(max(0, head - span + 1)), "toBlock": hex(head), "address": _EMPTY}],
        )
        for span in LOG_SPANS
    ]
    replies = await rpc.batch(calls, tolerate=RpcError)
    working = [
        span for span, reply in zip(LOG_SPANS, replies, strict=True) if isinstance(reply, list)
    ]
    if not working:
        return 0
    widest = max(working)
    return None if widest == LOG_SPANS[0] else widest

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

from tokenrisk.chain.entropy import fresh_randao
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.errors import CallReverted, MalformedResponse, MethodUnsupported, RpcError

LOG_SPANS = (100_000, 10_000, 2_000, 500, 100)
"""Block ranges tried for ``eth_getLogs``, widest first."""

_EMPTY = "0x7e57000000000000000000000000000000c0de00"  # no code, no logs on any chain
_CALLER = "0x7e57000000000000000000000000000000ca1100"
_RETURN_42 = "0x602a60005260206000f3"  # PUSH1 42 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
_RETURN_NUMBER = "0x4360005260206000f3"  # NUMBER PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
_OVERRIDDEN_NUMBER = 0x7E57C0DE
SIMULATE_SPANS = (256, 64, 16, 8)
"""Blocks past a pinned base an ``eth_simulateV1`` is tried with: the spec's 256, then
the smaller caps providers set (16 is seen)."""
STATE_DEPTHS = (16, 127, 1024, 65536)
"""Blocks below the head whose state is read to measure a node's archive depth (a full
geth keeps 128); block 1 as well, whose state only an archive node keeps."""


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
    oldest_state: int = 0
    """A block at or below which the probe found no state (0 on an archive node): the
    floor of history searches.  Absolute, and deliberately low: the shallowest depth
    that failed, so a node whose kept window grows (anvil keeps every state from its
    start) or moves up (a full node) never has a contract's creation searched above
    its real block; reads below a node's window only cost a few StateUnavailable
    answers, read as "no code seen"."""

    def state_floor(self) -> int:
        """The oldest block a history search needs to read (:attr:`oldest_state`)."""
        return self.oldest_state

    def limits(self) -> str:
        """The node's limits in one line, for the log."""
        depth = "archive" if self.archive_depth is None else f"{self.archive_depth} blocks"
        return (
            f"simulate cap {self.simulate_max_blocks} blocks, state {depth}, "
            f"logs range {self.get_logs_max_range or 'unlimited'}, "
            f"batch {self.max_batch or 'unlimited'}, block overrides "
            f"{'yes' if self.call_block_overrides else 'no'}, "
            f"otterscan {'yes' if self.otterscan else 'no'}"
        )

    def missing(self) -> tuple[str, ...]:
        """Names of the unsupported features, for logs and docs."""
        flags = {
            "eth_simulateV1": self.simulate_v1,
            "debug_traceCall": self.trace_call,
            "eth_call state overrides": self.state_override,
        }
        return tuple(name for name, ok in flags.items() if not ok)


def _probe_calls() -> list[tuple[str, list[Any]]]:
    """The first round trip: every probe that needs no block number."""
    call = {"from": _CALLER, "to": _EMPTY, "data": "0x"}
    # with a RANDAO mix as every simulated block of a check has one: a node that refused
    # the override would refuse every check's simulation, and is found here instead
    mix = {"prevRandao": fresh_randao()}
    simulate = {"blockStateCalls": [{"blockOverrides": mix, "calls": [call]}]}
    number_code = {_EMPTY: {"code": _RETURN_NUMBER}}
    overridden = {"number": hex(_OVERRIDDEN_NUMBER)}
    return [
        ("eth_simulateV1", [simulate, "latest"]),
        ("debug_traceCall", [call, "latest", {"tracer": "callTracer"}]),
        ("eth_call", [{"to": _EMPTY, "data": "0x"}, "latest", {_EMPTY: {"code": _RETURN_42}}]),
        ("eth_blockNumber", []),
        ("eth_call", [{"to": _EMPTY, "data": "0x"}, "latest", number_code, overridden]),
        ("eth_createAccessList", [call, "latest"]),
        ("ots_getApiLevel", []),
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
    """Probe one node in two JSON-RPC batches (more only when a node refuses a batch
    as too large: the client then splits it).

    The first batch asks what needs no block number (the methods, the overrides, the
    head); the second, pinned at that head, the simulate block cap, the archive depth
    and the ``eth_getLogs`` range.  Raises the transport errors of :class:`RpcClient`
    (NodeUnavailable, DeadlineExceeded, MalformedResponse) and RpcError when the node
    cannot even report its block number or fails (rather than refuses) a feature probe;
    a failed probe is not a result and must not be cached.
    """
    replies = await rpc.batch(_probe_calls(), tolerate=RpcError)
    simulate, trace, override, head, numbered, access, ots = replies
    if isinstance(head, RpcError):
        raise head
    if not isinstance(head, str):
        raise MalformedResponse("node did not report its block number")
    simulate_v1 = _present(simulate) and isinstance(simulate, list)
    state_override = _present(override) and _returns_42(override)
    at = int(head, 16)
    cap, (depth, oldest), logs = await _pinned_probes(rpc, at, simulate_v1)
    return Capabilities(
        simulate_v1=simulate_v1,
        trace_call=_present(trace) and isinstance(trace, dict),
        state_override=state_override,
        get_logs_max_range=logs,
        simulate_max_blocks=cap,
        call_block_overrides=state_override and _present(numbered) and _is_number(numbered),
        max_batch=getattr(rpc, "batch_limit", None),
        archive_depth=depth,
        # optional extras: any error at all means "not used" (no need to fail the probe)
        otterscan=isinstance(ots, int) and not isinstance(ots, bool),
        access_list=isinstance(access, dict) and "accessList" in access,
        oldest_state=oldest,
    )


def _is_number(result: Any) -> bool:
    try:
        return isinstance(result, str) and int(result, 16) == _OVERRIDDEN_NUMBER
    except ValueError:
        return False


async def _pinned_probes(
    rpc: RpcClient, head: int, simulate_v1: bool
) -> tuple[int, tuple[int | None, int], int | None]:
    """(simulate block cap, (archive depth, oldest state), eth_getLogs range): one
    batch pinned at ``head``."""
    spans = SIMULATE_SPANS if simulate_v1 else ()
    depths = [d for d in STATE_DEPTHS if head - d > 1]
    blocks = [head - d for d in depths] + ([1] if head > 1 else [])
    calls = [_simulate_span(head, span) for span in spans]
    calls += [("eth_getBalance", [_EMPTY, hex(block)]) for block in blocks]
    calls += _logs_calls(head)
    replies = await rpc.batch(calls, tolerate=RpcError)
    sims, states = replies[: len(spans)], replies[len(spans) : len(spans) + len(blocks)]
    logs = replies[len(spans) + len(blocks) :]
    worked = [span for span, reply in zip(spans, sims, strict=True) if isinstance(reply, list)]
    return max(worked, default=1), _state_reach(head, blocks, states), _widest(logs)


def _state_reach(head: int, blocks: list[int], replies: list[Any]) -> tuple[int | None, int]:
    """(archive depth, oldest state) from the state reads at ``blocks`` (deepest last):
    the depth is the deepest read answered (None when block 1's was: an archive node),
    the floor the shallowest that failed (see ``Capabilities.oldest_state``)."""
    read = [isinstance(reply, str) for reply in replies]
    if not blocks or read[-1]:
        return None, 0
    depth = max((head - b for b, ok in zip(blocks, read, strict=True) if ok), default=0)
    floor = max(b for b, ok in zip(blocks, read, strict=True) if not ok)
    return depth, floor


def _simulate_span(head: int, span: int) -> tuple[str, list[Any]]:
    """A simulation of one empty block ``span`` blocks past the pinned ``head``."""
    block = {"blockOverrides": {"number": hex(head + span)}, "calls": []}
    return ("eth_simulateV1", [{"blockStateCalls": [block]}, hex(head)])


def _logs_calls(head: int) -> list[tuple[str, list[Any]]]:
    return [
        (
            "eth_getLogs",
            [{"fromBlock": hex(max(0, head - span + 1)), "toBlock": hex(head), "address": _EMPTY}],
        )
        for span in LOG_SPANS
    ]


def _widest(replies: list[Any]) -> int | None:
    """Widest working ``eth_getLogs`` span (see :class:`Capabilities`)."""
    working = [
        span for span, reply in zip(LOG_SPANS, replies, strict=True) if isinstance(reply, list)
    ]
    if not working:
        return 0
    widest = max(working)
    return None if widest == LOG_SPANS[0] else widest

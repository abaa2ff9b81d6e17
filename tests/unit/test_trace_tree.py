"""A callTracer tree read typed (:class:`TraceFrame`) or as plain JSON gives the same
call edges (the typed read skips the fields the edges do not use)."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from tokenrisk.chain.rpc import _typed_decoder
from tokenrisk.simulate.probe import TraceFrame, traced_to, walk_calls

PROBE, ROUTER, PAIR, TOKEN, IMPL = (f"0x{c * 40}" for c in "abcde")


def _frame(frm: str, to: str, kind: str, data: str, calls: list[Any] | None = None) -> Any:
    frame: dict[str, Any] = {
        "from": frm.upper().replace("0X", "0x"),  # as some nodes spell them
        "to": to,
        "type": kind.lower() if kind == "CALL" else kind,
        "input": data,
        "output": "0x" + "00" * 64,
        "gas": "0x1000",
        "gasUsed": "0x10",
        "value": "0x0",
    }
    if calls is not None:
        frame["calls"] = calls
    return frame


TREE = _frame(
    "0x" + "f" * 40,
    PROBE,
    "CALL",
    "0x12345678" + "00" * 32,
    [
        _frame(
            PROBE,
            ROUTER,
            "CALL",
            "0x38ed1739" + "11" * 64,
            [
                _frame(ROUTER, PAIR, "STATICCALL", "0x0902f1ac"),
                _frame(
                    ROUTER,
                    TOKEN,
                    "CALL",
                    "0x23b872dd" + "22" * 96,
                    [
                        _frame(TOKEN, IMPL, "DELEGATECALL", "0x23b872dd" + "22" * 96),
                    ],
                ),
                _frame(ROUTER, PAIR, "STATICCALL", "0x0902f1ac"),  # a repeated edge
            ],
        ),
        _frame(PROBE, TOKEN, "CALL", "0x"),  # no calldata: no selector
        _frame(PROBE, "0x" + "0" * 39 + "1", "STATICCALL", "0x1234"),  # short calldata
    ],
)


def _reply(tree: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": tree})


def test_a_typed_tree_gives_the_plain_trees_edges() -> None:
    typed = _typed_decoder(TraceFrame).decode(_reply(TREE)).result
    assert isinstance(typed, TraceFrame)
    plain = orjson.loads(_reply(TREE))["result"]
    edges = walk_calls(typed)
    assert edges == walk_calls(plain)
    assert [(e.to_address, e.call_type, e.selector) for e in edges] == [
        (ROUTER, "CALL", "0x38ed1739"),
        (PAIR, "STATICCALL", "0x0902f1ac"),
        (TOKEN, "CALL", "0x23b872dd"),
        (IMPL, "DELEGATECALL", "0x23b872dd"),
        (TOKEN, "CALL", None),
        ("0x" + "0" * 39 + "1", "STATICCALL", None),
    ]
    assert edges[0].from_address == PROBE  # lower case, as traced edges are kept
    assert traced_to(typed) == traced_to(plain) == PROBE


def test_a_tree_that_does_not_fit_is_read_plain() -> None:
    """A null where a string belongs: the typed decoding refuses it, and the call path
    (RpcClient.call_typed) then returns the plain JSON, which reads as before."""
    odd = {**TREE, "calls": [{**TREE["calls"][0], "to": None}]}
    try:
        _typed_decoder(TraceFrame).decode(_reply(odd))
    except msgspec.ValidationError:
        pass
    else:
        raise AssertionError("a null address fitted the typed frame")
    plain = orjson.loads(_reply(odd))["result"]
    assert [e.to_address for e in walk_calls(plain)][:2] == ["none", PAIR]

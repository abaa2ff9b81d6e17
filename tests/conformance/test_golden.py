"""Golden shapes: one live response per endpoint against a fixture written from WIRE.md and
SPEC.md (``golden/*.json``), comparing the full key set and the JSON type of every value.

A fixture is a skeleton of the response: objects list every key that must be present
(``"key?"`` marks one that may be absent, ``"*"`` any key), leaves name a JSON type
(``string``, ``integer``, ``number``, ``boolean``), ``[]`` is an empty array, ``[X]`` a
non-empty array whose every element matches X, and ``[X, "*"]`` an array of any length.
``number`` is a JSON integer or a fraction: a whole value below 1e21 written as ``0.0``
fails (the live API's Go encoder writes ``0``; from 1e21 it writes exponent form,
``3.85e+26``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsontypes import json_type

pytestmark = pytest.mark.integration

CHAIN = 31337
GOLDEN = Path(__file__).with_name("golden")

# (fixture, path, catalogue token, extra params, expected status)
CASES = [
    ("is_honeypot", "/v2/IsHoneypot", "plain", {}, 200),
    ("is_honeypot_honeypot", "/v2/IsHoneypot", "sell-whitelist", {}, 200),
    ("no_pairs", "/v2/IsHoneypot", "no-pair", {}, 404),
    ("get_pairs", "/v1/GetPairs", "multi-pair", {}, 200),
    ("contract_verification", "/v2/GetContractVerification", "plain", {}, 200),
    ("contract_verification_partial", "/v2/GetContractVerification", "no-pair", {}, 200),
    ("top_holders", "/v1/TopHolders", "plain", {}, 200),
    ("error", "/v1/TopHolders", "plain", {"chainID": None}, 400),
    ("get_pairs_v2", "/v2/GetPairs", "multi-pair", {"limit": 2}, 200),
    ("top_holders_limit", "/v1/TopHolders", "plain", {"limit": 5}, 200),
    ("limit_above_pairs_maximum", "/v2/GetPairs", "multi-pair", {"limit": 11}, 400),
    ("limit_above_holder_allowance", "/v1/TopHolders", "plain", {"limit": 51}, 403),
]


def mismatches(value: Any, shape: Any, path: str = "$") -> list[str]:
    """Every place where ``value`` differs from the skeleton ``shape`` (empty: it matches)."""
    if isinstance(shape, dict):
        return _object_mismatches(value, shape, path)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{path}: {json_type(value)}, expected an array"]
        if not shape:
            return [] if not value else [f"{path}: expected an empty array"]
        if not value and shape[1:] != ["*"]:
            return [f"{path}: expected a non-empty array"]
        return [
            m for i, item in enumerate(value) for m in mismatches(item, shape[0], f"{path}[{i}]")
        ]
    return _leaf_mismatches(value, shape, path)


def _object_mismatches(value: Any, shape: dict[str, Any], path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: {json_type(value)}, expected an object"]
    if "*" in shape:
        return [m for k, v in value.items() for m in mismatches(v, shape["*"], f"{path}.{k}")]
    required = {k for k in shape if not k.endswith("?")}
    allowed = required | {k[:-1] for k in shape if k.endswith("?")}
    found = [f"{path}: missing {k}" for k in sorted(required - set(value))]
    found += [f"{path}: unexpected {k}" for k in sorted(set(value) - allowed)]
    for key, item in value.items():
        sub = shape.get(key, shape.get(f"{key}?"))
        if sub is not None:
            found += mismatches(item, sub, f"{path}.{key}")
    return found


def _leaf_mismatches(value: Any, kind: str, path: str) -> list[str]:
    actual = json_type(value)
    if kind == "number" and actual in ("integer", "float"):
        whole_float = actual == "float" and float(value).is_integer() and abs(value) < 1e21
        return [f"{path}: {value!r} is whole, expected a JSON integer"] if whole_float else []
    return [] if actual == kind else [f"{path}: {actual} {value!r}, expected {kind}"]


def test_the_comparison_catches_what_it_must() -> None:
    shape = {"a": "integer", "b?": "number", "c": ["string"], "d": {"*": "boolean"}}
    assert mismatches({"a": 1, "b": 3.85e26, "c": ["x"], "d": {"k": True}}, shape) == []
    assert mismatches([], ["string", "*"]) == [] and mismatches([1], ["string", "*"]) != []
    assert mismatches({"a": 1.0, "b": 0.0, "c": [], "d": {"k": 1}, "e": 1}, shape) == [
        "$: unexpected e",
        "$.a: float 1.0, expected integer",
        "$.b: 0.0 is whole, expected a JSON integer",
        "$.c: expected a non-empty array",
        "$.d.k: integer 1, expected boolean",
    ]
    assert mismatches({"c": ["x"], "d": {}}, shape) == ["$: missing a"]


@pytest.mark.parametrize(
    ("fixture", "path", "entry_id", "extra", "status"), CASES, ids=[c[0] for c in CASES]
)
async def test_response_matches_golden_shape(
    server_url: str,
    catalogue: list[dict[str, Any]],
    fixture: str,
    path: str,
    entry_id: str,
    extra: dict[str, Any],
    status: int,
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    params = {"address": entry["address"], "chainID": CHAIN} | extra
    query = {k: v for k, v in params.items() if v is not None}
    async with httpx.AsyncClient(base_url=server_url, timeout=120.0) as http:
        response = await http.get(path, params=query)
    assert response.status_code == status, response.text
    shape = json.loads((GOLDEN / f"{fixture}.json").read_text())
    assert mismatches(response.json(), shape) == []


def test_every_fixture_is_used() -> None:
    assert {p.stem for p in GOLDEN.glob("*.json")} == {c[0] for c in CASES}

"""The declaration reader (dts.py) can fail: a missing field, a wrong type, a null where
none is declared and an unknown construct are all caught."""

from __future__ import annotations

import dts
import pytest

DECLARED = """
export interface Item { Name: string; Tokens: string[]; Extra?: number; }
export interface Answer {
    Token: { Name: string; Decimals: number; };
    Error: null | string;
    Map: { [address: string]: boolean; };
    Items: Array<Item>;
}
export declare class Client {
    private endpoint;
    get: (a: string, b: number | string) => Promise<Answer>;
}
"""


def test_every_declared_field_and_type_is_checked() -> None:
    decl = dts.read(DECLARED)
    kind = decl.methods["get"]
    good = {
        "Token": {"Name": "x", "Decimals": 18},
        "Error": None,
        "Map": {"0xa": True},
        "Items": [{"Name": "p", "Tokens": ["a"]}],
    }
    assert dts.problems(good, kind, decl) == []
    bad = {
        "Token": {"Name": "x", "Decimals": "18"},
        "Map": {"0xa": 1},
        "Items": [{"Name": None, "Tokens": ["a"], "Extra": "1"}],
    }
    assert sorted(dts.problems(bad, kind, decl)) == [
        "$.Error: missing",
        "$.Items[0].Extra: expected number, got '1'",
        "$.Items[0].Name: expected string, got None",
        "$.Map.0xa: expected boolean, got 1",
        "$.Token.Decimals: expected number, got '18'",
    ]


def test_an_unknown_construct_is_refused() -> None:
    with pytest.raises(ValueError):
        dts.read("export interface X { a: `template`; }")
    with pytest.raises(ValueError):
        dts.problems({}, ("name", "Missing"), dts.read(""))

"""GoPlus's own SDKs against tokenrisk's ``/api/v1/token_security/{chain_id}``, unchanged
except for their host: the Python SDK (``goplus`` on PyPI: its generated client's
``Configuration.host``) and the Node SDK (``@goplus/sdk-node``: its generated ApiClient's
base path, see ``goplus_client.js``), over every devnet token.

The generated clients coerce what they receive (``str(x)``, ``String(x)``), so "it
parsed" proves little.  Each raw answer is therefore also checked against the Python
SDK's own generated model declarations, read at test time (``swagger_types`` of
``ResponseWrapperTokenSecurity`` and the models it names): every field sent must be
declared there, with the declared JSON type; and what the Node SDK resolves must equal
the raw answer (its models keep only declared fields, and coercion would change values).
Values are checked against the devnet's ground truth where the catalogue states it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration

CHAIN = "31337"
SCRIPT = Path(__file__).with_name("goplus_client.js")
NODE_SDK = Path("node_modules/@goplus/sdk-node/package.json")
PATH = "/api/v1/token_security/{chain}"
CORE = (  # sent for every token with a pool whose simulated buy went through
    "token_name",
    "token_symbol",
    "total_supply",
    "holder_count",
    "holders",
    "is_in_dex",
    "dex",
    "is_honeypot",
    "buy_tax",
    "sell_tax",
    "cannot_buy",
    "cannot_sell_all",
    "is_anti_whale",
    "creator_address",
    "creator_balance",
    "creator_percent",
    "selfdestruct",
)


def _ids() -> list[str]:
    path = Path("src/tokenrisk/devnet/catalogue.json")
    return [t["id"] for t in json.loads(path.read_text())["tokens"]]


# THE SDK'S DECLARED MODEL


def declared_problems(value: Any, kind: str, path: str = "$") -> list[str]:
    """Where ``value`` (raw JSON) differs from the swagger type ``kind`` the Python SDK
    declares (``'str'``, ``'int'``, ``'list[X]'``, ``'dict(str, X)'``, a model name)."""
    import swagger_client.models as models

    if kind in ("str", "int", "float", "bool"):
        python = {"str": str, "int": int, "float": float, "bool": bool}[kind]
        ok = isinstance(value, python) and (kind == "bool" or not isinstance(value, bool))
        return [] if ok else [f"{path}: expected {kind}, got {value!r}"]
    listed = re.fullmatch(r"list\[(.*)\]", kind)
    if listed:
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        inner = listed.group(1)
        return [p for i, v in enumerate(value) for p in declared_problems(v, inner, f"{path}[{i}]")]
    mapped = re.fullmatch(r"dict\(str, (.*)\)", kind)
    if mapped:
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        inner = mapped.group(1)
        return [p for k, v in value.items() for p in declared_problems(v, inner, f"{path}.{k}")]
    model = getattr(models, kind)
    if not isinstance(value, dict):
        return [f"{path}: expected a {kind} object"]
    out = []
    for name, item in value.items():
        if name not in model.attribute_map.values():
            out.append(f"{path}.{name}: not declared by the SDK's {kind}")
        elif item is not None:
            field = next(k for k, v in model.attribute_map.items() if v == name)
            out += declared_problems(item, model.swagger_types[field], f"{path}.{name}")
    return out


# THE CLIENTS


def python_sdk(base_url: str, addresses: list[str]) -> Any:
    """``goplus.token.Token().token_security`` with only ``Configuration.host`` changed."""
    from goplus.token import Token
    from swagger_client.configuration import Configuration

    config = Configuration()
    config.host = base_url
    Configuration.set_default(config)
    return Token().token_security(chain_id=CHAIN, addresses=addresses)


def node_sdk(base_url: str, calls: list[list[str]], chain: str = CHAIN) -> list[dict[str, Any]]:
    node = shutil.which("node")
    assert node is not None, "node is required (make setup installs the npm packages)"
    assert NODE_SDK.exists(), "npm ci did not install @goplus/sdk-node"
    job = json.dumps({"baseUrl": base_url, "chainId": chain, "calls": calls})
    done = subprocess.run(
        [node, str(SCRIPT)], input=job, capture_output=True, text=True, timeout=1200, check=False
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(results) == len(calls)
    return results


@pytest.fixture(scope="module")
def answers(server_url: str, catalogue: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Token id -> {"raw": the HTTP answer's JSON, "python": the Python SDK's model,
    "node": the Node SDK's result}, one request per token and client."""
    found: dict[str, dict[str, Any]] = {t["id"]: {} for t in catalogue}
    with httpx.Client(base_url=server_url, timeout=600) as http:
        for entry in catalogue:
            reply = http.get(
                PATH.format(chain=CHAIN), params={"contract_addresses": entry["address"]}
            )
            assert reply.status_code == 200, reply.text
            found[entry["id"]]["raw"] = reply.json()
    for entry in catalogue:
        found[entry["id"]]["python"] = python_sdk(server_url, [entry["address"]])
    calls = [[entry["address"]] for entry in catalogue]
    for entry, result in zip(catalogue, node_sdk(server_url, calls), strict=True):
        found[entry["id"]]["node"] = result
    return found


def _entry(answer: dict[str, Any], address: str) -> dict[str, Any]:
    raw = answer["raw"]
    assert raw["code"] == 1 and raw["message"] == "OK", raw
    result: dict[str, Any] = raw["result"][address.lower()]
    return result


@pytest.mark.parametrize("entry_id", _ids())
def test_every_field_has_the_sdk_declared_type(
    answers: dict[str, dict[str, Any]], catalogue: list[dict[str, Any]], entry_id: str
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    answer = answers[entry_id]
    wrong = declared_problems(answer["raw"], "ResponseWrapperTokenSecurity")
    assert not wrong, wrong
    _entry(answer, entry["address"])


@pytest.mark.parametrize("entry_id", _ids())
def test_python_sdk_parses_it(
    answers: dict[str, dict[str, Any]], catalogue: list[dict[str, Any]], entry_id: str
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    model = answers[entry_id]["python"]
    raw = _entry(answers[entry_id], entry["address"])
    assert model.code == 1
    parsed = model.result[entry["address"].lower()].to_dict()
    assert _without_none(parsed) == raw


def _without_none(value: Any) -> Any:
    """The model's dict less the declared fields that were not sent (``None``)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


@pytest.mark.parametrize("entry_id", _ids())
def test_node_sdk_parses_it(answers: dict[str, dict[str, Any]], entry_id: str) -> None:
    node = answers[entry_id]["node"]
    assert node["ok"], node
    assert node["data"] == answers[entry_id]["raw"]


@pytest.mark.parametrize("entry_id", _ids())
def test_values_follow_the_checks(
    answers: dict[str, dict[str, Any]], catalogue: list[dict[str, Any]], entry_id: str
) -> None:
    """The fields agree with the devnet's ground truth (taxes, honeypot, powers)."""
    entry = next(t for t in catalogue if t["id"] == entry_id)
    got = _entry(answers[entry_id], entry["address"])
    expected = entry["expected"]
    # a token whose name()/symbol() reverts is read as "" (as IsHoneypot reads it)
    assert got["token_symbol"] in (entry["symbol"], "") and got["token_name"] in (entry["name"], "")
    assert (got["token_symbol"], got["token_name"]) != ("", "") or entry["id"] == "revert-name"
    assert got["is_in_dex"] == ("1" if entry["pools"] else "0")
    assert sorted(d["pair"] for d in got["dex"]) == sorted(
        p["address"].lower() for p in entry["pools"]
    )
    if not entry["pools"] or got.get("cannot_buy") != "0":
        return
    # a proxy's own code says nothing about its implementation's: selfdestruct not sent
    core = [f for f in CORE if not (f == "selfdestruct" and got.get("is_proxy") == "1")]
    missing = [f for f in core if f not in got]
    assert not missing, missing
    assert got["is_honeypot"] == ("1" if expected["isHoneypot"] else "0"), got
    if expected.get("buyTax"):
        low, high = expected["buyTax"]
        assert low / 100 - 0.0001 <= float(got["buy_tax"]) <= high / 100 + 0.0001, got
    if expected["sellable"] and expected.get("sellTax"):
        low, high = expected["sellTax"]
        assert low / 100 - 0.0001 <= float(got["sell_tax"]) <= high / 100 + 0.0001, got
    for flag, field in (
        ("owner_can_mint", "is_mintable"),
        ("owner_can_blacklist", "is_blacklisted"),
    ):
        if flag in expected["flags"] and field in got:
            assert got[field] == "1", (flag, got)


def test_errors_use_goplus_codes(server_url: str, catalogue: list[dict[str, Any]]) -> None:
    """A chain not configured is 2018, a bad address 2004, nothing to check 5006 (HTTP 200,
    GoPlus's envelope with a null result), through both SDKs too."""
    token = catalogue[0]["address"]
    with httpx.Client(base_url=server_url, timeout=60) as http:
        cases = {
            ("999999", token): 2018,
            ("abc", token): 2018,
            (CHAIN, "0x1234"): 2004,
            (CHAIN, ""): 5006,
        }
        for (chain, addresses), code in cases.items():
            reply = http.get(PATH.format(chain=chain), params={"contract_addresses": addresses})
            assert reply.status_code == 200
            assert reply.json()["code"] == code and reply.json()["result"] is None, reply.text
        nothing = http.get(
            PATH.format(chain=CHAIN),
            params={"contract_addresses": "0x00000000000000000000000000000000000000aa"},
        )
        assert nothing.json() == {"code": 1, "message": "OK", "result": {}}
        pair = next(t for t in catalogue if t["pools"])["pools"][0]["address"]
        router = "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"
        for not_a_token in (pair, router):  # an entry would describe another address
            reply = http.get(PATH.format(chain=CHAIN), params={"contract_addresses": not_a_token})
            assert reply.json() == {"code": 1, "message": "OK", "result": {}}, reply.text
    two = [catalogue[0]["address"], catalogue[1]["address"]]
    both = python_sdk(server_url, two)  # several tokens in one request, as GoPlus allows
    assert both.code == 1 and set(both.result) == {a.lower() for a in two}
    python = python_sdk(server_url, ["0x1234"])
    assert python.code == 2004 and python.result is None
    (node,) = node_sdk(server_url, [[token]], chain="999999")
    assert node["ok"] and node["data"]["code"] == 2018, node

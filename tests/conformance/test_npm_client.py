"""The published npm client ``@normalizex/honeypot-is`` against tokenrisk, unchanged.

It calls ``/v1/IsHoneypot`` and ``/v1/GetContractVerification`` with ``pair``, ``router``
and ``chainID``, and ``/v1/GetPairs`` (its base URLs are public properties: the only
change).  Every catalogue token goes through all three in ONE node process; a token
without pairs must reach the client as the live API's 404, which axios raises.

Every answer is checked against the types the client itself declares: its installed
``dist/index.d.ts`` (each method's ``Promise<T>``) and ``dist/types/*.d.ts`` are read at
test time (:mod:`dts`), so every declared field must be present with its declared type.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import dts
import pytest

pytestmark = pytest.mark.integration

CHAIN = 31337
ROUTERS = {  # (dex, venue) -> the router, at its canonical mainnet address on the devnet
    ("v2", None): "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D",
    ("v3", None): "0xE592427A0AEce92De3Edee1F18E0157C05861564",
    ("v3", "pancakeswap"): "0x1b81D678ffb9C0263b24A97847620C99d213eB14",
}
SCRIPT = Path(__file__).with_name("npm_client.js")
CLIENT = Path("node_modules/@normalizex/honeypot-is/package.json")
NO_CONTRACT = "0x00000000000000000000000000000000000000aa"
DIST = Path("node_modules/@normalizex/honeypot-is/dist")


@pytest.fixture(scope="module")
def declared() -> dts.Declarations:
    """The client's own declarations: its methods' promised types and the named types."""
    files = [DIST / "index.d.ts", *sorted((DIST / "types").glob("*.d.ts"))]
    found = dts.read(*(f.read_text() for f in files))
    assert set(found.methods) == {"honeypotScan", "getPairs", "getContractVerification"}
    return found


def conforms(declared: dts.Declarations, method: str, data: Any) -> None:
    """Every field the client declares for ``method``'s answer, with its declared type."""
    wrong = dts.problems(data, declared.methods[method], declared)
    assert not wrong, wrong


def run_client(base_url: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the calls through the npm client in one node process; one result per call."""
    node = shutil.which("node")
    assert node is not None, "node is required (make setup installs the npm packages)"
    assert CLIENT.exists(), "npm ci did not install @normalizex/honeypot-is"
    job = json.dumps({"baseUrl": base_url, "concurrency": 4, "calls": calls})
    done = subprocess.run(
        [node, str(SCRIPT)], input=job, capture_output=True, text=True, timeout=1200, check=False
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(results) == len(calls)
    return results


def _pool(entry: dict[str, Any]) -> dict[str, Any] | None:
    return entry["pools"][0] if entry["pools"] else None


def _router(pool: dict[str, Any], addresses: dict[str, str]) -> str:
    """The router of the pool's DEX (the devnet's V2 fork sits at an address of its own)."""
    if pool.get("venue") == "fork":
        return addresses["FORK_V2_ROUTER"]
    return ROUTERS[(pool["dex"], pool.get("venue"))]


@pytest.fixture(scope="module")
def outcomes(
    server_url: str, catalogue: list[dict[str, Any]], devnet: Any
) -> dict[tuple[str, str], Any]:
    """(token id, method) -> the client's result, for every token and the three methods."""
    devnet_addresses = devnet.manifest["addresses"]
    calls: list[dict[str, Any]] = []
    keys: list[tuple[str, str]] = []
    for entry in catalogue:
        pool = _pool(entry)
        router = _router(pool, devnet_addresses) if pool else None
        pair = pool["address"] if pool else None
        for method, args in (
            ("honeypotScan", [entry["address"], router, pair, CHAIN]),
            ("getPairs", [entry["address"], CHAIN]),
            ("getContractVerification", [entry["address"], router, pair, CHAIN]),
        ):
            calls.append({"method": method, "args": args})
            keys.append((entry["id"], method))
    calls.append({"method": "honeypotScan", "args": ["0x1234", None, None, CHAIN]})
    keys.append(("invalid", "honeypotScan"))
    calls.append({"method": "honeypotScan", "args": [NO_CONTRACT, None, None, CHAIN]})
    keys.append(("no-contract", "honeypotScan"))
    return dict(zip(keys, run_client(server_url, calls), strict=True))


def _ids(catalogue_path: str = "src/tokenrisk/devnet/catalogue.json") -> list[str]:
    return [t["id"] for t in json.loads(Path(catalogue_path).read_text())["tokens"]]


@pytest.mark.parametrize("entry_id", _ids())
def test_honeypot_scan(
    outcomes: dict[tuple[str, str], Any],
    catalogue: list[dict[str, Any]],
    declared: dts.Declarations,
    entry_id: str,
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    result = outcomes[(entry_id, "honeypotScan")]
    if not entry["pools"]:
        assert result["ok"] is False and result["status"] == 404, result
        assert result["data"]["code"] == 404 and result["data"]["error"] == "No pairs found"
        return
    assert result["ok"], result
    body = result["data"]
    conforms(declared, "honeypotScan", body)
    assert body["Token"]["Address"] == entry["address"]
    assert body["PairAddress"] == entry["pools"][0]["address"].lower()  # the pair it asked for
    assert body["Pair"]["Pair"]["Address"] == body["PairAddress"]
    assert body["Chain"]["ID"] == CHAIN
    expected = entry["expected"]
    if expected.get("isHoneypot") is not None and body["Error"] is None:
        assert body["IsHoneypot"] is expected["isHoneypot"], body


@pytest.mark.parametrize("entry_id", _ids())
def test_get_pairs(
    outcomes: dict[tuple[str, str], Any],
    catalogue: list[dict[str, Any]],
    declared: dts.Declarations,
    entry_id: str,
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    result = outcomes[(entry_id, "getPairs")]
    assert result["ok"], result
    pairs = result["data"]
    conforms(declared, "getPairs", pairs)
    assert isinstance(pairs, list)
    assert sorted(p["Pair"]["Address"] for p in pairs) == sorted(
        p["address"].lower() for p in entry["pools"]
    )
    for item in pairs:
        assert item["ChainID"] == CHAIN and entry["address"].lower() in item["Pair"]["Tokens"]
        assert all(isinstance(r, int | float) for r in item["Reserves"])


@pytest.mark.parametrize("entry_id", _ids())
def test_get_contract_verification(
    outcomes: dict[tuple[str, str], Any],
    catalogue: list[dict[str, Any]],
    declared: dts.Declarations,
    entry_id: str,
) -> None:
    entry = next(t for t in catalogue if t["id"] == entry_id)
    result = outcomes[(entry_id, "getContractVerification")]
    assert result["ok"], result
    body = result["data"]
    conforms(declared, "getContractVerification", body)
    if body["FullCheckPerformed"]:
        assert entry["address"].lower() in {a.lower() for a in body["Contracts"]}, body
    else:  # no buy and sell to trace (no pool, or a sell that reverts): nothing claimed
        assert body["Contracts"] == {} and body["HasProxyCalls"] is False, body


def test_errors_reach_the_client_as_the_live_api_sends_them(
    outcomes: dict[tuple[str, str], Any],
) -> None:
    invalid = outcomes[("invalid", "honeypotScan")]
    assert (invalid["ok"], invalid["status"], invalid["data"]["code"]) == (False, 400, 400)
    missing = outcomes[("no-contract", "honeypotScan")]
    assert (missing["ok"], missing["status"], missing["data"]["code"]) == (False, 404, 404)

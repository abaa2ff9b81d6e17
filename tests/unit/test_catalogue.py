"""The devnet trap-token catalogue: schema, consistency with the contracts, coverage.

The catalogue is ground truth for tests of the detector, so it is checked as strictly as
the build script that reads it: every field, every placeholder, every contract and
function it names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pytest

from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.findings import FINDINGS

REPO_ROOT = Path(__file__).resolve().parents[2]
CATALOGUE_PATH = REPO_ROOT / "src" / "tokenrisk" / "devnet" / "catalogue.json"
BUILD_DIR = REPO_ROOT / "build" / "devnet" / "solc"  # shared with the devnet build

Entry = dict[str, Any]

SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SIGNATURE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(([a-z0-9,\[\]]*)\)$")
FIXED_PLACEHOLDERS = {
    "$name", "$symbol", "$decimals", "$supplyWei", "$OWNER", "$WETH", "$V2_ROUTER",
    "$V2_FACTORY", "$V3_FACTORY", "$SWAP_ROUTER", "$NPM", "$USDC", "$USDT", "$DAI",
    "$KEEPER",
}  # fmt: skip
BASES = {"WETH", "USDC", "USDT", "DAI"}
V3_FEES = {100, 500, 3000, 10000}
FLAGS = {
    "high_fail_rate", "medium_fail_rate", "low_fail_rate", "high_siphon_rate",
    "medium_siphon_rate", "transfer_blocked", "extremely_high_taxes", "high_tax",
    "medium_tax", "high_gas", "medium_gas", "effective_honeypot_low_sell_limit",
    "extremely_low_sell_limit", "low_sell_limit", "one_sell_per_block_limit",
    "closed_source", "sell_blocked_later", "verification_unknown",
    "all_snipers_honeypot", "some_snipers_honeypot",
} | set(FINDINGS)  # fmt: skip
RISKS = {"unknown", "very_low", "low", "medium", "high", "very_high", "honeypot"}
TOKEN_FIELDS = {
    "id", "contract", "name", "symbol", "decimals", "supply", "args", "mechanism",
    "verified", "pools", "afterLaunch", "history", "expected",
}  # fmt: skip
OPTIONAL_TOKEN_FIELDS = {"siphonCall", "abiContract", "ownerProof"}
PROOF_FIELDS = {"from", "to", "first", "call", "args", "advanceSeconds", "expect"}
PROOF_EXPECT = {
    "callReverts",
    "ownerChanges",
    "sellFails",
    "transferFails",
    "sellTaxAtLeast",
    "supplyGrows",
    "balanceDrops",
    "callerBalanceGrows",
    "sellLossAtLeast",
    "sellGasAtLeast",
}
EXPECTED_FIELDS = {
    "sellable", "isHoneypot", "buyTax", "sellTax", "transferTax", "maxBuy", "maxSell",
    "flags", "risk", "holderFailures", "siphoned", "notes",
}  # fmt: skip
ERC20_FUNCTIONS = {
    "totalSupply()", "balanceOf(address)", "transfer(address,uint256)",
    "transferFrom(address,address,uint256)", "approve(address,uint256)",
    "allowance(address,address)", "decimals()", "owner()", "setAmm(address,bool)", "launch()",
}  # fmt: skip
MAX_RUNTIME_BYTES = 24_576
UINT112_MAX = 2**112 - 1


@pytest.fixture(scope="module")
def catalogue() -> Entry:
    data = json.loads(CATALOGUE_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def tokens(catalogue: Entry) -> list[Entry]:
    return list(catalogue["tokens"])


@pytest.fixture(scope="module")
def by_id(tokens: list[Entry]) -> dict[str, Entry]:
    return {token["id"]: token for token in tokens}


@pytest.fixture(scope="module")
def artifacts() -> dict[str, Entry]:
    """Compiled contracts; reuses the build's artifacts when they are up to date."""
    return dict(load_artifacts(compile_contracts(REPO_ROOT, BUILD_DIR))["contracts"])


# helpers


def signatures(abi: list[Entry]) -> set[str]:
    """Canonical ``name(types)`` of every function in an ABI (flat types only)."""
    return {
        f"{item['name']}({','.join(arg['type'] for arg in item['inputs'])})"
        for item in abi
        if item.get("type") == "function"
    }


def constructor_arity(abi: list[Entry]) -> int:
    return next((len(item["inputs"]) for item in abi if item.get("type") == "constructor"), 0)


def abi_contract(token: Entry) -> str:
    return str(token.get("abiContract", token["contract"]))


def whole_units(text: Any) -> Decimal:
    """A positive decimal amount given as a string."""
    assert isinstance(text, str), f"amount {text!r} must be a string"
    try:
        value = Decimal(text)
    except InvalidOperation as exc:
        raise AssertionError(f"amount {text!r} is not a decimal number") from exc
    assert value > 0 and value.is_finite(), f"amount {text!r} must be positive"
    return value


def pool_ref(pool: Entry) -> str:
    fee = f":{pool['fee']}" if pool["dex"] == "v3" else ""
    venue = f"@{pool['venue']}" if "venue" in pool else ""
    return f"$pool:{pool['dex']}:{pool['base']}{fee}{venue}"


def check_placeholder(value: Any, token: Entry | None, contract_ids: set[str]) -> None:
    """A ``$``-string must be a known placeholder that resolves for this entry."""
    if not isinstance(value, str) or not value.startswith("$"):
        assert isinstance(value, (str, int, bool)), f"literal arg {value!r} has an odd type"
        return
    if value in FIXED_PLACEHOLDERS:
        return
    kind, _, rest = value[1:].partition(":")
    if kind == "contract":
        assert rest in contract_ids, f"{value} names no entry of 'contracts'"
    elif kind == "pool":
        assert token is not None and value in {pool_ref(p) for p in token["pools"]}, value
    elif kind == "wallet":
        assert token is not None and rest.isdigit(), value
    elif kind == "holder":
        assert token is not None and rest.isdigit(), value
        assert int(rest) < token["history"]["buyers"], f"{value}: not that many buyers"
    else:
        raise AssertionError(f"unknown placeholder {value}")


def tax_flag(expected: Entry) -> str | None:
    """The tax flag implied by the lowest plausible buy/sell/transfer tax (docs/risk.md:
    from 50 % extremely_high_taxes, above 40 % high_tax, above 21 % medium_tax)."""
    bands = (expected["buyTax"], expected["sellTax"], expected["transferTax"])
    lows = [band[0] for band in bands if band is not None]
    worst = max(lows, default=0)
    if worst >= 50:
        return "extremely_high_taxes"
    for threshold, flag in ((40, "high_tax"), (21, "medium_tax")):
        if worst > threshold:
            return flag
    return None


# top level


def test_top_level_shape(catalogue: Entry) -> None:
    assert set(catalogue) == {"version", "contracts", "tokens"}
    assert catalogue["version"] == 1
    assert isinstance(catalogue["contracts"], list)
    assert isinstance(catalogue["tokens"], list)


def test_at_least_24_tokens_and_hundreds_of_holders(tokens: list[Entry]) -> None:
    assert len(tokens) >= 24
    assert sum(t["history"]["buyers"] + t["history"]["snipers"] for t in tokens) >= 300


def test_ids_unique_and_slugs(catalogue: Entry, tokens: list[Entry]) -> None:
    ids = [entry["id"] for entry in catalogue["contracts"]] + [t["id"] for t in tokens]
    assert len(ids) == len(set(ids)), "ids must be unique across contracts and tokens"
    assert all(SLUG.match(i) for i in ids), ids


def test_helper_contracts(catalogue: Entry, artifacts: dict[str, Entry]) -> None:
    ids = {entry["id"] for entry in catalogue["contracts"]}
    for entry in catalogue["contracts"]:
        assert set(entry) == {"id", "contract", "args", "verified"}, entry["id"]
        assert isinstance(entry["verified"], bool)
        artifact = artifacts[entry["contract"]]
        assert artifact["bytecode"] != "0x", f"{entry['contract']} is abstract"
        assert len(entry["args"]) == constructor_arity(artifact["abi"])
        for arg in entry["args"]:
            check_placeholder(arg, None, ids)


# per token


def test_token_fields(tokens: list[Entry]) -> None:
    for token in tokens:
        tid = token["id"]
        assert TOKEN_FIELDS <= set(token) <= TOKEN_FIELDS | OPTIONAL_TOKEN_FIELDS, tid
        assert isinstance(token["name"], str) and token["name"], tid
        assert isinstance(token["symbol"], str) and token["symbol"], tid
        assert isinstance(token["decimals"], int) and 0 <= token["decimals"] <= 36, tid
        assert isinstance(token["mechanism"], str) and len(token["mechanism"]) > 10, tid
        assert token["verified"] is None or isinstance(token["verified"], bool), tid
        assert isinstance(token["args"], list), tid
        assert re.fullmatch(r"[1-9][0-9]*", token["supply"]), tid
        assert int(token["supply"]) * 10 ** token["decimals"] < 2**255, tid


def test_token_contracts_exist_and_take_the_args(
    catalogue: Entry, tokens: list[Entry], artifacts: dict[str, Entry]
) -> None:
    ids = {entry["id"] for entry in catalogue["contracts"]}
    for token in tokens:
        artifact = artifacts[token["contract"]]
        assert artifact["bytecode"] != "0x", f"{token['id']}: {token['contract']} is abstract"
        assert len(token["args"]) == constructor_arity(artifact["abi"]), token["id"]
        for arg in token["args"]:
            check_placeholder(arg, token, ids)


def test_token_abi_has_what_the_build_calls(
    tokens: list[Entry], artifacts: dict[str, Entry]
) -> None:
    for token in tokens:
        available = signatures(artifacts[abi_contract(token)]["abi"])
        missing = ERC20_FUNCTIONS - available
        assert not missing, f"{token['id']}: missing {missing}"
        if "siphonCall" in token:
            match = SIGNATURE.match(token["siphonCall"])
            assert match and match.group(2) == "address,uint256", token["id"]
            assert token["siphonCall"] in available, token["id"]


def test_runtime_bytecode_under_limit(artifacts: dict[str, Entry]) -> None:
    for name, artifact in artifacts.items():
        assert (len(artifact["deployedBytecode"]) - 2) // 2 < MAX_RUNTIME_BYTES, name


def test_pools(tokens: list[Entry]) -> None:
    for token in tokens:
        tid, supply = token["id"], Decimal(token["supply"])
        refs = [pool_ref(pool) for pool in token["pools"]]
        assert len(refs) == len(set(refs)), f"{tid}: duplicate pool"
        for pool in token["pools"]:
            check_pool(tid, pool)
            raw = whole_units(pool["tokenAmount"]) * 10 ** token["decimals"]
            assert pool["dex"] == "v3" or raw <= UINT112_MAX, f"{tid}: V2 reserve overflow"
        total = sum((whole_units(p["tokenAmount"]) for p in token["pools"]), Decimal(0))
        assert total <= supply * Decimal("0.9"), f"{tid}: pools take more than 90% of supply"


VENUES = {"v2": {"fork"}, "v3": {"pancakeswap"}}  # besides Uniswap's (no "venue")
PANCAKE_FEES = {100, 500, 2500, 10000}


def check_pool(tid: str, pool: Entry) -> None:
    assert pool["dex"] in {"v2", "v3", "v4"}, tid
    assert pool["base"] in BASES, tid
    venue = pool.get("venue")
    assert venue is None or venue in VENUES.get(pool["dex"], set()), tid
    keys = set(pool) - {"venue"}
    if pool["dex"] == "v4":  # native ETH (base WETH) or, native false, the base ERC-20
        assert pool.get("native", True) in (True, False), tid
        assert (pool["base"] == "WETH" or pool.get("native") is False) and venue is None, tid
        v4_keys = {"dex", "base", "fee", "tickSpacing", "hook", "hookArgs", "native"}
        assert keys <= v4_keys | {"tokenAmount", "baseAmount"}, tid
    elif pool["dex"] == "v3":
        assert keys == {"dex", "base", "fee", "tokenAmount", "baseAmount"}, tid
        assert pool["fee"] in (PANCAKE_FEES if venue == "pancakeswap" else V3_FEES), tid
    else:
        assert keys == {"dex", "base", "tokenAmount", "baseAmount"}, tid
    base_amount = whole_units(pool["baseAmount"])
    if pool["base"] == "WETH":
        assert 10 <= base_amount <= 100, f"{tid}: WETH pools hold 10-100 ETH"
    else:
        assert base_amount <= 200_000, f"{tid}: stablecoin pool implausibly deep"


def test_after_launch_calls(
    catalogue: Entry, tokens: list[Entry], artifacts: dict[str, Entry]
) -> None:
    ids = {entry["id"] for entry in catalogue["contracts"]}
    for token in tokens:
        available = signatures(artifacts[abi_contract(token)]["abi"])
        for step in token["afterLaunch"]:
            assert set(step) <= {"call", "args", "when"}, token["id"]
            match = SIGNATURE.match(step["call"])
            assert match and step["call"] in available, f"{token['id']}: {step['call']}"
            arity = len(match.group(2).split(",")) if match.group(2) else 0
            assert len(step["args"]) == arity, f"{token['id']}: {step['call']}"
            assert step.get("when", "beforeHistory") in {"beforeHistory", "afterHistory"}
            for arg in step["args"]:
                check_placeholder(arg, token, ids)


def test_owner_proofs(catalogue: Entry, tokens: list[Entry], artifacts: dict[str, Entry]) -> None:
    """An ``ownerProof`` names a real function (or a wait) and something to check."""
    ids = {entry["id"] for entry in catalogue["contracts"]}
    for token in tokens:
        proof = token.get("ownerProof")
        if proof is None:
            continue
        tid = token["id"]
        assert set(proof) <= PROOF_FIELDS and proof["expect"], tid
        assert set(proof["expect"]) <= PROOF_EXPECT, tid
        assert ("call" in proof) != ("advanceSeconds" in proof), f"{tid}: a call or a wait"
        if "call" in proof:
            abis = {abi_contract(token), token["contract"]}  # a proxy's own functions too
            if proof.get("to") == "$hook":  # the owner call goes to the pool's V4 hook
                hooks = [p["hook"] for p in token["pools"] if p.get("hook")]
                assert hooks, tid
                abis = {hooks[0]}
            known = set().union(*(signatures(artifacts[name]["abi"]) for name in abis))
            assert proof["call"] in known, tid
            sender = proof.get("from", "$OWNER")
            first = proof.get("first", {"args": []})
            if "call" in first:
                assert first["call"] in known, tid
            for arg in [
                *([] if sender == "$owner()" else [sender]),
                *proof["args"],
                *first["args"],
            ]:
                for item in arg if isinstance(arg, list) else [arg]:
                    check_placeholder(item, token, ids)


def test_every_owner_flag_expected_somewhere_has_a_proof(tokens: list[Entry]) -> None:
    """Owner-power expectations are mined by the build, not typed in."""
    expecting = [
        t for t in tokens if set(t["expected"]["flags"]) & set(FINDINGS) - {"owner_renounced"}
    ]
    assert expecting  # the catalogue has owner-power tokens: the check below is not empty
    assert [t["id"] for t in expecting if "ownerProof" not in t] == []


def test_history(tokens: list[Entry]) -> None:
    for token in tokens:
        tid, history = token["id"], token["history"]
        assert set(history) == {"buyers", "snipers", "siphoned", "sellers"}, tid
        assert all(isinstance(v, int) and v >= 0 for v in history.values()), tid
        if token["pools"]:
            assert 5 <= history["buyers"] <= 40, tid
        else:
            assert history == {"buyers": 0, "snipers": 0, "siphoned": 0, "sellers": 0}, tid
        assert history["sellers"] <= history["buyers"], tid
        assert history["siphoned"] <= history["buyers"], tid
        assert (history["siphoned"] > 0) == ("siphonCall" in token), tid
        if not token["expected"]["sellable"] and token["afterLaunch"] == []:
            assert history["sellers"] == 0, f"{tid}: history sells would revert"


# expectations


def test_expected_fields(tokens: list[Entry]) -> None:
    for token in tokens:
        tid, expected = token["id"], token["expected"]
        assert set(expected) == EXPECTED_FIELDS, tid
        for key in ("sellable", "isHoneypot", "maxBuy", "maxSell", "holderFailures", "siphoned"):
            assert isinstance(expected[key], bool), f"{tid}.{key}"
        for key in ("buyTax", "sellTax", "transferTax"):
            band = expected[key]
            assert band is None or (len(band) == 2 and 0 <= band[0] <= band[1] <= 100), (
                f"{tid}.{key}"
            )
        assert set(expected["flags"]) <= FLAGS, tid
        assert expected["risk"] and set(expected["risk"]) <= RISKS, tid
        assert isinstance(expected["notes"], str) and expected["notes"], tid


def test_expectations_are_consistent(tokens: list[Entry]) -> None:
    for token in tokens:
        tid, expected = token["id"], token["expected"]
        if expected["isHoneypot"]:
            assert expected["risk"] == ["honeypot"], tid
        else:
            assert "honeypot" not in expected["risk"], tid
        if expected["sellable"]:
            assert expected["sellTax"] is not None, f"{tid}: a working sell has a tax"
        assert expected["siphoned"] == (token["history"]["siphoned"] > 0), tid
        if "high_fail_rate" in expected["flags"]:
            assert expected["holderFailures"] and not expected["sellable"], tid


def test_tax_flags_follow_the_tax_bands(tokens: list[Entry]) -> None:
    tax_flags = {"extremely_high_taxes", "high_tax", "medium_tax"}
    for token in tokens:
        expected = token["expected"]
        implied = tax_flag(expected)
        assert set(expected["flags"]) & tax_flags == ({implied} if implied else set()), token["id"]


def test_closed_source_flag_follows_verification(catalogue: Entry, tokens: list[Entry]) -> None:
    verified = {entry["id"]: entry["verified"] for entry in catalogue["contracts"]}
    for token in tokens:
        helpers = [
            arg[len("$contract:") :] for arg in token["args"] if str(arg).startswith("$contract:")
        ]
        hidden = token["verified"] is False or not all(verified[h] for h in helpers)
        assert ("closed_source" in token["expected"]["flags"]) == hidden, token["id"]


# coverage of the required mechanisms

Check = Callable[[Entry], bool]


def has_flag(flag: str) -> Check:
    return lambda t: flag in t["expected"]["flags"]


def tax_at_least(side: str, percent: float) -> Check:
    return lambda t: t["expected"][side] is not None and t["expected"][side][0] >= percent


def pools_are(*kinds: tuple[str, str]) -> Check:
    return lambda t: sorted((p["dex"], p["base"]) for p in t["pools"]) == sorted(kinds)


REQUIRED: dict[str, tuple[str, Check]] = {
    "plain honest token": ("plain", lambda t: t["expected"]["risk"] == ["low"]),
    "honest fee-on-transfer 3/3": ("fot-3", tax_at_least("buyTax", 2.5)),
    "high taxes 25/35": ("high-tax", tax_at_least("sellTax", 34.5)),
    "99% sell tax": ("sell-tax-99", tax_at_least("sellTax", 98.5)),
    "sell whitelist": (
        "sell-whitelist",
        lambda t: t["afterLaunch"][0]["call"] == "setWhitelisted(address,bool)",
    ),
    "sniper blacklist": ("sniper-blacklist", lambda t: t["history"]["snipers"] > 0),
    "max transaction": ("max-tx", lambda t: t["expected"]["maxBuy"] and t["expected"]["maxSell"]),
    "max wallet": ("max-wallet", lambda t: t["expected"]["maxBuy"]),
    "sell cooldown": ("sell-cooldown", lambda t: t["expected"]["sellable"]),
    "one sell per block": ("one-sell-per-block", has_flag("one_sell_per_block_limit")),
    "paused by owner": (
        "paused",
        lambda t: t["afterLaunch"] == [{"call": "pause()", "args": [], "when": "afterHistory"}],
    ),
    "wallet transfers blocked": ("no-wallet-transfer", has_flag("transfer_blocked")),
    "owner siphon": ("siphon", lambda t: t["history"]["siphoned"] > 0),
    "proxy, verified implementation": (
        "proxy-verified",
        lambda t: t["args"][0] == "$contract:proxy-impl-verified",
    ),
    "proxy, unverified implementation": ("proxy-unverified", has_flag("closed_source")),
    "closed source": ("closed-source", lambda t: not t["verified"]),
    "tx.origin trap": ("origin-trap", lambda t: t["expected"]["isHoneypot"]),
    "time bomb": ("time-bomb", has_flag("sell_blocked_later")),
    "V3-only liquidity": ("v3-only", pools_are(("v3", "WETH"))),
    "several pairs": ("multi-pair", pools_are(("v2", "WETH"), ("v3", "WETH"), ("v2", "USDC"))),
    "no pair": ("no-pair", lambda t: t["pools"] == []),
    "cannot sell entire balance": ("no-full-sell", lambda t: t["expected"]["sellable"]),
    "reflection": ("reflection", lambda t: not t["expected"]["isHoneypot"]),
    "gas-heavy sell": ("gas-heavy-sell", has_flag("high_gas")),
    "reverting name": ("revert-name", lambda t: t["expected"]["sellable"]),
    "bytes32 name": ("bytes32-name", lambda t: t["expected"]["sellable"]),
    "endless gas burner": ("gas-infinite", lambda t: t["expected"]["isHoneypot"]),
    "6 decimals": ("decimals-6", lambda t: t["decimals"] == 6),
    "0 decimals": ("decimals-0", lambda t: t["decimals"] == 0),
    "swap-back tax paying EOA wallets": (
        "swapback-tax",
        lambda t: t["args"][-2:] == ["$wallet:0", "$wallet:1"] and not t["expected"]["isHoneypot"],
    ),
    "swap-back honeypot fee": ("swapback-honeypot", lambda t: int(t["args"][5]) >= 9000),
    "owner raises the fee after launch": (
        "fee-raise",
        lambda t: t["afterLaunch"][0]["when"] == "afterHistory" and has_flag("medium_tax")(t),
    ),
    "RFI reflection to the pair": ("rfi", lambda t: not t["expected"]["isHoneypot"]),
    "rebasing with a synced pool": (
        "rebasing",
        lambda t: t["afterLaunch"][0]["call"] == "rebase(int256)",
    ),
    "silent no-op wallet transfers": ("silent-transfer", has_flag("transfer_blocked")),
    "holder above 2^112": (
        "whale-2e112",
        lambda t: int(t["supply"]) * 10 ** t["decimals"] > 2 * 2**112,
    ),
    "gas price cap that traps real sellers": (
        "gas-price-cap",
        lambda t: (
            t["afterLaunch"]
            == [{"call": "setMaxGasPrice(uint256)", "args": ["1"], "when": "afterHistory"}]
            and t["expected"]["isHoneypot"]
        ),
    ),
    "a sell gate that only a zero RANDAO mix opens": (
        "randao-gate",
        lambda t: (
            t["afterLaunch"] == [{"call": "setGate(bool)", "args": [True], "when": "afterHistory"}]
            and t["expected"]["isHoneypot"]
        ),
    ),
    "honest token without any verification entry": (
        "unverified-honest",
        lambda t: t["verified"] is None and t["expected"]["risk"] == ["low"],
    ),
}

CONTRACT_OF = {
    "plain": "PlainToken", "fot-3": "FeeOnTransferToken", "high-tax": "HighTaxToken",
    "sell-tax-99": "SellTax99Token", "sell-whitelist": "SellWhitelistToken",
    "sniper-blacklist": "SniperBlacklistToken", "max-tx": "MaxTxToken",
    "max-wallet": "MaxWalletToken", "sell-cooldown": "SellCooldownToken",
    "one-sell-per-block": "OneSellPerBlockToken", "paused": "PausableToken",
    "no-wallet-transfer": "NoWalletTransferToken", "siphon": "SiphonToken",
    "proxy-verified": "TokenProxy", "proxy-unverified": "TokenProxy",
    "closed-source": "ClosedSourceToken", "origin-trap": "OriginTrapToken",
    "time-bomb": "TimeBombToken", "v3-only": "PlainToken", "multi-pair": "PlainToken",
    "no-pair": "PlainToken", "no-full-sell": "NoFullSellToken", "reflection": "ReflectionToken",
    "gas-heavy-sell": "GasHeavySellToken", "revert-name": "RevertingNameToken",
    "bytes32-name": "Bytes32NameToken", "gas-infinite": "GasBlackHoleToken",
    "decimals-6": "PlainToken", "decimals-0": "PlainToken",
    "swapback-tax": "SwapBackToken", "swapback-honeypot": "SwapBackToken",
    "fee-raise": "FeeRaiseToken", "rfi": "RfiToken", "rebasing": "RebasingToken",
    "silent-transfer": "SilentTransferToken", "whale-2e112": "PlainToken",
    "unverified-honest": "PlainToken", "gas-price-cap": "GasPriceCapToken",
    "randao-gate": "RandaoGateToken",
}  # fmt: skip


@pytest.mark.parametrize("mechanism", sorted(REQUIRED))
def test_required_mechanism_present(mechanism: str, by_id: dict[str, Entry]) -> None:
    token_id, check = REQUIRED[mechanism]
    assert token_id in by_id, f"no token for {mechanism}"
    token = by_id[token_id]
    assert token["contract"] == CONTRACT_OF[token_id]
    assert check(token), f"{token_id} does not show {mechanism}"


def test_multi_pair_depths_differ(by_id: dict[str, Entry]) -> None:
    pools = {(p["dex"], p["base"]): Decimal(p["baseAmount"]) for p in by_id["multi-pair"]["pools"]}
    usdc_in_eth = pools[("v2", "USDC")] / 2000
    assert pools[("v2", "WETH")] > pools[("v3", "WETH")] > usdc_in_eth


def test_proxy_helpers_verification(catalogue: Entry) -> None:
    verified = {
        entry["id"]: (entry["contract"], entry["verified"]) for entry in catalogue["contracts"]
    }
    assert verified["proxy-impl-verified"] == ("HonestTokenLogic", True)
    assert verified["proxy-impl-hidden"] == ("HiddenTaxTokenLogic", False)

"""Owner-power scan, pure parts: hostile arguments and the classifier on hand-built outcomes.

The outcomes below are written the way eth_simulateV1 results are parsed
(``CallResult``), one mark per step of the story documented in
``tokenrisk.simulate.effects``; each test changes exactly what its effect needs.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest
from fakenode import FakeNode, Fault

from tokenrisk.api.wire import OwnerPowersInfo
from tokenrisk.chain.signatures import IMPLEMENTATION_SLOT
from tokenrisk.findings import (
    FINDINGS,
    TAX_POWER_THRESHOLD,
    Caller,
    Evidence,
    FutureSell,
    OwnerPowers,
    PowerFinding,
    powers_from_json,
    powers_json,
)
from tokenrisk.simulate.effects import Effect, classify, comparable
from tokenrisk.simulate.hostile import Targets, argument_sets, render, split_types, values_for
from tokenrisk.simulate.owners import (
    IMPLEMENTATION_READER,
    PowerCache,
    implementation_code,
    read_facts,
)
from tokenrisk.simulate.powers import _finding, _merged, hook_of
from tokenrisk.simulate.simulator import CallResult, Outcome
from tokenrisk.simulate.trials import Function, Trial, two_steps

BUYER = "0x1111111111111111111111111111111111111111"
PAIR = "0x2222222222222222222222222222222222222222"
TARGETS = Targets(buyer=BUYER, pair=PAIR)
MAX = 2**256 - 1


# HOSTILE ARGUMENTS


def test_split_types_keeps_arrays_and_refuses_tuples() -> None:
    assert split_types("address[],bool") == ["address[]", "bool"]
    assert split_types("") == []
    assert split_types("(uint256,address)") is None


def test_values_cover_the_issue_list_for_uint256() -> None:
    values = values_for("uint256", TARGETS)
    assert values is not None
    assert set(values) == {0, 25, 99, 100, 1_000, 9_900, 10_000, MAX}
    assert values[0] == 99  # the most telling value (a 99% tax) comes first


def test_small_integers_are_clamped_to_their_width() -> None:
    assert values_for("uint8", TARGETS) == [99, 0, 255, 25, 100]
    signed = values_for("int8", TARGETS)
    assert signed is not None and -1 in signed and max(signed) == 127


def test_addresses_and_arrays_hold_the_buyer_and_the_pair() -> None:
    assert values_for("address", TARGETS) == [BUYER, PAIR]
    assert values_for("address[]", TARGETS) == [[BUYER], [PAIR]]
    assert values_for("bool[2]", TARGETS) == [[True, True], [False, False]]
    assert values_for("bool", TARGETS) == [True, False]


def test_unsupported_types_give_no_argument_sets() -> None:
    assert values_for("function", TARGETS) is None
    assert argument_sets(["address", "function"], TARGETS, 8) == []


def test_argument_sets_are_diagonal_distinct_and_bounded() -> None:
    sets = argument_sets(["address", "bool"], TARGETS, 20)
    assert sets[:2] == [(BUYER, True), (PAIR, False)]
    assert (BUYER, False) in sets and (PAIR, True) in sets  # both polarities
    fees = argument_sets(["uint256", "uint256"], TARGETS, 8)
    assert fees[0] == (99, 99) and len(fees) == 8 and len(set(fees)) == 8
    assert len(argument_sets(["uint256"], TARGETS, 3)) == 3
    assert argument_sets([], TARGETS, 8) == [()]


def test_blacklist_shapes_get_the_buyer_with_true() -> None:
    assert (BUYER, True) in argument_sets(["address", "bool"], TARGETS, 8)
    assert ([BUYER], True) in argument_sets(["address[]", "bool"], TARGETS, 8)


def test_one_position_at_a_time_reaches_a_capped_third_fee() -> None:
    sets = argument_sets(["uint256", "uint256", "uint256"], TARGETS, 20)
    assert (0, 0, 25) in sets and (25, 0, 0) in sets and (0, 99, 0) in sets


def test_amounts_and_every_target_address_are_tried() -> None:
    wide = Targets(BUYER, PAIR, caller="0x" + "33" * 20, router="0x" + "44" * 20, supply=10**27)
    single = argument_sets(["uint256"], wide, 20)
    assert {5, 10, 20, 50, 990, 10**18, 10**25, 10**27} <= {s[0] for s in single}
    addressed = argument_sets(["address", "uint256"], wide, 40)
    firsts = {s[0] for s in addressed}
    assert {BUYER, PAIR, "0x" + "33" * 20, "0x" + "44" * 20, "0x" + "00" * 20} <= firsts


def test_render() -> None:
    assert render(MAX) == "2^256-1"
    assert render([BUYER, True]) == f"[{BUYER}, true]"
    assert render(b"\x01") == "0x01"


# OUTCOMES


def ok(value: int | None = None) -> CallResult:
    data = "0x" + (value or 0).to_bytes(32, "big").hex() if value is not None else "0x"
    return CallResult(ok=True, data=data, gas=21_000, reason=None)


def failed(reason: str = "execution reverted: Blocked") -> CallResult:
    return CallResult(ok=False, data="0x", gas=30_000, reason=reason)


def quote(amount: int) -> CallResult:
    """A V2 getAmountsOut reply: [amountIn, amountOut]."""
    words = [32, 2, 10**18, amount]
    return CallResult(True, "0x" + "".join(w.to_bytes(32, "big").hex() for w in words), 0, None)


def story(sell_tax: float = 3.0, buy_tax: float = 3.0, **changes: CallResult) -> Outcome:
    """A trial (or baseline) where everything works; ``changes`` replace single marks."""
    bought, supply, pool = 1_000_000, 10**9, 4 * 10**8
    sold = 891_000
    reached = int(sold * (100 - sell_tax) / 100)
    marks: dict[str, Any] = {
        "a.buy": ok(),
        "a.bought": ok(bought),
        "b.buy": ok(),
        "b.bought": ok(bought // 2),
        "supply0": ok(supply),
        "pool0": ok(pool),
        "call": ok(),
        "supply1": ok(supply),
        "a.held": ok(bought),
        "pool1": ok(pool),
        "a.transfer": ok(),
        "a.seller_before": ok(900_000),
        "a.pool_before": ok(pool),
        "a.sell": ok(),
        "a.pool_after": ok(pool + reached),
        "a.seller_after": ok(900_000 - sold),
        "a_small.sell": failed("execution reverted: balance"),
        "b.sell": ok(),
        "c.quote": quote(1_000),
        "c.buy": ok(),
        "c.bought": ok(int(1_000 * (100 - buy_tax) / 100)),
    }
    marks.update(changes)
    return Outcome(marks)


BASE = story()


def kinds(trial: Outcome) -> list[str]:
    return [e.kind for e in classify(BASE, trial)]


def test_nothing_changes_nothing_found() -> None:
    assert comparable(BASE)
    assert kinds(story()) == []


def test_a_reverted_owner_call_is_never_a_finding() -> None:
    assert kinds(story(call=failed("Caller is not the owner"), **{"a.sell": failed()})) == []


def test_unusable_baseline_gives_nothing() -> None:
    broken = story(**{"b.sell": failed()})
    assert not comparable(broken)
    assert classify(broken, story(**{"a.sell": failed()})) == []


def test_only_the_named_buyer_blocked_is_a_blacklist() -> None:
    found = classify(BASE, story(**{"a.sell": failed("execution reverted: Bot detected")}))
    assert [e.kind for e in found] == ["owner_can_blacklist"]
    assert "Bot detected" in found[0].detail
    assert found[0].evidence[0].before == "ok"
    assert "Bot detected" in found[0].evidence[0].after


def test_everyone_blocked_but_buys_work_is_block_sells() -> None:
    assert kinds(story(**{"a.sell": failed(), "b.sell": failed()})) == ["owner_can_block_sells"]


def test_everyone_blocked_and_buys_fail_is_pause() -> None:
    trial = story(**{"a.sell": failed(), "b.sell": failed(), "c.buy": failed()})
    assert kinds(trial) == ["owner_can_pause_trading"]


def test_small_sell_working_is_a_limit() -> None:
    trial = story(**{"a.sell": failed(), "b.sell": failed(), "a_small.sell": ok()})
    assert kinds(trial) == ["owner_can_limit_transactions"]


def test_only_transfers_blocked() -> None:
    assert kinds(story(**{"a.transfer": failed()})) == ["owner_can_block_transfers"]


def test_transfers_blocked_today_and_opened_by_the_call_is_the_switch() -> None:
    armed = story(**{"a.transfer": failed("execution reverted: Wallet hopping disabled")})
    found = classify(armed, story())
    assert [e.kind for e in found] == ["owner_can_block_transfers"]
    assert "Wallet hopping disabled" in found[0].detail
    assert classify(armed, armed) == []  # a call that leaves them blocked holds nothing
    still_blocked = story(**{"a.transfer": failed(), "a.sell": failed(), "b.sell": failed()})
    assert "owner_can_block_transfers" not in [e.kind for e in classify(armed, still_blocked)]


def test_mint_is_seen_in_the_supply() -> None:
    found = classify(BASE, story(supply1=ok(2 * 10**9)))
    assert [e.kind for e in found] == ["owner_can_mint"]
    assert (found[0].evidence[0].before, found[0].evidence[0].after) == (
        str(10**9),
        str(2 * 10**9),
    )


def test_a_rebase_is_not_a_mint() -> None:
    grown = story(supply1=ok(2 * 10**9), pool1=ok(8 * 10**8), **{"a.held": ok(2_000_000)})
    assert kinds(grown) == []
    shrunk = story(supply1=ok(10**9 // 2), pool1=ok(2 * 10**8), **{"a.held": ok(500_000)})
    assert kinds(shrunk) == []


def test_only_new_buys_blocked_is_informational() -> None:
    assert kinds(story(**{"c.buy": failed("execution reverted: UniswapV2: K")})) == [
        "owner_can_block_buys"
    ]
    assert FINDINGS["owner_can_block_buys"].severity == "info"


def test_balance_taken_hides_the_sell_failure_it_causes() -> None:
    trial = story(**{"a.held": ok(0), "a.sell": failed()})
    assert kinds(trial) == ["owner_can_move_balances"]


def test_pool_balance_taken_is_a_move() -> None:
    assert kinds(story(pool1=ok(10**8))) == ["owner_can_move_balances"]


def test_rounding_of_a_balance_is_not_a_move() -> None:
    assert kinds(story(**{"a.held": ok(999_999)})) == []


@pytest.mark.parametrize(
    ("tax", "kind"),
    [(99.0, "owner_can_set_sell_tax"), (TAX_POWER_THRESHOLD, "owner_can_set_sell_tax"),
     (5.0, "owner_can_adjust_fees"), (3.5, None)],
)  # fmt: skip
def test_sell_tax_raise_is_graded(tax: float, kind: str | None) -> None:
    found = classify(BASE, story(sell_tax=tax))
    assert [e.kind for e in found] == ([kind] if kind else [])
    if kind:
        assert found[0].evidence[0].before == "3.00"
        assert abs(float(found[0].evidence[0].after) - tax) < 0.01


def test_buy_tax_raise() -> None:
    assert kinds(story(buy_tax=50.0)) == ["owner_can_set_buy_tax"]


def test_lowered_tax_is_not_a_finding() -> None:
    assert kinds(story(sell_tax=0.0, buy_tax=0.0)) == []


def sell_gas(gas: int) -> Outcome:
    return story(**{"b.sell": CallResult(ok=True, data="0x", gas=gas, reason=None)})


def test_a_sell_made_to_burn_gas_is_a_gas_trap() -> None:
    """The finding added in its one place (findings.FINDINGS) is detected, graded and
    printed like the others."""
    base = sell_gas(150_000)
    found = classify(base, sell_gas(4_000_000))
    assert [e.kind for e in found] == ["owner_can_raise_sell_gas"]
    assert found[0].evidence[0].before == "150000" and found[0].evidence[0].after == "4000000"
    assert classify(base, sell_gas(1_100_000)) == []  # 7x, but under a million more
    assert classify(sell_gas(2_000_000), sell_gas(3_100_000)) == []  # a million more, < 3x
    assert classify(sell_gas(4_000_000), base) == []  # lowered (an unlisted pool) is no power
    assert classify(base, story(**{"b.sell": failed()})) == []  # a failed sell used no gas
    from tokenrisk.findings import findings_markdown
    from tokenrisk.risk import FLAG_SEVERITY

    assert FLAG_SEVERITY["owner_can_raise_sell_gas"] == "medium"
    assert "`owner_can_raise_sell_gas` | medium" in findings_markdown()


def test_owner_change_is_informational() -> None:
    base = story(owner1=ok(int(BUYER, 16)))
    trial = story(owner1=ok(0))
    found = classify(base, trial)
    assert [e.kind for e in found] == ["ownership_transferable"]
    assert FINDINGS["ownership_transferable"].severity == "info"


def test_every_finding_kind_is_fully_defined() -> None:
    for kind in FINDINGS.values():
        assert kind.severity in ("info", "low", "medium", "high", "critical")
        assert kind.title and kind.meaning.endswith(".") and kind.advice.endswith(".")
        assert kind.anchor.startswith("docs/owner-powers.md#")


def test_bundled_selector_table_is_correct() -> None:
    from eth_utils.crypto import keccak

    from tokenrisk.simulate.trials import SELECTOR_FILE

    rows = [r.split("\t") for r in SELECTOR_FILE.read_text().splitlines() if r[:1] != "#"]
    assert len(rows) > 50
    for selector, signature in rows:
        assert selector == "0x" + keccak(text=signature)[:4].hex(), signature


def test_storage_words_holding_small_numbers_are_not_addresses() -> None:
    from tokenrisk.simulate.owners import stored_address as _stored

    assert _stored("0x" + (10**27).to_bytes(32, "big").hex()) is None  # a supply
    assert _stored("0x" + "00" * 12 + "f39fd6e51aad88f6f4ce6ab8827279cfffb92266") is not None
    assert _stored("0x" + "ff" * 32) is None  # packed or hashed, not an address
    assert _stored("0x" + "00" * 32, strict=False) is not None  # a getter's zero owner


def test_docs_print_the_findings_table() -> None:
    from pathlib import Path

    from tokenrisk.findings import findings_markdown

    docs = (Path(__file__).resolve().parents[2] / "docs" / "owner-powers.md").read_text()
    start = docs.index("<!-- findings table")
    table = docs[docs.index("\n", start) + 1 : docs.index("<!-- end of findings table -->")]
    assert table == findings_markdown()


# RUBRIC


def _sim(**changes: Any) -> Any:
    from dataclasses import replace

    from tokenrisk.model import SimulationReport

    base = SimulationReport(
        success=True, buy_ok=True, transfer_ok=True, sell_ok=True, buy_tax=0.0,
        sell_tax=0.0, transfer_tax=0.0, buy_gas=110_000, sell_gas=115_000,
    )  # fmt: skip
    return replace(base, **changes)


def _assess(powers: Any, **sim: Any) -> Any:
    from tokenrisk import risk
    from tokenrisk.model import Analysis, TokenInfo

    token = TokenInfo(BUYER, "T", "T", 18)
    return risk.assess(Analysis(token, None, None, _sim(**sim), owner_powers=powers))


def _powers(*kinds: str, renounced: bool = False) -> Any:
    from tokenrisk.findings import Evidence, OwnerPowers, PowerFinding

    findings = tuple(
        PowerFinding(k, "setFee(uint256)", "0x69fe0e2d", BUYER, ("99",),
                     (Evidence("sell tax %", "3.00", "99.00"),), "sell tax raised")
        for k in kinds
    )  # fmt: skip
    return OwnerPowers(scanned=True, findings=findings, renounced=renounced)


def test_serious_powers_raise_the_risk_with_the_evidence_in_the_text() -> None:
    verdict = _assess(_powers("owner_can_set_sell_tax"))
    assert verdict.risk == "high" and verdict.is_honeypot is False
    (flag,) = verdict.flags
    assert flag.flag == "owner_can_set_sell_tax" and flag.severity == "high"
    assert flag.description == f"setFee(uint256) by {BUYER}: sell tax raised"
    assert verdict.legacy_flags == ("owner_can_set_sell_tax",)  # rubric ids: lower case (WIRE.md)


def test_renounced_with_nothing_left_stays_low() -> None:
    verdict = _assess(_powers("owner_renounced", renounced=True))
    assert verdict.risk == "low"
    assert [f.severity for f in verdict.flags] == ["info"]


def test_one_flag_per_kind_and_no_flags_from_a_failed_scan() -> None:
    from tokenrisk.findings import OwnerPowers

    verdict = _assess(_powers("owner_can_blacklist", "owner_can_blacklist"))
    assert [f.flag for f in verdict.flags] == ["owner_can_blacklist"]
    failed = OwnerPowers(scanned=False, error="the owner-power scan ran out of time")
    assert _assess(failed).flags == ()


def test_a_future_sell_failure_counts_once() -> None:
    both = _assess(_powers("sell_fails_in_future"), delayed_sell_failed=True)
    assert [f.flag for f in both.flags] == ["sell_blocked_later"]
    alone = _assess(_powers("sell_fails_in_future"))
    assert [f.flag for f in alone.flags] == ["sell_fails_in_future"]
    assert alone.risk == "very_high"


# CLI SECTION


def test_cli_section_prints_callers_findings_and_escapes_chain_text() -> None:
    from rich.console import Console

    from tokenrisk.cli.powers_report import owner_powers_section

    body = {
        "ownerPowers": {
            "scanned": True, "renounced": False, "functions": 3, "simulations": 16,
            "bounded": False, "cached": True,
            "callers": [
                {"address": BUYER, "foundBy": ["owner()", "deployer"], "isContract": False}
            ],
            "findings": [{
                "id": "owner_can_set_sell_tax", "severity": "high",
                "title": "Owner can raise the sell tax", "function": "updateFees(uint256,uint256)",
                "selector": "0x6db79437", "caller": BUYER, "args": ["99", "[red]x"],
                "evidence": [{"what": "sell tax %", "before": "3.00", "after": "99.00"}],
                "detail": "sell tax raised", "docs": "docs/owner-powers.md#owner-can-set-sell-tax",
            }],
            "futureSells": [{"after": "30d", "seconds": 2592000, "ok": False, "reason": "[b]K"}],
        }
    }  # fmt: skip
    console = Console(record=True, width=200)
    console.print(owner_powers_section(OwnerPowersInfo.model_validate(body["ownerPowers"])))
    text = console.export_text()
    assert "owner powers" in text and "owner(), deployer; EOA" in text
    assert "sell tax %: 3.00 -> 99.00" in text and "from cache" in text
    assert "[red]x" in text and "sell after 30d: fails ([b]K)" in text


def test_cli_section_names_the_pools_hook_with_the_call() -> None:
    from rich.console import Console

    from tokenrisk.cli.powers_report import owner_powers_section

    hook = "0x93a7C1be63B287351D685Bd87C7b3258c99dc044"
    finding = {
        "id": "owner_can_set_sell_tax",
        "severity": "high",
        "title": "Owner can raise the sell tax",
        "function": "setSellFeeBps(uint256)",
        "selector": "0x0f6c4e1d",
        "caller": BUYER,
        "args": ["10000"],
        "detail": f"through the pool's hook {hook}: sell tax raised",
        "docs": "docs/owner-powers.md#owner-can-set-sell-tax",
        "evidence": [
            {"what": "sell tax %", "before": "0.00", "after": "99.70"},
            {"what": "hook contract called", "before": "-", "after": hook},
        ],
    }
    powers = {
        "scanned": True, "renounced": False, "functions": 1, "simulations": 9, "bounded": False,
        "cached": False, "callers": [], "findings": [finding], "futureSells": [],
    }  # fmt: skip
    console = Console(record=True, width=260)
    console.print(owner_powers_section(OwnerPowersInfo.model_validate(powers)))
    text = " ".join(console.export_text().split())  # a wrapped cell: one line of words
    assert f"setSellFeeBps(uint256)(10000) on the pool's hook {hook} by" in text
    assert "sell tax %: 0.00 -> 99.70" in text and "hook contract called" not in text


def test_cli_section_says_when_the_scan_did_not_run() -> None:
    from rich.console import Console

    from tokenrisk.cli.powers_report import owner_powers_section

    console = Console(record=True, width=120)
    not_run = {"scanned": False, "error": "timeout", "renounced": False, "functions": 0}
    idle = {"simulations": 0, "bounded": False, "cached": False}
    empty = {"callers": [], "findings": [], "futureSells": []}
    powers = OwnerPowersInfo.model_validate({**not_run, **idle, **empty})
    console.print(owner_powers_section(powers))
    assert owner_powers_section(None) is None
    assert console.export_text().count("not scanned: timeout") == 1


# THE SCAN CACHE SHARED BY WORKERS


class Shared:
    """What Redis is to the scan cache: bytes by key (ttl recorded, not enforced)."""

    def __init__(self) -> None:
        self.kept: dict[str, tuple[bytes, float]] = {}

    async def get_bytes(self, key: str) -> bytes | None:
        kept = self.kept.get(key)
        return kept[0] if kept else None

    async def put_bytes(self, key: str, value: bytes, ttl: float) -> None:
        self.kept[key] = (value, ttl)


RICH = OwnerPowers(
    scanned=True,
    owner=BUYER,
    callers=(Caller(BUYER, ("owner()", "slot 5"), False), Caller(PAIR, ("deployer",), True)),
    functions=7,
    simulations=12,
    findings=(
        PowerFinding(
            "sell_tax_raise",
            "setFee(uint256)",
            "0x69fe0e2d",
            BUYER,
            ("99",),
            (Evidence("sell tax", "0%", "99%"),),
            "setFee(99) raised the sell tax to 99%",
        ),
    ),  # fmt: skip
    future=(FutureSell("1h", 3600, True), FutureSell("1d", 86400, False, "reverted")),
    bounded=True,
    notes=("a note",),
)


def test_a_scan_result_survives_its_json() -> None:
    assert powers_from_json(powers_json(RICH)) == RICH
    assert powers_from_json(powers_json(OwnerPowers(scanned=False, error="x"))) == OwnerPowers(
        scanned=False, error="x"
    )
    for damaged in (b"", b"{", b"[]", b'{"scanned": true}', powers_json(RICH)[:-5]):
        assert powers_from_json(damaged) is None


async def test_a_scan_stored_by_one_worker_is_found_by_another() -> None:
    shared = Shared()
    one, other = PowerCache(ttl=60, shared=shared), PowerCache(ttl=60, shared=shared)
    key = (1, "0xcode", None, RICH.callers, PAIR)
    assert await other.lookup(key) is None
    await one.store(key, RICH)
    assert [ttl for _, ttl in shared.kept.values()] == [60]
    found = await other.lookup(key)
    assert found == replace(RICH, cached=True)
    assert other.get(key) == replace(RICH, cached=True)  # kept in its own memory now
    shared.kept.clear()
    assert await other.lookup(key) is not None  # from memory, Redis not asked
    off = PowerCache(ttl=0, shared=shared)  # scans not cached: nothing shared either
    await off.store(key, RICH)
    assert shared.kept == {} and await off.lookup(key) is None


# ARMED TRAPS, HELD POSITIONS, HARM WHEREVER IT LANDS


def test_a_call_that_reopens_an_armed_trap_shows_who_holds_the_switch() -> None:
    armed = story(**{"a.sell": failed("Token is paused"), "b.sell": failed(), "c.buy": failed()})
    assert not comparable(armed)
    assert classify(armed, story()) == []  # bought, then sells fail: maybe a cooldown
    found = classify(armed, story(), armed=True)  # held positions nobody could buy
    assert [e.kind for e in found] == ["owner_can_pause_trading"]
    assert "Token is paused" in found[0].detail and found[0].evidence[0].after == "ok"
    sells_only = story(**{"a.sell": failed(), "b.sell": failed()})
    assert [e.kind for e in classify(sells_only, story(), armed=True)] == ["owner_can_block_sells"]


def test_an_armed_trap_nobody_can_lift_gives_nothing() -> None:
    armed = story(**{"a.sell": failed(), "b.sell": failed()})
    assert classify(armed, story(**{"a.sell": failed(), "b.sell": failed()}), armed=True) == []


def test_lowering_an_armed_tax_is_the_power_to_set_it() -> None:
    found = classify(story(sell_tax=99.0), story(sell_tax=3.0))
    assert [e.kind for e in found] == ["owner_can_set_sell_tax"]
    assert (found[0].evidence[0].before, found[0].evidence[0].after) == ("99.00", "3.00")


def test_held_positions_without_buy_marks_are_comparable() -> None:
    held = story()
    del held.results["a.buy"], held.results["b.buy"]
    assert comparable(held)
    assert classify(held, story()) == []


def test_a_mint_to_the_buyer_is_a_mint_not_a_rebase() -> None:
    trial = story(supply1=ok(10**9 + 10**7), **{"a.held": ok(1_000_000 + 10**7)})
    assert kinds(trial) == ["owner_can_mint"]


def test_a_balance_set_without_supply_is_a_hidden_mint() -> None:
    trial = story(caller0=ok(0), caller1=ok(10**8))
    found = classify(BASE, trial)
    assert [e.kind for e in found] == ["owner_can_mint"]
    assert "hidden mint" in found[0].detail
    assert ("caller balance", "0", str(10**8)) in [
        (e.what, e.before, e.after) for e in found[0].evidence
    ]
    neutral = story(neutral0=ok(0), neutral1=ok(10**8))
    assert kinds(neutral) == ["owner_can_mint"]


def test_tokens_moved_between_watched_balances_are_not_a_mint() -> None:
    claim = story(caller0=ok(0), caller1=ok(10**8), self0=ok(10**8), self1=ok(0))
    assert kinds(claim) == []
    dust = story(neutral0=ok(0), neutral1=ok(99))
    assert kinds(dust) == []


def test_packed_storage_words_offer_address_candidates() -> None:
    from tokenrisk.simulate.owners import packed_addresses

    manager = "00" + "ab" * 19  # an address whose first byte is 0x00
    word = "0x" + "00" * 11 + "01" + manager  # bool flag packed above it
    assert len(word) == 66
    assert "0x" + manager in [a.lower() for a in packed_addresses(word)]
    assert packed_addresses("0x" + (10**27).to_bytes(32, "big").hex()) == []
    assert packed_addresses("0x" + "00" * 32) == []


def test_storage_layout_shows_guarded_writes_only() -> None:
    from tokenrisk.simulate.layout import Slot, guarded_writes, live_guard

    def slot(n: int, kind: str, reads: set[str], writes: set[str], offset: int = 0) -> Slot:
        return Slot("0x" + f"{n:064x}", offset, kind, frozenset(reads), frozenset(writes))

    slots = [
        slot(3, "uint256", {"18160ddd"}, {"aaaaaaaa"}),
        slot(4, "mapping(address => uint256)", {"70a08231", "a9059cbb"}, {"a9059cbb", "bbbbbbbb"}),
        slot(6, "address", {"aaaaaaaa", "bbbbbbbb", "cccccccc"}, set()),
        slot(9, "uint256", {"a9059cbb"}, {"cccccccc", "dddddddd"}),  # dddd: no guard read
    ]
    writes = {w.selector: w for w in guarded_writes(slots, frozenset({"0xa9059cbb"}))}
    assert {s: w.kind for s, w in writes.items()} == {
        "0xbbbbbbbb": "owner_can_move_balances",
        "0xaaaaaaaa": "owner_can_mint",
        "0xcccccccc": "owner_can_change_transfer_rules",
    }
    guard = writes["0xbbbbbbbb"]
    assert live_guard(guard, {(guard.guards[0].slot, 0): None}) is None  # renounced guard
    holder = "0x" + "ab" * 20
    assert live_guard(guard, {(guard.guards[0].slot, 0): holder}) == holder


# CONTROLS, CALLER KINDS, TRIALS BESIDE THE SCREEN


@pytest.mark.parametrize(
    ("kind", "caller", "severity"),
    [
        ("owner_can_blacklist", Caller("0x1", ()), "high"),
        ("owner_can_blacklist", Caller("0x1", (), True, "multisig", 2, 3), "medium"),
        ("owner_can_blacklist", Caller("0x1", (), True, "multisig", 1, 3), "high"),
        ("owner_can_move_balances", Caller("0x1", (), True, "timelock", delay=3_600), "high"),
        ("owner_can_move_balances", Caller("0x1", (), True, "timelock", delay=86_400), "low"),
        ("owner_can_pause_trading", Caller("0x1", (), True, "timelock", delay=172_800), "info"),
        ("owner_can_set_buy_tax", Caller("0x1", (), True, "multisig", 3, 5), "low"),
        ("owner_can_adjust_fees", Caller("0x1", (), True, "multisig", 2, 3), "info"),
    ],
)
def test_controls_lower_a_findings_severity(kind: str, caller: Caller, severity: str) -> None:
    from tokenrisk.findings import controlled

    found, control = controlled(FINDINGS[kind], caller)
    assert found == severity
    assert (control is None) == (severity == FINDINGS[kind].severity)


def test_contract_callers_are_told_apart_by_their_getters() -> None:
    from tokenrisk.simulate.owners import _kind_of

    word = "0x" + "00" * 31
    owners3 = "0x" + f"{32:064x}" + f"{3:064x}" + "00" * 96
    contract = Caller("0x1", ("owner()",), True)
    safe = _kind_of(contract, word + "02", owners3, None, None)
    assert (safe.kind, safe.threshold, safe.signers) == ("multisig", 2, 3)
    lock = _kind_of(contract, None, None, None, "0x" + f"{3600:064x}")
    assert (lock.kind, lock.delay) == ("timelock", 3600)
    assert _kind_of(contract, None, None, None, None).kind == "contract"
    assert _kind_of(contract, word + "05", owners3, None, None).kind == "contract"  # 5 of 3


def test_two_step_pairs_a_harmless_setter_with_a_switch_of_the_same_caller() -> None:
    from tokenrisk.simulate.trials import Function, Trial, backdoors, is_switch, two_steps

    owner, other = "0x" + "0a" * 20, "0x" + "0b" * 20
    stage = Function("0x11111111", ("uint256",), False)
    commit = Function("0x22222222", (), False)
    setters = [Trial(stage, owner, (v,), f"0x11111111{v:064x}") for v in (99, 0, 10_000, 9_900, 25)]
    switches = [Trial(commit, owner, (), "0x22222222"), Trial(commit, other, (), "0x22222222")]
    assert all(is_switch(s) for s in switches) and not is_switch(setters[0])
    pairs = two_steps(setters, switches)
    assert [p.prior.args[0] for p in pairs if p.prior] == [99, 0, 10_000, 9_900]
    assert all(p.caller == owner for p in pairs)
    assert pairs[0].calls == (owner, setters[0].data, "0x22222222")
    assert pairs[0].rendered == ("99",)
    pull = backdoors({"0x23b872dd"}, [owner, other, "0x" + "0c" * 20], TARGETS, 5)
    assert [(t.caller, t.args) for t in pull] == [
        (owner, (BUYER, owner, 5)),
        (other, (BUYER, other, 5)),
    ]


# THE POOL'S V4 HOOK (a power held through the hook the pool calls on every swap)

HOOK = "0x" + "ab" * 18 + "00c4"
OWNER = "0x" + "0a" * 20


def _received(got: int, **changes: CallResult) -> Outcome:
    """A story whose sell was quoted 1,000 base units and paid ``got`` of them."""
    marks = {"a.quote": quote(1_000), "a.base_before": ok(0), "a.base_after": ok(got)}
    return story(**marks, **changes)


def test_on_a_v4_pool_a_sell_paid_short_of_the_curve_is_a_sell_tax() -> None:
    base, trial = _received(1_000), _received(10)
    found = classify(base, trial, v4=True)
    assert [e.kind for e in found] == ["owner_can_set_sell_tax"]
    assert found[0].evidence[0].before == "0.00" and found[0].evidence[0].after == "99.00"
    # elsewhere the token units decide (the quote covers the token's own tax there)
    assert classify(base, trial) == []
    # a token-unit tax the call raised is read first
    assert [e.kind for e in classify(BASE, story(sell_tax=99.0), v4=True)] == [
        "owner_can_set_sell_tax"
    ]
    assert classify(base, _received(995), v4=True) == []  # half a point: noise


def test_a_hook_finding_names_the_hook() -> None:
    setter = Function("0x12345678", ("uint256",), False)
    trial = Trial(setter, OWNER, (9_900,), "0x12345678" + f"{9_900:064x}", target=HOOK)
    effect = Effect("owner_can_set_sell_tax", "sell tax raised from 0.00% to 99.00%", ())
    finding = _finding(trial, effect)
    assert finding.detail.startswith(f"through the pool's hook {HOOK}: ")
    assert finding.evidence[-1].after == HOOK and finding.caller == OWNER
    assert _finding(Trial(setter, OWNER, (1,), "0x"), effect).detail == effect.detail


def test_hook_callers_merge_with_the_tokens() -> None:
    token = (Caller(OWNER, ("owner()",)),)
    same = "0x" + OWNER[2:].upper()
    hook = (Caller(same, ("hook owner()",)), Caller(HOOK, ("hook x",)))
    merged = _merged(token, hook)
    assert [c.found_by for c in merged] == [("owner()", "hook owner()"), ("hook x",)]


def test_two_step_traps_stay_on_one_contract() -> None:
    stage = Function("0x11111111", ("uint256",), False)
    commit = Function("0x22222222", (), False)
    setter = Trial(stage, OWNER, (99,), f"0x11111111{99:064x}")
    on_hook = Trial(commit, OWNER, (), "0x22222222", target=HOOK)
    assert two_steps([setter], [on_hook]) == []
    assert len(two_steps([setter], [Trial(commit, OWNER, (), "0x22222222")])) == 1


def test_only_a_v4_pool_with_a_hook_has_one() -> None:
    def sim(v4: bool, hooks: str | None) -> Any:
        pool = SimpleNamespace(hooks=hooks)
        return SimpleNamespace(route=SimpleNamespace(v4=v4, pool=pool))

    assert hook_of(sim(True, HOOK)) == HOOK
    assert hook_of(sim(True, "0x" + "00" * 20)) is None
    assert hook_of(sim(True, None)) is None
    assert hook_of(sim(False, HOOK)) is None


async def test_the_hooks_functions_are_screened_on_the_hook() -> None:
    from tokenrisk.simulate.trials import ScanBounds, screen

    sent: list[Any] = []

    async def batch(calls: list[Any]) -> list[Any]:
        sent.extend(calls)
        return ["0x" for _ in calls]

    base = SimpleNamespace(base_fee=10**9, tag="0x10")
    token = "0x" + "cd" * 20
    sim: Any = SimpleNamespace(
        base=base, route=SimpleNamespace(token=token), rpc=SimpleNamespace(batch=batch)
    )
    setter = Function("0x12345678", ("uint256",), False)
    trials, _ = await screen(sim, [setter], [OWNER], TARGETS, ScanBounds(max_arg_sets=2), hook=HOOK)
    assert {c[1][0]["to"] for c in sent} == {HOOK} and len(sent) == 2
    assert {t.target for t in trials} == {HOOK}
    await screen(sim, [setter], [OWNER], TARGETS, ScanBounds(max_arg_sets=1))
    assert sent[-1][1][0]["to"] == token  # the token's own functions: called on the token


def test_the_token_and_its_hook_share_one_trial_bound() -> None:
    from tokenrisk.simulate.powers import _within

    f = Function("0x12345678", (), False)
    token = [Trial(f, OWNER, (i,), "0x") for i in range(50)]
    hook = [Trial(f, OWNER, (i,), "0x", target=HOOK) for i in range(70)]
    kept, cut = _within(token, hook[:40], 60)
    assert cut and len(kept) == 60 and sum(t.target == HOOK for t in kept) == 30
    kept, cut = _within(token[:10], hook, 60)  # the hook takes what the token leaves
    assert cut and len(kept) == 60 and sum(t.target == HOOK for t in kept) == 50
    assert _within(token[:10], hook[:5], 60) == ([*token[:10], *hook[:5]], False)


def test_likely_dumps_plan_each_amount_functions_first_and_largest_amount_as_minted() -> None:
    from tokenrisk.simulate.trials import DUMPS_AHEAD, likely_dumps

    owner, other = "0x" + "0a" * 20, "0x" + "0b" * 20
    mint = Function("0x11111111", ("uint256",), False)
    give = Function("0x33333333", ("address", "uint256"), False)
    amounts = [Trial(mint, owner, (v,), f"0x11111111{v:064x}") for v in (99, 0, MAX, 25)]
    others = [Trial(mint, other, (MAX,), "0x"), Trial(give, owner, (owner, 5), "0x")]
    dumps = likely_dumps([*amounts, *others], 10**6)
    # the first caller's first (99) and largest (2^256-1, sold up to 100x the pool's tokens)
    assert [(t.caller, n) for t, n in dumps] == [(owner, 99), (owner, 10**8)]
    assert likely_dumps(amounts, None) == [] and likely_dumps(amounts, 0) == []
    many = [Trial(Function(f"0x{i:08x}", ("uint256",), False), owner, (7,), "0x") for i in range(9)]
    assert len(likely_dumps(many, 1)) == DUMPS_AHEAD


# A PROXY'S IMPLEMENTATION, READ WITH THE FACTS

TOKEN = "0x3333333333333333333333333333333333333333"
IMPL = "0x4444444444444444444444444444444444444444"
IMPL_CODE = "0x6080604052deadbeef"
IMPL_WORD = "0x" + "00" * 12 + IMPL[2:]


def _proxy_node(override: Any) -> FakeNode:
    """A node holding a proxy at TOKEN whose EIP-1967 slot names IMPL; ``override``:
    its answer to the override read (a value, a Fault, or None: it runs the code)."""

    def storage(params: list[Any]) -> str:
        return IMPL_WORD if params[1] == IMPLEMENTATION_SLOT else "0x" + "00" * 32

    def call(params: list[Any]) -> Any:
        if len(params) < 3:
            return "0x" + "00" * 32  # the owner getters: nobody
        assert params[2][TOKEN]["code"] == IMPLEMENTATION_READER
        return IMPL_WORD + IMPL_CODE[2:] if override is None else override

    def code(params: list[Any]) -> str:
        return IMPL_CODE if params[0] == IMPL else "0x6001"

    return FakeNode({"eth_getStorageAt": storage, "eth_call": call, "eth_getCode": code})


@pytest.mark.parametrize(
    ("override", "requests"),
    [
        (None, 1),  # the node ran the reader: the code came with the slot
        ("fault", 2),  # the node refused the override: the code is read after the slot
        ("0x" + "11" * 32 + "6001", 2),  # another word (an ignored override): not used
    ],
)
async def test_a_proxys_implementation_code_comes_with_its_slot(
    override: Any, requests: int
) -> None:
    refused = Fault(-32602, "state overrides not supported")
    node = _proxy_node(refused if override == "fault" else override)
    rpc = node.client()
    facts = await read_facts(rpc, TOKEN, 4, "0x10")
    await rpc.aclose()
    assert (facts.impl, facts.impl_code) == (IMPL, IMPL_CODE)
    assert node.requests == requests


def test_the_implementation_code_is_used_only_behind_the_slots_word() -> None:
    assert implementation_code(IMPL_WORD, IMPL_WORD + "abcd") == "0xabcd"
    assert implementation_code(IMPL_WORD, "0x" + "00" * 32 + "abcd") is None
    assert implementation_code(IMPL_WORD, IMPL_WORD[:40]) is None  # too short
    assert implementation_code(None, IMPL_WORD + "abcd") is None  # no slot word read

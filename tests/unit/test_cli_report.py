"""The CLI report without a node: untrusted text stays literal, units are printed, exit
codes follow the risk band, ``--version`` works and a busy port is one error line."""

from __future__ import annotations

import io
import socket
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tokenrisk.api import wire
from tokenrisk.cli import report
from tokenrisk.cli.main import app

HOSTILE = "[/][bold red]Free[/bold red] [link=http://x]money[/link]"


COUNTED = {"totalHolders": 3, "totalHoldersStatus": "counted"}


def body(risk: str = "low", **extra: Any) -> wire.IsHoneypotResponse:
    """An answer as the API sends it (read back into the typed wire model), with the
    token's own text hostile."""
    base: dict[str, Any] = {
        "token": {
            "name": HOSTILE,
            "symbol": "[/]",
            "decimals": 18,
            "address": "0x" + "ab" * 20,
            **COUNTED,
        },
        "withToken": {
            "name": "Wrapped Ether",
            "symbol": "WETH",
            "decimals": 18,
            "address": "0x" + "cd" * 20,
            **COUNTED,
        },
        "summary": {
            "risk": risk,
            "riskLevel": 1,
            "flags": [
                {
                    "flag": "high_fail_rate",
                    "description": "[critical] text from [red]the token[/red]",
                    "severity": "critical",
                    "severityIndex": 5,
                }
            ],
        },
        "simulationSuccess": True,
        "honeypotResult": {"isHoneypot": False},
        "simulationResult": {
            "buyTax": 3.0,
            "sellTax": 12.5,
            "transferTax": 0.0,
            "buyGas": "111234",
            "sellGas": "118765",
            "maxSell": {"token": 1000.0, "tokenWei": "1", "withToken": 0.5, "withTokenWei": "1"},
        },
        "chain": {"id": "31337", "name": "Devnet", "shortName": "DEV", "currency": "ETH"},
        "journey": [
            {"step": "buy", "outcome": "ok", "tax": 3.0, "gas": "111234"},
            {"step": "transfer", "outcome": "ok", "tax": 0.0},
            {"step": "sell", "outcome": "failed", "reason": "execution reverted: [/] [b]no"},
        ],
    }
    base.update(extra)
    return wire.IsHoneypotResponse.model_validate(base)


def rendered(renderable: Any) -> str:
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_untrusted_text_is_printed_literally() -> None:
    text = rendered(report.honeypot_report(body()))
    assert HOSTILE in text
    assert "[critical] high_fail_rate: [critical] text from [red]the token[/red]" in text
    assert "execution reverted: [/] [b]no" in text


def test_taxes_and_gas_carry_units_and_addresses_are_whole() -> None:
    text = rendered(report.honeypot_report(body()))
    assert "12.50%" in text and "3.00%" in text
    assert "111,234 gas" in text and "118,765 gas" in text
    assert "1,000 [/] (= 0.5 WETH)" in text
    assert "0x" + "ab" * 20 in text


def test_the_compact_table_keeps_full_addresses_and_errors() -> None:
    bad = "0x" + "00" * 20
    table = report.summary_table(
        [("0x" + "ab" * 20, body(), None), (bad, None, "no contract [here]")]
    )
    text = rendered(table)
    assert "0x" + "ab" * 20 in text and bad in text
    assert "no contract [here]" in text
    assert "12.50%" in text


@pytest.mark.parametrize(
    ("risk", "code"),
    [
        ("very_low", 0),
        ("low", 0),
        ("medium", 1),
        ("high", 1),
        ("unknown", 1),
        ("very_high", 2),
        ("honeypot", 2),
    ],
)
def test_exit_code_follows_the_risk_band(risk: str, code: int) -> None:
    assert report.exit_code(body(risk)) == code


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("tokenrisk 0.")


def test_serve_on_a_busy_port_is_one_error_line_and_never_says_listening(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKENRISK_DATA_DIR", str(tmp_path))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--port", str(port)])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "listening" not in result.stderr


def test_a_v4_pools_hook_is_printed_with_its_permissions() -> None:
    hook = "0x93a7C1be63B287351D685Bd87C7b3258c99dc044"
    ref = {
        "name": "Uniswap V4: WETH-V4SLEEP",
        "address": "0x000000000004444c5dc75cB358380D2e3dE08A90",
        "token0": "0x" + "cd" * 20,
        "token1": "0x" + "ab" * 20,
        "type": "UniswapV4",
        "poolId": "0x" + "11" * 32,
        "hooks": hook,
        "hookPermissions": ["afterSwap", "afterSwapReturnsDelta"],
    }
    pair = {"chainId": "31337", "reserves0": "1", "reserves1": "2", "router": "0x" + "ee" * 20}
    text = rendered(report.honeypot_report(body(pair={"pair": ref, **pair})))
    assert "pool: Uniswap V4: WETH-V4SLEEP UniswapV4" in text
    assert f"hook: {hook} (afterSwap, afterSwapReturnsDelta)" in text
    plain = rendered(report.honeypot_report(body(pair={"pair": {**ref, "hooks": None}, **pair})))
    assert "hook:" not in plain

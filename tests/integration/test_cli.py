"""``tokenrisk`` commands end to end on the embedded devnet (each call starts its own).

Exit codes against the devnet's measured ground truth (the manifest's expected risk),
results on stdout only, progress and errors on stderr (also with ``--json``), full
addresses, and ``serve`` saying "listening" only once the port accepts connections.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from tokenrisk.cli import report
from tokenrisk.cli.main import app
from tokenrisk.devnet.instance import RunningDevnet

pytestmark = pytest.mark.integration
BAD = "0x" + "00" * 19 + "01"  # no contract there


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, devnet: RunningDevnet) -> CliRunner:
    monkeypatch.setenv("TOKENRISK_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TOKENRISK_CONFIG", raising=False)
    return CliRunner()


def address(devnet: RunningDevnet, token_id: str) -> str:
    return str(next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)["address"])


def expected_codes(devnet: RunningDevnet, token_id: str) -> set[int]:
    token = next(t for t in devnet.manifest["tokens"] if t["id"] == token_id)
    return {report.risk_exit_code(risk) for risk in token["expected"]["risk"]}


@pytest.mark.parametrize("token_id", ["plain", "high-tax", "sell-whitelist"])
def test_check_exit_code_follows_the_measured_risk(
    cli: CliRunner, devnet: RunningDevnet, token_id: str
) -> None:
    result = cli.invoke(app, ["check", address(devnet, token_id)])
    assert result.exit_code in expected_codes(devnet, token_id)
    assert address(devnet, token_id) in result.stdout
    assert "tokenrisk: simulating buy, transfer and sell" in result.stderr  # progress
    assert "%" in result.stdout and " gas" in result.stdout


def test_flag_severity_in_brackets_is_shown_literally(
    cli: CliRunner, devnet: RunningDevnet
) -> None:
    result = cli.invoke(app, ["check", address(devnet, "sell-whitelist")])
    assert result.exit_code == 2
    assert re.search(r"\[(critical|high)\] \w+: ", result.stdout)


def test_several_addresses_give_a_table_and_the_worst_exit_code(
    cli: CliRunner, devnet: RunningDevnet
) -> None:
    tokens = [address(devnet, "plain"), address(devnet, "sell-whitelist")]
    result = cli.invoke(app, ["check", *tokens])
    assert result.exit_code == 2
    for token in tokens:
        assert token in result.stdout
    assert "HONEYPOT" in result.stdout and "sellable" in result.stdout
    with_error = cli.invoke(app, ["check", *tokens, BAD])
    assert with_error.exit_code == 3
    assert f"error 404 for {BAD}" in with_error.stderr


def test_json_keeps_errors_off_stdout(cli: CliRunner, devnet: RunningDevnet) -> None:
    bad = cli.invoke(app, ["check", "0x12", "--json"])
    assert bad.exit_code == 3
    assert bad.stdout == ""
    assert "error 400 for 0x12: address must be" in bad.stderr
    plain = address(devnet, "plain")
    both = cli.invoke(app, ["check", plain, BAD, "--json"])
    assert both.exit_code == 3
    answers: list[dict[str, Any]] = json.loads(both.stdout)
    assert answers[0]["token"]["address"] == plain
    assert answers[1] == {"code": 404, "error": answers[1]["error"]}
    assert f"error 404 for {BAD}" in both.stderr


def test_other_commands_report_errors_on_stderr_with_exit_3(cli: CliRunner) -> None:
    for command in (["pairs", "0x12"], ["verify", "0x12"], ["holders", BAD, "--chain-id", "1"]):
        result = cli.invoke(app, command)
        assert result.exit_code == 3, command
        assert result.stdout == ""
        assert re.search(r"^error 40[04]: ", result.stderr, re.M), result.stderr


def test_serve_says_listening_once_the_port_is_bound(tmp_path: Path, devnet: RunningDevnet) -> None:
    env = {**os.environ, "TOKENRISK_DATA_DIR": str(tmp_path), "TOKENRISK_LOG_FORMAT": "json"}
    env.pop("TOKENRISK_CONFIG", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "tokenrisk.cli.main", "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        match = re.search(r"listening on (http://127\.0\.0\.1:(\d+))", line)
        assert match, line
        assert int(match[2]) > 0  # the real port, not the requested 0
        health = httpx.get(match[1] + "/health", timeout=120)  # queued until the app is up
        assert health.status_code == 200
        logged = [json.loads(server.stderr.readline()) for _ in range(3)]  # JSON logs
        assert all({"time", "level", "logger", "message"} <= set(entry) for entry in logged)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stderr is not None:
            server.stderr.close()

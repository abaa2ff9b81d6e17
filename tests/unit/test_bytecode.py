"""evmole's storage layout in a worker process (simulate/bytecode.py): the same layouts as
worked out in the service, on the devnet's compiled tokens; a dead or stuck worker
replaced; one computation per code however many checks ask."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tokenrisk.devnet.node import repo_root
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.errors import BytecodeUnanalysable
from tokenrisk.simulate import bytecode
from tokenrisk.simulate.bytecode import Layouts, Worker

TOKENS = ("PlainToken", "HiddenTaxTokenLogic", "ReflectionToken", "PackedManagerToken")


@pytest.fixture(scope="module")
def codes() -> dict[str, str]:
    """Runtime bytecode of a few devnet tokens, compiled like the devnet's contracts."""
    root = repo_root()
    built = load_artifacts(compile_contracts(root, root / "build" / "devnet" / "solc"))
    return {name: built["contracts"][name]["deployedBytecode"] for name in TOKENS}


@pytest.fixture
def layouts() -> Iterator[Layouts]:
    opened = Layouts()
    yield opened
    opened.close()


def _asks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The codes the workers are asked for, in order."""
    asked: list[str] = []
    ask = Worker.ask

    def counted(worker: Worker, code: str) -> bytecode.Layout | str:
        asked.append(code)
        return ask(worker, code)

    monkeypatch.setattr(Worker, "ask", counted)
    return asked


def test_the_worker_gives_the_layout_worked_out_here(
    codes: dict[str, str], layouts: Layouts
) -> None:
    futures = {name: layouts.start(code) for name, code in codes.items()}
    for name, code in codes.items():
        assert futures[name].result(timeout=60) == bytecode.storage(code), name
    assert all(futures[name].result() for name in TOKENS)  # every token has slots


def test_a_killed_worker_is_replaced(codes: dict[str, str], layouts: Layouts) -> None:
    layouts.open()
    assert layouts.start(codes["PlainToken"]).result(timeout=60)
    first = layouts.worker
    assert first is not None
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.wait()
    code = codes["ReflectionToken"]
    assert layouts.start(code).result(timeout=60) == bytecode.storage(code)
    assert layouts.worker is not None and layouts.worker is not first


def test_concurrent_checks_share_one_computation(
    codes: dict[str, str], layouts: Layouts, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _asks(monkeypatch)
    code = codes["PackedManagerToken"]

    async def checks() -> list[bytecode.Layout]:
        return list(await asyncio.gather(*(bytecode.storage_layout(code) for _ in range(4))))

    monkeypatch.setattr(bytecode, "LAYOUTS", layouts)
    found = asyncio.run(checks())
    assert found == [bytecode.storage(code)] * 4
    assert asked == [code]
    assert asyncio.run(checks()) == found and asked == [code]  # remembered


def test_a_cancelled_waiter_leaves_the_layout_to_the_others(
    codes: dict[str, str], layouts: Layouts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bytecode, "LAYOUTS", layouts)
    code = codes["HiddenTaxTokenLogic"]

    async def check() -> bytecode.Layout:
        impatient = asyncio.ensure_future(bytecode.storage_layout(code))
        await asyncio.sleep(0)
        impatient.cancel()
        return await bytecode.storage_layout(code)

    assert asyncio.run(check()) == bytecode.storage(code)


def test_evmole_error_is_raised_as_in_the_service(layouts: Layouts) -> None:
    with pytest.raises(ValueError) as here:
        bytecode.storage("0x6")
    with pytest.raises(ValueError) as there:
        layouts.start("0x6").result(timeout=60)
    assert str(there.value) == str(here.value)


def test_a_code_that_kills_two_workers_is_unanalysable(
    layouts: Layouts, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    asked = _asks(monkeypatch)
    monkeypatch.setattr(bytecode, "WORKER", "import os; os.read(0, 1); os._exit(1)")
    with caplog.at_level(logging.WARNING, logger=bytecode.__name__):
        with pytest.raises(BytecodeUnanalysable):
            layouts.start("0x6000").result(timeout=60)
    assert asked == ["0x6000", "0x6000"]
    assert "no storage layout" in caplog.text


def test_a_stuck_worker_is_stopped_and_not_asked_again(
    layouts: Layouts, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _asks(monkeypatch)
    monkeypatch.setattr(bytecode, "WORKER", "import time; time.sleep(60)")
    monkeypatch.setattr(bytecode, "LIMIT", 0.2)
    layouts.open()
    with pytest.raises(BytecodeUnanalysable):
        layouts.start("0x6000").result(timeout=60)
    assert asked == ["0x6000"] and layouts.worker is None


def test_without_a_worker_the_layout_is_worked_out_here(
    codes: dict[str, str], layouts: Layouts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bytecode.sys, "executable", str(Path("/nonexistent/python")))
    code = codes["PlainToken"]
    assert layouts.start(code).result(timeout=60) == bytecode.storage(code)
    assert layouts.worker is None


def test_an_unanalysable_layout_fails_the_scan_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The owner-power scan says why it has no answer, never answers without the layout."""
    from tokenrisk.simulate import powers

    async def unanalysable(*_: object) -> object:
        raise BytecodeUnanalysable("the contract's storage layout could not be worked out")

    monkeypatch.setattr(powers, "_scan", unanalysable)
    found = asyncio.run(powers.scan(object(), 1, object()))  # type: ignore[arg-type]
    assert not found.scanned
    assert found.error == "the owner-power scan failed (BytecodeUnanalysable)"

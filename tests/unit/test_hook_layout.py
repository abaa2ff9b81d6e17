"""The pool's V4 hook read from its bytecode (simulate/layout.py ``swap_writes``): real
hooks compiled with the devnet's pinned solc-js, no hand-written storage records."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tokenrisk.devnet import solc
from tokenrisk.simulate import bytecode, layout
from tokenrisk.simulate.trials import hook_static_findings

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADER = (
    "// SPDX-License-Identifier: MIT\npragma solidity 0.8.37;\n\n"
    'import {PoolKey, SwapParams} from "./V4Types.sol";\n'
)
KEEPER = "0x" + "5a" * 20
HOOK = "0x" + "44" * 18 + "00c4"

# a keeper kept in storage (no owner getter a trial's caller search reads) sets the share
# of each swap's output the hook keeps; an honest hook's owner may only write a note no
# swap reads; beforeSwap here reads a switch the keeper flips
HOOKS = """
contract KeptFeeHook {
    address private keeper;
    uint256 private sellBps;

    constructor(address keeper_) { keeper = keeper_; }

    function adjust(uint256 bps) external {
        require(msg.sender == keeper, "no");
        sellBps = bps;
    }

    function afterSwap(
        address, PoolKey calldata, SwapParams calldata params, int256 delta, bytes calldata
    ) external view returns (bytes4, int128)
    {
        int128 out = params.zeroForOne ? int128(delta) : int128(delta >> 128);
        return (this.afterSwap.selector, int128(int256(uint256(uint128(out)) * sellBps / 10_000)));
    }
}

contract NotedHook {
    address private keeper;
    uint256 private note;
    uint256 private immutable bps;

    constructor(address keeper_, uint256 bps_) { keeper = keeper_; bps = bps_; }

    function setNote(uint256 value) external {
        require(msg.sender == keeper, "no");
        note = value;
    }

    function afterSwap(
        address, PoolKey calldata, SwapParams calldata params, int256 delta, bytes calldata
    ) external view returns (bytes4, int128)
    {
        int128 out = params.zeroForOne ? int128(delta) : int128(delta >> 128);
        return (this.afterSwap.selector, int128(int256(uint256(uint128(out)) * bps / 10_000)));
    }
}

contract SwitchedHook {
    address private keeper;
    bool private closed;

    constructor(address keeper_) { keeper = keeper_; }

    function close(bool value) external {
        require(msg.sender == keeper, "no");
        closed = value;
    }

    function beforeSwap(address, PoolKey calldata, SwapParams calldata, bytes calldata)
        external view returns (bytes4, int256, uint24)
    {
        require(!closed, "closed");
        return (this.beforeSwap.selector, 0, 0);
    }
}
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each toy hook's runtime bytecode, compiled like the devnet's contracts."""
    repo = tmp_path_factory.mktemp("hooks")
    (repo / "contracts").mkdir()
    (repo / "tools").symlink_to(REPO_ROOT / "tools")
    (repo / "node_modules").symlink_to(REPO_ROOT / "node_modules")
    shutil.copy(REPO_ROOT / "contracts" / "v4" / "V4Types.sol", repo / "contracts")
    (repo / "contracts" / "Hooks.sol").write_text(HEADER + HOOKS, encoding="utf-8")
    artifacts = solc.load_artifacts(solc.compile_contracts(repo, repo / "out"))
    return {name: a["deployedBytecode"] for name, a in artifacts["contracts"].items()}


def test_a_kept_setter_of_what_a_swap_reads_is_found(runtime: dict[str, str]) -> None:
    writes = layout.swap_writes(bytecode.storage(runtime["KeptFeeHook"]))
    assert [(w.selector, w.kind) for w in writes] == [
        ("0xaad87800", "owner_can_change_transfer_rules")  # adjust(uint256)
    ]
    assert writes[0].what == "a value every swap's hook callback reads (slot 1)"
    assert [(g.slot, g.type) for g in writes[0].guards] == [("0x" + "00" * 32, "address")]


def test_a_before_swap_switch_is_found(runtime: dict[str, str]) -> None:
    writes = layout.swap_writes(bytecode.storage(runtime["SwitchedHook"]))
    assert [w.selector for w in writes] == ["0x" + _selector("close(bool)")]


def test_a_guarded_write_no_swap_reads_is_not_a_finding(runtime: dict[str, str]) -> None:
    assert layout.swap_writes(bytecode.storage(runtime["NotedHook"])) == []
    # the token's rules know nothing of a hook's callbacks: they read transfers
    assert layout.guarded_writes(bytecode.storage(runtime["KeptFeeHook"]), frozenset()) == []


class _Rpc:
    """Answers ``eth_getStorageAt`` from one account's storage, records what was read."""

    def __init__(self, storage: dict[str, str]) -> None:
        self.storage = storage
        self.read: list[Any] = []

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        self.read += [params[:2] for _, params in calls]
        return [self.storage.get(params[1], "0x" + "00" * 32) for _, params in calls]


def _sim(rpc: _Rpc) -> Any:
    return SimpleNamespace(rpc=rpc, base=SimpleNamespace(tag="0x10"))


def _selector(signature: str) -> str:
    from eth_utils.crypto import keccak

    return keccak(text=signature)[:4].hex()


def test_the_hooks_finding_names_the_hook_and_its_keeper(runtime: dict[str, str]) -> None:
    rpc = _Rpc({"0x" + "00" * 32: "0x" + "00" * 12 + KEEPER[2:]})
    found = asyncio.run(hook_static_findings(_sim(rpc), HOOK, runtime["KeptFeeHook"], None, set()))
    assert rpc.read == [[HOOK, "0x" + "00" * 32]]  # the guard read in the hook's storage
    assert len(found) == 1
    f = found[0]
    assert (f.kind, f.selector, f.confidence) == (
        "owner_can_change_transfer_rules",
        "0xaad87800",
        "static",
    )
    assert f.caller is not None and f.caller.lower() == KEEPER
    assert f.detail.startswith(f"through the pool's hook {HOOK}: ")
    assert ("hook contract", "-", HOOK) in [(e.what, e.before, e.after) for e in f.evidence]


def test_a_tried_or_unguarded_hook_setter_gives_nothing(runtime: dict[str, str]) -> None:
    code = runtime["KeptFeeHook"]
    tried = asyncio.run(hook_static_findings(_sim(_Rpc({})), HOOK, code, None, {"0xaad87800"}))
    zero = asyncio.run(hook_static_findings(_sim(_Rpc({})), HOOK, code, None, set()))
    assert tried == [] and zero == []  # a trial covered it; a zero keeper: nobody can pass

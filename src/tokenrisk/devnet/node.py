"""Run a local anvil on a free loopback port, and make sure it dies with us.

The child gets ``PR_SET_PDEATHSIG`` (Linux), so even a crashed or SIGKILLed parent does
not leave an orphan node behind; a normal exit, Ctrl-C and ``stop()`` terminate it
explicitly.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tokenrisk.devnet import layout
from tokenrisk.errors import ChainMismatch, NodeUnavailable

ANVIL_RELATIVE = Path("@foundry-rs/anvil-linux-amd64/bin/anvil")
"""The pinned anvil binary, relative to the npm tools (:func:`layout.node_modules`)."""
_PR_SET_PDEATHSIG = 1


def repo_root() -> Path:
    """The checkout this package runs from (src layout: src/tokenrisk/devnet/node.py)."""
    return Path(__file__).resolve().parents[3]


def anvil_binary(root: Path | None = None) -> Path:
    """Path of the pinned anvil binary installed by ``npm ci``."""
    override = os.environ.get("TOKENRISK_ANVIL")
    path = Path(override) if override else layout.node_modules(root) / ANVIL_RELATIVE
    if not path.exists():
        raise FileNotFoundError(f"anvil not found at {path}; run `npm ci` in the repository")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


@dataclass
class ForkState:
    """Where a fork node forks from and when it last did.

    ``pinned``: the operator's fork block (such a fork never moves); else the fork
    follows the chain: once ``max_age`` seconds old it forks again at the upstream head
    (:func:`refork`; 0 = never).  ``block`` is the upstream block of the current fork.
    ``chain_id``: what the upstream must serve (checked at every fork).
    """

    url: str = field(repr=False)
    pinned: int | None = None
    max_age: float = 36.0
    chain_id: int | None = None
    block: int | None = None
    made_at: float = 0.0
    next_try: float = 0.0

    def age(self) -> float:
        """Seconds since the current fork was made."""
        return time.monotonic() - self.made_at

    def due(self) -> bool:
        """The fork follows the chain and is older than ``max_age`` (and no failed
        attempt asks to wait)."""
        if self.pinned is not None or self.max_age <= 0 or self.block is None:
            return False
        now = time.monotonic()
        return now - self.made_at >= self.max_age and now >= self.next_try


@dataclass
class AnvilNode:
    """A running anvil child process.  Use as a context manager or call ``stop()``."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path | None = None
    args: list[str] = field(default_factory=list)
    chain_id: int | None = None
    after_start: Callable[[AnvilNode], None] | None = field(default=None, repr=False)
    """Run after every (re)start, e.g. :func:`fork_from` for a fork node."""
    fork: ForkState | None = None
    """A fork node's upstream and current fork (None: not a fork)."""
    cache: Path | None = None
    """This node's own directory for the states anvil persists to disk (``--cache-path``),
    removed when it stops: anvil otherwise writes every state past its in-memory window
    under ``~/.foundry/anvil/tmp`` (a full state a block: gigabytes for a node whose head
    moves) and a stopped node leaves it behind."""
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.cache is not None:
            shutil.rmtree(self.cache, ignore_errors=True)

    @property
    def stopped(self) -> bool:
        """``stop()`` was called: the node is meant to be down."""
        return self._stopped

    @property
    def alive(self) -> bool:
        """Whether the process runs; ``poll`` also reaps a dead child (no zombie)."""
        return self.process.poll() is None

    def restart(self, startup_timeout: float = 15.0) -> None:
        """Start the same command on the same port again, after the process died.

        The command loads the same state file (a devnet) or forks again
        (``after_start``), so the node comes back with the state it was started with.
        Raises NodeUnavailable when it does not come up.
        """
        if self._stopped or self.alive:
            return
        self.process = _spawn(self.args, self.log_path)
        _wait_ready(self, startup_timeout, stop_on_failure=False)
        if self.after_start is not None:
            self.after_start(self)

    def __enter__(self) -> AnvilNode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_anvil(
    extra_args: list[str] | None = None,
    *,
    port: int | None = None,
    load_state: Path | None = None,
    log_path: Path | None = None,
    startup_timeout: float = 15.0,
) -> AnvilNode:
    """Start anvil on 127.0.0.1 and wait until it answers JSON-RPC.

    ``extra_args`` go to anvil unchanged (e.g. ``["--fork-url", url]``).  Raises
    NodeUnavailable if it does not answer within ``startup_timeout`` seconds.
    """
    port = port or free_port()
    cache = Path(tempfile.mkdtemp(prefix="tokenrisk-anvil-"))
    args = [str(anvil_binary()), "--host", "127.0.0.1", "--port", str(port), "--silent"]
    args += ["--cache-path", str(cache)]
    if load_state is not None:
        args += ["--load-state", str(load_state)]
    args += extra_args or []
    node = AnvilNode(
        process=_spawn(args, log_path), port=port, log_path=log_path, args=args, cache=cache
    )
    atexit.register(node.stop)
    _wait_ready(node, startup_timeout)
    return node


def _spawn(args: list[str], log_path: Path | None) -> subprocess.Popen[bytes]:
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115
    try:
        out = log if log is not None else subprocess.DEVNULL
        return subprocess.Popen(
            args, stdout=out, stderr=out, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
        )
    finally:
        if log is not None:
            log.close()  # the child keeps its own descriptor of the log file


def fork_from(
    node: AnvilNode,
    fork_url: str,
    block: int | None,
    timeout: float = 60.0,
    *,
    stop_on_failure: bool = True,
) -> None:
    """Turn a running anvil into a fork of ``fork_url`` through ``anvil_reset``.

    Passing ``--fork-url`` would put the provider URL, and the key in it, on anvil's
    command line, where every local user can read it (``ps``, /proc/PID/cmdline), and
    anvil reads the fork URL from no environment variable or file.  The reset call
    goes over loopback HTTP and keeps the URL inside the two processes.  Before it, the
    upstream's ``eth_chainId`` is checked against ``node.fork.chain_id`` (anvil itself
    reports the configured id, whatever it forks).  Raises NodeUnavailable or
    ChainMismatch (with a message that never quotes the URL or anvil's answer);
    ``stop_on_failure`` then stops the node (at start: it is of no use).  Records the
    fork's block and time in ``node.fork``.
    """
    try:
        _check_upstream_chain(node, fork_url, timeout)
        forking: dict[str, Any] = {"jsonRpcUrl": fork_url}
        if block is not None:
            forking["blockNumber"] = block
        _local_call(node, "anvil_reset", [{"forking": forking}], timeout)
        number = _local_call(node, "eth_blockNumber", [], timeout)
    except NodeUnavailable:
        if stop_on_failure:
            node.stop()
        raise
    if node.fork is not None:
        node.fork.block = int(str(number), 16)
        node.fork.made_at = time.monotonic()


def refork(node: AnvilNode) -> None:
    """Fork again at the upstream's head (a fork that follows the chain, see
    :class:`ForkState`).  The node keeps serving its current fork when this fails
    (NodeUnavailable/ChainMismatch raised); the next attempt waits ``max_age``.

    Cost: anvil drops its cached upstream state, so the next checks fetch the
    accounts and slots they read from the upstream again (docs/operations.md)."""
    fork = node.fork
    if fork is None:
        return
    try:
        fork_from(node, fork.url, fork.pinned, stop_on_failure=False)
    except NodeUnavailable:
        fork.next_try = time.monotonic() + max(fork.max_age, 1.0)
        raise


def _check_upstream_chain(node: AnvilNode, url: str, timeout: float) -> None:
    expected = node.fork.chain_id if node.fork is not None else None
    if expected is None:
        return
    payload = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
    try:
        served = int(str(httpx.post(url, json=payload, timeout=timeout).json()["result"]), 16)
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        raise NodeUnavailable("the upstream node to fork did not report its chain id") from exc
    if served != expected:
        raise ChainMismatch(expected, served)


def _local_call(node: AnvilNode, method: str, params: list[Any], timeout: float) -> Any:
    """One request to the local anvil; NodeUnavailable for any failure (its text is
    never quoted: for anvil_reset it may contain the upstream URL)."""
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    try:
        reply = httpx.post(node.url, json=payload, timeout=timeout).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise NodeUnavailable(f"the local fork node did not answer {method}") from exc
    if not isinstance(reply, dict) or reply.get("error") is not None or "result" not in reply:
        raise NodeUnavailable("the local fork node could not fork the upstream node")
    return reply["result"]


def _wait_ready(node: AnvilNode, timeout: float, stop_on_failure: bool = True) -> None:
    deadline = time.monotonic() + timeout
    payload = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
    # one client for every poll: each httpx.post builds a client and its TLS context
    # (~15 ms of CPU), and a node loading a state dump is polled dozens of times
    with httpx.Client(timeout=1.0) as client:
        while time.monotonic() < deadline:
            if node.process.poll() is not None:
                raise NodeUnavailable(f"anvil exited early with code {node.process.returncode}")
            try:
                if client.post(node.url, json=payload).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    if stop_on_failure:
        node.stop()
    else:
        node.process.kill()
        node.process.wait(timeout=5)
    raise NodeUnavailable(f"anvil did not answer within {timeout:.0f}s")

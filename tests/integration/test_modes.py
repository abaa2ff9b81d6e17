"""Node modes against real anvils: fork mode gives the verdicts of direct mode, and a
node without eth_simulateV1 / debug_traceCall degrades explicitly.

- Fork mode: a second devnet anvil on its own loopback port is the upstream; the
  service starts its own anvil fork of it (``[[nodes]] fork_url``) and must reach the
  same verdicts as direct mode on the session devnet.  The devnet's registry entry is
  supplied the way an operator would, as a ``[[chains]]`` table.
- Degradation: a loopback JSON-RPC proxy in front of the session devnet answers
  ``eth_simulateV1`` and ``debug_traceCall`` with -32601 "Method not found" (in single
  requests and in batches).  The service probes that once, simulates through
  ``eth_call`` and the runner contract instead (anvil honours ``eth_call``'s block
  overrides, so time bombs are still reached), and leaves ``contractCode`` out rather
  than guessing it.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tokenrisk.api import wire
from tokenrisk.chain.capabilities import probe_capabilities
from tokenrisk.chain.rpc import RpcClient
from tokenrisk.checks.honeypot import is_honeypot
from tokenrisk.checks.verification import contract_verification
from tokenrisk.config import ChainNode, Settings
from tokenrisk.devnet.instance import RunningDevnet, start_devnet
from tokenrisk.errors import MethodUnsupported
from tokenrisk.service import DEVNET_ID, Service, connect_devnet, open_service

pytestmark = pytest.mark.integration

COMPARED = ("plain", "fot-3", "sell-whitelist", "max-tx", "proxy-unverified")
REFUSED = frozenset({"eth_simulateV1", "debug_traceCall"})
TAX_FIELDS = ("buyTax", "sellTax", "transferTax")


def _address(devnet: RunningDevnet, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


def _expected(devnet: RunningDevnet, entry_id: str) -> dict[str, Any]:
    entry = next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)
    return dict(entry["expected"])


def devnet_entry(manifest: dict[str, Any]) -> dict[str, Any]:
    """The devnet's registry entry as an operator's ``[[chains]]`` table."""
    a = manifest["addresses"]
    coin = {"USDC": 6, "USDT": 6, "DAI": 18}
    return {
        "id": DEVNET_ID,
        "name": "Devnet",
        "short_name": "DEV",
        "currency": "ETH",
        "wrapped_native": {"address": a["WETH"], "symbol": "WETH", "decimals": 18},
        "stablecoins": [{"address": a[s], "symbol": s, "decimals": d} for s, d in coin.items()],
        "dexes": [
            {
                "name": "Uniswap",
                "version": "V2",
                "factory": a["V2_FACTORY"],
                "router": a["V2_ROUTER"],
            },
            {
                "name": "Uniswap",
                "version": "V3",
                "factory": a["V3_FACTORY"],
                "router": a["SWAP_ROUTER"],
                "quoter": a["QUOTER_V2"],
            },
        ],
    }


# FORK MODE


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDevnet]:
    """A second devnet anvil, on its own port, standing in for a remote RPC endpoint."""
    log = tmp_path_factory.mktemp("upstream") / "anvil.log"
    running = start_devnet(log_path=log)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
async def fork_service(
    upstream: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Service]:
    settings = Settings(
        devnet=False,
        data_dir=tmp_path_factory.mktemp("fork"),
        deadline=120.0,
        nodes=(ChainNode(id=DEVNET_ID, fork_url=upstream.url),),
        chains=(devnet_entry(upstream.manifest),),
        verification={"local_paths": {str(DEVNET_ID): [str(upstream.sources_path)]}},
    )
    svc = open_service(settings)
    yield svc
    await svc.close()


@pytest.fixture(scope="module")
async def direct_service(
    devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("direct"), deadline=120.0)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    yield svc
    await svc.close()


def _verdict(body: dict[str, Any]) -> dict[str, Any]:
    sim = body.get("simulationResult", {})
    return {
        "simulationSuccess": body["simulationSuccess"],
        "honeypotResult": body.get("honeypotResult"),
        "risk": body["summary"]["risk"],
        "flags": sorted(f["flag"] for f in body["summary"].get("flags", [])),
        "taxes": {name: sim.get(name) for name in TAX_FIELDS},
        "pairAddress": body.get("pairAddress"),
    }


async def test_fork_mode_runs_its_own_node(fork_service: Service, upstream: RunningDevnet) -> None:
    (fork,) = fork_service.processes
    assert fork.url != upstream.url
    chain_id = await fork_service.nodes[DEVNET_ID].rpc.call("eth_chainId")
    assert int(chain_id, 16) == DEVNET_ID
    caps = await fork_service.nodes[DEVNET_ID].capabilities()
    assert caps.missing() == ()


def test_fork_url_is_not_on_the_fork_node_command_line(
    fork_service: Service, upstream: RunningDevnet
) -> None:
    """Provider URLs carry keys; a command line is readable by every local user."""
    (fork,) = fork_service.processes
    cmdline = Path(f"/proc/{fork.process.pid}/cmdline").read_bytes().replace(b"\0", b" ")
    assert b"--port" in cmdline  # it is the anvil we think it is
    assert upstream.url.encode() not in cmdline and b"fork-url" not in cmdline


@pytest.mark.parametrize("entry_id", COMPARED)
async def test_fork_mode_matches_direct_mode(
    fork_service: Service, direct_service: Service, devnet: RunningDevnet, entry_id: str
) -> None:
    address = _address(devnet, entry_id)
    direct = await _body(direct_service, address)
    forked = await _body(fork_service, address)
    assert forked["simulationSuccess"] is True, forked.get("simulationError")
    assert _verdict(forked) == _verdict(direct)
    assert forked["honeypotResult"]["isHoneypot"] is _expected(devnet, entry_id)["isHoneypot"]
    assert ("contractCode" in forked) is ("contractCode" in direct)


# DEGRADATION


@dataclass
class RefusingProxy:
    """A loopback JSON-RPC proxy that refuses some methods like a node without them."""

    upstream: str
    refuse: frozenset[str]
    refused: Counter[str] = field(default_factory=Counter)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def handle(self, payload: Any) -> Any:
        items = payload if isinstance(payload, list) else [payload]
        passed = [item for item in items if item.get("method") not in self.refuse]
        answers = {id(item): self._refusal(item) for item in items if item not in passed}
        if passed:
            replies = self._forward(passed if isinstance(payload, list) else passed[0])
            replies = replies if isinstance(replies, list) else [replies]
            by_id = {reply.get("id"): reply for reply in replies}
            answers.update({id(item): by_id[item.get("id")] for item in passed})
        out = [answers[id(item)] for item in items]
        return out if isinstance(payload, list) else out[0]

    def _refusal(self, item: dict[str, Any]) -> dict[str, Any]:
        self.refused[item["method"]] += 1
        error = {"code": -32601, "message": "Method not found"}
        return {"jsonrpc": "2.0", "id": item.get("id"), "error": error}

    def _forward(self, payload: Any) -> Any:
        request = urllib.request.Request(
            self.upstream,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())


def _handler(proxy: RefusingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            reply = json.dumps(proxy.handle(json.loads(body))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture(scope="module")
def proxy(devnet: RunningDevnet) -> Iterator[RefusingProxy]:
    refusing = RefusingProxy(devnet.url, REFUSED)
    refusing.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(refusing))
    refusing.server.daemon_threads = True
    thread = threading.Thread(target=refusing.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield refusing
    finally:
        refusing.server.shutdown()
        refusing.server.server_close()


@pytest.fixture(scope="module")
async def degraded_service(
    proxy: RefusingProxy, devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Service]:
    settings = Settings(devnet=False, data_dir=tmp_path_factory.mktemp("degraded"), deadline=120.0)
    svc = connect_devnet(settings, proxy.url, devnet.manifest, devnet.build_dir)
    yield svc
    await svc.close()


async def test_proxy_refuses_in_batches_too(proxy: RefusingProxy) -> None:
    rpc = RpcClient(proxy.url)
    try:
        calls = [("eth_chainId", []), ("eth_simulateV1", [{}])]
        chain_id, simulated = await rpc.batch(calls, tolerate=MethodUnsupported)
    finally:
        await rpc.aclose()
    assert int(chain_id, 16) == DEVNET_ID
    assert isinstance(simulated, MethodUnsupported)


async def test_probe_sees_what_the_proxy_refuses(proxy: RefusingProxy) -> None:
    rpc = RpcClient(proxy.url)
    try:
        caps = await probe_capabilities(rpc)
    finally:
        await rpc.aclose()
    assert (caps.simulate_v1, caps.trace_call, caps.state_override) == (False, False, True)
    assert caps.get_logs_max_range is None


async def test_probe_sees_a_full_node(devnet: RunningDevnet) -> None:
    rpc = RpcClient(devnet.url)
    try:
        caps = await probe_capabilities(rpc)
    finally:
        await rpc.aclose()
    assert caps.missing() == ()
    assert caps.get_logs_max_range is None


@pytest.mark.parametrize("entry_id", ["plain", "sell-whitelist"])
async def test_degraded_node_still_answers(
    degraded_service: Service, proxy: RefusingProxy, devnet: RunningDevnet, entry_id: str
) -> None:
    first_use = not degraded_service.nodes[DEVNET_ID].probed
    before = Counter(proxy.refused)
    body = await _body(degraded_service, _address(devnet, entry_id))
    expected = _expected(devnet, entry_id)
    assert body["simulationSuccess"] is True, body.get("simulationError")
    assert body["honeypotResult"]["isHoneypot"] is expected["isHoneypot"]
    assert "contractCode" not in body  # no trace: stated by absence, never guessed
    # ... and said: an informational flag and a note, so the user knows the check was partial
    flags = {f["flag"]: f for f in body["summary"]["flags"]}
    assert flags["call_trace_unavailable"]["severity"] == "info"
    assert "debug_traceCall" in flags["call_trace_unavailable"]["description"]
    assert "call_trace_unavailable" not in body["flags"]  # informational: no legacy string
    assert any("debug_traceCall" in note for note in body["taxDetails"]["explanation"])
    if not expected["isHoneypot"]:
        assert body["simulationResult"]["buyTax"] <= expected["buyTax"][1] + 0.5
    # only the first check probes; no check sends the refused methods itself
    probe_once = Counter({"eth_simulateV1": 1, "debug_traceCall": 1})
    assert proxy.refused - before == (probe_once if first_use else Counter())
    caps = await degraded_service.nodes[DEVNET_ID].capabilities()
    assert caps.missing() == ("eth_simulateV1", "debug_traceCall")


@pytest.mark.parametrize(
    "entry_id", ["time-bomb", "latent-slow-fuse", "sell-cooldown", "one-sell-per-block"]
)
async def test_without_simulate_the_runner_keeps_the_verdict(
    degraded_service: Service, devnet: RunningDevnet, entry_id: str
) -> None:
    """Through eth_call with block overrides (the runner contract), the delayed and
    future sells reach the time bombs, and one-block rules are told apart; the answer
    says it was emulated."""
    body = await _body(degraded_service, _address(devnet, entry_id))
    expected = _expected(devnet, entry_id)
    assert body["honeypotResult"]["isHoneypot"] is expected["isHoneypot"], body
    assert body["summary"]["risk"] in expected["risk"], body["summary"]
    flags = {f["flag"] for f in body["summary"]["flags"]}
    assert set(expected["flags"]) <= flags, (flags, body.get("taxDetails"))
    explanation = body["taxDetails"]["explanation"]
    assert any("runner contract" in note for note in explanation), explanation
    assert not any("time bombs" in note for note in explanation), explanation  # reached


async def test_a_full_node_raises_no_trace_flag(
    direct_service: Service, devnet: RunningDevnet
) -> None:
    """The flag follows the node, not the token: the same token on a tracing node has a
    call tree and no ``call_trace_unavailable``."""
    body = await _body(direct_service, _address(devnet, "plain"))
    assert "contractCode" in body
    assert "call_trace_unavailable" not in {f["flag"] for f in body["summary"]["flags"]}
    explanation = body.get("taxDetails", {}).get("explanation", [])
    assert not any("debug_traceCall" in note for note in explanation)


async def test_verification_on_an_untraceable_node_says_why(
    degraded_service: Service, devnet: RunningDevnet
) -> None:
    result = await contract_verification(
        degraded_service.verification, _address(devnet, "plain"), DEVNET_ID
    )
    assert result.code is None
    assert result.reason == "the node cannot trace calls (no debug_traceCall)"


async def _body(service: Service, address: str) -> dict[str, Any]:
    """The IsHoneypot JSON of ``address`` on the devnet, as the API renders it."""
    result = await is_honeypot(service.honeypot, address, DEVNET_ID, None)
    return wire.dump(wire.honeypot_body(result))

"""Source verification providers and the verifier, against recorded responses.

Remote answers are JSON fixtures under ``fixtures/verification`` (shapes from the
Sourcify APIv2 / legacy and Etherscan ``getsourcecode`` documentation), served through
``httpx.MockTransport``; the local registry reads files written to ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.caching import MemoryCache
from tokenrisk.chain.abi import checksum
from tokenrisk.errors import (
    DeadlineExceeded,
    InvalidAddress,
    MalformedResponse,
    NodeUnavailable,
    TokenRiskError,
    UpstreamError,
)
from tokenrisk.verification import (
    EtherscanProvider,
    LocalRegistry,
    ProviderKeyRejected,
    ProviderRateLimited,
    SourceInfo,
    SourcifyProvider,
    VerificationSettings,
    Verifier,
    build_verifier,
    devnet_settings,
)
from tokenrisk.verification.sourcify import V2_FIELDS
from tokenrisk.verification.verifier import UNKNOWN_TTL

FIXTURES = Path(__file__).parent / "fixtures" / "verification"
KEY = "Q7ZK3M9XW2RTYB4HNC8VDP1FJ6LGSE5UA0"
SOURCIFY = "https://sourcify.example/server"
ETHERSCAN = "https://api.etherscan.example/v2/api"

ROUTER = "0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"
WETH_BASE = "0x4200000000000000000000000000000000000006"
PROXY = "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419"
USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
DEAD = "0x000000000000000000000000000000000000dEaD"

Handler = Callable[[httpx.Request], httpx.Response]


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def answer(name: str, status: int = 200, headers: dict[str, str] | None = None) -> Handler:
    """A handler that serves one fixture file for every request."""
    kind = "text/html" if name.endswith(".html") else "application/json"
    content = fixture(name)
    all_headers = {"content-type": kind, **(headers or {})}
    return lambda request: httpx.Response(status, content=content, headers=all_headers)


def raising(error: type[httpx.TransportError], text: str = "boom") -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error(text, request=request)

    return handler


@dataclass
class Recorder:
    """Wraps a handler; keeps every request it saw."""

    handler: Handler
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))

    @property
    def params(self) -> dict[str, str]:
        return dict(self.requests[-1].url.params)


def sourcify(handler: Handler, **options: Any) -> tuple[SourcifyProvider, Recorder]:
    recorder = Recorder(handler)
    return SourcifyProvider(SOURCIFY, recorder.client(), 2.0, **options), recorder


def etherscan(
    handler: Handler, key: str | None = KEY, **options: Any
) -> tuple[EtherscanProvider, Recorder]:
    recorder = Recorder(handler)
    provider = EtherscanProvider(ETHERSCAN, key, 2.0, client=recorder.client(), **options)
    return provider, recorder


# ---------------------------------------------------------------------------
# Sourcify APIv2
# ---------------------------------------------------------------------------


async def test_sourcify_exact_match_is_full_and_asks_only_needed_fields() -> None:
    provider, recorder = sourcify(answer("sourcify_v2_exact_match.json"))
    info = await provider.lookup(1, ROUTER)
    assert info == SourceInfo(
        verified=True,
        contract_name="UniswapV2Router02",
        compiler="0.6.6+commit.6c089d02",
        source="sourcify",
        match="full",
    )
    (request,) = recorder.requests
    assert request.method == "GET"
    assert request.url.path == f"/server/v2/contract/1/{ROUTER}"
    assert recorder.params == {"fields": V2_FIELDS}


async def test_sourcify_match_is_partial() -> None:
    provider, _ = sourcify(answer("sourcify_v2_match.json"))
    info = await provider.lookup(8453, WETH_BASE)
    assert info is not None
    assert (info.verified, info.match, info.contract_name) == (True, "partial", "WETH9")


async def test_sourcify_proxy_reports_checksummed_implementation() -> None:
    provider, _ = sourcify(answer("sourcify_v2_proxy.json"))
    info = await provider.lookup(1, PROXY)
    assert info is not None
    assert info.is_proxy is True
    assert info.implementation == "0x2f3A40A3db8a7e3D09B0adfEfbCe4f6F81927557"


async def test_sourcify_not_found_is_no_answer() -> None:
    provider, _ = sourcify(answer("sourcify_v2_not_found.json", 404))
    assert await provider.lookup(1, DEAD) is None


async def test_sourcify_null_match_is_no_answer() -> None:
    body = {"match": None, "chainId": "1", "address": DEAD}
    provider, _ = sourcify(lambda request: httpx.Response(200, json=body))
    assert await provider.lookup(1, DEAD) is None


async def test_sourcify_unsupported_chain_is_no_answer() -> None:
    provider, _ = sourcify(answer("sourcify_v2_unsupported_chain.json", 400))
    assert await provider.lookup(31337, DEAD) is None


async def test_sourcify_other_bad_request_is_an_error_naming_the_code() -> None:
    body = {"customCode": "invalid_parameter", "message": "bad address", "errorId": "x"}
    provider, _ = sourcify(lambda request: httpx.Response(400, json=body))
    with pytest.raises(UpstreamError, match=r"HTTP 400 \(invalid_parameter\)"):
        await provider.lookup(1, DEAD)


async def test_sourcify_html_404_means_wrong_base_url_not_unverified() -> None:
    provider, _ = sourcify(lambda request: httpx.Response(404, text="Cannot GET /v2/contract"))
    with pytest.raises(UpstreamError, match="HTTP 404"):
        await provider.lookup(1, DEAD)


async def test_sourcify_rate_limit_carries_retry_after() -> None:
    provider, recorder = sourcify(answer("sourcify_v2_not_found.json", 429, {"Retry-After": "30"}))
    with pytest.raises(ProviderRateLimited) as caught:
        await provider.lookup(1, ROUTER)
    assert caught.value.retry_after == 30.0
    assert caught.value.status == 503
    assert len(recorder.requests) == 1


async def test_sourcify_server_error_is_unavailable_and_not_retried() -> None:
    provider, recorder = sourcify(answer("bad_gateway.html", 500))
    with pytest.raises(NodeUnavailable, match="sourcify answered HTTP 500"):
        await provider.lookup(1, ROUTER)
    assert len(recorder.requests) == 1


async def test_sourcify_timeout_is_deadline_exceeded_and_not_retried() -> None:
    provider, recorder = sourcify(raising(httpx.ReadTimeout))
    with pytest.raises(DeadlineExceeded, match="sourcify did not answer in time"):
        await provider.lookup(1, ROUTER)
    assert len(recorder.requests) == 1


async def test_sourcify_connection_failure_is_retried_once() -> None:
    provider, recorder = sourcify(raising(httpx.ConnectError))
    with pytest.raises(NodeUnavailable, match="sourcify is unreachable"):
        await provider.lookup(1, ROUTER)
    assert len(recorder.requests) == 2


async def test_sourcify_malformed_json_is_malformed_response() -> None:
    provider, _ = sourcify(answer("malformed_truncated.txt"))
    with pytest.raises(MalformedResponse):
        await provider.lookup(1, ROUTER)


async def test_sourcify_error_messages_hold_no_url() -> None:
    provider, _ = sourcify(raising(httpx.ConnectError))
    with pytest.raises(NodeUnavailable) as caught:
        await provider.lookup(1, ROUTER)
    assert "sourcify.example" not in caught.value.message


async def test_sourcify_skips_chains_it_is_not_configured_for() -> None:
    provider, recorder = sourcify(answer("sourcify_v2_exact_match.json"), chains=[1])
    assert await provider.lookup(56, ROUTER) is None
    assert recorder.requests == []


# ---------------------------------------------------------------------------
# Sourcify legacy API
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "chain", "address", "match"),
    [
        ("sourcify_legacy_perfect.json", 1, ROUTER, "full"),
        ("sourcify_legacy_partial.json", 8453, WETH_BASE, "partial"),
        ("sourcify_legacy_false.json", 1, DEAD, None),
    ],
)
async def test_sourcify_legacy_check(name: str, chain: int, address: str, match: str) -> None:
    provider, recorder = sourcify(answer(name), api="legacy")
    info = await provider.lookup(chain, address)
    assert (info.match if info else None) == match
    assert recorder.requests[0].url.path == "/server/check-all-by-addresses"
    assert recorder.params == {"addresses": address, "chainIds": str(chain)}


async def test_sourcify_legacy_other_chain_is_no_answer() -> None:
    provider, _ = sourcify(answer("sourcify_legacy_perfect.json"), api="legacy")
    assert await provider.lookup(10, ROUTER) is None


# ---------------------------------------------------------------------------
# Etherscan-compatible explorers
# ---------------------------------------------------------------------------


async def test_etherscan_verified_sends_the_v2_multichain_query() -> None:
    provider, recorder = etherscan(answer("etherscan_verified.json"))
    info = await provider.lookup(1, USDT)
    assert info == SourceInfo(
        verified=True,
        contract_name="TetherToken",
        compiler="v0.4.18+commit.9cf6e910",
        source="etherscan",
    )
    assert str(recorder.requests[0].url).startswith(ETHERSCAN + "?")
    assert recorder.params == {
        "chainid": "1",
        "module": "contract",
        "action": "getsourcecode",
        "address": USDT,
        "apikey": KEY,
    }


async def test_etherscan_unverified_is_a_definite_not_verified_answer() -> None:
    provider, _ = etherscan(answer("etherscan_unverified.json"))
    info = await provider.lookup(1, DEAD)
    assert info is not None and info.verified is False and info.source == "etherscan"


async def test_etherscan_proxy_reports_checksummed_implementation() -> None:
    provider, _ = etherscan(answer("etherscan_proxy.json"))
    info = await provider.lookup(1, USDC)
    assert info is not None
    assert (info.contract_name, info.is_proxy) == ("FiatTokenProxy", True)
    assert info.implementation == "0x43506849D7C04F9138D1A2050bbF3A0c054402dd"


async def test_etherscan_unsupported_chain_is_no_answer() -> None:
    provider, _ = etherscan(answer("etherscan_unsupported_chain.json"))
    assert await provider.lookup(31337, DEAD) is None


async def test_etherscan_rate_limit_answer_is_typed() -> None:
    provider, recorder = etherscan(answer("etherscan_rate_limited.json"))
    with pytest.raises(ProviderRateLimited, match="etherscan rate limit reached"):
        await provider.lookup(1, USDT)
    assert len(recorder.requests) == 1


async def test_etherscan_http_429_is_rate_limited() -> None:
    provider, _ = etherscan(answer("etherscan_rate_limited.json", 429))
    with pytest.raises(ProviderRateLimited):
        await provider.lookup(1, USDT)


async def test_etherscan_invalid_key_is_typed() -> None:
    provider, _ = etherscan(answer("etherscan_invalid_key.json"))
    with pytest.raises(ProviderKeyRejected, match="etherscan rejected the API key") as caught:
        await provider.lookup(1, USDT)
    assert caught.value.status == 502


async def test_etherscan_forbidden_page_is_key_rejected() -> None:
    provider, _ = etherscan(lambda request: httpx.Response(403, text="<h1>Forbidden</h1>"))
    with pytest.raises(ProviderKeyRejected):
        await provider.lookup(1, USDT)


async def test_etherscan_other_error_carries_the_explorer_text() -> None:
    provider, _ = etherscan(answer("etherscan_deprecated_v1.json"))
    with pytest.raises(UpstreamError, match="etherscan error: You are using a deprecated V1"):
        await provider.lookup(1, USDT)


async def test_etherscan_server_error_is_unavailable() -> None:
    provider, _ = etherscan(answer("bad_gateway.html", 502))
    with pytest.raises(NodeUnavailable, match="etherscan answered HTTP 502"):
        await provider.lookup(1, USDT)


async def test_etherscan_timeout_is_deadline_exceeded() -> None:
    provider, _ = etherscan(raising(httpx.ConnectTimeout))
    with pytest.raises(DeadlineExceeded, match="etherscan did not answer in time"):
        await provider.lookup(1, USDT)


async def test_etherscan_malformed_json_is_malformed_response() -> None:
    provider, _ = etherscan(answer("malformed_truncated.txt"))
    with pytest.raises(MalformedResponse):
        await provider.lookup(1, USDT)


async def test_etherscan_result_of_wrong_shape_is_malformed() -> None:
    body = {"status": "1", "message": "OK", "result": "not a list"}
    provider, _ = etherscan(lambda request: httpx.Response(200, json=body))
    with pytest.raises(MalformedResponse):
        await provider.lookup(1, USDT)


async def test_etherscan_without_key_sends_no_apikey() -> None:
    provider, recorder = etherscan(answer("etherscan_verified.json"), key=None)
    await provider.lookup(1, USDT)
    assert "apikey" not in recorder.params


async def test_etherscan_skips_chains_it_is_not_configured_for() -> None:
    provider, recorder = etherscan(answer("etherscan_verified.json"), chains={56})
    assert await provider.lookup(1, USDT) is None
    assert recorder.requests == []


def _echoing_key(request: httpx.Request) -> httpx.Response:
    body = {"status": "0", "message": "NOTOK", "result": f"Error! Unknown token {KEY} for plan"}
    return httpx.Response(200, json=body)


def _connect_error_with_url(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(f"cannot reach {request.url}", request=request)


def _timeout_with_url(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout(f"timed out on {request.url}", request=request)


KEY_SCENARIOS: dict[str, Handler] = {
    "rate limited": answer("etherscan_rate_limited.json"),
    "invalid key": answer("etherscan_invalid_key.json"),
    "http 500": answer("bad_gateway.html", 500),
    "http 429": answer("etherscan_rate_limited.json", 429),
    "http 403": lambda request: httpx.Response(403, text="denied"),
    "timeout": _timeout_with_url,
    "connect error": _connect_error_with_url,
    "malformed": answer("malformed_truncated.txt"),
    "deprecated": answer("etherscan_deprecated_v1.json"),
    "error echoing the key": _echoing_key,
}


def _everything_said_about(error: BaseException) -> str:
    """Message, repr and the traceback as a logger would print it (with causes)."""
    printed = "".join(traceback.format_exception(error))
    return f"{error}\n{error!r}\n{printed}"


@pytest.mark.parametrize("scenario", sorted(KEY_SCENARIOS))
async def test_etherscan_key_never_appears_in_an_error(scenario: str) -> None:
    provider, _ = etherscan(KEY_SCENARIOS[scenario])
    with pytest.raises(TokenRiskError) as caught:
        await provider.lookup(1, USDT)
    assert KEY not in _everything_said_about(caught.value)
    assert "etherscan.example" not in caught.value.message


async def test_etherscan_key_is_hidden_from_the_httpx_request_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider, _ = etherscan(answer("etherscan_verified.json"))
    with caplog.at_level(logging.INFO, logger="httpx"):
        await provider.lookup(1, USDT)
    assert "HTTP Request" in caplog.text
    assert KEY not in caplog.text
    assert "apikey=***" in caplog.text


def test_etherscan_key_is_not_in_reprs() -> None:
    provider, _ = etherscan(answer("etherscan_verified.json"))
    settings = VerificationSettings(
        providers=("etherscan",), etherscan_url=ETHERSCAN, etherscan_key=KEY
    )
    assert KEY not in repr(provider)
    assert KEY not in repr(settings)


# ---------------------------------------------------------------------------
# Local registry
# ---------------------------------------------------------------------------

DEVNET_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
DEVNET_PAIR = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"


def registry_entry(name: str) -> dict[str, Any]:
    return {
        "contractName": name,
        "compiler": "0.8.37+commit.a6e7aa6b",
        "optimizer": {"enabled": True, "runs": 200},
        "sourcePath": f"contracts/{name}.sol",
        "source": f"pragma solidity ^0.8.24;\ncontract {name} {{}}\n",
        "metadata": {"language": "Solidity"},
    }


def write_registry(path: Path, entries: dict[str, Any], mtime_ns: int | None = None) -> Path:
    path.write_text(json.dumps(entries))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


async def test_local_registry_finds_entries_in_any_case(tmp_path: Path) -> None:
    path = write_registry(tmp_path / "sources.json", {DEVNET_TOKEN: registry_entry("HoneyToken")})
    registry = LocalRegistry({31337: [path]})
    for address in (DEVNET_TOKEN, DEVNET_TOKEN.lower(), "0x" + DEVNET_TOKEN[2:].upper()):
        info = await registry.lookup(31337, address)
        assert info == SourceInfo(
            verified=True,
            contract_name="HoneyToken",
            compiler="0.8.37+commit.a6e7aa6b",
            source="local",
            match="full",
        )


async def test_local_registry_is_per_chain(tmp_path: Path) -> None:
    path = write_registry(tmp_path / "sources.json", {DEVNET_TOKEN: registry_entry("T")})
    registry = LocalRegistry({31337: [path]})
    assert await registry.lookup(1, DEVNET_TOKEN) is None
    assert await registry.lookup(31337, DEVNET_PAIR) is None


async def test_local_registry_missing_file_is_empty(tmp_path: Path) -> None:
    registry = LocalRegistry({31337: [tmp_path / "not-built-yet.json"]})
    assert await registry.lookup(31337, DEVNET_TOKEN) is None


async def test_local_registry_reloads_when_the_file_changes(tmp_path: Path) -> None:
    path = write_registry(tmp_path / "sources.json", {}, mtime_ns=1_000_000_000)
    registry = LocalRegistry({31337: [path]})
    assert await registry.lookup(31337, DEVNET_TOKEN) is None
    write_registry(path, {DEVNET_TOKEN: registry_entry("Rebuilt")}, mtime_ns=2_000_000_000)
    info = await registry.lookup(31337, DEVNET_TOKEN)
    assert info is not None and info.contract_name == "Rebuilt"


async def test_local_registry_keeps_last_good_contents_over_a_half_written_file(
    tmp_path: Path,
) -> None:
    path = write_registry(tmp_path / "sources.json", {DEVNET_TOKEN: registry_entry("Good")})
    registry = LocalRegistry({31337: [path]})
    assert await registry.lookup(31337, DEVNET_TOKEN) is not None
    path.write_text('{"0x5FbDB2315678afecb367f032d93F642f64180aa3": {"contr')
    os.utime(path, ns=(9_000_000_000, 9_000_000_000))
    info = await registry.lookup(31337, DEVNET_TOKEN)
    assert info is not None and info.contract_name == "Good"


async def test_local_registry_unreadable_file_without_history_raises(tmp_path: Path) -> None:
    path = tmp_path / "sources.json"
    path.write_text("[1, 2, 3]")
    registry = LocalRegistry({31337: [path]})
    with pytest.raises(MalformedResponse, match="sources.json"):
        await registry.lookup(31337, DEVNET_TOKEN)


async def test_local_registry_reads_files_in_order_and_skips_odd_keys(tmp_path: Path) -> None:
    first = write_registry(
        tmp_path / "a.json", {DEVNET_TOKEN: registry_entry("First"), "comment": "x"}
    )
    second = write_registry(
        tmp_path / "b.json",
        {DEVNET_TOKEN: registry_entry("Second"), DEVNET_PAIR: registry_entry("Pair")},
    )
    registry = LocalRegistry({31337: [first, second]})
    token = await registry.lookup(31337, DEVNET_TOKEN)
    pair = await registry.lookup(31337, DEVNET_PAIR)
    assert token is not None and token.contract_name == "First"
    assert pair is not None and pair.contract_name == "Pair"
    entry = await registry.entry(31337, DEVNET_PAIR)
    assert entry is not None and entry["sourcePath"] == "contracts/Pair.sol"


async def test_local_registry_optional_proxy_keys(tmp_path: Path) -> None:
    entry = {**registry_entry("Proxy"), "isProxy": True, "implementation": DEVNET_PAIR.lower()}
    path = write_registry(tmp_path / "sources.json", {DEVNET_TOKEN: entry})
    info = await LocalRegistry({31337: [path]}).lookup(31337, DEVNET_TOKEN)
    assert info is not None
    assert (info.is_proxy, info.implementation) == (True, DEVNET_PAIR)


# ---------------------------------------------------------------------------
# Verifier
# ---------------------------------------------------------------------------


@dataclass
class FakeProvider:
    """A provider with a scripted answer per address (default: no answer)."""

    name: Any = "local"
    answers: dict[str, SourceInfo | None | TokenRiskError] = field(default_factory=dict)
    delay: float = 0.0
    calls: list[tuple[int, str]] = field(default_factory=list)
    running: int = 0
    peak: int = 0

    async def lookup(self, chain_id: int, address: str) -> SourceInfo | None:
        self.calls.append((chain_id, address))
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.running -= 1
        outcome = self.answers.get(address)
        if isinstance(outcome, TokenRiskError):
            raise outcome
        return outcome


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


FULL = SourceInfo(verified=True, source="sourcify", match="full")
PARTIAL = SourceInfo(verified=True, source="sourcify", match="partial")
ON_ETHERSCAN = SourceInfo(verified=True, source="etherscan", contract_name="TetherToken")


async def test_verifier_first_verified_answer_wins_and_stops() -> None:
    first = FakeProvider(answers={USDT: FULL})
    second = FakeProvider(name="etherscan", answers={USDT: ON_ETHERSCAN})
    verifier = Verifier([first, second])
    assert await verifier.lookup(1, USDT.lower()) == FULL
    assert second.calls == []
    assert first.calls == [(1, USDT)]


async def test_verifier_falls_through_to_later_providers() -> None:
    verifier = Verifier([FakeProvider(), FakeProvider(answers={USDT: ON_ETHERSCAN})])
    assert await verifier.is_open_source(1, USDT) is True


async def test_verifier_partial_match_counts_as_open_source() -> None:
    verifier = Verifier([FakeProvider(answers={USDT: PARTIAL})])
    assert await verifier.is_open_source(1, USDT) is True


async def test_verifier_unverified_answer_does_not_count() -> None:
    unverified = SourceInfo(verified=False, source="etherscan", is_proxy=True)
    verifier = Verifier([FakeProvider(answers={USDT: unverified})])
    assert await verifier.is_open_source(1, USDT) is False


async def test_verifier_caches_until_the_ttl_and_fresh_bypasses() -> None:
    provider = FakeProvider(answers={USDT: FULL})
    clock = Clock()
    verifier = Verifier([provider], ttl=60, negative_ttl=10, clock=clock)
    assert await verifier.is_open_source(1, USDT)
    assert await verifier.is_open_source(1, USDT.lower())
    assert len(provider.calls) == 1
    assert await verifier.is_open_source(1, USDT, fresh=True)
    assert len(provider.calls) == 2
    clock.now += 59
    assert await verifier.is_open_source(1, USDT)
    assert len(provider.calls) == 2
    clock.now += 1
    assert await verifier.is_open_source(1, USDT)
    assert len(provider.calls) == 3


async def test_verifier_fresh_answer_replaces_the_cached_one() -> None:
    provider = FakeProvider()
    verifier = Verifier([provider], negative_ttl=300)
    assert await verifier.is_open_source(1, USDT) is False
    provider.answers[USDT] = FULL
    assert await verifier.is_open_source(1, USDT) is False
    assert await verifier.is_open_source(1, USDT, fresh=True) is True
    assert await verifier.is_open_source(1, USDT) is True


async def test_verifier_keeps_not_verified_for_the_shorter_ttl() -> None:
    provider = FakeProvider(answers={USDT: SourceInfo(verified=False, source="etherscan")})
    clock = Clock()
    verifier = Verifier([provider], ttl=3600, negative_ttl=10, clock=clock)
    await verifier.is_open_source(1, USDT)
    clock.now += 9
    await verifier.is_open_source(1, USDT)
    assert len(provider.calls) == 1
    clock.now += 1
    await verifier.is_open_source(1, USDT)
    assert len(provider.calls) == 2


async def test_verifier_failure_is_forgiven_when_another_provider_verifies() -> None:
    broken = FakeProvider(answers={USDT: NodeUnavailable("sourcify is unreachable")})
    verifier = Verifier([broken, FakeProvider(answers={USDT: ON_ETHERSCAN})])
    assert await verifier.is_open_source(1, USDT) is True


async def test_verifier_raises_rather_than_guessing_closed_source() -> None:
    broken = FakeProvider(answers={USDT: ProviderRateLimited("etherscan rate limit reached")})
    verifier = Verifier([FakeProvider(), broken])
    with pytest.raises(ProviderRateLimited):
        await verifier.is_open_source(1, USDT)
    broken.answers.clear()
    assert await verifier.is_open_source(1, USDT) is False
    assert len(broken.calls) == 2


async def test_verifier_rejects_malformed_addresses() -> None:
    verifier = Verifier([FakeProvider()])
    with pytest.raises(InvalidAddress):
        await verifier.is_open_source(1, "0x1234")


async def test_verifier_shares_one_query_between_concurrent_callers() -> None:
    provider = FakeProvider(answers={USDT: FULL}, delay=0.01)
    verifier = Verifier([provider])
    answers = await asyncio.gather(*(verifier.is_open_source(1, USDT) for _ in range(5)))
    assert answers == [True] * 5
    assert len(provider.calls) == 1


async def test_verifier_many_is_concurrent_bounded_and_keyed_as_given() -> None:
    addresses = [f"0x{index:040x}" for index in range(1, 21)]
    provider = FakeProvider(answers={checksum(a): FULL for a in addresses[:5]}, delay=0.01)
    verifier = Verifier([provider], concurrency=4)
    result = await verifier.many(1, [*addresses, addresses[0]])
    assert list(result) == addresses
    assert [result[a] for a in addresses] == [True] * 5 + [False] * 15
    assert provider.peak == 4
    assert len(provider.calls) == 20


async def test_verifier_many_raises_after_all_lookups_finish() -> None:
    failing = f"0x{1:040x}"
    provider = FakeProvider(answers={checksum(failing): DeadlineExceeded("slow")})
    verifier = Verifier([provider])
    with pytest.raises(DeadlineExceeded):
        await verifier.many(1, [failing, f"0x{2:040x}", f"0x{3:040x}"])
    assert len(provider.calls) == 3


async def test_verifier_status_keeps_verified_unverified_and_unknown_apart() -> None:
    other, down = f"0x{7:040x}", f"0x{8:040x}"
    provider = FakeProvider(
        answers={
            USDT: FULL,
            checksum(other): SourceInfo(verified=False, source="local"),
            checksum(down): NodeUnavailable("sourcify is unreachable"),
        }
    )
    clock = Clock()
    verifier = Verifier([provider], clock=clock)
    dead = f"0x{9:040x}"
    got = await verifier.statuses(1, [USDT, other, dead, down])
    assert got == {USDT: "verified", other: "unverified", dead: "unknown", down: "unknown"}
    calls = len(provider.calls)
    assert await verifier.status(1, down) == "unknown"  # the failure is remembered briefly
    assert await verifier.status(1, dead) == "unknown"
    assert len(provider.calls) == calls
    clock.now += UNKNOWN_TTL
    await verifier.statuses(1, [down, dead])
    assert len(provider.calls) == calls + 2


def test_ttl_cache_evicts_oldest_when_full() -> None:
    cache: MemoryCache[str, int] = MemoryCache(max_entries=2)
    cache.put("a", 1, 60)
    cache.put("b", 2, 60)
    cache.put("c", 3, 60)
    assert cache.get("a") == (False, None)
    assert cache.get("c") == (True, 3)
    assert len(cache) == 2


# ---------------------------------------------------------------------------
# Settings and build_verifier
# ---------------------------------------------------------------------------


def test_default_settings_use_only_the_local_registry() -> None:
    verifier = build_verifier(VerificationSettings())
    assert [type(p) for p in verifier.providers] == [LocalRegistry]


def test_devnet_settings_point_at_the_devnet_build(tmp_path: Path) -> None:
    settings = devnet_settings(tmp_path)
    assert settings.local_paths == {31337: [tmp_path / "build/devnet/sources.json"]}


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"providers": ("local", "bogus")}, "unknown source provider"),
        ({"providers": ("local", "local")}, "listed twice"),
        ({"providers": ("sourcify",)}, "needs sourcify_url"),
        ({"providers": ("etherscan",)}, "needs etherscan_url"),
        ({"timeout": 0}, "timeout must be positive"),
        ({"concurrency": 0}, "concurrency"),
        ({"cache_ttl": -1}, "TTLs"),
    ],
)
def test_settings_are_validated(values: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        VerificationSettings(**values)


def test_settings_from_a_toml_table() -> None:
    settings = VerificationSettings.from_mapping(
        {
            "providers": ["local", "sourcify", "etherscan"],
            "local_paths": {"31337": "build/devnet/sources.json", "1": ["a.json", "b.json"]},
            "sourcify_url": SOURCIFY,
            "etherscan_url": ETHERSCAN,
            "etherscan_key": KEY,
            "etherscan_chains": [1, 8453],
            "timeout": 3.5,
        }
    )
    assert settings.providers == ("local", "sourcify", "etherscan")
    assert settings.local_paths == {
        31337: [Path("build/devnet/sources.json")],
        1: [Path("a.json"), Path("b.json")],
    }
    assert settings.etherscan_chains == (1, 8453)
    verifier = build_verifier(settings)
    kinds = [type(p) for p in verifier.providers]
    assert kinds == [LocalRegistry, SourcifyProvider, EtherscanProvider]


def test_settings_reject_unknown_keys() -> None:
    with pytest.raises(ValueError, match="etherscan_api_key"):
        VerificationSettings.from_mapping({"etherscan_api_key": KEY})


@pytest.fixture
def routed() -> Iterator[Recorder]:
    """One client for both remote providers, routed by host."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "sourcify.example":
            return answer("sourcify_v2_not_found.json", 404)(request)
        return answer("etherscan_verified.json")(request)

    yield Recorder(handler)


async def test_built_verifier_asks_local_then_remote(tmp_path: Path, routed: Recorder) -> None:
    path = write_registry(tmp_path / "sources.json", {DEVNET_TOKEN: registry_entry("Devnet")})
    settings = VerificationSettings(
        providers=("local", "sourcify", "etherscan"),
        local_paths={31337: [path]},
        sourcify_url=SOURCIFY,
        sourcify_chains=(1,),
        etherscan_url=ETHERSCAN,
        etherscan_key=KEY,
        etherscan_chains=(1,),
    )
    async with routed.client() as client:
        verifier = build_verifier(settings, client)
        assert await verifier.many(31337, [DEVNET_TOKEN, DEVNET_PAIR]) == {
            DEVNET_TOKEN: True,
            DEVNET_PAIR: False,
        }
        assert routed.requests == []
        assert await verifier.is_open_source(1, USDT) is True
        hosts = [r.url.host for r in routed.requests]
        assert hosts == ["sourcify.example", "api.etherscan.example"]
        await verifier.aclose()


async def test_verifier_closes_clients_its_providers_own() -> None:
    closed: list[str] = []

    class Closing(FakeProvider):
        async def aclose(self) -> None:
            closed.append(self.name)

    verifier = Verifier([Closing(name="sourcify"), FakeProvider()])
    await verifier.aclose()
    assert closed == ["sourcify"]

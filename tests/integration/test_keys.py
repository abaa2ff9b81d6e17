"""API keys and tiers end to end: keys made by the CLI, used over HTTP against the devnet.

Each test writes a config file (tiers, and the store: a SQLite file, or a schema of its
own on the PostgreSQL server of ``TOKENRISK_TEST_POSTGRES_URL``), runs ``tokenrisk keys``
through typer's runner on it, and serves the API from the same settings.  "Workers" are
separate apps with separate services and database connections on one store, which is
what separate processes share.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from tokenrisk.api.app import create_app
from tokenrisk.cli.main import app as cli
from tokenrisk.config import Settings, load_settings
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration

CHAIN = 31337
TIERS = """
default_tier = "free"

[tiers.free]
rate_limit_per_minute = 3
holder_analysis = false
owner_powers = false
max_pairs = 2
max_top_holders = 5

[tiers.pro]
max_pairs = 3
max_top_holders = 100

[tiers.tiny]
rate_limit_per_minute = 2
"""


# FIXTURES AND HELPERS


@pytest.fixture
def config(store_url: str, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "tokenrisk.toml"
    path.write_text(
        f"devnet = false\ndata_dir = {json.dumps(str(tmp_path / 'data'))}\n"
        f"store_url = {json.dumps(store_url)}\n{TIERS}",
        encoding="utf-8",
    )
    yield path


def keys(config: Path, *args: str) -> str:
    """``tokenrisk keys ARGS --config CONFIG``; its stdout (exit code 0 asserted)."""
    result = CliRunner().invoke(cli, ["keys", *args, "--config", str(config)])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def keys_fail(config: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["keys", *args, "--config", str(config)])
    assert result.exit_code == 3, result.stdout
    return result.stderr


@contextlib.asynccontextmanager
async def server(config: Path, devnet: Any, **extra: Any) -> AsyncIterator[httpx.AsyncClient]:
    """One API worker on the config's store (its own service and database engine)."""
    settings = load_settings(config, env={})
    if extra:
        settings = Settings.model_validate({**settings.model_dump(), **extra})
    svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    transport = httpx.ASGITransport(app=create_app(settings, svc))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            yield http
    finally:
        await svc.close()


def _address(devnet: Any, entry_id: str) -> str:
    return str(next(t for t in devnet.manifest["tokens"] if t["id"] == entry_id)["address"])


async def get(http: httpx.AsyncClient, path: str, key: str | None = None, **params: Any) -> Any:
    headers = {"X-API-KEY": key} if key else {}
    return await http.get(path, params=params, headers=headers)


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "error"} and body["code"] == status
    return str(body["error"])


def usage(config: Path, *args: str) -> dict[tuple[str, str], int]:
    rows = json.loads(keys(config, "usage", *args, "--json"))
    return {(r["name"], r["endpoint"]): r["requests"] for r in rows}


# LIFECYCLE


async def test_the_check_routes_read_the_key_as_the_gate_dependency_does(
    config: Path, devnet: Any
) -> None:
    """IsHoneypot and GetContractVerification call the gate themselves (issue #27): the
    key is read from the header, else the query; an empty header is no key; a wrong or
    missing key is refused before the query is even read (401, not 400)."""
    key = keys(config, "create", "--name", "bob", "--tier", "pro").strip()
    params = {"address": _address(devnet, "plain"), "chainID": CHAIN}
    async with server(config, devnet, require_api_key=True) as http:
        for path in ("/v2/IsHoneypot", "/v2/GetContractVerification"):
            error(await get(http, path, **params), 401)
            error(await get(http, path, "trk_wrong", **params), 401)
            error(await get(http, path, address="not-an-address"), 401)
            ok(await get(http, path, key, **params))
            ok(await http.get(path, params={**params, "apiKey": key}))
            empty = {"X-API-KEY": ""}
            ok(await http.get(path, params={**params, "apiKey": key}, headers=empty))
            assert "address" in error(await get(http, path, key, address="0x12"), 400)
    assert usage(config) == {
        ("bob", "/v2/IsHoneypot"): 4,
        ("bob", "/v2/GetContractVerification"): 4,
    }


async def test_create_use_reset_revoke(config: Path, devnet: Any) -> None:
    key = keys(config, "create", "--name", "alice", "--tier", "pro").strip()
    assert key.startswith("trk_")
    params = {"address": _address(devnet, "multi-pair"), "chainID": CHAIN}
    async with server(config, devnet, require_api_key=True) as http:
        error(await get(http, "/v1/GetPairs", **params), 401)
        assert len(ok(await get(http, "/v1/GetPairs", key, **params))) == 3
        assert ok(await http.get("/v1/GetPairs", params={**params, "apiKey": key}))

        new = keys(config, "reset", "alice").strip()
        assert new.startswith("trk_") and new != key
        assert "was reset" in error(await get(http, "/v1/GetPairs", key, **params), 401)
        assert len(ok(await get(http, "/v1/GetPairs", new, **params))) == 3

        keys(config, "revoke", "alice")
        assert error(await get(http, "/v1/GetPairs", new, **params), 401) == (
            "this API key was revoked"
        )
        assert "was reset" in error(await get(http, "/v1/GetPairs", key, **params), 401)
    listed = json.loads(keys(config, "list", "--json"))
    assert [(k["name"], k["tier"], k["status"]) for k in listed] == [("alice", "pro", "revoked")]
    assert listed[0]["lastUsed"] and listed[0]["reset"] and listed[0]["revoked"]
    assert "revoked" in keys_fail(config, "reset", "alice")
    assert "no key named 'bob'" in keys_fail(config, "revoke", "bob")
    assert "no tier named 'gold'" in keys_fail(config, "create", "--name", "bob", "--tier", "gold")


async def test_reset_reaches_every_worker_at_once(config: Path, devnet: Any) -> None:
    key = keys(config, "create", "--name", "bot", "--tier", "pro").strip()
    params = {"address": _address(devnet, "plain"), "chainID": CHAIN}
    async with server(config, devnet) as one, server(config, devnet) as two:
        for worker in (one, two):
            ok(await get(worker, "/v1/GetPairs", key, **params))
        new = keys(config, "reset", "bot").strip()
        for worker in (one, two):
            assert "was reset" in error(await get(worker, "/v1/GetPairs", key, **params), 401)
            ok(await get(worker, "/v2/GetPairs", new, **params))
        keys(config, "revoke", "bot")
        for worker in (one, two):
            error(await get(worker, "/v2/GetPairs", new, **params), 401)
    assert usage(config, "bot") == {("bot", "/v1/GetPairs"): 2, ("bot", "/v2/GetPairs"): 2}


async def test_usage_counts_match_the_requests(config: Path, devnet: Any) -> None:
    alice = keys(config, "create", "--name", "alice", "--tier", "pro").strip()
    bob = keys(config, "create", "--name", "bob").strip()  # default_tier: free
    token = _address(devnet, "plain")
    config.write_text('api_keys = ["file-key"]\n' + config.read_text(), encoding="utf-8")
    async with server(config, devnet) as http:
        for _ in range(3):
            ok(await get(http, "/v1/GetPairs", alice, address=token))
        ok(await get(http, "/v1/TopHolders", alice, address=token, chainID=CHAIN))
        error(await get(http, "/v1/TopHolders", alice, address=token), 400)  # counted too
        ok(await get(http, "/v2/GetPairs", bob, address=token))
        ok(await get(http, "/v2/GetPairs", "file-key", address=token))
        error(await get(http, "/v2/GetPairs", "wrong", address=token), 401)  # not counted
        ok(await http.get("/health", headers={"X-API-KEY": alice}))  # not a counted endpoint
    file_key = "config:" + hashlib.sha256(b"file-key").hexdigest()[:8]
    assert usage(config) == {
        ("alice", "/v1/GetPairs"): 3,
        ("alice", "/v1/TopHolders"): 2,
        ("bob", "/v2/GetPairs"): 1,
        (file_key, "/v2/GetPairs"): 1,
    }
    assert set(usage(config, "bob")) == {("bob", "/v2/GetPairs")}
    table = keys(config, "usage")
    assert "alice" in table and "/v1/TopHolders" in table
    listed = {k["name"]: k for k in json.loads(keys(config, "list", "--json"))}
    assert listed[file_key]["status"] == "config file" and "file-key" not in json.dumps(listed)


async def test_the_store_holds_no_key_in_clear(config: Path, store_url: str, devnet: Any) -> None:
    made = [keys(config, "create", "--name", n, "--tier", "pro").strip() for n in ("a", "b")]
    made.append(keys(config, "reset", "a").strip())
    keys(config, "revoke", "b")
    async with server(config, devnet) as http:
        ok(await get(http, "/v1/GetPairs", made[2], address=_address(devnet, "plain")))
    engine = create_engine(store_url)
    with engine.connect() as conn:
        tables = inspect(conn).get_table_names()
        dump = repr([list(conn.execute(text(f'SELECT * FROM "{t}"'))) for t in tables])
    engine.dispose()
    assert {"api_keys", "api_keys_retired", "api_key_usage"} <= set(tables)
    for key in made:
        assert key not in dump and key.removeprefix("trk_") not in dump
    assert dump.count("sha256:") == 3  # digests instead: a's key, a's old key, b's revoked key


# TIERS


async def test_tier_limits_on_get_pairs(config: Path, devnet: Any) -> None:
    pro = keys(config, "create", "--name", "pro", "--tier", "pro").strip()
    token = _address(devnet, "multi-pair")
    async with server(config, devnet) as http:
        everything = ok(await get(http, "/v1/GetPairs", pro, address=token))
        assert len(everything) == 3
        assert ok(await get(http, "/v2/GetPairs", pro, address=token)) == everything
        assert ok(await get(http, "/v2/GetPairs", pro, address=token, limit=3)) == everything
        assert ok(await get(http, "/v2/GetPairs", pro, address=token, limit=1)) == everything[:1]
        message = error(await get(http, "/v2/GetPairs", pro, address=token, limit=4), 400)
        assert "at most 3" in message
        for bad in ("0", "-1", "two", "1.5"):
            assert "limit" in error(
                await get(http, "/v2/GetPairs", pro, address=token, limit=bad), 400
            )
        # keyless requests: the free tier, 2 pairs at most, on v1 too
        assert ok(await get(http, "/v2/GetPairs", address=token)) == everything[:2]
        assert ok(await get(http, "/v1/GetPairs", address=token)) == everything[:2]
        assert "at most 2" in error(await get(http, "/v2/GetPairs", address=token, limit=3), 400)


async def test_tier_limits_on_top_holders(config: Path, devnet: Any) -> None:
    pro = keys(config, "create", "--name", "pro", "--tier", "pro").strip()
    token = _address(devnet, "plain")
    async with server(config, devnet) as http:
        full = ok(await get(http, "/v1/TopHolders", pro, address=token, chainID=CHAIN))
        assert set(full) == {"totalSupply", "holders"} and 5 < len(full["holders"]) <= 50
        few = ok(await get(http, "/v1/TopHolders", pro, address=token, chainID=CHAIN, limit=5))
        assert few == {"totalSupply": full["totalSupply"], "holders": full["holders"][:5]}
        message = error(
            await get(http, "/v1/TopHolders", pro, address=token, chainID=CHAIN, limit=101), 403
        )
        assert "allowance of 100 holders" in message
        keyless = ok(await get(http, "/v1/TopHolders", address=token, chainID=CHAIN))
        assert keyless == few  # the free tier's default is its allowance, 5
        message = error(
            await get(http, "/v1/TopHolders", address=token, chainID=CHAIN, limit=6), 403
        )
        assert "allowance of 5 holders" in message
        error(await get(http, "/v1/TopHolders", address=token, chainID=CHAIN, limit="x"), 400)


async def test_tier_rate_limits(config: Path, devnet: Any) -> None:
    tiny = keys(config, "create", "--name", "tiny", "--tier", "tiny").strip()
    pro = keys(config, "create", "--name", "pro", "--tier", "pro").strip()
    token = _address(devnet, "plain")
    async with server(config, devnet) as http:
        for _ in range(2):
            ok(await get(http, "/v1/GetPairs", tiny, address=token))
        limited = await get(http, "/v1/GetPairs", tiny, address=token)
        assert error(limited, 429) == "rate limit exceeded"
        assert 1 <= int(limited.headers["Retry-After"]) <= 30
        for _ in range(5):  # pro: no limit
            ok(await get(http, "/v1/GetPairs", pro, address=token))
        for _ in range(3):  # keyless: the free tier's 3 per minute, by client address
            ok(await get(http, "/v1/GetPairs", address=token))
        error(await get(http, "/v1/GetPairs", address=token), 429)
    assert usage(config, "tiny") == {("tiny", "/v1/GetPairs"): 3}  # the refused one too


async def test_holder_analysis_and_owner_powers_follow_the_tier(config: Path, devnet: Any) -> None:
    pro = keys(config, "create", "--name", "pro", "--tier", "pro").strip()
    params = {"address": _address(devnet, "plain"), "chainID": CHAIN}
    async with server(config, devnet, cache_ttl=60) as http:
        free = ok(await get(http, "/v2/IsHoneypot", **params))
        full = ok(await get(http, "/v2/IsHoneypot", pro, **params))
        again = ok(await get(http, "/v2/IsHoneypot", **params))  # cached per tier
    assert "holderAnalysis" not in free and "holderAnalysis" not in again
    assert int(full["holderAnalysis"]["holders"]) > 0
    # the free tier's owner_powers = false: no scan, so no ownerPowers extension
    assert "ownerPowers" not in free and "ownerPowers" not in again
    assert full["ownerPowers"]["findings"] is not None
    assert free["token"] == full["token"] and free["honeypotResult"] == full["honeypotResult"]


async def test_the_document_describes_keys_and_limits(config: Path, devnet: Any) -> None:
    async with server(config, devnet) as http:
        spec = (await http.get("/openapi.json")).json()
    assert {"APIKeyHeader", "APIKeyQuery"} <= set(spec["components"]["securitySchemes"])
    either = [{"APIKeyHeader": []}, {"APIKeyQuery": []}]
    for path in ("/v2/IsHoneypot", "/v2/GetContractVerification", "/v2/GetPairs"):
        # the first two call the gate themselves (issue #27), the third as a dependency:
        # the document offers the same schemes either way
        operation = spec["paths"][path]["get"]
        assert operation["security"] == either, path
        assert {"401", "403", "429"} <= set(operation["responses"]), path
    for path in ("/v2/GetPairs", "/v1/TopHolders"):
        operation = spec["paths"][path]["get"]
        (limit,) = [p for p in operation["parameters"] if p["name"] == "limit"]
        assert limit["schema"]["type"] == "integer" and not limit["required"]
        assert {"401", "403", "429"} <= set(operation["responses"])
    assert spec["paths"]["/v2/GetPairs"]["get"]["responses"]["200"]


async def test_operators_read_keys_and_usage_over_http(config: Path, devnet: Any) -> None:
    key = keys(config, "create", "--name", "alice", "--tier", "pro").strip()
    token = _address(devnet, "plain")
    operator = {"X-OPERATOR-KEY": "op-secret"}
    async with server(config, devnet) as closed:
        assert (await closed.get("/admin/keys", headers=operator)).status_code == 404
    async with server(config, devnet, operator_key="op-secret") as http:
        ok(await get(http, "/v1/GetPairs", key, address=token))
        error(await http.get("/admin/keys"), 401)
        error(await http.get("/admin/keys", headers={"X-OPERATOR-KEY": "guess"}), 401)
        error(await http.get("/admin/usage", headers={"X-API-KEY": key}), 401)
        listed = ok(await http.get("/admin/keys", headers=operator))
        usage_rows = ok(await http.get("/admin/usage", headers=operator, params={"days": 7}))
        mine = ok(await http.get("/admin/usage", headers=operator, params={"name": "alice"}))
        assert "days" in error(
            await http.get("/admin/usage", headers=operator, params={"days": "x"}), 400
        )
        spec = (await http.get("/openapi.json")).json()
    assert listed == json.loads(keys(config, "list", "--json"))
    assert [(k["name"], k["status"]) for k in listed] == [("alice", "active")]
    assert usage_rows == mine == json.loads(keys(config, "usage", "--json"))
    assert [(u["name"], u["endpoint"], u["requests"]) for u in mine] == [
        ("alice", "/v1/GetPairs", 1)
    ]
    assert key not in json.dumps([listed, usage_rows])
    assert not any(path.startswith("/admin") for path in spec["paths"])

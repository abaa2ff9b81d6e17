"""Admission control on the real app and devnet: overflow gets a fast 503, cached
answers are served whatever the load."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import connect_devnet

pytestmark = pytest.mark.integration
CHAIN = 31337


def _address(devnet: Any, entry_id: str) -> str:
    return str(next(t["address"] for t in devnet.manifest["tokens"] if t["id"] == entry_id))


async def _clients(
    devnet: Any, tmp_path: Path, **overrides: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    settings = Settings(devnet=False, data_dir=tmp_path, holder_limit=0, **overrides)
    svc = connect_devnet(settings, devnet.url, devnet.manifest, devnet.build_dir)
    app = create_app(settings, svc)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            yield http, app
    finally:
        await svc.close()


async def test_overflow_is_refused_at_once_with_retry_after(devnet: Any, tmp_path: Path) -> None:
    tokens = [_address(devnet, i) for i in ("plain", "fot-3", "high-tax", "max-tx")]
    async for http, app in _clients(devnet, tmp_path, admission_limit=1, cache_ttl=0):
        replies = await asyncio.gather(
            *(http.get("/v2/IsHoneypot", params={"address": t, "chainID": CHAIN}) for t in tokens)
        )
        statuses = Counter(r.status_code for r in replies)
        assert statuses == {200: 1, 503: 3}, statuses  # one admitted, the rest refused
        for refused in (r for r in replies if r.status_code == 503):
            assert refused.json() == {"code": 503, "error": refused.json()["error"]}
            assert int(refused.headers["Retry-After"]) >= 1
        assert app.state.admission.refused == 3 and app.state.admission.active(CHAIN) == 0
        again = await http.get("/v2/IsHoneypot", params={"address": tokens[1], "chainID": CHAIN})
        assert again.status_code == 200  # places are given back


async def test_cached_answers_are_served_at_capacity(devnet: Any, tmp_path: Path) -> None:
    cached = _address(devnet, "plain")
    fresh = [_address(devnet, i) for i in ("fot-3", "high-tax")]
    async for http, _app in _clients(devnet, tmp_path, admission_limit=1, cache_ttl=600):
        first = await http.get("/v2/IsHoneypot", params={"address": cached, "chainID": CHAIN})
        assert first.status_code == 200 and first.headers["X-Cache"] == "miss"
        *computed, hit = await asyncio.gather(
            *(http.get("/v2/IsHoneypot", params={"address": t, "chainID": CHAIN}) for t in fresh),
            http.get("/v2/IsHoneypot", params={"address": cached, "chainID": CHAIN}),
        )
        assert Counter(r.status_code for r in computed) == {200: 1, 503: 1}  # at capacity
        assert hit.status_code == 200 and hit.headers["X-Cache"] == "hit"
        assert hit.content == first.content

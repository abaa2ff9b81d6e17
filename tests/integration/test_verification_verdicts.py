"""GetContractVerification's journey for its verdicts alone, against the whole journey,
on every devnet token (checks/verification.py, ``verdicts_only`` in simulate/journey.py).

GetContractVerification reads only whether the simulated buy and sell went through and
why not (``checks.verification.untraceable``).  Its journey leaves out what sizes the
limits or finds later failures: larger buys, the large-sell search, the same-block,
delayed and half-balance sells.  Here each check's prepared pool runs both journeys
(tests/verdicts.py), and the verdicts must be the same while the trimmed one sends fewer
simulations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from verdicts import BothJourneys

from tokenrisk.api.app import create_app
from tokenrisk.config import Settings
from tokenrisk.service import Service, connect_devnet

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def service(devnet: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    settings = Settings(
        devnet=False, data_dir=tmp_path_factory.mktemp("verdicts"), deadline=60.0, cache_ttl=0
    )
    svc = connect_devnet(settings, devnet.url, devnet.manifest, Path(devnet.build_dir))
    yield svc
    await svc.close()


async def test_the_verdicts_alone_are_the_whole_journeys(
    service: Service, devnet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = BothJourneys().install(monkeypatch)
    app = create_app(service.settings, service)
    transport = httpx.ASGITransport(app=app)
    answered = 0
    async with httpx.AsyncClient(transport=transport, base_url="http://tokenrisk.test") as http:
        for entry in devnet.manifest["tokens"]:
            params = {"address": entry["address"], "chainID": 31337}
            reply = await http.get("/v2/GetContractVerification", params=params)
            assert reply.status_code == 200, (entry["id"], reply.text)
            answered += 1
    seen = both.seen
    assert len(seen) >= answered - 2  # every token with a pool ran its journeys
    assert not both.differ()
    # sold and refused sells both appear, so both halves of the verdict were compared
    assert {c.whole[3] for c in seen} == {True, False}
    for c in seen:  # a journey that sold sent fewer simulations for the verdicts alone
        assert not c.whole[3] or c.trimmed_plans < c.whole_plans, c
    whole, trimmed = sum(c.whole_plans for c in seen), sum(c.trimmed_plans for c in seen)
    assert trimmed * 3 < whole * 2, (trimmed, whole)

"""The contracts a first trace's code reads are sent ahead for (checks.verification):
what every swap on the route calls, on V4 also Permit2 and the pool's hook (issue #27;
tests/integration/test_v4_trace.py checks a real V4 trace calls nothing else)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tokenrisk.checks import verification

TOKEN, POOL, ROUTER, WETH, PERMIT2 = ("0x" + f"{n:02x}" * 20 for n in (1, 2, 3, 4, 5))
HOOK = "0x" + "ab" * 18 + "00c4"
NO_HOOK = "0x" + "00" * 20


def ready(v4: bool, hooks: str | None, spender: str) -> Any:
    pool = SimpleNamespace(address=POOL, hooks=hooks)
    route = SimpleNamespace(
        token=TOKEN,
        pool=pool,
        dex=SimpleNamespace(router=ROUTER),
        base=WETH,
        spender=spender,
        v4=v4,
    )
    return SimpleNamespace(route=route)


def test_a_v4_route_adds_permit2_and_the_hook() -> None:
    found = verification._route_contracts(ready(True, HOOK, PERMIT2))
    assert found == {TOKEN, POOL, ROUTER, WETH, PERMIT2, HOOK}


def test_a_v4_pool_without_a_hook_adds_no_zero_address() -> None:
    assert NO_HOOK not in verification._route_contracts(ready(True, NO_HOOK, PERMIT2))


def test_a_v2_route_is_the_token_pair_router_and_base() -> None:
    assert verification._route_contracts(ready(False, None, ROUTER)) == {TOKEN, POOL, ROUTER, WETH}

"""The contracts a first trace's code reads are sent ahead for (checks.traced_code):
what every swap on the route calls, on V4 also Permit2 and the pool's hook, on V2/V3 the
quoter the probe asks (issue #27; tests/integration/test_v4_trace.py checks a real V4
trace calls nothing else); and the read ahead answers only for what it read."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from tokenrisk.checks import traced_code
from tokenrisk.checks.traced_code import Ahead, contracts_of

TOKEN, POOL, ROUTER, WETH, PERMIT2, QUOTER = ("0x" + f"{n:02x}" * 20 for n in (1, 2, 3, 4, 5, 6))
HOOK = "0x" + "ab" * 18 + "00c4"
NO_HOOK = "0x" + "00" * 20


def ready(v4: bool, hooks: str | None, spender: str, quoter: str | None = None) -> Any:
    pool = SimpleNamespace(address=POOL, hooks=hooks)
    route = SimpleNamespace(
        token=TOKEN,
        pool=pool,
        dex=SimpleNamespace(router=ROUTER, quoter=quoter),
        base=WETH,
        spender=spender,
        v4=v4,
    )
    return SimpleNamespace(route=route)


def test_a_v4_route_adds_permit2_and_the_hook() -> None:
    found = traced_code.route_contracts(ready(True, HOOK, PERMIT2, QUOTER))
    assert found == {TOKEN, POOL, ROUTER, WETH, PERMIT2, HOOK}


def test_a_v4_pool_without_a_hook_adds_no_zero_address() -> None:
    assert NO_HOOK not in traced_code.route_contracts(ready(True, NO_HOOK, PERMIT2))


def test_a_v2_route_is_the_token_pair_router_and_base() -> None:
    assert traced_code.route_contracts(ready(False, None, ROUTER)) == {TOKEN, POOL, ROUTER, WETH}


def test_a_v3_route_adds_the_quoter_the_probe_asks() -> None:
    found = traced_code.route_contracts(ready(False, None, ROUTER, QUOTER.upper()))
    assert found == {TOKEN, POOL, ROUTER, WETH, QUOTER.upper().lower()}


class _Rpc:
    """Answers code reads: a contract's code for ``coded``, none for anything else."""

    def __init__(self, coded: set[str]) -> None:
        self.coded = coded
        self.asked: list[str] = []

    async def batch(self, calls: Sequence[tuple[str, Sequence[Any]]], **_: Any) -> list[Any]:
        self.asked += [str(params[0]) for _, params in calls]
        return ["0x6080" if params[0] in self.coded else "0x" for _, params in calls]


def test_the_read_ahead_answers_for_what_it_read_and_the_rest_is_read_after() -> None:
    rpc = _Rpc({QUOTER})
    node: Any = SimpleNamespace(rpc=rpc)

    async def run() -> set[str]:
        early = asyncio.get_running_loop().create_future()
        early.set_result(Ahead(frozenset({TOKEN, POOL, WETH}), frozenset({TOKEN, POOL})))
        return await contracts_of(node, frozenset({TOKEN, WETH, QUOTER, PERMIT2}), early)

    # WETH read ahead as no code stays out; only what the read ahead missed is read after
    assert asyncio.run(run()) == {TOKEN, QUOTER}
    assert sorted(rpc.asked) == sorted([QUOTER, PERMIT2])

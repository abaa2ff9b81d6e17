"""Holder sells in groups (checks/holder_sells.py) against a fake node that decides per seller.

The fake node answers each simulated block from the seller's address: a "loser" fails
to sell in a group but sells alone (a failure caused by the sells before it), a "trapped"
holder fails either way.  Only the trapped one may be reported as failed; every result
keeps its holder's place; large holders sell first; a group the node fails as a whole
is sold one by one.
"""

from __future__ import annotations

from typing import Any

from fakenode import FakeNode, Fault

from tokenrisk.chain.head import ChainHead
from tokenrisk.chain.registry import load_registry
from tokenrisk.checks import holder_sells
from tokenrisk.model import Pool
from tokenrisk.simulate.calls import Route
from tokenrisk.simulate.simulator import Funding, SimSettings, Simulator

CHAIN = load_registry()[1]
DEX = next(d for d in CHAIN.dexes if d.version == "V2")
WETH = CHAIN.wrapped_native.address
TOKEN = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
PAIR = "0x000000000000000000000000000000000000bEEF"
SWAP = "0x5c11d795"  # swapExactTokensForTokensSupportingFeeOnTransferTokens


def word(value: int) -> str:
    return "0x" + f"{value:064x}"


def holder(i: int) -> str:
    return "0x" + f"{i + 1:040x}"


class Node:
    def __init__(self, loser: str, trapped: str, broken_groups: bool = False) -> None:
        self.loser, self.trapped, self.broken = loser, trapped, broken_groups
        self.simulations: list[list[str]] = []  # sellers per simulation, in block order

    def reply(self, params: list[Any]) -> Any:
        blocks = params[0]["blockStateCalls"]
        sellers = [b["calls"][0]["from"] for b in blocks]
        self.simulations.append(sellers)
        if self.broken and len(blocks) > 1:
            return Fault(3, "execution reverted")
        return [self._block(b, alone=len(blocks) == 1) for b in blocks]

    def _block(self, block: dict[str, Any], alone: bool) -> dict[str, Any]:
        seller = block["calls"][0]["from"]
        fails = seller == self.trapped or (seller == self.loser and not alone)
        calls = []
        for call in block["calls"]:
            swap = call["data"].startswith(SWAP)
            ok = not (swap and fails)
            data = word(0) if "70a08231" in call["data"][:10] and swap else word(10**18)
            calls.append(
                {"status": "0x1" if ok else "0x0", "gasUsed": "0x5208", "returnData": data}
            )
        return {"calls": calls}


def simulator(node: Node) -> Simulator:
    fake = FakeNode({"eth_simulateV1": node.reply})
    pool = Pool(PAIR, "Uniswap", "V2", TOKEN, WETH, WETH, DEX.router, 10**24, 10**24, 1e6)
    route = Route(pool, DEX, TOKEN, WETH)
    return Simulator(
        fake.client(), route, ChainHead(100, 1_700_000_000), Funding(WETH, None), SimSettings()
    )


async def test_groups_then_alone_only_for_who_failed_in_a_group() -> None:
    people = [(holder(i), 10**18 * (i + 1)) for i in range(60)]
    node = Node(loser=holder(30), trapped=holder(7))
    results = await holder_sells.sell_all(simulator(node), people)
    assert [r.holder for r in results] == [a for a, _ in people]
    assert [r.holder for r in results if not r.ok] == [holder(7)]
    grouped = [s for s in node.simulations if len(s) > 1]
    assert (
        len(grouped) == -(-60 // holder_sells.GROUP)
        and max(len(s) for s in grouped) == holder_sells.GROUP
    )
    assert grouped[0][0] == holder(59)  # the largest holder sells first
    alone = sorted(s[0] for s in node.simulations if len(s) == 1)
    assert alone == sorted([holder(7), holder(7), holder(30)])  # the trapped one retried at 99.9%


async def test_a_group_the_node_fails_is_sold_one_by_one() -> None:
    people = [(holder(i), 10**18) for i in range(5)]
    node = Node(loser="", trapped="", broken_groups=True)
    results = await holder_sells.sell_all(simulator(node), people)
    assert all(r.ok for r in results)
    assert sorted(len(s) for s in node.simulations) == [1, 1, 1, 1, 1, 5]

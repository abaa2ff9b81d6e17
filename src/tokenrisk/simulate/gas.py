"""What a simulation may spend and how it pays: the node's limits, gas per call, prices.

A real node enforces rules anvil does not (../shared/NODES.md, go-ethereum's
``internal/ethapi/simulate.go``):

- a block's calls may declare at most the block's gas limit in total (a call's declared
  gas counts against what the block has left: ``-38015 block gas limit reached``); the
  chain's gas limit is kept, never overridden;
- the whole request draws on the node's RPC gas cap (geth: 50M by default); a call
  declaring more than is left is silently cut, and one left with less than its intrinsic
  gas fails the whole request;
- the last block may be at most ``max_blocks`` past the base block (``-38026``).

So gas is *allotted* when a plan is sent: reads and approvals ("light" calls) get up to
:data:`LIGHT_GAS`, trades ("heavy" calls: swaps, transfers, owner calls) share the rest
up to the per-call cap.  The sums of declared gas stay within every block's limit and
the request's cap, so no node can refuse or cut a call; a gas burner simply runs out
of gas inside its own call and the verdict says so.

Every call is priced like a real transaction: ``gasPrice`` = the head's base fee plus a
tip (a legacy price: ``tx.gasprice`` then reads the same on every node), and each wallet
holds what its calls cost plus a modest extra (:func:`funds`), never an absurd balance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tokenrisk.chain.entropy import below

LIGHT_GAS = 500_000
"""Most gas a read, a quote or an approval declares (a V3 quote uses ~150k)."""
REQUEST_GAS = 50_000_000
"""geth's default ``--rpc.gascap``: what one eth_simulateV1 or eth_call may use."""
TIP = 100_000_000
"""Priority fee (0.1 gwei): what a wallet adds to the base fee by default."""
EXTRA = 5 * 10**16
"""What a simulated wallet holds beyond its trades and gas (0.05 of the native coin)."""


@dataclass
class NodeLimits:
    """The node's limits a simulation must respect (from its probed capabilities).

    Mutable on purpose: a node that refuses a span learns a smaller ``max_blocks``
    (:meth:`lower`) for every later plan of this process.
    """

    max_blocks: int = 256
    block_overrides: bool = True  # eth_call honours its 4th parameter (number, time)
    request_gas: int = REQUEST_GAS

    def lower(self, span: int, message: str = "") -> int:
        """Learn from a refused ``span``: the cap the node's ``message`` names (the
        smallest number in it below the span), else the next common cap below it
        (providers use 16); returns the new cap."""
        named = [int(n) for n in re.findall(r"\d+", message) if 0 < int(n) < span]
        common = [c for c in (128, 64, 32, 16, 8, 4, 2) if c < span]
        cap = min(named) if named else common[0] if common else 1
        self.max_blocks = min(self.max_blocks, cap)
        return self.max_blocks


def price(base_fee: int) -> int:
    """The gas price of a simulated call: the head's base fee plus a realistic tip."""
    return base_fee + TIP


def nonce() -> int:
    """A used wallet's nonce: small and non-zero (a fresh wallet with nonce 0 stands out),
    drawn from the OS's CSPRNG (:func:`tokenrisk.chain.entropy.below`)."""
    return 1 + below(40)


def funds(gas: Sequence[int], gas_price: int, value: int = 0) -> int:
    """What a wallet needs: ``value`` sent, its calls' ``gas`` at ``gas_price``, a little more."""
    return value + sum(gas) * gas_price + EXTRA


def shares(
    heavy: Sequence[Sequence[bool]],
    per_call: int,
    block_limit: int,
    request_limit: int,
    spent: int = 0,
) -> tuple[int, int]:
    """The gas a light call and a heavy call declare (``heavy[b][c]``: call c of block b
    is a trade); every call of a kind declares the same.

    ``spent``: gas already declared in the same request (prelude blocks).  Light calls
    get up to :data:`LIGHT_GAS` (at most a quarter of any budget), heavy calls the same
    share of what is left, up to ``per_call``.  The sums fit ``block_limit`` per block and
    ``request_limit - spent`` in all.
    """
    budget = max(0, request_limit - spent)
    lights = [block.count(False) for block in heavy]
    heavies = [len(block) - n for block, n in zip(heavy, lights, strict=True)]
    # a quarter of a block's limit over its light calls: the fullest block binds
    light = min(
        LIGHT_GAS,
        budget // 4 // max(1, sum(lights)),
        block_limit // 4 // max(1, max(lights, default=0)),
    )
    left = budget - light * sum(lights)
    trade = min(
        per_call,
        left // max(1, sum(heavies)),
        *(
            (block_limit - light * n) // max(1, h)
            for n, h in zip(lights, heavies, strict=True)
            if h
        ),
    )
    return light, trade

"""The node profiles the strict test node enforces, each written from that software's own
sources and documentation (see /work/shared/NODES.md and docs/strict-node.md).

A profile is data only; :mod:`strictnode` reads it.  The numbers come from:

- go-ethereum: ``internal/ethapi/simulate.go`` (``maxSimulateBlocks = 256``,
  ``timestampIncrement = 12``), ``api.go`` (the RPC gas cap, default 50,000,000),
  ``rpc/handler.go`` (a batch over ``BatchRequestLimit``, default 1,000, is answered with
  one ``-32600 "batch too large"`` error), a full node's 128 recent states (``missing trie
  node``), and no ``ots_``/``trace_``/``anvil_``/``hardhat_``/``evm_`` namespaces;
- erigon and reth: archive state, ``ots_*``, ``debug_*`` and ``trace_*``;
- hosted providers' documentation: no ``debug_*``/``trace_*``/``ots_*``, ``eth_getLogs``
  capped at 10,000 blocks, batches capped at 100, ``eth_simulateV1`` capped at 16 blocks,
  and load-balanced backends a block or two apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

GETH_GAS_CAP = 50_000_000
"""geth's default ``--rpc.gascap``: what one eth_call or one whole eth_simulateV1 may burn."""

DEV_NAMESPACES = ("anvil_", "hardhat_", "evm_")
"""Development-node methods no production node serves."""


@dataclass(frozen=True)
class Profile:
    """What one kind of node serves and refuses.

    ``simulate_cap`` is how far past its base an ``eth_simulateV1`` may end (None: the
    method does not exist); ``archive_depth`` how many recent states stay readable (None:
    all of them); ``logs_range`` the widest ``eth_getLogs`` span (None: no cap);
    ``batch_limit`` the most requests in one batch and ``batch_style`` how a larger one is
    refused (``"geth"``: a one-element array with ``-32600 "batch too large"``;
    ``"provider"``: HTTP 200 with one error object for the whole batch); ``mine_every``
    seconds between blocks the node mines on its own (None: the head stays); ``lag``
    how many blocks the second of two load-balanced backends trails the first (every
    other HTTP request is answered by it: its ``latest`` is older and it knows no newer
    block); ``stuck``: the trailing backend answers every request but the head reads
    (``eth_blockNumber``, the ``latest`` block), as a provider whose state backends never
    catch up with the head it reports.
    """

    name: str
    refused: tuple[str, ...]
    simulate_cap: int | None = 256
    archive_depth: int | None = None
    logs_range: int | None = None
    batch_limit: int | None = None
    batch_style: str = "geth"
    mine_every: float | None = None
    lag: int = 0
    stuck: bool = False
    gas_cap: int = GETH_GAS_CAP

    def serves(self, method: str) -> bool:
        return not method.startswith(self.refused) and not (
            method == "eth_simulateV1" and self.simulate_cap is None
        )


GETH_FULL = Profile(
    name="geth-full",
    refused=("ots_", "trace_", *DEV_NAMESPACES),
    simulate_cap=256,
    archive_depth=128,
    batch_limit=1000,
)
ARCHIVE = Profile(
    name="erigon-reth-archive",
    refused=DEV_NAMESPACES,
    simulate_cap=256,
)
PROVIDER = Profile(
    name="provider",
    refused=("debug_", "trace_", "ots_", *DEV_NAMESPACES),
    simulate_cap=16,
    logs_range=10_000,
    batch_limit=100,
    batch_style="provider",
)
MOVING_HEAD = Profile(
    name="geth-moving-head",
    refused=("ots_", "trace_", *DEV_NAMESPACES),
    simulate_cap=256,
    archive_depth=128,
    batch_limit=1000,
    mine_every=0.25,
)

LOAD_BALANCED = Profile(
    name="provider-load-balanced",
    refused=("debug_", "trace_", "ots_", *DEV_NAMESPACES),
    simulate_cap=16,
    logs_range=10_000,
    batch_limit=100,
    batch_style="provider",
    mine_every=0.25,
    lag=1,
)

STUCK_BACKENDS = replace(LOAD_BALANCED, name="provider-stuck-backends", stuck=True, mine_every=None)
"""Not a catalogue profile: a lag that outlasts every retry (the service answers 503).
Its head stays: on a moving chain a backend one block behind reaches the block a check
pinned one block later, and the retries wait that long."""

PROFILES = (GETH_FULL, ARCHIVE, PROVIDER, MOVING_HEAD, LOAD_BALANCED)
"""The profiles the whole catalogue runs through in ``make test``."""

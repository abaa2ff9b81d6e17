"""Shared fixtures.

Importing this file has no side effects: the devnet is built and started only when a
test asks for the ``devnet`` fixture (integration tests), never for unit tests.

``devnet`` (session scope) yields a :class:`tokenrisk.devnet.instance.RunningDevnet`:
``.url`` (JSON-RPC of an anvil on a free loopback port, loaded from
``build/devnet/state.json`` with its clock continuing from the build), ``.manifest``
(parsed ``manifest.json``), ``.node`` (the :class:`AnvilNode`), ``.build_dir``,
``.manifest_path`` and ``.sources_path``.  Tests that change chain state must wrap
their changes in ``evm_snapshot``/``evm_revert``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tokenrisk.devnet.instance import RunningDevnet


@pytest.fixture(scope="session")
def devnet() -> Iterator[RunningDevnet]:
    """Build the devnet if stale, start anvil on its state, stop it after the session."""
    from tokenrisk.devnet.instance import start_devnet

    running = start_devnet()
    try:
        yield running
    finally:
        running.stop()

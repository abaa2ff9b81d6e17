"""Fixtures of the strict-node suite: the strict nodes, and services pointed at them.

``strict_node(profile)`` (session scope, one per profile) is a :class:`StrictNode` backed by
an anvil of its own loaded with the devnet state, so a profile that mines (the moving
head) never touches the shared session ``devnet``.  The devnet is built first (the
``devnet`` fixture does it) so every node loads the same state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from nodeprofiles import Profile
from strictnode import StrictNode


@pytest.fixture(scope="session")
def strict_nodes(devnet: Any) -> Iterator[Callable[[Profile], StrictNode]]:
    """``strict_nodes(profile)``: the session's strict node of that profile (started once)."""
    nodes: dict[str, StrictNode] = {}

    def get(profile: Profile) -> StrictNode:
        if profile.name not in nodes:
            nodes[profile.name] = StrictNode(profile).start()
        return nodes[profile.name]

    yield get
    for node in nodes.values():
        node.stop()
        if os.environ.get("STRICTNODE_REPORT"):  # what each profile refused, for reports
            print(f"\n{node.profile.name}: {node.requests} requests, refused {dict(node.refusals)}")

"""Shared fixtures.

Importing this file has no side effects: the devnet is built and started only when a
test asks for the ``devnet`` fixture (integration tests), never for unit tests.

``devnet`` (session scope) yields a :class:`tokenrisk.devnet.instance.RunningDevnet`:
``.url`` (JSON-RPC of an anvil on a free loopback port, loaded from
``build/devnet/state.json`` with its clock continuing from the build), ``.manifest``
(parsed ``manifest.json``), ``.node`` (the :class:`AnvilNode`), ``.build_dir``,
``.manifest_path`` and ``.sources_path``.  Tests that change chain state must wrap
their changes in ``evm_snapshot``/``evm_revert``.

``store_url`` is parametrised over the store backends: a fresh SQLite file always, and
a schema of its own on the PostgreSQL server in ``TOKENRISK_TEST_POSTGRES_URL`` (e.g.
``postgresql+psycopg://postgres@127.0.0.1:5432/tokenrisk_test``, set by
``scripts/with-postgres.sh``), dropped afterwards.  ``store`` is an open Store on it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tokenrisk.devnet.instance import RunningDevnet
    from tokenrisk.store.engine import Store

POSTGRES_ENV = "TOKENRISK_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def devnet() -> Iterator[RunningDevnet]:
    """Build the devnet if stale, start anvil on its state, stop it after the session."""
    from tokenrisk.devnet.build import ensure_devnet
    from tokenrisk.devnet.instance import start_devnet

    ensure_devnet()
    running = start_devnet()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty store: a fresh SQLite file, or a fresh PostgreSQL schema."""
    from tokenrisk.store.engine import normalize_url

    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data' / 'store.db'}"
        return
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"PostgreSQL store tests need {POSTGRES_ENV} (a postgresql+psycopg:// URL)")
    yield from _postgres_schema(normalize_url(url))


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    from tokenrisk.store.engine import create_store

    s = create_store(store_url)
    yield s
    s.close()


def _postgres_schema(url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, make_url, text

    schema = f"tokenrisk_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

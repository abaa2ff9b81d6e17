"""The local source registry: JSON files of contracts whose source we hold ourselves.

The devnet build writes ``build/devnet/sources.json`` (chain 31337); operators can add
their own files for private chains.  Each file maps a checksummed address to::

    {"contractName": "...", "compiler": "0.8.x+commit...", "optimizer": {...},
     "sourcePath": "contracts/...", "source": "...", "metadata": {...}}

Two optional keys, ``"isProxy": true`` and ``"implementation": "0x..."``, let a file
say what an explorer would say about a proxy.
An address listed in a file counts as verified with a ``full`` match: the file exists
because we compiled exactly this source into exactly this bytecode.  An entry
``{"verified": false}`` is a definite "not verified" (what an explorer says about a
contract it knows); an address in no file is *unknown* to the registry (no answer).  Lookups ignore
address case.  A file is re-read when its modification time or size changes, so a
rebuilt devnet is picked up without a restart; a file that is missing counts as empty,
and a file caught half-written keeps its last good contents until it parses again.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokenrisk.errors import MalformedResponse
from tokenrisk.verification.source import (
    ProviderName,
    SourceInfo,
    address_or_none,
    text_or_none,
)


@dataclass
class _Snapshot:
    """The parsed contents of one file and the stat that produced them."""

    stamp: tuple[int, int] | None = None
    entries: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    loaded: bool = False


class LocalRegistry:
    """Source provider backed by JSON files, one list of files per chain id."""

    name: ProviderName = "local"

    def __init__(self, paths: Mapping[int, Sequence[Path | str]]) -> None:
        self._paths = {chain: tuple(Path(p) for p in files) for chain, files in paths.items()}
        self._snapshots: dict[Path, _Snapshot] = {}

    @property
    def chains(self) -> frozenset[int]:
        return frozenset(self._paths)

    async def lookup(self, chain_id: int, address: str) -> SourceInfo | None:
        """The registry's entry for ``address`` on ``chain_id``, or None.

        Raises MalformedResponse when a file has never parsed (it exists but is not a
        JSON object of entries); a later good write clears it.
        """
        entry = await self.entry(chain_id, address)
        return None if entry is None else _info_of(entry)

    async def entry(self, chain_id: int, address: str) -> Mapping[str, Any] | None:
        """The raw entry (source text, metadata, ...) for ``address``, first file first."""
        wanted = address.lower()
        for path in self._paths.get(chain_id, ()):
            snapshot = await self._current(path)
            if wanted in snapshot.entries:
                return snapshot.entries[wanted]
        return None

    async def _current(self, path: Path) -> _Snapshot:
        snapshot = self._snapshots.setdefault(path, _Snapshot())
        stamp = _stamp(path)
        if stamp == snapshot.stamp and snapshot.loaded:
            return snapshot
        if stamp is None:
            self._snapshots[path] = _Snapshot(loaded=True)
            return self._snapshots[path]
        try:
            entries = await asyncio.to_thread(_read_entries, path)
        except MalformedResponse:
            if snapshot.loaded:
                return snapshot
            raise
        self._snapshots[path] = _Snapshot(stamp=stamp, entries=entries, loaded=True)
        return self._snapshots[path]


def _stamp(path: Path) -> tuple[int, int] | None:
    """(mtime in ns, size) of ``path``, or None when it does not exist."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size


def _read_entries(path: Path) -> dict[str, Mapping[str, Any]]:
    """Parse one registry file into {lower-case address: entry}.

    Keys that are not addresses and values that are not objects are skipped, so one
    odd entry does not hide the rest.
    """
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise MalformedResponse(f"local source registry {path.name} is not readable JSON") from exc
    if not isinstance(data, dict):
        raise MalformedResponse(f"local source registry {path.name} is not a JSON object")
    return {
        key.lower(): value
        for key, value in data.items()
        if address_or_none(key) is not None and isinstance(value, dict)
    }


def _info_of(entry: Mapping[str, Any]) -> SourceInfo:
    return SourceInfo(
        verified=entry.get("verified", True) is not False,
        contract_name=text_or_none(entry.get("contractName")),
        compiler=text_or_none(entry.get("compiler")),
        source="local",
        match="full" if entry.get("verified", True) is not False else None,
        is_proxy=entry.get("isProxy") is True,
        implementation=address_or_none(entry.get("implementation")),
    )

"""The guards' values from the facts' storage words (simulate/layout.py ``guard_values``
with ``stored``): a guard among the words the facts read at the same block costs no
request and holds what a read would return; one beyond them is still read."""

from __future__ import annotations

import asyncio
from typing import Any

from tokenrisk.errors import CallReverted
from tokenrisk.simulate import layout

TOKEN = "0x" + "11" * 20
KEEPER = "0x" + "5a" * 20
PACKED = "0x" + "7b" * 20


def _slot(n: int, offset: int = 0) -> layout.Slot:
    return layout.Slot("0x" + f"{n:064x}", offset, "address", frozenset(), frozenset())


def _word(address: str, shift: int = 0) -> str:
    return "0x" + f"{int(address, 16) << (8 * shift):064x}"


class _Rpc:
    """Answers ``eth_getStorageAt`` from ``storage`` (slot number -> word), records reads."""

    def __init__(self, storage: dict[int, str]) -> None:
        self.storage = storage
        self.read: list[int] = []

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        self.read += [int(params[1], 16) for _, params in calls]
        return [self.storage.get(int(params[1], 16), "0x" + "00" * 32) for _, params in calls]


def _values(rpc: _Rpc, guards: list[layout.Slot], stored: tuple[object, ...]) -> Any:
    return asyncio.run(layout.guard_values(rpc, TOKEN, guards, "0x10", stored))  # type: ignore[arg-type]


def test_guards_in_the_stored_words_are_not_read_and_equal_a_read() -> None:
    storage = {2: _word(KEEPER), 5: _word(PACKED, 1)}
    guards = [_slot(2), _slot(5, 1), _slot(3)]
    stored = tuple(storage.get(i, "0x" + "00" * 32) for i in range(16))
    read = _Rpc(storage)
    kept = _Rpc(storage)
    assert _values(kept, guards, stored) == _values(read, guards, ())
    assert kept.read == [] and sorted(read.read) == [2, 3, 5]
    assert _values(kept, guards, stored)[(guards[0].slot, 0)].lower() == KEEPER


def test_a_guard_past_the_stored_words_is_read() -> None:
    storage = {2: _word(KEEPER), 40: _word(PACKED)}
    rpc = _Rpc(storage)
    stored = tuple(storage.get(i, "0x" + "00" * 32) for i in range(16))
    values = _values(rpc, [_slot(2), _slot(40)], stored)
    assert rpc.read == [40]
    assert [v.lower() for v in values.values()] == [KEEPER, PACKED]


def test_a_stored_word_that_failed_reads_as_no_guard() -> None:
    stored: tuple[object, ...] = (CallReverted("execution reverted", 3, None),)
    assert _values(_Rpc({0: _word(KEEPER)}), [_slot(0)], stored) == {(_slot(0).slot, 0): None}

"""The serving process's garbage-collector settings (api/lifespan.py: tune_collector)."""

from __future__ import annotations

import gc

from tokenrisk.api.lifespan import YOUNG_COLLECTION, tune_collector


def test_start_up_objects_are_frozen_and_young_collections_rarer() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, saved[1], saved[2])
        tune_collector()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_COLLECTION, saved[1], saved[2])
        frozen = gc.get_freeze_count()
        tune_collector()  # again (another app in the process): nothing more is frozen
        # (frozen objects may still be freed meanwhile, by reference counting: fewer)
        assert gc.get_freeze_count() <= frozen
        assert gc.get_threshold()[0] == YOUNG_COLLECTION
        assert gc.isenabled()
    finally:
        gc.set_threshold(*saved)

"""Who a request is and which tier it gets (api.access), on a real in-memory key store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tokenrisk.api.access import MISSING, RESET, REVOKED, Access, Caller, Policy
from tokenrisk.config import Settings
from tokenrisk.errors import AuthError, Forbidden
from tokenrisk.store.engine import Store, create_store
from tokenrisk.store.keys import Keyring, config_key_name
from tokenrisk.tiers import Tier

PRO = Tier(max_top_holders=200, max_pairs=30, rate_limit_per_minute=600)
FREE = Tier(holder_analysis=False, owner_powers=False, rate_limit_per_minute=10)


@pytest.fixture
def store() -> Iterator[Store]:
    s = create_store("sqlite://")
    yield s
    s.close()


def _access(store: Store, **values: object) -> Access:
    settings = Settings.model_validate({"tiers": {"pro": PRO, "free": FREE}, **values})
    return Access(Policy.of(settings), lambda: Keyring(store))


async def test_open_server_serves_keyless_and_unknown_keys_at_the_default_tier(
    store: Store,
) -> None:
    access = _access(store, default_tier="free")
    assert await access.identify(None, "/v1/GetPairs") == Caller("free", FREE)
    assert await access.identify("", "/v1/GetPairs") == Caller("free", FREE)
    assert await access.identify("made-up", "/v1/GetPairs") == Caller("free", FREE)
    assert Keyring(store).usage() == []  # nothing to count without a key


async def test_store_keys_get_their_tier_and_are_counted(store: Store) -> None:
    key = Keyring(store).create("alice", "pro")
    access = _access(store)
    assert await access.identify(key, "/v2/IsHoneypot") == Caller("pro", PRO, "alice")
    await access.identify(key, "/v2/IsHoneypot")
    (usage,) = Keyring(store).usage()
    assert (usage.name, usage.endpoint, usage.requests) == ("alice", "/v2/IsHoneypot", 2)


async def test_reset_and_revoked_keys_are_refused_even_on_an_open_server(store: Store) -> None:
    ring = Keyring(store)
    old = ring.create("alice", "pro")
    new = ring.reset("alice")
    doomed = ring.create("bob", "pro")
    ring.revoke("bob")
    access = _access(store)
    with pytest.raises(AuthError, match="was reset") as reset:
        await access.identify(old, "/v1/GetPairs")
    assert reset.value.message == RESET and reset.value.status == 401
    with pytest.raises(AuthError) as revoked:
        await access.identify(doomed, "/v1/GetPairs")
    assert revoked.value.message == REVOKED
    assert (await access.identify(new, "/v1/GetPairs")).key_name == "alice"


async def test_required_keys_refuse_keyless_and_unknown(store: Store) -> None:
    access = _access(store, require_api_key=True)
    for key in (None, "", "made-up"):
        with pytest.raises(AuthError) as caught:
            await access.identify(key, "/v1/GetPairs")
        assert caught.value.message == MISSING


async def test_config_keys_match_exactly_and_get_their_tier(store: Store) -> None:
    access = _access(store, api_keys=["k1", "k2"], api_keys_tier="pro")
    assert access.policy.required  # config keys make keys required, as before tiers
    for key in ("k1", "k2"):
        caller = await access.identify(key, "/v1/TopHolders")
        assert caller == Caller("pro", PRO, config_key_name(key))
    for bad in ("k", "k1 ", "K1", "k12"):
        assert access.config_key(bad) is None
        with pytest.raises(AuthError):
            await access.identify(bad, "/v1/TopHolders")
    names = {u.name for u in Keyring(store).usage()}
    assert names == {config_key_name("k1"), config_key_name("k2")}


async def test_config_keys_can_be_optional(store: Store) -> None:
    access = _access(store, api_keys=["k1"], require_api_key=False)
    assert (await access.identify(None, "/x")).tier_name == "default"
    assert (await access.identify("k1", "/x")).tier_name == "default"


async def test_a_key_whose_tier_was_removed_is_forbidden(store: Store) -> None:
    key = Keyring(store).create("alice", "gold")
    with pytest.raises(Forbidden, match="'gold' is not configured") as caught:
        await _access(store).identify(key, "/v1/GetPairs")
    assert caught.value.status == 403


async def test_valid_tells_working_keys_without_counting(store: Store) -> None:
    ring = Keyring(store)
    alice = ring.create("alice", "pro")
    bob = ring.create("bob", "pro")
    ring.revoke("bob")
    access = _access(store, api_keys=["k1"])
    assert await access.valid("k1") and await access.valid(alice)
    assert not await access.valid(bob) and not await access.valid("nope")
    assert ring.usage() == [] and ring.keys()[0].last_used_at is None

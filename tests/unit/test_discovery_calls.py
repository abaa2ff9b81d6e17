"""Discovery's factory lookups and linked reads, built from per-chain templates, are the
calls ``encode_call`` gives (issue #27: no ABI encoding per first search)."""

from __future__ import annotations

import pytest
from eth_abi.abi import encode as eth_abi_encode

from tokenrisk.chain import dex, reader
from tokenrisk.chain.abi import selector
from tokenrisk.chain.registry import BaseToken, Chain, load_registry


@pytest.fixture(scope="module")
def registry() -> dict[int, Chain]:
    return load_registry()


def _encoded(token: str, base: BaseToken, fee: int | None) -> str:
    if fee is None:
        words = eth_abi_encode(["address", "address"], [token, base.address])
        return "0x" + (selector("getPair(address,address)") + words).hex()
    words = eth_abi_encode(["address", "address", "uint24"], [token, base.address, fee])
    return "0x" + (selector("getPool(address,address,uint24)") + words).hex()


def _expected(chain: Chain, token: str, bases: tuple[BaseToken, ...]) -> list[dex.Lookup]:
    return [
        (d, base, fee, _encoded(token, base, fee))
        for d in chain.dexes
        for base in bases
        if base.address.lower() != token.lower()
        for fee in ((None,) if d.version == "V2" else d.fee_tiers)
    ]


@pytest.mark.parametrize(
    "token", ["0x" + "ab" * 20, "0x" + "AB" * 20, "0x00000000000000000000000000000000000000aA"]
)
def test_lookups_are_the_abi_encoding_of_each_call(registry: dict[int, Chain], token: str) -> None:
    for chain in registry.values():
        assert dex._lookup_calls(chain, token) == _expected(chain, token, chain.base_tokens)
        stables = chain.stablecoins
        assert dex._lookup_calls(chain, token, stables) == _expected(chain, token, stables)


def test_a_base_token_is_not_looked_up_against_itself(registry: dict[int, Chain]) -> None:
    chain = registry[1]
    weth = chain.wrapped_native.address
    lookups = dex._lookup_calls(chain, weth.lower())
    assert lookups == _expected(chain, weth, chain.base_tokens)
    assert all(base != chain.wrapped_native for _, base, _, _ in lookups)


def test_a_malformed_token_is_refused_as_before(registry: dict[int, Chain]) -> None:
    with pytest.raises(Exception):  # noqa: B017 - eth_abi's own error type
        dex._lookup_calls(registry[1], "0x1234")


def test_the_native_reads_are_numbered_after_the_tokens(registry: dict[int, Chain]) -> None:
    chain = registry[1]
    weth = chain.wrapped_native.address
    native, reads = dex._native_reads(chain, 12)
    assert list(native) == dex._lookup_calls(chain, weth, chain.stablecoins)
    plain = dex._linked_reads(weth, list(native))
    assert [r.link for r in reads] == [r.link + 12 if r.link else 0 for r in plain]
    assert [r._replace(link=0) for r in reads] == [r._replace(link=0) for r in plain]
    assert dex._LINKED_BALANCE == "0x70a08231" + "00" * 32


@pytest.mark.parametrize(
    "token",
    [
        "0x" + "ab" * 20,
        "0x00000000000000000000000000000000000000aA",
        "0x" + "7e" * 20,
        "0x7" + "e" * 39,  # the stand-in itself
        "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",  # a base token: a lookup fewer
    ],
)
def test_linked_calldata_from_the_template_is_the_reads_encoding(
    registry: dict[int, Chain], token: str
) -> None:
    for chain in registry.values():
        own = dex._lookup_calls(chain, token)
        native = dex._native_reads(chain, 3 * len(own))[1]
        pool = dex._Candidate(chain.dexes[0], chain.stablecoins[0], None, "0x" + "cd" * 20)
        known = tuple(dex._balance_reads(chain.wrapped_native.address, [pool]))
        for theirs in (native, known, ()):
            expected = reader.read_calldata([*dex._linked_reads(token, own), *theirs])
            assert dex._linked_calldata(chain, token, own, theirs) == expected

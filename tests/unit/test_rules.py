"""The rules defined once (docs/architecture.md, "One rule, one place"), without a node."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tokenrisk.chain.tokens import DELEGATION_PREFIX, is_contract, is_contract_code

WALLET = "0x" + "11" * 20
DELEGATED = "0x" + "22" * 20
CONTRACT = "0x" + "33" * 20
CODES = {
    WALLET: "0x",
    DELEGATED: DELEGATION_PREFIX + "44" * 20,  # EIP-7702: 0xef0100 || delegate
    CONTRACT: "0x6080604052",
}


class Codes:
    """A node answering ``eth_getCode`` from :data:`CODES` (batches only)."""

    async def batch(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Any]:
        assert all(method == "eth_getCode" for method, _ in calls)
        return [CODES[params[0]] for _, params in calls]


def test_a_delegated_eoa_is_a_wallet_not_a_contract() -> None:
    assert is_contract_code("0x6080604052")
    assert is_contract_code("0xEF")  # one byte of code is still code
    assert not is_contract_code("0x")
    assert not is_contract_code("0xef0100" + "44" * 20)
    assert not is_contract_code("0xEF0100" + "44" * 20)  # hex case does not matter
    assert not is_contract_code(None)  # an error reply is no code


def test_every_caller_of_is_contract_gets_the_one_rule() -> None:
    flags = asyncio.run(is_contract(Codes(), [WALLET, DELEGATED, CONTRACT]))  # type: ignore[arg-type]
    assert flags == [False, False, True]

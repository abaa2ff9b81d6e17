"""The rules defined once (docs/architecture.md, "One rule, one place"), without a node."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eth_utils.crypto import keccak

from tokenrisk.chain import signatures
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


def _documented() -> dict[str, tuple[str, str]]:
    """name -> (value, the signature its docstring names), read from the source."""
    tree = ast.parse(Path(signatures.__file__).read_text(encoding="utf-8"))
    out: dict[str, tuple[str, str]] = {}
    for node, doc in zip(tree.body, tree.body[1:], strict=False):
        if isinstance(node, ast.Assign) and isinstance(doc, ast.Expr):
            name = node.targets[0]
            assert isinstance(name, ast.Name) and isinstance(doc.value, ast.Constant)
            out[name.id] = (getattr(signatures, name.id), str(doc.value.value))
    return out


def test_every_topic_selector_and_slot_is_the_hash_of_its_signature() -> None:
    documented = _documented()
    assert len(documented) == 19  # every constant has its signature beside it
    for name, (value, signature) in documented.items():
        digest = bytes(keccak(text=signature))
        if name.endswith("_SLOT"):
            expected = "0x" + (int.from_bytes(digest, "big") - 1).to_bytes(32, "big").hex()
        elif name.endswith(("_TOPIC", "_CREATED")):
            expected = "0x" + digest.hex()
        else:
            expected = "0x" + digest[:4].hex()
        assert value == expected, name


def test_each_topic_and_selector_is_written_once() -> None:
    """No other module spells out one of these hex values (import it instead)."""
    values = {value[2:] for value, _ in _documented().values()}
    root = Path(signatures.__file__).parents[1]
    strays = [
        f"{path.relative_to(root)}: {value[:8]}"
        for path in root.rglob("*.py")
        if path.name != "signatures.py"
        for value in values
        if value in path.read_text(encoding="utf-8").lower()
    ]
    assert strays == []


def test_the_address_helpers_say_which_word_they_read() -> None:
    from tokenrisk.chain.abi import topic_address, word_address
    from tokenrisk.simulate.owners import stored_address

    holder = "0x" + "00" * 12 + "F39FD6E51AAD88F6F4CE6AB8827279CFFFB92266"
    assert topic_address(holder) == "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
    assert word_address(bytes.fromhex(holder[2:])) == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert stored_address(holder) == word_address(bytes.fromhex(holder[2:]))
    assert stored_address("0x" + "00" * 31 + "12") is None  # a small number, not an address

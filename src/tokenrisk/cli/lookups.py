"""``tokenrisk pairs``, ``holders`` and ``verify``: one check of one address, printed as a
table (or the API's JSON with ``--json``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from tokenrisk.api import wire
from tokenrisk.chain.node import Nodes
from tokenrisk.checks.deps import HoldersDeps, VerificationDeps
from tokenrisk.checks.pairs import get_pairs
from tokenrisk.checks.top_holders import top_holders
from tokenrisk.checks.verification import contract_verification
from tokenrisk.cli import report
from tokenrisk.cli.session import (
    ChainOpt,
    ConfigOpt,
    JsonOpt,
    ServiceWork,
    console,
    failures,
    run,
    valid_address,
)

T = TypeVar("T")


def _answer(
    config: Path | None,
    address: str,
    as_json: bool,
    work: ServiceWork[T],
    as_dict: Callable[[T], Any],
) -> T | None:
    """Run one check of ``address``: its typed answer, or with ``--json`` print the
    answer's JSON (``as_dict``) and return None."""
    with failures():
        valid_address(address)  # a bad address fails before anything is started
        body = run(config, lambda svc, _: work(svc))
    if as_json:
        print(json.dumps(as_dict(body), indent=2))
        return None
    return body


def pairs(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Pairs of a token, deepest first."""
    items = _answer(
        config, address, as_json, lambda svc: _pairs(svc.nodes, address, chain_id), wire.dump_all
    )
    if items is None:
        return
    table = Table("chain", "pair", "address", "liquidity", "router")
    table.columns[2].no_wrap = table.columns[4].no_wrap = True
    for item in items:
        table.add_row(
            str(item.ChainID),
            Text(item.Pair.Name),
            item.Pair.Address,
            report.usd(item.Liquidity),
            item.Router,
        )
    console.print(table)


def holders(
    address: str,
    chain_id: int = typer.Option(..., "--chain-id"),
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Top holders from the Transfer-log index (balances are raw integers)."""
    body = _answer(
        config, address, as_json, lambda svc: _holders(svc.holders, address, chain_id), wire.dump
    )
    if body is None:
        return
    table = Table("address", "balance (raw units)", "contract")
    table.columns[0].no_wrap = True
    for row in body.holders:
        table.add_row(row.address, f"{int(row.balance):,}", "yes" if row.isContract else "")
    console.print(Text(f"total supply {int(body.totalSupply):,} (raw units)"))
    console.print(table)


def verify(
    address: str,
    chain_id: int | None = ChainOpt,
    config: Path | None = ConfigOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Is the contract, and everything its buy/sell calls, open source?"""
    body = _answer(
        config,
        address,
        as_json,
        lambda svc: _verify(svc.verification, address, chain_id),
        wire.dump,
    )
    if body is None:
        return
    reason = f" ({body.fullCheckReason})" if body.fullCheckReason is not None else ""
    console.print(
        Text(
            f"contract: {body.isContract}  root open source: {body.isRootOpenSource}  "
            f"full check: {body.fullCheckPerformed}" + reason
        )
    )
    for addr, is_open in (body.contractsOpenSource or {}).items():
        console.print(
            Text.assemble(
                f"  {addr}: ", ("open source", "green") if is_open else ("closed source", "red")
            )
        )


async def _pairs(nodes: Nodes, address: str, chain_id: int | None) -> list[wire.PairItem]:
    return wire.pairs_body(await get_pairs(nodes, address, chain_id))


async def _holders(deps: HoldersDeps, address: str, chain_id: int) -> wire.TopHoldersResponse:
    return wire.top_holders_body(await top_holders(deps, address, chain_id))


async def _verify(
    deps: VerificationDeps, address: str, chain_id: int | None
) -> wire.ContractVerificationResponse:
    return wire.verification_body(await contract_verification(deps, address, chain_id))

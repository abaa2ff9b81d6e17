"""Things a person (or a test) does to a running devnet to see the watcher work:
launch a fresh honest token with a pool, and arm a catalogue token's trap.

``launch`` deploys the build's ``PlainToken`` from the owner account and adds V2
liquidity against WETH (``addLiquidityETH`` creates the pair in the same transaction).
``arm`` sends, as the token's owner, the call the catalogue's ``ownerProof`` names (the
call the build proved turns the trap on).  Both run on the devnet node at ``url``: the
one ``tokenrisk serve`` records in its data dir (:func:`recorded_url`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eth_abi.abi import encode

from tokenrisk.chain.abi import encode_call
from tokenrisk.devnet.chain import Chain, Tx
from tokenrisk.devnet.layout import DEVNET_URL_FILE
from tokenrisk.devnet.liquidity import add_v2_liquidity, approve, create_v2_pair, v2_pair_of
from tokenrisk.devnet.uniswap import V2_ROUTER, WETH
from tokenrisk.errors import DevnetBuildError

LAUNCH_CONTRACT = "PlainToken"


@dataclass(frozen=True)
class Launched:
    token: str
    pair: str
    block: int


def recorded_url(data_dir: Path) -> str:
    """The URL ``tokenrisk serve`` recorded; DevnetBuildError when none is running."""
    try:
        return str(json.loads((data_dir / DEVNET_URL_FILE).read_text())["url"])
    except (OSError, ValueError, KeyError) as exc:
        raise DevnetBuildError(f"no running devnet recorded in {data_dir}") from exc


async def launch(
    url: str, manifest: dict[str, Any], build_dir: Path, *, liquidity: bool = True
) -> Launched:
    """Deploy a fresh honest token and give it a WETH pool; returns its addresses.
    ``liquidity`` false: only create the pair (a pool that exists before it can be
    traded; the router is approved, so liquidity can follow)."""
    owner = manifest["addresses"]["OWNER"]
    artifacts = json.loads((build_dir / "solc" / "artifacts.json").read_text())
    creation = artifacts["contracts"][LAUNCH_CONTRACT]["bytecode"]
    suffix = secrets.token_hex(2).upper()
    supply = 10**9 * 10**18
    args = encode(
        ["string", "string", "uint8", "uint256"], [f"Launch {suffix}", f"L{suffix}", 18, supply]
    )
    chain = Chain(url)
    try:
        token = await chain.deploy(owner, creation, args, "launch")
        await approve(chain, owner, token, V2_ROUTER, "launch")
        if liquidity:
            amounts = (supply // 2, 10 * 10**18)
            await add_v2_liquidity(chain, owner, token, WETH, amounts, "launch")
        else:
            await create_v2_pair(chain, owner, token, WETH, "launch")
        pair = await v2_pair_of(chain, token, WETH)
        block = int((await chain.block())["number"], 16)
    finally:
        await chain.aclose()
    return Launched(token, pair, block)


async def arm(url: str, manifest: dict[str, Any], token_id: str) -> str:
    """Send catalogue token ``token_id``'s ``ownerProof`` call; returns the transaction hash."""
    entry = next((t for t in manifest["tokens"] if t["id"] == token_id), None)
    if entry is None or "ownerProof" not in entry:
        raise DevnetBuildError(f"catalogue token {token_id!r} has no trap to arm")
    proof = entry["ownerProof"]
    sender = _value(proof.get("from", "$OWNER"), manifest, entry)
    args = [_value(a, manifest, entry) for a in proof.get("args", [])]
    chain = Chain(url)
    try:
        tx = Tx(sender, entry["address"], encode_call(proof["call"], args), label=f"arm {token_id}")
        outcome = await chain.send(tx)
    finally:
        await chain.aclose()
    return str(outcome.receipt["transactionHash"])


def _value(arg: Any, manifest: dict[str, Any], entry: dict[str, Any]) -> Any:
    """A catalogue argument with its ``$NAME`` and ``$holder:N`` placeholders filled."""
    if isinstance(arg, list):
        return [_value(a, manifest, entry) for a in arg]
    if not isinstance(arg, str) or not arg.startswith("$"):
        return arg
    if arg.startswith("$holder:"):
        return entry["holders"][int(arg.split(":")[1])]
    return manifest["addresses"][arg[1:]]

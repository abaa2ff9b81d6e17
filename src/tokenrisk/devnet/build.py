"""Build the devnet once: compile, deploy, make history, dump the state, verify the dump.

``ensure_devnet(root)`` is the entry point: it returns ``build/devnet`` at once when the
manifest's ``inputHash`` matches the current sources, and rebuilds otherwise.  A build
runs a throwaway anvil (chain id 31337, auto-impersonation, fixed genesis time) and:

1. compiles ``contracts/`` (solc-js, see :mod:`tokenrisk.devnet.solc`);
2. places WETH9 and Uniswap V2/V3 at their mainnet addresses (:mod:`.uniswap`);
3. deploys USDC/USDT/DAI stand-ins with deep WETH pools at ETH = 2000 USD;
4. deploys the catalogue's helper contracts and tokens with their pools;
5. mines the planned history (:mod:`.history`, :mod:`.trading`);
6. writes ``state.json`` (``anvil --load-state`` format), ``sources.json`` and, last,
   ``manifest.json``, then reloads the state in a fresh anvil to check it.

Progress goes to stderr.  Concurrent builders serialise on ``build/devnet.lock``.
"""

from __future__ import annotations

import asyncio
import fcntl
import gzip
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tokenrisk.chain.abi import checksum, to_bytes
from tokenrisk.devnet import layout
from tokenrisk.devnet import manifest as mf
from tokenrisk.devnet.catalogue import CATALOGUE_PATH, Catalogue, load_catalogue
from tokenrisk.devnet.chain import Chain
from tokenrisk.devnet.deployment import (
    ETH_USD,
    Compiled,
    Devnet,
    deploy_helpers,
    deploy_stablecoins,
    deploy_token,
)
from tokenrisk.devnet.groundtruth import measure_tokens
from tokenrisk.devnet.history import plan_history
from tokenrisk.devnet.node import start_anvil
from tokenrisk.devnet.npm_artifacts import load_npm_artifact
from tokenrisk.devnet.proof import prove_owner_powers
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.devnet.trading import TokenLog, run_history
from tokenrisk.devnet.uniswap import deploy_uniswap, placements
from tokenrisk.errors import DevnetBuildError

CHAIN_ID = 31337
GENESIS_TIMESTAMP = 1767225600
"""2026-01-01T00:00:00Z: a fixed genesis keeps block times reproducible."""
OWNER_ETH = 100_000
EIP1967_IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def is_current(root: Path, build_dir: Path) -> bool:
    """True when every output exists and was built from the current inputs."""
    manifest = layout.read_manifest(build_dir)
    outputs = (layout.STATE_FILE, layout.SOURCES_FILE)
    if manifest is None or not all((build_dir / name).is_file() for name in outputs):
        return False
    return bool(manifest.get("inputHash") == mf.input_hash(root))


def ensure_devnet(root: Path | None = None, *, force: bool = False) -> Path:
    """Return the build directory, building (or rebuilding) the devnet first if needed.

    Raises DevnetBuildError (or SolcError) when the build fails; a failed build leaves
    no manifest behind, so the next call tries again.
    """
    build_dir = layout.devnet_dir(root)
    root = root or layout.sources_root()
    if not force and is_current(root, build_dir):
        return build_dir
    build_dir.mkdir(parents=True, exist_ok=True)
    with _lock(build_dir.with_suffix(".lock")):
        if force or not is_current(root, build_dir):
            build_devnet(root, build_dir)
    return build_dir


def build_devnet(root: Path, build_dir: Path, catalogue_path: Path = CATALOGUE_PATH) -> None:
    """Build from scratch into ``build_dir`` (see the module docstring for the steps)."""
    started = time.monotonic()
    (build_dir / layout.MANIFEST_FILE).unlink(missing_ok=True)
    progress("compiling contracts", started)
    artifacts = load_artifacts(compile_contracts(root, build_dir / "solc"))
    catalogue = load_catalogue(catalogue_path)
    node = start_anvil(["--auto-impersonate", "--timestamp", str(GENESIS_TIMESTAMP)])
    try:
        manifest, sources, state = asyncio.run(
            _build_on(node.url, root, artifacts, catalogue, started)
        )
    finally:
        node.stop()
    manifest["inputHash"] = mf.input_hash(root)
    (build_dir / layout.STATE_FILE).write_bytes(state)
    mf.write_json(build_dir / layout.SOURCES_FILE, sources)
    progress("verifying the dump in a fresh anvil", started)
    verify_dump(build_dir / layout.STATE_FILE, manifest)
    mf.write_json(build_dir / layout.MANIFEST_FILE, manifest)
    progress(f"done: {build_dir}", started)


def progress(message: str, started: float) -> None:
    """One progress line on stderr, prefixed with the seconds since the build started."""
    print(f"[devnet {time.monotonic() - started:5.1f}s] {message}", file=sys.stderr, flush=True)


async def _build_on(
    url: str, root: Path, artifacts: dict[str, Any], catalogue: Catalogue, started: float
) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    chain = Chain(url)
    try:
        devnet = await _setup(chain, root, artifacts, catalogue, started)
        progress("mining history", started)
        plan = plan_history(catalogue.tokens)
        logs = await run_history(devnet, plan)
        progress("measuring ground truth with mined trades (reverted afterwards)", started)
        truths = await measure_tokens(devnet)
        progress("proving the latent owner powers (snapshot, arm, sell, revert)", started)
        proofs = await prove_owner_powers(devnet)
        progress("dumping state", started)
        state = await dump_state(chain)
        head = await chain.block()
        manifest = _manifest(devnet, catalogue, plan.roles, logs, head)
        for entry in manifest["tokens"]:
            entry["groundTruth"] = truths.get(entry["id"])
            if entry["id"] in proofs:
                entry["ownerProof"] = proofs[entry["id"]]
        sources = _sources(root, devnet, catalogue, artifacts)
        await _mark_proxies(chain, sources)
        return manifest, sources, state
    finally:
        await chain.aclose()


async def _setup(
    chain: Chain, root: Path, artifacts: dict[str, Any], catalogue: Catalogue, started: float
) -> Devnet:
    owner, infra, keeper = (await chain.accounts())[:3]
    await chain.set_balances({a: OWNER_ETH * 10**18 for a in (owner, infra, keeper)})
    progress("placing WETH9 and Uniswap V2/V3 at their mainnet addresses", started)
    await deploy_uniswap(chain, root, infra, fee_to_setter=owner)
    addresses = {p.key: p.address for p in placements(owner)} | {
        "OWNER": owner,
        "INFRA": infra,
        "KEEPER": keeper,  # a second controller, e.g. a fee keeper hidden in storage
    }
    devnet = Devnet(chain, _compiled(artifacts), owner, infra, addresses)
    progress("deploying stablecoins and their WETH pools", started)
    await deploy_stablecoins(devnet)
    progress(f"deploying {len(catalogue.tokens)} catalogue tokens and their pools", started)
    await deploy_helpers(devnet, catalogue.contracts)
    for spec in catalogue.tokens:
        await deploy_token(devnet, spec)
    return devnet


def _compiled(artifacts: dict[str, Any]) -> dict[str, Compiled]:
    return {
        name: Compiled(
            name=name,
            source_path=str(item["source"]),
            abi=list(item["abi"]),
            bytecode=str(item["bytecode"]),
            metadata=str(item.get("metadata", "")),
        )
        for name, item in artifacts["contracts"].items()
    }


async def dump_state(chain: Chain) -> bytes:
    """The node's state as ``anvil --load-state`` JSON (``anvil_dumpState`` is gzipped hex)."""
    dumped = await chain.cheat("anvil_dumpState")
    return gzip.decompress(to_bytes(str(dumped)))


# OUTPUTS


def _manifest(
    devnet: Devnet,
    catalogue: Catalogue,
    roles: dict[str, Any],
    logs: dict[str, TokenLog],
    head: dict[str, Any],
) -> dict[str, Any]:
    helpers = [
        {
            "id": h.id,
            "contract": h.contract,
            "address": devnet.helpers[h.id],
            "verified": h.verified,
        }
        for h in catalogue.contracts
    ]
    tokens = [
        mf.token_entry(devnet.tokens[t.id], roles[t.id], logs[t.id]) for t in catalogue.tokens
    ]
    return {
        "chainId": CHAIN_ID,
        "inputHash": "",
        "headBlock": int(head["number"], 16),
        "headTimestamp": int(head["timestamp"], 16),
        "ethUsd": ETH_USD,
        "addresses": dict(devnet.addresses),
        "stablePools": [{"token": s} | mf.pool_entry(p) for s, p in devnet.stable_pools],
        "contracts": helpers,
        "tokens": tokens,
    }


def _sources(
    root: Path, devnet: Devnet, catalogue: Catalogue, artifacts: dict[str, Any]
) -> dict[str, Any]:
    """The verification registry: every open-source contract, no closed-source one."""
    solc = str(artifacts["solc"])
    registry: dict[str, Any] = {}
    for placement in placements(devnet.owner):
        registry[placement.address] = mf.npm_source(load_npm_artifact(root, placement.artifact))
    for pool in mf.all_pools(devnet):
        registry[pool.address] = mf.npm_source(load_npm_artifact(root, mf.pool_artifact_name(pool)))
    stable = devnet.compiled["DevStablecoin"]
    for symbol in ("USDC", "USDT", "DAI"):
        registry[devnet.addresses[symbol]] = mf.compiled_source(root, stable, solc)
    entries: list[tuple[bool | None, str, str]] = [
        (h.verified, h.contract, devnet.helpers[h.id]) for h in catalogue.contracts
    ]
    entries += [(t.verified, t.contract, devnet.tokens[t.id].address) for t in catalogue.tokens]
    for verified, contract, address in entries:
        if verified:
            registry[address] = mf.compiled_source(root, devnet.compiled[contract], solc)
        elif verified is False:
            registry[address] = mf.NOT_VERIFIED  # what an explorer says; None: no entry at all
    return registry


async def _mark_proxies(chain: Chain, registry: dict[str, Any]) -> None:
    """Say what an explorer would about EIP-1967 proxies: ``isProxy`` + ``implementation``."""
    calls = [("eth_getStorageAt", [a, EIP1967_IMPLEMENTATION_SLOT, "latest"]) for a in registry]
    for address, word in zip(list(registry), await chain.rpc.batch(calls), strict=True):
        if isinstance(word, str) and int(word, 16) != 0:
            registry[address]["isProxy"] = True
            registry[address]["implementation"] = checksum("0x" + word[-40:])


# VERIFICATION


def verify_dump(state_file: Path, manifest: dict[str, Any]) -> None:
    """Reload the dump in a fresh anvil: head block and token Transfer logs must be there.

    Raises DevnetBuildError when the reloaded chain is not the one that was built.
    """
    node = start_anvil(load_state=state_file)
    try:
        asyncio.run(_verify_on(node.url, manifest))
    finally:
        node.stop()


async def _verify_on(url: str, manifest: dict[str, Any]) -> None:
    chain = Chain(url)
    try:
        head = int((await chain.block())["number"], 16)
        if head != manifest["headBlock"]:
            raise DevnetBuildError(f"reloaded head is {head}, built {manifest['headBlock']}")
        for token in manifest["tokens"]:
            query = {"address": token["address"], "topics": [TRANSFER_TOPIC], "fromBlock": "0x0"}
            logs = await chain.rpc.call("eth_getLogs", [query])
            if not logs:
                raise DevnetBuildError(f"{token['id']}: no Transfer logs after reloading the dump")
    finally:
        await chain.aclose()


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive file lock, so two processes never build into the same directory."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

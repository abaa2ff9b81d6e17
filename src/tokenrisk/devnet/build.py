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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tokenrisk.devnet import layout
from tokenrisk.devnet import manifest as mf
from tokenrisk.devnet.catalogue import CATALOGUE_PATH, load_catalogue
from tokenrisk.devnet.node import start_anvil
from tokenrisk.devnet.progress import progress
from tokenrisk.devnet.reload import verify_dump
from tokenrisk.devnet.solc import compile_contracts, load_artifacts
from tokenrisk.devnet.steps import build_on

GENESIS_TIMESTAMP = 1767225600
"""2026-01-01T00:00:00Z: a fixed genesis keeps block times reproducible."""


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
            build_on(node.url, root, artifacts, catalogue, lambda m: progress(m, started))
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


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive file lock, so two processes never build into the same directory."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

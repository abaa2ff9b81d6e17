"""The build's outputs besides the state: ``manifest.json`` and ``sources.json``.

``manifest.json`` says what is where on the devnet (canonical addresses, every
catalogue token with its pools, history actors and failed sells) and which inputs it was
built from (``inputHash``).  ``sources.json`` is the local source-verification registry:
checksummed address -> contract name, compiler, optimizer, source path, source text and
solc metadata, for every open-source contract; closed-source catalogue entries are
deliberately absent.  Formats are described in docs/devnet.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from tokenrisk.devnet.deployment import Compiled, Deployed, Devnet, Pool
from tokenrisk.devnet.history import TokenRoles
from tokenrisk.devnet.npm_artifacts import NpmArtifact
from tokenrisk.devnet.trading import TokenLog
from tokenrisk.devnet.venues import venue

NOT_VERIFIED = {"verified": False}
"""A ``sources.json`` entry saying "this contract's source is not verified"."""

HASHED_INPUTS = ("contracts/**/*.sol", "tools/solc-compile.js", "package-lock.json")
"""Globs (relative to the sources root) whose content decides whether to rebuild; the
devnet package's own ``*.py`` and ``catalogue.json`` and ``simulate/accounting.py`` (the
ground truth measures with it) count too."""


def build_inputs(root: Path) -> list[tuple[str, Path]]:
    """(name, file) of every build input; names are the same in a checkout and a wheel."""
    found = [(p.relative_to(root).as_posix(), p) for g in HASHED_INPUTS for p in root.glob(g)]
    package = Path(__file__).resolve().parent
    own = [*package.glob("*.py"), package / "catalogue.json"]
    found += [(f"src/tokenrisk/devnet/{p.name}", p) for p in own]
    accounting = package.parent / "simulate" / "accounting.py"  # ground truth uses it
    found.append(("src/tokenrisk/simulate/accounting.py", accounting))
    return sorted({(name, p) for name, p in found if p.is_file()})


def input_hash(root: Path) -> str:
    """SHA-256 over the names and contents of every build input, in a stable order."""
    digest = hashlib.sha256()
    for name, path in build_inputs(root):
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file then rename), so readers never see half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, path)


# MANIFEST


def token_entry(token: Deployed, roles: TokenRoles, log: TokenLog) -> dict[str, Any]:
    """The catalogue entry as written, plus where it landed and what happened to it."""
    entry = dict(token.spec.raw)
    entry["address"] = token.address
    entry["pools"] = [pool_entry(p) for p in token.pools.values()]
    entry["holders"] = roles.holders
    entry["snipers"] = roles.snipers
    entry["sellers"] = roles.sellers
    entry["siphoned"] = roles.siphoned
    entry["failedSells"] = log.failed_sells
    entry["trades"] = {"buys": log.buys, "sells": log.sells}
    return entry


def pool_entry(pool: Pool) -> dict[str, Any]:
    return {
        "dex": pool.spec.dex,
        "base": pool.spec.base,
        "fee": pool.spec.fee,
        **({"venue": pool.spec.venue} if pool.spec.venue else {}),
        "address": pool.address,
        "tokenAmount": pool.spec.token_amount,
        "baseAmount": pool.spec.base_amount,
    }


# SOURCE REGISTRY


def compiled_source(root: Path, compiled: Compiled, solc: str) -> dict[str, Any]:
    """Registry entry of a contract compiled from this repository."""
    metadata = json.loads(compiled.metadata) if compiled.metadata else {}
    optimizer = metadata.get("settings", {}).get("optimizer", {"enabled": True, "runs": 200})
    return {
        "contractName": compiled.name,
        "compiler": f"solc-{solc}",
        "optimizer": {"enabled": bool(optimizer.get("enabled")), "runs": optimizer.get("runs")},
        "sourcePath": compiled.source_path,
        "source": (root / compiled.source_path).read_text(),
        "metadata": compiled.metadata,
    }


def npm_source(artifact: NpmArtifact) -> dict[str, Any]:
    """Registry entry of an official npm contract.

    ``source`` is None where the package ships no ``.sol`` for it (Uniswap V3);
    ``optimizer`` is None where the artifact does not record it.
    """
    return {
        "contractName": artifact.name,
        "compiler": artifact.compiler,
        "optimizer": artifact.optimizer,
        "sourcePath": artifact.source_path,
        "source": artifact.source,
        "metadata": artifact.metadata,
    }


def pool_artifact_name(pool: Pool) -> str:
    return venue(pool.spec.dex, pool.spec.venue).pool_artifact


def all_pools(devnet: Devnet) -> list[Pool]:
    """Every pool the build created: stablecoin pools and catalogue token pools."""
    pools = [pool for _, pool in devnet.stable_pools]
    for token in devnet.tokens.values():
        pools.extend(token.pools.values())
    return pools

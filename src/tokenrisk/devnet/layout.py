"""Where the devnet's inputs, tools and build live, and how to read its manifest.

Shared by the builder (:mod:`.build`, which writes these files) and the loader
(:mod:`.instance`, which the running service uses): the loader never imports the builder.

Three places, the same directory in a checkout:

- the *sources* (``contracts/``, ``tools/solc-compile.js``, ``package.json``,
  ``package-lock.json``): the checkout's, or the copy the wheel carries in
  ``tokenrisk/devnet/project/``;
- the *workspace* (``build/devnet`` is built there): ``$TOKENRISK_HOME``, else the
  checkout, else ``~/.tokenrisk``;
- the pinned npm tools (anvil, solc-js, Uniswap artifacts): ``$TOKENRISK_NODE_MODULES``,
  else ``node_modules`` beside the sources, else in the workspace (``npm ci --prefix
  <workspace>`` with the packaged ``package.json`` and ``package-lock.json``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MANIFEST_FILE = "manifest.json"
SOURCES_FILE = "sources.json"
STATE_FILE = "state.json"
DEVNET_URL_FILE = "devnet.json"
"""In the data dir: where the devnet a running `tokenrisk serve` started answers."""


PACKAGE = Path(__file__).resolve().parents[1]
"""The installed ``tokenrisk`` package directory."""


def checkout() -> Path | None:
    """The source checkout this package runs from (editable install), if any."""
    root = PACKAGE.parents[1]
    is_checkout = (root / "contracts").is_dir() and (root / "package-lock.json").is_file()
    return root if is_checkout else None


def sources_root() -> Path:
    """Where ``contracts/``, ``tools/`` and the npm lockfile are (checkout or wheel)."""
    return checkout() or PACKAGE / "devnet" / "project"


def workspace() -> Path:
    """Where ``build/devnet`` is built: ``$TOKENRISK_HOME``, the checkout, ``~/.tokenrisk``."""
    home = os.environ.get("TOKENRISK_HOME")
    if home:
        return Path(home)
    return checkout() or Path.home() / ".tokenrisk"


def node_modules(root: Path | None = None) -> Path:
    """The pinned npm tools: ``$TOKENRISK_NODE_MODULES``, ``<root>/node_modules``, or the
    workspace's."""
    override = os.environ.get("TOKENRISK_NODE_MODULES")
    if override:
        return Path(override)
    if root is not None and (root / "node_modules").is_dir():
        return root / "node_modules"
    return workspace() / "node_modules"


def devnet_dir(root: Path | None = None) -> Path:
    """Where the built devnet lives: ``<root or workspace>/build/devnet``."""
    return (root or workspace()) / "build" / "devnet"


def read_manifest(build_dir: Path) -> dict[str, Any] | None:
    """The manifest of a build directory, or None if it is missing or unreadable."""
    try:
        data = json.loads((build_dir / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

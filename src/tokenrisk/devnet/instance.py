"""Run a built devnet: anvil loaded with the dumped state, clock pinned to the build.

This is the loader the running service uses; it never imports the builder
(:mod:`.build`): build first with ``tokenrisk devnet build``.

anvil does not restore the clock from a state dump: after ``--load-state`` the next
block would take the wall-clock time, which may be earlier than the last built block
(the history advances time) or much later (a dump loaded months after the build).
Starting with ``--timestamp <headTimestamp>`` makes the chain continue where the build
stopped, so cooldowns and "later block" logic behave the same on every start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenrisk.devnet.layout import (
    MANIFEST_FILE,
    SOURCES_FILE,
    STATE_FILE,
    devnet_dir,
    read_manifest,
)
from tokenrisk.devnet.node import AnvilNode, start_anvil
from tokenrisk.errors import DevnetBuildError


@dataclass
class RunningDevnet:
    """A devnet anvil and the manifest of the state it was loaded from."""

    node: AnvilNode
    manifest: dict[str, Any]
    build_dir: Path

    @property
    def url(self) -> str:
        return self.node.url

    @property
    def manifest_path(self) -> Path:
        return self.build_dir / MANIFEST_FILE

    @property
    def sources_path(self) -> Path:
        return self.build_dir / SOURCES_FILE

    def stop(self) -> None:
        self.node.stop()

    def __enter__(self) -> RunningDevnet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def devnet_args(manifest: dict[str, Any]) -> list[str]:
    """Extra anvil arguments a loaded devnet needs (the clock continues from the build)."""
    return ["--timestamp", str(int(manifest["headTimestamp"]))]


def start_devnet(
    root: Path | None = None,
    *,
    port: int | None = None,
    extra_args: list[str] | None = None,
    log_path: Path | None = None,
) -> RunningDevnet:
    """Start anvil on the built devnet under ``root`` (the workspace by default).

    Raises DevnetBuildError when there is no usable build, NodeUnavailable when anvil
    does not come up.
    """
    build_dir = devnet_dir(root)
    manifest = read_manifest(build_dir)
    if manifest is None or not (build_dir / STATE_FILE).is_file():
        raise DevnetBuildError(f"no built devnet in {build_dir}; run `tokenrisk devnet build`")
    node = start_anvil(
        devnet_args(manifest) + (extra_args or []),
        port=port,
        load_state=build_dir / STATE_FILE,
        log_path=log_path,
    )
    return RunningDevnet(node=node, manifest=manifest, build_dir=build_dir)

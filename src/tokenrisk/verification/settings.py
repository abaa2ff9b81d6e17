"""Verification config as a frozen, validated value, and the verifier built from it.

The config loader turns the ``[verification]`` table of the TOML file (and the
``TOKENRISK_*`` environment) into :class:`VerificationSettings`, with
:meth:`VerificationSettings.from_mapping` for the table; :func:`build_verifier` then
wires the providers.  Defaults are safe: only the local registry, a 5 s timeout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import httpx

from tokenrisk.verification.etherscan import EtherscanProvider
from tokenrisk.verification.local import LocalRegistry
from tokenrisk.verification.source import ProviderName, SourceProvider
from tokenrisk.verification.sourcify import SourcifyApi, SourcifyProvider
from tokenrisk.verification.verifier import Verifier

DEVNET_CHAIN_ID = 31337
DEVNET_SOURCES = Path("build/devnet/sources.json")


@dataclass(frozen=True)
class VerificationSettings:
    """Which providers to ask, in order, and how to reach them.

    ``local_paths`` maps a chain id to its registry files.  ``*_chains`` limit a remote
    provider to some chains (empty: all).  Times are seconds.  ``etherscan_key`` is
    left out of ``repr`` so the settings can be logged.
    """

    providers: tuple[ProviderName, ...] = ("local",)
    local_paths: dict[int, list[Path]] = field(default_factory=dict)
    sourcify_url: str | None = None
    sourcify_api: SourcifyApi = "v2"
    sourcify_chains: tuple[int, ...] = ()
    etherscan_url: str | None = None
    etherscan_key: str | None = field(default=None, repr=False)
    etherscan_chains: tuple[int, ...] = ()
    timeout: float = 5.0
    cache_ttl: float = 3600.0
    negative_cache_ttl: float = 300.0
    concurrency: int = 8

    def __post_init__(self) -> None:
        _check_providers(self.providers)
        if "sourcify" in self.providers and not self.sourcify_url:
            raise ValueError("the sourcify provider needs sourcify_url")
        if "etherscan" in self.providers and not self.etherscan_url:
            raise ValueError("the etherscan provider needs etherscan_url")
        if self.sourcify_api not in get_args(SourcifyApi):
            raise ValueError(f"sourcify_api must be one of {get_args(SourcifyApi)}")
        if self.timeout <= 0 or self.concurrency < 1:
            raise ValueError("timeout must be positive and concurrency at least 1")
        if self.cache_ttl < 0 or self.negative_cache_ttl < 0:
            raise ValueError("cache TTLs must not be negative")

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> VerificationSettings:
        """Settings from a TOML-shaped table (chain ids may be strings, paths strings).

        Unknown keys are rejected, so a typo does not silently fall back to a default.
        Raises ValueError (or TypeError for wrongly typed values).
        """
        unknown = set(table) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown verification settings: {', '.join(sorted(unknown))}")
        values = dict(table)
        for name in ("providers", "sourcify_chains", "etherscan_chains"):
            if name in values:
                values[name] = tuple(values[name])
        if "local_paths" in values:
            values["local_paths"] = _paths_of(values["local_paths"])
        return cls(**values)


def devnet_settings(root: Path) -> VerificationSettings:
    """Local registry only, reading the devnet build under ``root`` (the default setup)."""
    return VerificationSettings(local_paths={DEVNET_CHAIN_ID: [root / DEVNET_SOURCES]})


def build_verifier(
    config: VerificationSettings, client: httpx.AsyncClient | None = None
) -> Verifier:
    """A :class:`Verifier` asking ``config.providers`` in order.

    Remote providers share ``client`` when given (the caller closes it); otherwise
    each makes its own, closed by :meth:`Verifier.aclose`.
    """
    providers = [_provider(name, config, client) for name in config.providers]
    return Verifier(
        providers,
        ttl=config.cache_ttl,
        negative_ttl=config.negative_cache_ttl,
        concurrency=config.concurrency,
    )


def _provider(
    name: ProviderName, config: VerificationSettings, client: httpx.AsyncClient | None
) -> SourceProvider:
    if name == "local":
        return LocalRegistry(config.local_paths)
    if name == "sourcify":
        assert config.sourcify_url is not None
        return SourcifyProvider(
            config.sourcify_url,
            client,
            config.timeout,
            api=config.sourcify_api,
            chains=config.sourcify_chains or None,
        )
    assert config.etherscan_url is not None
    return EtherscanProvider(
        config.etherscan_url,
        config.etherscan_key,
        config.timeout,
        client=client,
        chains=config.etherscan_chains or None,
    )


def _check_providers(providers: tuple[str, ...]) -> None:
    known = get_args(ProviderName)
    for name in providers:
        if name not in known:
            raise ValueError(f"unknown source provider {name!r}; known: {', '.join(known)}")
    if len(set(providers)) != len(providers):
        raise ValueError("a source provider is listed twice")


def _paths_of(raw: Mapping[Any, Any]) -> dict[int, list[Path]]:
    """{chain id: [Path]} from TOML, where keys are strings and one path may stand alone."""
    paths: dict[int, list[Path]] = {}
    for chain, files in raw.items():
        listed = [files] if isinstance(files, str | Path) else list(files)
        paths[int(chain)] = [Path(item) for item in listed]
    return paths

"""Operator configuration: one frozen object built once from a TOML file and the environment.

Sources, later wins: built-in defaults, the TOML file (``--config`` or
``TOKENRISK_CONFIG``), ``TOKENRISK_*`` environment variables.  RPC URLs come only from
here, never from a request.  See docs/configuration.md for every key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key, never a secret value."""


@dataclass(frozen=True)
class ChainNode:
    """Where the node of one chain is: direct ``rpc_url`` or a local fork of ``fork_url``."""

    chain_id: int
    rpc_url: str | None = field(default=None, repr=False)
    fork_url: str | None = field(default=None, repr=False)
    fork_block: int | None = None


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    deadline: float = 25.0  # seconds a request may take before it gets a 504
    rpc_timeout: float = 10.0
    holder_limit: int = 100
    cache_ttl: float = 15.0
    api_keys: frozenset[str] = field(default_factory=frozenset, repr=False)
    rate_limit_per_minute: int = 0  # per key (or per client address without keys); 0 = off
    data_dir: Path = Path(".tokenrisk")
    store_url: str | None = field(default=None, repr=False)
    devnet: bool = True  # run the embedded devnet (default when no chain node is configured)
    nodes: tuple[ChainNode, ...] = ()
    chains: tuple[Mapping[str, Any], ...] = ()  # extra/overriding registry entries
    whitelist: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    verification: Mapping[str, Any] = field(default_factory=dict)
    max_concurrent_simulations: int = 8

    @property
    def database_url(self) -> str:
        return self.store_url or f"sqlite:///{self.data_dir / 'tokenrisk.sqlite3'}"


_SCALARS: dict[str, type] = {
    "host": str,
    "port": int,
    "workers": int,
    "deadline": float,
    "rpc_timeout": float,
    "holder_limit": int,
    "cache_ttl": float,
    "rate_limit_per_minute": int,
    "store_url": str,
    "max_concurrent_simulations": int,
}


def _coerce(key: str, value: Any, kind: type) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be of type {kind.__name__}") from None


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{key} must be true or false")


def _nodes(raw: Any) -> tuple[ChainNode, ...]:
    out = []
    for entry in raw or []:
        if "id" not in entry:
            raise ConfigError("every [[nodes]] entry needs an id")
        out.append(
            ChainNode(
                int(entry["id"]),
                entry.get("rpc_url"),
                entry.get("fork_url"),
                entry.get("fork_block"),
            )
        )
    return tuple(out)


def _from_env(env: Mapping[str, str], values: dict[str, Any]) -> None:
    for key, kind in _SCALARS.items():
        name = f"TOKENRISK_{key.upper()}"
        if name in env:
            values[key] = _coerce(name, env[name], kind)
    if "TOKENRISK_API_KEYS" in env:
        values["api_keys"] = [k for k in env["TOKENRISK_API_KEYS"].split(",") if k.strip()]
    if "TOKENRISK_DATA_DIR" in env:
        values["data_dir"] = env["TOKENRISK_DATA_DIR"]
    if "TOKENRISK_DEVNET" in env:
        values["devnet"] = _bool("TOKENRISK_DEVNET", env["TOKENRISK_DEVNET"])
    nodes = {n["id"]: dict(n) for n in values.get("nodes", [])}
    for name, value in env.items():
        for prefix, key in (("TOKENRISK_RPC_URL_", "rpc_url"), ("TOKENRISK_FORK_URL_", "fork_url")):
            if name.startswith(prefix) and name[len(prefix) :].isdigit():
                chain_id = int(name[len(prefix) :])
                nodes.setdefault(chain_id, {"id": chain_id})[key] = value
    values["nodes"] = list(nodes.values())


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Build the Settings; raises ConfigError on unreadable or invalid configuration."""
    env = os.environ if env is None else env
    path = path or (Path(env["TOKENRISK_CONFIG"]) if env.get("TOKENRISK_CONFIG") else None)
    values: dict[str, Any] = {}
    if path is not None:
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    _from_env(env, values)
    return _settings(values)


def _settings(values: dict[str, Any]) -> Settings:
    kwargs: dict[str, Any] = {
        k: _coerce(k, values[k], t) for k, t in _SCALARS.items() if k in values
    }
    nodes = _nodes(values.get("nodes"))
    if any(not (n.rpc_url or n.fork_url) for n in nodes):
        raise ConfigError("every node needs rpc_url or fork_url")
    kwargs["nodes"] = nodes
    kwargs["devnet"] = _bool("devnet", values.get("devnet", not nodes))
    kwargs["api_keys"] = frozenset(str(k) for k in values.get("api_keys", []))
    kwargs["data_dir"] = Path(values.get("data_dir", ".tokenrisk"))
    kwargs["chains"] = tuple(values.get("chains", []))
    kwargs["whitelist"] = {int(k): tuple(v) for k, v in values.get("whitelist", {}).items()}
    kwargs["verification"] = dict(values.get("verification", {}))
    settings = Settings(**kwargs)
    if settings.deadline <= 0 or settings.rpc_timeout <= 0:
        raise ConfigError("deadline and rpc_timeout must be positive")
    return settings
